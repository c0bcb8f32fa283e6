"""Tensor statistics and the probe store (src/probes, src/python/probe_bindings.cc,
python/model_inspector/store.py) and their reading with a run
(src/session/probe_queries.cc, the `probes` command, the server's probe routes).

Expected figures come from independent readers: NumPy for statistics
(numpy.nanmin/mean/std/linalg.norm on the finite elements, counts with
isnan/isposinf), numpy.load for kept tensors and NumPy's astype(float16) for
the float16 rounding, python3-onnx for node names, the sqlite3 module for the
store's tables, and the node-details route for which node an id is.
"""

import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import onnx
import pytest

from conftest import committed, FIXTURES, run


import model_inspector as mi  # noqa: E402
from model_inspector import ProbeStore, tensor_stats  # noqa: E402

RESNET = FIXTURES / "resnet18"


def numpy_stats(a):
    """The reference: NumPy on the finite elements."""
    x = np.asarray(a)
    if x.dtype == np.bool_:
        x = x.astype(np.uint8)
    f = x.astype(np.float64).ravel()
    finite = f[np.isfinite(f)]
    out = {
        "count": int(f.size),
        "nan": int(np.isnan(f).sum()),
        "pos_inf": int(np.isposinf(f).sum()),
        "neg_inf": int(np.isneginf(f).sum()),
        "zero": int((f == 0).sum()),
    }
    if finite.size:
        out.update(min=finite.min(), max=finite.max(), mean=finite.mean(),
                   std=finite.std(), l2=np.linalg.norm(finite),
                   abs_max=np.abs(finite).max())
    else:
        out.update(min=None, max=None, mean=None, std=None, l2=None, abs_max=None)
    return out


def assert_stats(got, want, rtol):
    for key in ("count", "nan", "pos_inf", "neg_inf", "zero"):
        assert got[key] == want[key], (key, got[key], want[key])
    for key in ("min", "max", "mean", "std", "l2", "abs_max"):
        if want[key] is None:
            assert got[key] is None, key
        else:
            assert got[key] == pytest.approx(want[key], rel=rtol, abs=rtol * (want["std"] or 1)), key


# -- statistics -------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_float_stats_match_numpy(dtype):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((7, 3001)) * 4 + 2).astype(dtype)
    a[0, 5] = np.nan
    a[3, 100] = np.inf
    a[6, 3000] = -np.inf
    a[2, :17] = 0
    got = tensor_stats(a)
    assert got["dtype"] == np.dtype(dtype).name
    assert got["shape"] == [7, 3001]
    assert_stats(got, numpy_stats(a), 1e-6 if dtype != np.float64 else 1e-12)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64,
                                   np.uint8, np.uint16, np.uint32, np.uint64])
def test_integer_stats_match_numpy(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(2)
    hi = min(info.max, 10_000)
    lo = max(info.min, -10_000)
    a = rng.integers(lo, hi, size=5000, dtype=dtype)
    a[:3] = 0
    got = tensor_stats(a)
    assert got["dtype"] == np.dtype(dtype).name
    assert_stats(got, numpy_stats(a), 1e-9)


def test_bool_scalar_empty_and_strided():
    assert_stats(tensor_stats(np.array([True, False, True])), numpy_stats([1, 0, 1]), 1e-12)
    s = tensor_stats(np.float32(2.5))
    assert s["shape"] == [] and s["count"] == 1 and s["mean"] == 2.5
    e = tensor_stats(np.zeros((0, 4), np.float32))
    assert e["count"] == 0 and e["mean"] is None and e["shape"] == [0, 4]
    a = np.arange(60, dtype=np.float64).reshape(6, 10)[:, ::3]  # not contiguous
    assert_stats(tensor_stats(a), numpy_stats(a), 1e-12)
    big_endian = np.arange(10, dtype=">f4")
    assert tensor_stats(big_endian)["max"] == 9.0
    nothing_finite = tensor_stats(np.array([np.nan, -np.inf]))
    assert nothing_finite["min"] is None and nothing_finite["nan"] == 1


def test_bfloat16_from_torch_and_raw_bits():
    import torch  # Debian python3-torch: a missing one fails
    t = (torch.randn(1000) * 3).to(torch.bfloat16)
    t[7] = float("nan")
    got = tensor_stats(t)
    assert got["dtype"] == "bfloat16"
    # Reference: the same values widened to float32 by torch itself.
    assert_stats(got, numpy_stats(t.float().numpy()), 1e-6)
    # 0x3f80 = 1.0, 0xc040 = -3.0 in bfloat16 (the upper half of float32).
    raw = np.array([0x3F80, 0xC040], dtype=np.uint16)
    assert tensor_stats(raw, dtype="bfloat16")["min"] == -3.0
    with pytest.raises(mi.InvalidArgument):
        tensor_stats(np.zeros(3, np.float32), dtype="bfloat16")


def test_torch_tensor_and_variance_of_a_large_mean():
    import torch  # Debian python3-torch: a missing one fails
    x = torch.full((10001,), 1e6, dtype=torch.float64)
    x[::2] += 1
    x[1::2] -= 1
    x[-1] = 1e6
    got = tensor_stats(x)
    assert got["mean"] == pytest.approx(x.numpy().mean(), rel=1e-15)
    assert got["std"] == pytest.approx(x.numpy().std(), rel=1e-9)


def test_scope_glob_match_reads_node_search_globs():
    # docs/reference/http-api.md "Search": trailing whole segments,
    # case-insensitive, '*' within a segment, '**' across, '/' anchors.
    m = mi._core.scope_glob_match
    assert m("layer1/*/conv*", "/layer1/layer1.0/conv1")
    # Trailing segments: the node name's last segment must be matched too.
    assert not m("layer1/*/conv*", "/layer1/layer1.0/conv1/Conv")
    assert m("layer1/*/conv*/*", "/layer1/layer1.0/conv1/Conv")
    assert not m("layer1/*/conv*", "/layer1/layer1.0/bn1/BatchNormalization")
    assert m("CONV1", "/layer1/layer1.0/conv1")
    assert m("/layer1/**", "/layer1/layer1.0/conv1/Conv")
    assert not m("/layer1.0/*", "/layer1/layer1.0/conv1")


# -- the store ----------------------------------------------------------------

def test_round_trip_with_kept_tensors(tmp_path):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    with ProbeStore(tmp_path) as store:
        run_id = store.begin_run("torch", model="m.onnx", label="first", inputs="x.npy")
        stats = store.add(run_id, "/a/Conv:0", a, node="/a/Conv", order=0, keep="tensor")
        assert_stats(stats, numpy_stats(a), 1e-6)
        store.add(run_id, "/a/Conv:in0", a * 2, node="/a/Conv", kind="input", order=0)
        store.add(run_id, "/b/Relu:0", np.maximum(a, 0), node="/b/Relu", order=1,
                  keep="tensor", fp16=True)
        store.add_plugin_metrics(run_id, "/b/Relu:0", "sparsity", {"zero_fraction": np.float32(0.5)})
        store.add_trigger_hit(run_id, "range:-1:1", "/a/Conv:0", "/a/Conv", "producer", "max 2.1")
        assert store.runs() == []  # nothing before end_run
        store.end_run(run_id, elapsed_ns=42)

        runs = store.runs()
        assert [r["id"] for r in runs] == [run_id]
        assert runs[0]["label"] == "first" and runs[0]["probes"] == 3
        assert runs[0]["status"] == "complete" and runs[0]["elapsed_ns"] == 42
        np.testing.assert_array_equal(store.tensor("/a/Conv:0"), a)
        np.testing.assert_array_equal(store.tensor("/b/Relu:0"),
                                      np.maximum(a, 0).astype(np.float16))
        assert store.tensor("/a/Conv:in0") is None
        assert [p["probe"] for p in store.probes()] == ["/a/Conv:0", "/a/Conv:in0", "/b/Relu:0"]
        assert store.plugin_metrics()[0]["metrics"] == {"zero_fraction": 0.5}
        assert store.trigger_hits()[0]["role"] == "producer"
        table = store.table()
        assert list(table["probe"]) == ["/a/Conv:0", "/a/Conv:in0", "/b/Relu:0"]
        assert table.loc[0, "mean"] == pytest.approx(float(a.astype(np.float64).mean()), rel=1e-6)

    # The tables as SQLite itself reads them.
    db = sqlite3.connect(tmp_path / "probes" / "probes.db")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = db.execute("SELECT probe, kind, array, sampled FROM probes ORDER BY seq").fetchall()
    assert rows == [("/a/Conv:0", "output", f"arrays/{run_id}/0.npy", 0),
                    ("/a/Conv:in0", "input", None, 0),
                    ("/b/Relu:0", "output", f"arrays/{run_id}/1.npy", 0)]
    db.close()


def test_large_tensor_sampling_rule(tmp_path):
    # 3,000,000 elements > 2^20: stride ceil(3e6 / 2^20) = 3, so the sample
    # is a.ravel()[::3], 1,000,000 elements.
    a = np.arange(3_000_000, dtype=np.float32).reshape(1000, 3000)
    with ProbeStore(tmp_path) as store:
        r = store.begin_run("torch")
        stats = store.add(r, "big:0", a, node="big", keep="tensor")
        store.end_run(r)
        row = store.probes()[0]
        assert row["sampled"] is True and row["sample_stride"] == 3
        assert row["stats"]["shape"] == [1000, 3000]
        np.testing.assert_array_equal(store.tensor("big:0"), a.ravel()[::3])
    assert stats["mean"] == pytest.approx(a.astype(np.float64).mean(), rel=1e-6)
    assert mi.store.SAMPLE_LIMIT == 2 ** 20


def test_keeps_the_last_runs_and_series(tmp_path):
    with ProbeStore(tmp_path, keep_runs=3) as store:
        ids = []
        for i in range(5):
            r = store.begin_run("onnxruntime-node")
            store.add(r, "n:0", np.full(4, float(i)), node="n")
            for step in range(2):
                store.add(r, "n:0", np.full(2, 10.0 * i + step), node="n", step=step)
            store.end_run(r)
            ids.append(r)
        assert [r["id"] for r in store.runs()] == ids[2:]
        assert store.series("n:0", "mean") == [{"run": i, "value": float(v)}
                                               for i, v in zip(ids[2:], (2, 3, 4))]
        assert store.series("n:0", "mean", last=2) == [{"run": ids[3], "value": 3.0},
                                                       {"run": ids[4], "value": 4.0}]
        assert [s["stats"]["mean"] for s in store.steps("n:0")] == [40.0, 41.0]
        assert store.stats("n:0", run_id=ids[2])["mean"] == 2.0
        with pytest.raises(ValueError):
            store.series("n:0", "median")
    arrays = tmp_path / "probes" / "arrays"
    assert not any((arrays / str(i)).exists() for i in ids[:2])


def test_a_crashed_writer_leaves_no_visible_run(tmp_path):
    # A writer killed between begin_run and end_run (os._exit: no cleanup).
    script = textwrap.dedent(f"""
        import os, numpy as np
        from model_inspector import ProbeStore
        s = ProbeStore({str(tmp_path)!r})
        r = s.begin_run("torch")
        s.add(r, "x:0", np.ones(8, np.float32), node="x", keep="tensor")
        print(r, flush=True)
        os._exit(9)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 9, proc.stderr
    dead = int(proc.stdout)
    assert (tmp_path / "probes" / "arrays" / str(dead) / "0.npy").exists()
    with ProbeStore(tmp_path, keep_runs=1) as store:
        assert store.runs() == [] and store.probes() == []
        r = store.begin_run("torch")
        store.end_run(r)
        assert [x["id"] for x in store.runs()] == [r]
    assert not (tmp_path / "probes" / "arrays" / str(dead)).exists()


def test_two_processes_write_one_store(tmp_path):
    script = textwrap.dedent(f"""
        import numpy as np
        from model_inspector import ProbeStore
        s = ProbeStore({str(tmp_path)!r}, keep_runs=100)
        for i in range(5):
            r = s.begin_run("torch")
            s.add(r, "x:0", np.arange(1000, dtype=np.float32), node="x")
            s.end_run(r)
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
        p.stderr.close()
    with ProbeStore(tmp_path, keep_runs=100) as store:
        runs = store.runs()
        assert len(runs) == 10 and len({r["id"] for r in runs}) == 10
        assert all(r["probes"] == 1 for r in runs)


def test_errors_name_what_was_expected(tmp_path):
    with ProbeStore(tmp_path) as store:
        r = store.begin_run("torch")
        with pytest.raises(mi.InvalidArgument, match="producer"):
            store.add_trigger_hit(r, "nan", "x:0", "x", "culprit")
        with pytest.raises(mi.NotFound, match="begin_run"):
            store.add(r + 100, "x:0", np.ones(2), node="x")
        with pytest.raises(mi.Unsupported, match="complex64"):
            store.add(r, "x:0", np.ones(2, np.complex64), node="x")
        with pytest.raises(ValueError, match="keep"):
            store.add(r, "x:0", np.ones(2), node="x", keep="all")
        store.end_run(r)
        with pytest.raises(mi.NotFound):
            store.end_run(r)  # a run ends once
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "probes").mkdir()
    (tmp_path / "other" / "probes" / "probes.db").write_text("not sqlite " * 100)
    with pytest.raises(mi.Error, match="probes.db"):
        ProbeStore(tmp_path / "other")


# -- reading it with the run ----------------------------------------------------

def resnet_run_dir(tmp_path):
    """A run directory as `start` lays it out, with the ResNet-18 fixture's
    model, ORT's optimized graph and profile, plus a probe store written
    here: three runs over the first four framework nodes (names from
    python3-onnx), the last one with a trigger hit and a plugin metric."""
    d = tmp_path / "r1"
    (d / "ort").mkdir(parents=True)
    shutil.copy(committed(RESNET / "model.onnx"), d / "model.onnx")
    shutil.copy(committed(RESNET / "ort_all" / "model.optimized.onnx"),
                d / "ort" / "model.optimized.onnx")
    shutil.copy(committed(RESNET / "ort_all" / "onnxruntime_profile.json"),
                d / "ort" / "onnxruntime_profile.json")
    (d / "manifest.json").write_text(json.dumps({
        "model_inspector_run": 1,
        "files": {"framework_model": "model.onnx",
                  "compiled_model": "ort/model.optimized.onnx"}}))
    nodes = [n.name for n in onnx.load(str(d / "model.onnx"), load_external_data=False).graph.node][:4]
    rng = np.random.default_rng(4)
    written = {}
    with ProbeStore(d) as store:
        for k in range(3):
            r = store.begin_run("onnxruntime-node", model="model.onnx", level="framework")
            for order, name in enumerate(nodes):
                a = rng.standard_normal((1, 8, 16, 16)).astype(np.float32) + k
                if k == 2 and order == 2:
                    a[0, 0, 0, :3] = np.nan
                store.add(r, f"{name}:0", a, node=name, order=order)
                written[(r, name)] = a
            if k == 2:
                store.add_trigger_hit(r, "nan", f"{nodes[2]}:0", nodes[2], "producer", "3 NaN",
                                      order=2)
                store.add_plugin_metrics(r, f"{nodes[1]}:0", "sparsity", {"zero_fraction": 0.25})
            store.end_run(r, status="stopped" if k == 2 else "complete",
                          stopped_at=f"{nodes[2]}:0" if k == 2 else None)
        run_ids = [x["id"] for x in store.runs()]
    return d, nodes, run_ids, written


def test_probes_command(tmp_path):
    d, nodes, run_ids, written = resnet_run_dir(tmp_path)
    doc = json.loads(run("probes", d, "--format", "json").stdout)
    assert [r["id"] for r in doc["runs"]] == run_ids and doc["run"] == run_ids[-1]
    assert [p["probe"] for p in doc["probes"]] == [f"{n}:0" for n in nodes]
    for p in doc["probes"]:
        assert_stats(p["stats"], numpy_stats(written[(run_ids[-1], p["node"])]), 1e-6)
    assert doc["trigger_hits"][0]["node"] == nodes[2]
    assert doc["plugin_metrics"][0]["metrics"] == {"zero_fraction": 0.25}

    one = json.loads(run("probes", d, "--probe", f"{nodes[0]}:0", "--format", "json").stdout)
    assert [p["probe"] for p in one["probes"]] == [f"{nodes[0]}:0"]
    means = [s["stats"]["mean"] for s in one["series"][f"{nodes[0]}:0"]]
    # Means near 0 against a spread of 1: float32 precision is absolute here.
    assert means == pytest.approx([written[(r, nodes[0])].astype(np.float64).mean()
                                   for r in run_ids], abs=1e-6)

    text = run("probes", d, "--run", str(run_ids[0])).stdout
    assert f"run {run_ids[0]}: 4 probes" in text and nodes[3] in text
    missing = run("probes", d, "--run", "999", check=False)
    assert missing.returncode == 3 and "runs kept" in missing.stderr
    absent = run("probes", tmp_path, check=False)
    assert absent.returncode == 3 and "no probe store" in absent.stderr


def test_a_run_directory_with_probes_opens_with_them(tmp_path):
    d, nodes, run_ids, written = resnet_run_dir(tmp_path)
    summary = run("summary", d, "--format", "json")
    assert "probes.db" not in summary.stderr
    plain = run("summary", RESNET / "ort_all", "--format", "json")
    # The probe store is no input: the same summary as without it.
    assert len(json.loads(summary.stdout)["op_types"]) == len(json.loads(plain.stdout)["op_types"])

    with mi.open(d) as r:
        assert not any("probes" in i["path"] for i in r.inputs)
        probes = r.probes("framework")
        assert probes["run"] == run_ids[-1]
        assert probes["stats_names"][:3] == ["count", "nan", "pos_inf"]
        by_name = {}
        for node_id, entry in probes["nodes"].items():
            name = r.node("framework", int(node_id))["name"]
            by_name[name] = entry
        assert sorted(by_name) == sorted(nodes)
        for name in nodes:
            assert_stats(by_name[name]["stats"], numpy_stats(written[(run_ids[-1], name)]), 1e-6)
        assert by_name[nodes[1]]["plugin"] == {"sparsity": {"zero_fraction": 0.25}}
        hit = probes["trigger_hits"][0]
        assert r.node("framework", hit["node_id"])["name"] == nodes[2]

        details = r.node("framework", nodes[0])
        assert details["probes"]["run"] == run_ids[-1]
        assert [p["probe"] for p in details["probes"]["probes"]] == [f"{nodes[0]}:0"]

        node = r.node_probes("framework", nodes[0])
        series = node["probes"][0]["series"]
        assert [s["run"] for s in series] == run_ids
        assert [s["stats"]["max"] for s in series] == pytest.approx(
            [float(written[(k, nodes[0])].max()) for k in run_ids], rel=1e-7)
        # A node no probe names: no probes, and no probe section problem.
        last = r.node("framework", 10)
        assert last["probes"]["probes"] == [] or last["name"] in nodes

    # A run without a probe store: node details unchanged (no section).
    with mi.open(RESNET / "ort_all") as r:
        assert "probes" not in r.node("framework", 0)
        assert r.probes("framework")["store"] is None


def test_a_directory_of_probes_alone(tmp_path):
    with ProbeStore(tmp_path / "only") as store:
        r = store.begin_run("torch")
        store.add(r, "x:0", np.ones(3, np.float32), node="x")
        store.end_run(r)
    proc = run("summary", tmp_path / "only", check=False)
    assert proc.returncode == 2, proc.stderr
    assert "tensor probes only" in proc.stderr and "model-inspector probes" in proc.stderr
    # A folder of runs: the run's probe folder inside is no input either.
    (tmp_path / "runs").mkdir()
    d, nodes, run_ids, written = resnet_run_dir(tmp_path / "runs")
    proc = run("summary", tmp_path / "runs", "--format", "json")
    assert "probes.db" not in proc.stderr and "npy" not in proc.stderr
    with mi.open(tmp_path / "runs") as r:
        assert r.probes("framework")["run"] == run_ids[-1]


def test_server_probe_routes(tmp_path):
    from served import ServedProcess
    d, nodes, run_ids, written = resnet_run_dir(tmp_path)
    server = ServedProcess(["open", "--no-browser", "--quiet", d], 300)
    try:
        q = "&" + server.query if server.query else ""
        nq = "?" + server.query if server.query else ""
        doc = server.get_json(f"/api/runs/0/probes?level=framework{q}")
        assert doc["run"] == run_ids[-1] and len(doc["runs"]) == 3
        for node_id, entry in doc["nodes"].items():
            name = server.get_json(f"/api/runs/0/levels/framework/nodes/{node_id}{nq}")["name"]
            assert entry["probe"] == f"{name}:0"
            assert entry["stats"]["nan"] == int(np.isnan(written[(run_ids[-1], name)]).sum())
        node_id = next(iter(doc["nodes"]))
        one = server.get_json(f"/api/runs/0/probes/node?level=framework&id={node_id}&last=2{q}")
        assert [s["run"] for s in one["probes"][0]["series"]] == run_ids[1:]
        server.get_json(f"/api/runs/0/probes/node?level=framework&id=x{q}", status=400)
        server.get_json(f"/api/runs/0/probes?level=nowhere{q}", status=404)

        # A run added while the server holds the session is seen at once.
        with ProbeStore(d) as store:
            r = store.begin_run("torch", level="framework")
            store.add(r, f"{nodes[0]}:0", np.zeros(3, np.float32), node=nodes[0])
            store.end_run(r)
        again = server.get_json(f"/api/runs/0/probes?level=framework{q}")
        assert again["run"] == r and len(again["nodes"]) == 1
    finally:
        assert server.close() == 0
