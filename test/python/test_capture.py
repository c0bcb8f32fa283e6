"""model_inspector.capture around real PyTorch and ONNX Runtime code: the
run directories it writes open with `model-inspector summary` with every
compiled node linked, as the hand-made fixtures do.

Expected figures: node counts and names read with python3-onnx from the
files capture wrote and from the committed fixtures; the summary of the
fixtures' own model.onnx + ort_all/model.optimized.onnx for the link counts
(the same ResNet-18, compiled by the same ONNX Runtime at level "all" on
the same kind of machine); event counts read from the traces with json.
"""

import json
import os
import sys

import onnx
import pytest

from conftest import FIXTURES, PACKAGE, run

if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

import torch  # noqa: E402

import make_models  # noqa: E402  (test/fixtures/make_models.py: the fixtures' own models)
import model_inspector as mi  # noqa: E402
from model_inspector.backends.onnxruntime import InferenceSession  # noqa: E402

RESNET = FIXTURES / "resnet18"


def summary(*paths):
    return json.loads(run("summary", *paths, "--format", "json").stdout)


@pytest.fixture(scope="module")
def fixture_graph():
    """How the hand-made fixture links: its framework model, level-"all"
    compiled model and PyTorch profiler trace."""
    return summary(RESNET / "model.onnx", RESNET / "ort_all" / "model.optimized.onnx",
                   RESNET / "torch_profile.pt.trace.json.gz")["graph"]


def node_names(path):
    return [n.name for n in onnx.load(path).graph.node]


def test_capture_pytorch_resnet18(tmp_path, fixture_graph):
    torch.set_num_threads(1)
    model = make_models.build_resnet18_slim()
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    run_dir = tmp_path / "r1"
    with mi.capture(run_dir) as cap:
        with torch.no_grad():
            for _ in range(2):
                model(x)
    assert cap.backend == "pytorch"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["model_inspector_run"] == 1
    assert manifest["files"] == {"framework_model": "model.onnx",
                                 "compiled_model": "ort/model.optimized.onnx"}
    assert manifest["enable_graph"] and manifest["enable_runtime"]

    # The export is the fixture's ResNet-18 (same module, same exporter).
    assert node_names(run_dir / "model.onnx") == node_names(RESNET / "model.onnx")
    optimized = onnx.load(run_dir / "ort" / "model.optimized.onnx")
    assert any(n.domain == "com.microsoft.nchwc" for n in optimized.graph.node)

    s = summary(run_dir)
    graph = s["graph"]
    assert graph["framework_nodes"] == 49
    assert graph["compiled_nodes"] == len(optimized.graph.node)
    assert graph["unexplained_compiled_nodes"] == 0
    assert graph == fixture_graph

    # The profiler covered the block: 20 convolutions per forward, 2 forwards.
    events = json.loads((run_dir / "torch" / "trace.json").read_text())
    events = events if isinstance(events, list) else events["traceEvents"]
    assert sum(1 for e in events if e.get("name") == "aten::conv2d") == 40
    assert s["dialect"] == "pytorch" and s["tasks"] > 0

    for name in ("graph.json", "trace.json", "summary.json", "analyses.json"):
        assert (run_dir / "model-inspector-export" / name).is_file()
    exported = json.loads((run_dir / "model-inspector-export" / "summary.json").read_text())
    assert exported["graph"] == graph


def test_capture_onnxruntime_session(tmp_path):
    import numpy as np
    x = ((np.arange(3 * 224 * 224) % 7) / 7).astype(np.float32).reshape(1, 3, 224, 224)
    run_dir = tmp_path / "r2"
    with mi.capture(run_dir) as cap:
        sess = InferenceSession(str(RESNET / "model.onnx"))
        for _ in range(3):
            sess.run(None, {"input": x})
    assert cap.backend == "onnxruntime"
    assert (run_dir / "model.onnx").read_bytes() == (RESNET / "model.onnx").read_bytes()
    optimized = onnx.load(run_dir / "ort" / "model.optimized.onnx")

    s = summary(run_dir)
    graph = s["graph"]
    assert graph["unexplained_compiled_nodes"] == 0
    assert graph["compiled_nodes"] == len(optimized.graph.node)
    # As the fixture's model, optimized model and profile link.
    assert graph == summary(RESNET / "model.onnx", RESNET / "ort_all" / "model.optimized.onnx",
                            RESNET / "ort_all" / "onnxruntime_profile.json")["graph"]
    assert graph["not_executed_nodes"] == 0
    # Every compiled node ran in each of the 3 runs and every task is linked.
    profile = json.loads((run_dir / "ort" / "onnxruntime_profile.json").read_text())
    kernels = [e for e in profile if e.get("cat") == "Node"
               and e.get("name", "").endswith("_kernel_time")]
    assert len(kernels) == 3 * len(optimized.graph.node)
    assert s["tasks"] == len(kernels) and s["linked_tasks"] == s["tasks"]
    sess.close()


def test_sessions_of_the_package_itself_are_not_recorded(tmp_path):
    from model_inspector.backends.onnxruntime import OnnxRuntimeBackend
    from model_inspector.capture import CaptureError
    with pytest.raises(CaptureError, match="nothing to record"):
        with mi.capture(tmp_path / "r3"):
            OnnxRuntimeBackend(RESNET / "model.onnx", level="compiled").close()


def test_capture_refuses_a_directory_holding_a_run(tmp_path):
    run_dir = tmp_path / "r4"
    run_dir.mkdir()
    (run_dir / "manifest.json").write_text("{}")
    with pytest.raises(FileExistsError, match="already holds a run"):
        with mi.capture(run_dir):
            pass


def test_captured_run_gains_probes_on_both_levels(tmp_path):
    """capture, then the runner into the same directory at each level: every
    framework node and every compiled node of the run has statistics."""
    import subprocess
    import numpy as np
    x = ((np.arange(3 * 224 * 224) % 7) / 7).astype(np.float32).reshape(1, 3, 224, 224)
    run_dir = tmp_path / "r5"
    with mi.capture(run_dir):
        sess = InferenceSession(str(RESNET / "model.onnx"))
        sess.run(None, {"input": x})
    sess.close()
    env = dict(os.environ, PYTHONPATH=PACKAGE)
    for level in ("framework", "compiled"):
        subprocess.run([sys.executable, "-m", "model_inspector.runner", "--model",
                        str(run_dir / "model.onnx"), "--out", str(run_dir), "--level", level],
                       check=True, env=env, capture_output=True, timeout=300)
    # The run directory itself is unchanged: the runner adds probes/ only.
    assert json.loads((run_dir / "manifest.json").read_text())["captured_by"] == \
        "model_inspector.capture"
    framework = node_names(run_dir / "model.onnx")
    compiled = node_names(run_dir / "ort" / "model.optimized.onnx")
    with mi.open(str(run_dir)) as run:
        f = run.probes("framework")
        c = run.probes("compiled")
    by_name = lambda probes: {v["probe"].rpartition(":")[0] for v in probes["nodes"].values()}
    assert by_name(f) == set(framework) and len(f["nodes"]) == 49
    assert by_name(c) == set(compiled) and len(c["nodes"]) == len(compiled)
