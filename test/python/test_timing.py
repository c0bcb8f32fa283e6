"""Timing analyses end to end: clock calibration applied at open (trace.json
raw vs calibrated starts, analyses.json), `--no-calibrate`, `path
--critical` / `--node`, on a hand-written skewed PyTorch trace with known
answers and on the real fixtures."""
import json

import jsonschema
import pytest

from conftest import FIXTURES, SCHEMAS, run

# A PyTorch (Kineto) trace whose GPU clock lags the host by 6 us: the first
# kernel "starts" at 4 us, before its cudaLaunchKernel at 10 us. The tightest
# launch anchor gives the offset: 10 - 4 = 6 us.
SKEWED = {"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 50,
     "args": {"External id": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10,
     "dur": 5, "args": {"correlation": 100, "External id": 1}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 4, "dur": 20,
     "args": {"correlation": 100, "External id": 1, "device": 0, "stream": 7}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 30,
     "dur": 5, "args": {"correlation": 101, "External id": 1}},
    {"ph": "X", "cat": "kernel", "name": "relu", "pid": 0, "tid": 7, "ts": 30, "dur": 10,
     "args": {"correlation": 101, "External id": 1, "device": 0, "stream": 7}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": 1, "tid": 1,
     "ts": 40, "dur": 200, "args": {"correlation": 102}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 395, "dur": 20,
     "args": {"External id": 2}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 400,
     "dur": 5, "args": {"correlation": 103, "External id": 2}},
    {"ph": "X", "cat": "kernel", "name": "add", "pid": 0, "tid": 7, "ts": 405, "dur": 10,
     "args": {"correlation": 103, "External id": 2, "device": 0, "stream": 7}},
    {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
]}


@pytest.fixture
def skewed(tmp_path):
    path = tmp_path / "skewed.pt.trace.json"
    path.write_text(json.dumps(SKEWED))
    return path


def validate(doc):
    schema = json.loads((SCHEMAS / "analyses.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)


def test_calibration_recovers_the_offset_and_is_exported(skewed, tmp_path):
    out = tmp_path / "out"
    run("export", skewed, "--out", out, "-q")
    trace = json.loads((out / "trace.json").read_text())
    stream = next(s for s in trace["streams"] if s["kind"] == "device_stream")
    assert stream["clock_offset_us"] == 6
    gemm = next(t for t in trace["tasks"] if t["kernel_name"] == "gemm")
    assert gemm["start_us"] == 4 and gemm["calibrated_start_us"] == 10
    analyses = json.loads((out / "analyses.json").read_text())
    validate(analyses)
    cal = analyses["calibration"]
    assert cal["computed"] and cal["converged"]
    assert cal["anchors_by_kind"]["launch"] == 3
    assert cal["violations_before"] == {"count": 1, "worst_ns": 6000}
    assert cal["residual_violations"]["count"] == 0
    device = next(d for d in cal["domains"] if not d["reference"])
    assert device["name"] == "device 0" and device["offset_ns"] == 6000
    binding = device["binding_anchor"]
    assert trace["tasks"][binding["to_task"]]["kernel_name"] == "gemm"
    # Calibrated: no kernel starts before its launch call.
    by_id = {t["task_id"]: t for t in trace["tasks"]}
    for t in trace["tasks"]:
        if t["kind"] == "compute" and t["correlation"] is not None:
            launch = next(x for x in trace["tasks"] if x["kind"] == "runtime"
                          and x["correlation"] == t["correlation"])
            assert t["calibrated_start_us"] >= launch["calibrated_start_us"], by_id


def test_no_calibrate_keeps_raw_clocks(skewed, tmp_path):
    out = tmp_path / "out"
    run("export", skewed, "--out", out, "-q", "--no-calibrate")
    trace = json.loads((out / "trace.json").read_text())
    assert all(s["clock_offset_us"] == 0 for s in trace["streams"])
    analyses = json.loads((out / "analyses.json").read_text())
    validate(analyses)
    assert analyses["calibration"]["computed"] is False


def test_critical_path_and_idle_of_the_skewed_trace(skewed):
    path = json.loads(run("path", skewed, "--critical", "--json", "-q").stdout)
    names = [s["name"] for s in path["steps"]]
    # aten::mm -> (nested) launch -> ... -> the sync waits on relu -> the
    # last launch -> add, which ends last (421 us calibrated).
    assert names[0] == "aten::mm"
    assert "cudaDeviceSynchronize" in names and names[-1] == "add"
    sync = names.index("cudaDeviceSynchronize")
    assert path["steps"][sync]["via"] == "host_wait"
    assert names[sync - 1] == "relu"
    assert path["steps"][-1]["via"] == "launch"
    assert path["end_ns"] == 421000 and path["start_ns"] == 0
    assert path["length_ns"] == path["wall_ns"] == 421000
    text = run("path", skewed, "--critical", "-q").stdout
    assert "Critical path (calibrated clock, whole trace): 421.0 us" in text
    raw = json.loads(run("path", skewed, "--critical", "--json", "--clock", "raw",
                         "-q").stdout)
    assert raw["clock"] == "raw" and raw["end_ns"] == 415000


def test_path_errors(skewed):
    assert run("path", skewed, "-q", check=False).returncode == 2
    assert run("path", skewed, "--critical", "--run", "9", "-q",
               check=False).returncode == 2
    model = FIXTURES / "resnet18" / "model.onnx"
    proc = run("path", model, "--critical", "-q", check=False)
    assert proc.returncode == 2 and "no tasks" in proc.stderr
    proc = run("path", model, "--node", "no_such_node", "-q", check=False)
    assert proc.returncode == 3 and "no node named" in proc.stderr


def test_node_paths_on_resnet18():
    run_dir = FIXTURES / "resnet18" / "ort_all"
    node = "/layer4/layer4.1/conv2/Conv"
    paths = json.loads(run("path", run_dir, "--node", node, "--json", "-q").stdout)
    # Downstream of the last conv: its Add, Relu, the pool, flatten, fc.
    assert len(paths["descendants"]) == 5
    assert len(paths["ancestors"]) > 40
    assert paths["node_tasks"] and paths["ancestor_tasks"]
    assert not set(paths["ancestors"]) & set(paths["descendants"])
    text = run("path", run_dir, "--node", node, "-q").stdout
    assert "5 descendants" in text


@pytest.mark.parametrize("inputs", [
    ["resnet18/ort_all"], ["transformer/ort_all"],
    ["resnet18/torch_profile.pt.trace.json.gz"],
    ["ascend/PROF_000001_20250101120000000_ABCDEFGHIJKLMNOP"],
])
def test_real_fixtures_have_no_violations_after_calibration(inputs, tmp_path):
    out = tmp_path / "out"
    run("export", *[FIXTURES / i for i in inputs], "--out", out, "-q")
    analyses = json.loads((out / "analyses.json").read_text())
    validate(analyses)
    assert analyses["calibration"]["residual_violations"]["count"] == 0
    cp = analyses["critical_path"]
    assert cp["tasks"] and 0 < cp["share"] <= 1
    assert cp["graph"]["broken_edges"] == 0
    assert sum(t["ns"] for t in cp["by_track"]) == cp["busy_ns"]
