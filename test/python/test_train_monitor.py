"""The training monitor (python/model_inspector/train) and `model-inspector
trace` (src/cli/trace_command.cc) on real torch training runs (Debian's
torch, CPU).

Expected values are independent of the monitor: the per-step figures are
recomputed by plain torch on an unmonitored copy of the model trained on
the same data (norms with torch.linalg.vector_norm, std with
unbiased=False, gradients of outputs with retain_grad), the pre-clipping
norm is the value torch's clip_grad_norm_ returns, anomalies are injected
at a step chosen here, and snapshots are read back with Python's sqlite3
and numpy.load.
"""

import copy
import io
import json
import math
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from conftest import BINARY, PACKAGE

from model_inspector.train import Monitor, parse_trigger  # noqa: E402

REL = 1e-4  # float32 forward passes vs the kernel's double accumulation


def mlp(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.ReLU(), torch.nn.Linear(12, 3))


def batches(n, seed=1, batch=32):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(batch, 6, generator=g), torch.randn(batch, 3, generator=g))
            for _ in range(n)]


def train(model, opt, data, inject=None, clip=None):
    """The plain loop a user writes; `inject(step, x, model)` may change the
    input or the model before the step's forward and returns the input."""
    for step, (x, y) in enumerate(data):
        if inject is not None:
            x = inject(step, x, model)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        if clip is not None:
            clip(model)
        opt.step()


def db(path):
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    return conn


def meta(conn):
    return {r["key"]: r["value"] for r in conn.execute("SELECT key, value FROM meta")}


def layer_ids(conn):
    return {r["name"]: r["id"] for r in conn.execute("SELECT id, name FROM layers")}


def load_npy(blob):
    return np.load(io.BytesIO(blob), allow_pickle=False)


def test_per_step_statistics_equal_torch_recomputation(tmp_path):
    model = mlp()
    with torch.no_grad():
        model[0].bias[:4] = -50.0  # 4 of the 12 hidden units dead: dead_fraction 1/3
    ref = copy.deepcopy(model)
    data = batches(6)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    out_path = tmp_path / "s.db"
    mon = Monitor(model, opt, triggers=[], output=out_path)
    train(model, opt, data)
    mon.close()

    # The reference: plain torch, no hooks, the same steps.
    expected = []
    for x, y in data:
        h1 = ref[0](x)
        r = ref[1](h1)
        out = ref[2](r)
        for t in (h1, r, out):
            t.retain_grad()
        loss = torch.nn.functional.mse_loss(out, y)
        ref_opt.zero_grad()
        loss.backward()
        before = [p.detach().clone() for p in ref.parameters()]
        grads = [p.grad.detach().clone() for p in ref.parameters()]
        ref_opt.step()
        after = [p.detach().clone() for p in ref.parameters()]
        expected.append(dict(loss=float(loss), x=x, h1=h1.detach(), r=r.detach(), out=out.detach(),
                             gh1=h1.grad, gr=r.grad, gout=out.grad, before=before, grads=grads,
                             after=after))

    conn = db(out_path)
    ids = layer_ids(conn)
    assert meta(conn)["status"] == "no_anomaly"
    steps = conn.execute("SELECT * FROM steps ORDER BY step").fetchall()
    assert [s["step"] for s in steps] == list(range(6))

    def norm(*ts):
        return math.sqrt(sum(float(torch.linalg.vector_norm(t.double())) ** 2 for t in ts))

    def act(t):
        t = t.double()
        return dict(abs_max=float(t.abs().max()), rms=float(t.pow(2).mean().sqrt()),
                    mean=float(t.mean()), std=float(t.std(unbiased=False)),
                    zero=float((t == 0).double().mean()))

    for s, e in zip(steps, expected):
        step = s["step"]
        assert s["loss"] == pytest.approx(e["loss"], rel=1e-6)
        assert s["grad_norm"] == pytest.approx(norm(*e["grads"]), rel=REL)
        assert s["lr"] == pytest.approx(0.1)
        assert s["clipped"] == 0 and s["loss_nonfinite"] == 0 and s["grad_nonfinite"] == 0
        rows = {r["layer"]: r for r in conn.execute("SELECT * FROM layer_steps WHERE step = ?", (step,))}
        for name, (w, b), act_t, in_t, gout_t in (
                ("0", (0, 1), e["h1"], e["x"], e["gh1"]),
                ("2", (2, 3), e["out"], e["r"], e["gout"])):
            row = rows[ids[name]]
            assert row["weight_norm"] == pytest.approx(norm(e["after"][w], e["after"][b]), rel=REL)
            assert row["grad_norm"] == pytest.approx(norm(e["grads"][w], e["grads"][b]), rel=REL)
            update = norm(e["after"][w] - e["before"][w], e["after"][b] - e["before"][b])
            assert row["update_norm"] == pytest.approx(update, rel=REL)
            assert row["update_ratio"] == pytest.approx(
                update / norm(e["before"][w], e["before"][b]), rel=REL)
            zeros = float((e["grads"][w] == 0).sum() + (e["grads"][b] == 0).sum())
            assert row["grad_zero_fraction"] == pytest.approx(
                zeros / (e["grads"][w].numel() + e["grads"][b].numel()))
            dead = float((e["grads"][w].abs().sum(dim=1) == 0).double().mean())
            assert row["dead_fraction"] == pytest.approx(dead)
            a = act(act_t)
            assert row["act_abs_max"] == pytest.approx(a["abs_max"], rel=REL)
            assert row["act_rms"] == pytest.approx(a["rms"], rel=REL)
            assert row["act_mean"] == pytest.approx(a["mean"], rel=REL, abs=1e-7)
            assert row["act_std"] == pytest.approx(a["std"], rel=REL)
            assert row["act_zero_fraction"] == pytest.approx(a["zero"])
            assert row["act_dtype"] == "float32"
            i = act(in_t)
            assert row["in_abs_max"] == pytest.approx(i["abs_max"], rel=REL)
            assert row["in_rms"] == pytest.approx(i["rms"], rel=REL)
            assert row["gout_norm"] == pytest.approx(norm(gout_t), rel=REL)
            assert row["gout_abs_max"] == pytest.approx(float(gout_t.abs().max()), rel=REL)
            assert row["act_nan"] == row["act_inf"] == row["grad_nan"] == row["gout_nan"] == 0
        assert rows[ids["0"]]["dead_fraction"] == pytest.approx(4 / 12)
        relu = rows[ids["1"]]
        a = act(e["r"])
        assert relu["act_zero_fraction"] == pytest.approx(a["zero"])
        assert relu["gout_norm"] == pytest.approx(norm(e["gr"]), rel=REL)
        assert relu["weight_norm"] is None and relu["dead_fraction"] is None
    # The monitored run trained exactly as the plain one.
    for p, q in zip(model.parameters(), ref.parameters()):
        assert torch.equal(p, q)


def window_run(tmp_path, n_steps, spike_at, window, **kwargs):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    path = tmp_path / "w.db"

    def inject(step, x, m):
        return x * 1000.0 if step == spike_at else x

    mon = Monitor(model, opt, triggers=["loss_spike"], capture_window=window, output=path, **kwargs)
    train(model, opt, batches(n_steps), inject)
    mon.close()
    return path, mon


def test_snapshot_holds_exactly_the_window(tmp_path):
    path, mon = window_run(tmp_path, 20, 10, 3)
    conn = db(path)
    m = meta(conn)
    assert m["status"] == "complete"
    assert m["anomaly_step"] == "10"
    assert (m["window_first"], m["window_last"]) == ("7", "13")
    assert m["capture_window"] == "3"
    first = conn.execute("SELECT step, trigger FROM triggers ORDER BY id LIMIT 1").fetchone()
    assert tuple(first) == (10, "loss_spike")
    assert [r[0] for r in conn.execute("SELECT DISTINCT step FROM tensors ORDER BY step")] == \
        list(range(7, 14))
    assert [r[0] for r in conn.execute("SELECT step FROM steps WHERE captured = 1 ORDER BY step")] == \
        list(range(7, 14))
    assert conn.execute("SELECT COUNT(*) FROM steps").fetchone()[0] == 20
    # Per step: each Linear keeps activation, input, grad_output, weight and
    # grad of weight and bias (7); the ReLU activation, input, grad_output (3).
    counts = conn.execute("SELECT step, COUNT(*) FROM tensors GROUP BY step").fetchall()
    assert all(c == 17 for _, c in counts) and len(counts) == 7
    ids = layer_ids(conn)
    kinds = {(r[0], r[1]) for r in conn.execute("SELECT layer, kind FROM tensors WHERE step = 7")}
    assert kinds == {(ids[n], k) for n in ("0", "2")
                     for k in ("activation", "input", "grad_output", "weight", "grad")} | \
        {(ids["1"], k) for k in ("activation", "input", "grad_output")}
    assert conn.execute("SELECT COUNT(DISTINCT step) FROM histograms").fetchone()[0] == 7


def test_ring_buffer_steps_before_hold_the_real_tensors(tmp_path):
    path, _ = window_run(tmp_path, 14, 10, 3)
    # The reference: the same run without a monitor, recording step 8's
    # first-layer weight (before its update), its activation and gradient.
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    seen = {}
    for step, (x, y) in enumerate(batches(14)):
        if step == 10:
            x = x * 1000.0
        h = model[0](x)
        loss = torch.nn.functional.mse_loss(model[2](model[1](h)), y)
        opt.zero_grad()
        loss.backward()
        seen[step] = (model[0].weight.detach().clone(), h.detach().clone(),
                      model[0].weight.grad.detach().clone())
        opt.step()
    conn = db(path)
    ids = layer_ids(conn)
    for step in (7, 8, 9, 10, 11):
        got = {r["kind"]: load_npy(r["data"]) for r in conn.execute(
            "SELECT kind, data FROM tensors WHERE step = ? AND layer = ? AND name IN ('weight', '0')",
            (step, ids["0"]))}
        w, h, g = seen[step]
        np.testing.assert_array_equal(got["weight"], w.numpy())
        np.testing.assert_array_equal(got["activation"], h.numpy())
        np.testing.assert_array_equal(got["grad"], g.numpy())


def test_window_clipped_at_the_start_and_the_end(tmp_path):
    start = tmp_path / "start"
    start.mkdir()
    path, _ = window_run(start, 8, 1, 3)
    conn = db(path)
    assert meta(conn)["status"] == "complete"
    assert [r[0] for r in conn.execute("SELECT DISTINCT step FROM tensors ORDER BY step")] == \
        [0, 1, 2, 3, 4]
    end = tmp_path / "end"
    end.mkdir()
    path, _ = window_run(end, 12, 10, 3)
    conn = db(path)
    m = meta(conn)
    assert m["status"] == "ended"
    assert (m["window_first"], m["window_last"]) == ("7", "11")
    assert [r[0] for r in conn.execute("SELECT DISTINCT step FROM tensors ORDER BY step")] == \
        [7, 8, 9, 10, 11]


def test_statistics_only_keeps_no_tensors(tmp_path):
    path, _ = window_run(tmp_path, 16, 10, 2, capture=False)
    conn = db(path)
    m = meta(conn)
    assert m["status"] == "complete" and m["anomaly_step"] == "10" and m["capture"] == "0"
    assert conn.execute("SELECT COUNT(*) FROM tensors").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM layer_steps").fetchone()[0] == 16 * 4


def test_large_tensors_are_sampled_with_a_stride(tmp_path):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = batches(3)
    ref = copy.deepcopy(model)
    path = tmp_path / "s.db"
    mon = Monitor(model, opt, triggers=[("at1", lambda s: s["step"] == 1)], capture_window=1,
                  output=path, sample_limit=100)
    train(model, opt, data)
    mon.close()
    conn = db(path)
    ids = layer_ids(conn)
    row = conn.execute("SELECT * FROM tensors WHERE step = 0 AND layer = ? AND kind = 'activation'",
                       (ids["0"],)).fetchone()
    # 32 x 12 = 384 elements > 100: stride ceil(384 / 100) = 4, 96 kept.
    assert (row["sampled"], row["sample_stride"], json.loads(row["shape"])) == (1, 4, [32, 12])
    expected = ref[0](data[0][0]).detach().reshape(-1)[::4].numpy()
    np.testing.assert_array_equal(load_npy(row["data"]), expected)
    small = conn.execute("SELECT * FROM tensors WHERE step = 0 AND layer = ? AND kind = 'weight' "
                         "AND name = 'bias'", (ids["0"],)).fetchone()
    assert (small["sampled"], small["sample_stride"]) == (0, 1)


def test_snapshot_copied_elsewhere_still_reads(tmp_path):
    first = tmp_path / "machine_a"
    first.mkdir()
    path, _ = window_run(first, 14, 10, 2)
    moved = tmp_path / "machine_b" / "copy.db"
    moved.parent.mkdir()
    shutil.copyfile(path, moved)
    shutil.rmtree(first)
    conn = db(moved)
    assert meta(conn)["format"] == "model-inspector/training-snapshot"
    n = 0
    for r in conn.execute("SELECT shape, sampled, data FROM tensors"):
        a = load_npy(r["data"])
        assert list(a.shape) == json.loads(r["shape"]) or r["sampled"]
        n += 1
    assert n == 5 * 17
    assert os.listdir(moved.parent) == ["copy.db"]


def test_atomic_write_keeps_the_old_file_on_failure(tmp_path):
    path = tmp_path / "s.db"
    path.write_bytes(b"the previous snapshot")
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    # A command that is not JSON: writing fails after the temporary file
    # was created and filled with the schema.
    mon = Monitor(model, opt, triggers=[], output=path, command=[object()])
    train(model, opt, batches(3))
    with pytest.raises(TypeError):
        mon.close()
    assert path.read_bytes() == b"the previous snapshot"
    assert os.listdir(tmp_path) == ["s.db"]
    # A good write replaces it whole, leaving no temporary file.
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with Monitor(model, opt, triggers=[], output=path):
        train(model, opt, batches(3))
    assert os.listdir(tmp_path) == ["s.db"]
    assert meta(db(path))["status"] == "no_anomaly"


def fire(tmp_path, triggers, inject, steps=10, opt_cls=torch.optim.SGD, lr=0.01):
    model = mlp()
    opt = opt_cls(model.parameters(), lr=lr)
    path = tmp_path / "t.db"
    mon = Monitor(model, opt, triggers=triggers, capture_window=1, output=path)
    train(model, opt, batches(steps), inject)
    mon.close()
    conn = db(path)
    ids = {v: k for k, v in layer_ids(conn).items()}
    rows = conn.execute("SELECT step, trigger, layer FROM triggers ORDER BY id").fetchall()
    return [(r[0], r[1], ids.get(r[2])) for r in rows], meta(conn)


def scale_at(step, factor):
    return lambda s, x, m: x * factor if s == step else x


def poison_at(step, value):
    def inject(s, x, m):
        if s == step:
            x = x.clone()
            x[0, 0] = value
        return x
    return inject


def test_each_trigger_fires_on_its_case(tmp_path):
    hits, m = fire(tmp_path, ["loss_spike"], scale_at(6, 1000.0))
    assert hits[0] == (6, "loss_spike", None) and m["anomaly_step"] == "6"
    hits, _ = fire(tmp_path, ["grad_norm:50"], scale_at(5, 1000.0))
    assert hits[0] == (5, "grad_norm", None)
    hits, _ = fire(tmp_path, ["nan"], poison_at(4, float("nan")))
    assert hits[0] == (4, "nan", None)  # the loss is NaN first
    assert hits[1] == (4, "nan", "0")   # then the first layer's activation
    hits, _ = fire(tmp_path, ["inf"], poison_at(4, float("inf")))
    assert (4, "inf", "0") in hits and all(s >= 4 for s, _, _ in hits)
    hits, _ = fire(tmp_path, ["act_range:100"], scale_at(3, 1000.0))
    assert hits[0] == (3, "act_range", "0")

    def kill_relus(s, x, m):
        if s == 6:
            with torch.no_grad():
                m[0].bias.fill_(-1e3)
        return x
    hits, _ = fire(tmp_path, ["dead_units"], kill_relus)
    assert hits[0] == (6, "dead_units", "0")
    hits, m = fire(tmp_path, [("step_two", lambda s: s["step"] == 2)], None)
    assert hits == [(2, "step_two", None)] and json.loads(m["triggers"]) == ["step_two"]


def test_healthy_run_raises_nothing(tmp_path):
    torch.manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(6, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32),
                                torch.nn.Tanh(), torch.nn.Linear(32, 3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(4)
    w = torch.randn(6, 3, generator=g)
    path = tmp_path / "h.db"
    with Monitor(model, opt, output=path) as mon:  # every trigger, default thresholds
        for _ in range(60):
            x = torch.randn(32, 6, generator=g)
            loss = torch.nn.functional.mse_loss(model(x), x @ w)
            opt.zero_grad()
            loss.backward()
            opt.step()
    conn = db(path)
    assert mon.fired == []
    assert conn.execute("SELECT COUNT(*) FROM triggers").fetchone()[0] == 0
    m = meta(conn)
    assert m["status"] == "no_anomaly" and "anomaly_step" not in m
    assert json.loads(m["triggers"]) == ["loss_spike:3:10", "grad_norm:100", "nan", "inf",
                                         "act_range:10000", "dead_units:0.3"]
    assert conn.execute("SELECT COUNT(*) FROM steps").fetchone()[0] == 60
    assert conn.execute("SELECT COUNT(*) FROM tensors").fetchone()[0] == 0


def test_clipping_is_seen_and_the_norm_is_before_it(tmp_path):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    norms = []
    path = tmp_path / "c.db"
    mon = Monitor(model, opt, triggers=[], output=path)
    train(model, opt, batches(4),
          clip=lambda m: norms.append(float(torch.nn.utils.clip_grad_norm_(m.parameters(), 0.01))))
    mon.close()
    rows = db(path).execute("SELECT grad_norm, clipped FROM steps ORDER BY step").fetchall()
    assert [r[1] for r in rows] == [1, 1, 1, 1]
    assert [r[0] for r in rows] == pytest.approx(norms, rel=REL)
    assert min(norms) > 0.01  # clipping changed the gradients: the norm is the one before


def test_explicit_loss_and_attention_and_projections(tmp_path):
    torch.manual_seed(0)

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(50, 16)
            self.attn = torch.nn.MultiheadAttention(16, 4, batch_first=True)
            self.head = torch.nn.Linear(16, 50)

        def forward(self, x):
            h = self.emb(x)
            a, _ = self.attn(h, h, h, need_weights=False)
            return self.head(a)

    model = Tiny()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    path = tmp_path / "a.db"
    x = torch.randint(0, 50, (8, 10), generator=torch.Generator().manual_seed(1))
    given = []
    with Monitor(model, opt, triggers=[("at2", lambda s: s["step"] == 2)], capture_window=1,
                 output=path) as mon:
        for step in range(4):
            logits = model(x)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 50), x.reshape(-1))
            # Gradients without Tensor.backward: the monitor is told the loss.
            grads = torch.autograd.grad(loss, list(model.parameters()))
            for p, g in zip(model.parameters(), grads):
                p.grad = g
            mon.step(loss * 2)
            given.append(float(loss) * 2)
            opt.step()
    conn = db(path)
    assert [r[0] for r in conn.execute("SELECT loss FROM steps ORDER BY step")] == \
        pytest.approx(given)
    ids = layer_ids(conn)
    rows = conn.execute("SELECT step, shape, data FROM tensors WHERE kind = 'attention' "
                        "ORDER BY step").fetchall()
    assert [r[0] for r in rows] == [1, 2, 3]
    w = load_npy(rows[0]["data"])
    assert json.loads(rows[0]["shape"]) == [4, 10, 10] and w.shape == (4, 10, 10)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-5)  # softmax rows, per head
    assert conn.execute("SELECT layer FROM tensors WHERE kind = 'attention' LIMIT 1").fetchone()[0] \
        == ids["attn"]
    methods = {r[0] for r in conn.execute("SELECT DISTINCT method FROM projections")}
    assert "pca" in methods and "tsne" in methods
    roles = conn.execute("SELECT role FROM samples WHERE step = 2 ORDER BY role").fetchall()
    assert [r[0] for r in roles] == ["anomalous", "normal"]
    assert conn.execute("SELECT COUNT(*) FROM projections WHERE step = 2 AND method = 'pca' "
                        "AND layer = ?", (ids["head"],)).fetchone()[0] == 8
    hist = conn.execute("SELECT counts FROM histograms WHERE step = 2 AND layer = ? AND "
                        "kind = 'activation'", (ids["head"],)).fetchone()
    assert len(json.loads(hist[0])) == 64 and sum(json.loads(hist[0])) == 8 * 10 * 50


def test_trigger_specs():
    assert parse_trigger("loss_spike:2:5").spec == "loss_spike:2:5"
    assert parse_trigger("grad_norm").spec == "grad_norm:100"
    for bad in ("loss_spike:x", "grad_norm:1:2", "nope", "dead_units:2"):
        with pytest.raises(ValueError):
            parse_trigger(bad)


# -- model-inspector trace ------------------------------------------------------

SCRIPT = textwrap.dedent("""\
    import sys
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.ReLU(), torch.nn.Linear(12, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, 4)
    g = torch.Generator().manual_seed(1)
    for step in range(16):
        x, y = torch.randn(32, 6, generator=g), torch.randn(32, 3, generator=g)
        if step == 8:
            x = x * 1000.0
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    print("trained")
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    """)


def trace(*args, cwd=None, env=None):
    return subprocess.run([BINARY, "trace", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env=env)


def test_trace_an_unmodified_script(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    out = tmp_path / "snap.db"
    proc = trace("--trigger", "loss_spike", "--window", "2", "--output", out, "--",
                 "/usr/bin/python3", script)
    assert proc.returncode == 0, proc.stderr
    assert "trained" in proc.stdout
    assert "anomaly at step 8" in proc.stderr
    conn = db(out)
    m = meta(conn)
    assert (m["status"], m["anomaly_step"], m["window_first"], m["window_last"]) == \
        ("complete", "8", "6", "10")
    assert json.loads(m["triggers"]) == ["loss_spike:3:10"]
    assert json.loads(m["command"]) == ["/usr/bin/python3", str(script)]
    assert (m["model"], m["optimizer"]) == ("Sequential", "SGD")
    assert conn.execute("SELECT COUNT(*) FROM steps").fetchone()[0] == 16
    assert [r[0] for r in conn.execute("SELECT DISTINCT step FROM tensors ORDER BY step")] == \
        [6, 7, 8, 9, 10]
    # The lr scheduler kept working through the wrapped step: 0.01, then x0.1 every 4.
    lrs = [r[0] for r in conn.execute("SELECT lr FROM steps ORDER BY step")]
    assert lrs == pytest.approx([0.01] * 4 + [0.001] * 4 + [1e-4] * 4 + [1e-5] * 4)


def test_trace_passes_the_exit_code_and_runs_a_script_named_first(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    proc = trace("--output", "snap.db", "--python", "/usr/bin/python3", "--", "train.py", "7",
                 cwd=tmp_path)
    assert proc.returncode == 7, proc.stderr
    assert meta(db(tmp_path / "snap.db"))["anomaly_step"] == "8"


def test_trace_runs_the_sitecustomize_it_hides(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import builtins\nbuiltins.MI_TEST_SITE = 42\n")
    script = tmp_path / "train.py"
    script.write_text("import builtins\nprint('site', getattr(builtins, 'MI_TEST_SITE', None))\n"
                      + SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), PACKAGE]))
    proc = trace("--output", tmp_path / "s.db", "--", "/usr/bin/python3", script, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "site 42" in proc.stdout
    assert (tmp_path / "s.db").exists()


def test_trace_errors(tmp_path):
    no_opt = tmp_path / "no_opt.py"
    no_opt.write_text("import torch\nprint(torch.nn.Linear(2, 2)(torch.ones(1, 2)).shape)\n")
    proc = trace("--output", tmp_path / "n.db", "--", "/usr/bin/python3", no_opt)
    assert proc.returncode == 3
    assert "created no torch.optim.Optimizer" in proc.stderr
    assert not (tmp_path / "n.db").exists()

    proc = trace("--", "/usr/bin/python3", tmp_path / "missing.py")
    assert proc.returncode == 3 and "does not exist" in proc.stderr

    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    proc = trace("--trigger", "loss_spike:x", "--", "/usr/bin/python3", script)
    assert proc.returncode == 2 and "loss_spike" in proc.stderr and "trained" not in proc.stdout

    proc = trace("--python", tmp_path / "no-such-python", "--", script)
    assert proc.returncode == 3 and "cannot start" in proc.stderr

    proc = trace("--output", tmp_path / "x.db")
    assert proc.returncode == 2
