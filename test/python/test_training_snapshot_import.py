"""A training snapshot the real monitor wrote (model_inspector.train, a
real small torch training run on CPU) opened by the C++ core
(importers/training_snapshot, the session's Training* views) and checked
against Python's sqlite3 and numpy reading of the same file; and
`model-inspector summary` / `export` on it (a run with a graph, no trace).

The model has a container (encoder: Linear + ReLU), a MultiheadAttention
(its attention weights are captured), a LayerNorm and a head; 14 SGD
steps on a fixed regression target, the input scaled by 1000 from step 9
so that the encoder's activations pass the act_range limit there (the
LayerNorm absorbs the scale, so the loss itself does not spike) and the 2
steps before and after are captured."""
import io
import json
import math
import sqlite3

import numpy as np
import pytest
import torch

from model_inspector import _core
from model_inspector.train import Monitor


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU())
        self.attn = torch.nn.MultiheadAttention(16, 2, batch_first=True)
        self.norm = torch.nn.LayerNorm(16)
        self.head = torch.nn.Linear(16, 1)

    def forward(self, x):
        h = self.encoder(x)
        a, _ = self.attn(h, h, h)
        h = self.norm(h + a)
        return self.head(h).mean(dim=1)


SPIKE_STEP = 9


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    path = tmp_path_factory.mktemp("training") / "snapshot.db"
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(6, 4, 8)
    y = torch.randn(6, 1)
    mon = Monitor(model, opt, triggers=["act_range:100"], capture_window=2, output=path)
    for step in range(14):
        inp = x * 1000.0 if step >= SPIKE_STEP else x
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(inp), y)
        loss.backward()
        opt.step()
    mon.close()
    assert path.exists()
    return path


def rows(path, sql):
    db = sqlite3.connect(path)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def same(a, b):
    """Equal floats (the reader and sqlite3 both give the stored double),
    None for NULL."""
    if a is None or b is None:
        return a is None and b is None
    return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=0)


def test_layers_and_graph(snapshot, tmp_path, mi):
    session = _core.Session.open([str(snapshot)])
    assert session.training_snapshot_path() == str(snapshot)
    overview = json.loads(session.training_overview_json())
    layers = rows(snapshot, "SELECT id, name, type, parent, forward_order, param_count "
                            "FROM layers ORDER BY id")
    assert [(l["id"], l["name"], l["type"], l["parent"], l["forward_order"],
             l["param_count"]) for l in overview["layers"]] == layers
    names = {name for _, name, *_ in layers}
    assert {"encoder.0", "encoder.1", "attn", "attn.out_proj", "norm", "head"} <= names
    # A node for every leaf called in forward and every module with
    # parameters of its own, named by its module path, op type its class,
    # scope the parent module's path (graph.json of `export`).
    children = {p for *_, p, _, _ in layers if p is not None}
    with_node = {name for lid, name, typ, parent, order, params in layers
                 if params > 0 or (order is not None and lid not in children)}
    assert {l["name"] for l in overview["layers"] if l["node"] is not None} == with_node
    mi("export", snapshot, "--out", tmp_path / "export")
    graph = json.loads((tmp_path / "export" / "graph.json").read_text())
    nodes = {n["name"]: n for n in graph["nodes"]}
    assert set(nodes) == with_node
    for l in overview["layers"]:
        if l["node"] is None:
            continue
        node = nodes[l["name"]]
        assert node["node_id"] == l["node"]
        assert node["op_type"] == l["type"]
        assert (node.get("scope") or "") == l["name"].rpartition(".")[0]
    # Data edges from the edges table, between nodes, going forward.
    name_of = {lid: name for lid, name, *_ in layers}
    order_of = {l["name"]: l["forward_order"] for l in overview["layers"]}
    for src, dst in rows(snapshot, "SELECT src, dst FROM edges"):
        s, d = name_of[src], name_of[dst]
        if s in with_node and d in with_node and order_of[s] < order_of[d]:
            assert f"{s}:out" in [i["name"] for i in nodes[d]["inputs"]], (s, d)


def test_steps_and_metrics(snapshot):
    session = _core.Session.open([str(snapshot)])
    overview = json.loads(session.training_overview_json())
    meta = dict(rows(snapshot, "SELECT key, value FROM meta"))
    assert overview["anomaly_step"] == int(meta["anomaly_step"]) == SPIKE_STEP
    steps = rows(snapshot, "SELECT step, captured FROM steps ORDER BY step")
    assert overview["captured_steps"] == [s for s, c in steps if c]
    assert overview["captured_steps"] == list(range(SPIKE_STEP - 2, SPIKE_STEP + 3))
    for (lid,) in rows(snapshot, "SELECT id FROM layers"):
        series = json.loads(session.training_layer_series_json(lid))
        assert series["steps"] == [s for s, _ in steps]
        stored = {s: r for s, *r in rows(
            snapshot, "SELECT step, grad_norm, weight_norm, act_abs_max, update_ratio, "
                      f"grad_nan FROM layer_steps WHERE layer = {lid}")}
        for i, (s, _) in enumerate(steps):
            want = stored.get(s, (None, None, None, None, 0))
            for k, column in enumerate(("grad_norm", "weight_norm", "act_abs_max",
                                        "update_ratio")):
                assert same(series[column][i], want[k]), (lid, s, column)
            assert series["grad_nan"][i] == want[4]


def test_attention_and_histograms(snapshot):
    session = _core.Session.open([str(snapshot)])
    attention = rows(snapshot, "SELECT step, layer, data FROM tensors WHERE kind = "
                               "'attention' AND sampled = 0 ORDER BY step, layer")
    assert attention, "the monitor captured no attention weights"
    for step, layer, blob in attention:
        want = np.load(io.BytesIO(blob)).astype(np.float64)
        got = json.loads(session.training_attention_json(step, layer))
        assert [got["heads"], got["queries"], got["keys"]] == list(want.shape) == [2, 4, 4]
        np.testing.assert_array_equal(np.array(got["weights"]), want)
    hists = rows(snapshot, "SELECT step, layer, kind, lo, hi, counts, nan, inf "
                           "FROM histograms ORDER BY step, layer, kind")
    assert hists
    for step in sorted({h[0] for h in hists}):
        got = json.loads(session.training_histograms_json(step))["histograms"]
        want = [h for h in hists if h[0] == step]
        assert [(g["layer"], g["kind"], g["counts"], g["nan"], g["inf"]) for g in got] == \
            [(l, k, json.loads(c), n, i) for _, l, k, _, _, c, n, i in want]
        for g, w in zip(got, want):
            assert same(g["lo"], w[3]) and same(g["hi"], w[4])


def test_uncaptured_step_and_bad_layer_are_not_found(snapshot):
    from model_inspector.errors import NotFound
    session = _core.Session.open([str(snapshot)])
    with pytest.raises(NotFound, match="was not captured"):
        session.training_histograms_json(0)
    with pytest.raises(NotFound, match="is not a layer"):
        session.training_layer_series_json(999)


def test_cli_summary(snapshot, mi):
    proc = mi("summary", "--quiet", snapshot)
    assert proc.returncode == 0
    assert proc.stderr == ""
