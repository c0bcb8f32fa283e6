"""`python3 -m model_inspector.runner` as `model-inspector compare` and the
UI's re-run call it: a subprocess writing a probe run into a run directory.

Expected values: the probed tensors are recomputed with numpy from the
input file (a Relu is max(x, 0); the graph input is the .npy itself), the
node list comes from python3-onnx, and what the store holds is read back
through model_inspector.ProbeStore (H1's reader, not the runner)."""

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import FIXTURES, PACKAGE


from model_inspector import ProbeStore  # noqa: E402

RESNET = FIXTURES / "resnet18" / "model.onnx"


def runner(*args, check=True):
    env = dict(os.environ, PYTHONPATH=PACKAGE)
    proc = subprocess.run([sys.executable, "-m", "model_inspector.runner", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"runner exited {proc.returncode}: {proc.stderr}")
    return proc


def log_model(path, relu_name="relu"):
    """x -> Relu -> Log: Log of a ReLU output is -inf where the ReLU zeroed."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name=relu_name),
             helper.make_node("Log", ["r"], ["y"], name="log")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def test_every_node_of_resnet18_into_a_new_run_dir(tmp_path):
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "run"
    proc = runner("--model", RESNET, "--inputs", tmp_path / "x.npy", "--out", out,
                  "--probes", "*", "--format", "json")
    result = json.loads(proc.stdout)
    names = [n.name for n in onnx.load(RESNET).graph.node]
    assert result["probes"] == len(names) == 49
    assert result["status"] == "complete" and result["stopped_at"] is None
    assert result["outputs"] == {"logits": [1, 1000]}
    # The new directory opens as a run: manifest + the model.
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["files"]["framework_model"] == "model.onnx"
    assert (out / "model.onnx").read_bytes() == RESNET.read_bytes()
    with ProbeStore(str(out)) as store:
        probes = store.probes(result["run_id"])
        assert sorted(p["probe"] for p in probes) == sorted(f"{n}:0" for n in names)
        relu = store.stats("/relu/Relu:0", run_id=result["run_id"])
        assert relu["neg_inf"] == 0 and relu["min"] == 0.0
        assert relu["count"] == 8 * 112 * 112


def test_tensors_kept_and_patterns(tmp_path):
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "run"
    result = json.loads(runner("--model", RESNET, "--inputs", f"input={tmp_path / 'x.npy'}",
                               "--out", out, "--probes", "/conv1/Conv:in0,/relu/Relu",
                               "--keep", "tensor", "--format", "json").stdout)
    assert result["probes"] == 2
    with ProbeStore(str(out)) as store:
        np.testing.assert_array_equal(store.tensor("/conv1/Conv:in0", run_id=result["run_id"]), x)
        relu = store.tensor("/relu/Relu:0", run_id=result["run_id"])
        assert relu.shape == (1, 8, 112, 112) and relu.min() == 0.0


def test_trigger_stops_at_the_producer(tmp_path):
    model = tmp_path / "log.onnx"
    log_model(model)
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "run"
    result = json.loads(runner("--model", model, "--inputs", tmp_path / "x.npy", "--out", out,
                               "--triggers", "inf", "--format", "json").stdout)
    assert result["status"] == "stopped" and result["stopped_at"] == "log"
    assert result["first_hit"]["role"] == "producer"
    with ProbeStore(str(out)) as store:
        y = store.stats("log:0", run_id=result["run_id"])
        # log(max(x, 0)): two -inf (the negative entries), log(1) = 0 once.
        assert y["neg_inf"] == 2 and y["zero"] == 1
        hits = store.trigger_hits(result["run_id"])
        assert [(h["node"], h["role"]) for h in hits] == [("log", "producer")]


def test_existing_run_dir_is_left_as_it_is(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    manifest = '{"model_inspector_run": 1, "files": {"framework_model": "elsewhere.onnx"}}\n'
    (out / "manifest.json").write_text(manifest)
    first = json.loads(runner("--model", RESNET, "--out", out, "--probes", "/fc/Gemm",
                              "--format", "json").stdout)
    second = json.loads(runner("--model", RESNET, "--out", out, "--probes", "/fc/Gemm",
                               "--label", "again", "--format", "json").stdout)
    assert (out / "manifest.json").read_text() == manifest
    assert not (out / "model.onnx").exists()
    assert second["run_id"] > first["run_id"]
    with ProbeStore(str(out)) as store:
        runs = store.runs()
        assert [r["label"] for r in runs if r["id"] == second["run_id"]] == ["again"]
        # Deterministic default input: the same run twice, the same output stats.
        assert store.stats("/fc/Gemm:0", run_id=first["run_id"])["mean"] == \
            store.stats("/fc/Gemm:0", run_id=second["run_id"])["mean"]


@pytest.mark.parametrize("args, code, message", [
    (["--probes", "nothing*"], 3, "matches no node"),
    (["--model", "missing.onnx"], 3, "no such model file"),
])
def test_errors(tmp_path, args, code, message):
    base = {"--model": str(RESNET), "--out": str(tmp_path / "run")}
    extra = dict(zip(args[::2], args[1::2]))
    base.update({k: v for k, v in extra.items() if k in base})
    flat = [a for k, v in base.items() for a in (k, v)]
    flat += [a for k, v in extra.items() if k not in base for a in (k, v)]
    proc = runner(*flat, check=False)
    assert proc.returncode == code
    assert message in proc.stderr


def test_compiled_level_is_recorded_with_its_graph(tmp_path):
    out = tmp_path / "run"
    result = json.loads(runner("--model", RESNET, "--out", out, "--level", "compiled",
                               "--probes", "*", "--format", "json").stdout)
    optimized = onnx.load(out / "ort" / "model.optimized.onnx")
    # Every node of ONNX Runtime's optimized graph ran and was probed.
    assert result["nodes"] == len(optimized.graph.node)
    assert any(n.domain == "com.microsoft.nchwc" for n in optimized.graph.node)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["files"]["compiled_model"] == "ort/model.optimized.onnx"
    with ProbeStore(str(out)) as store:
        (run,) = [r for r in store.runs() if r["id"] == result["run_id"]]
        assert run["level"] == "compiled"
        names = {p["node"] for p in store.probes(result["run_id"])}
        assert names == {n.name for n in optimized.graph.node}


def test_probe_values_split_at_commas_unless_they_name_a_node(tmp_path):
    model = tmp_path / "log.onnx"
    log_model(model, relu_name="relu,first")
    out = tmp_path / "run"
    one = json.loads(runner("--model", model, "--out", out, "--probes", "relu,first:0",
                            "--format", "json").stdout)
    both = json.loads(runner("--model", model, "--out", out, "--probes", "log,relu*",
                             "--format", "json").stdout)
    with ProbeStore(str(out)) as store:
        assert [p["probe"] for p in store.probes(one["run_id"])] == ["relu,first:0"]
        assert sorted(p["probe"] for p in store.probes(both["run_id"])) == \
            ["log:0", "relu,first:0"]
