"""`model-inspector check` (validation) on a bad-model corpus with known findings,
on the real fixtures (clean) and on every bad input (no crash); the memory
route on the real fixtures, validated against the documented schemas."""
import json

import jsonschema
import pytest

from conftest import FIXTURES, ROOT, SAMPLES, SCHEMAS, committed, run
from test_server import Server

CORPUS = ROOT / "test" / "golden" / "check"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())
BAD_INPUTS = ROOT / "test" / "bad_inputs" / "onnx"


def schema(name):
    return jsonschema.Draft202012Validator(
        json.loads((SCHEMAS / f"{name}.schema.json").read_text()))


@pytest.mark.parametrize("name", sorted(k for k in EXPECTED if not k.startswith("_")))
def test_corpus_file_gives_its_findings(name):
    expected = EXPECTED[name]
    proc = run("check", "--json", CORPUS / name, check=False)
    assert proc.returncode == expected["exit_code"], proc.stderr
    report = json.loads(proc.stdout)
    schema("check").validate(report)
    findings = [f for level in report["levels"] for f in level["findings"]]
    assert [f["rule"] for f in findings] == expected["rules"]
    assert report["ok"] == (expected["exit_code"] == 0)
    for f in findings:
        # Each finding names its node (graph-level ones excepted) and the
        # tensors with their shapes.
        assert f["values"], f
        if f["rule"] != "dangling_output":
            assert f["node"]["name"] in f["message"], f
        assert all(v["type"] for v in f["values"])
    # The loader's own dangling/cycle errors are findings here, not noise.
    assert "error: dangling_input" not in proc.stderr
    assert "error: graph_cycle" not in proc.stderr


def test_text_output_lists_findings_and_the_verdict():
    proc = run("check", CORPUS / "broadcast.onnxtxt", check=False)
    assert proc.returncode == 1
    assert "error [broadcast]" in proc.stdout
    assert "float32[2,3]" in proc.stdout and "float32[4,3]" in proc.stdout
    assert proc.stdout.rstrip().endswith("failed: 1 errors, 0 warnings")
    clean = run("check", CORPUS / "clean.onnxtxt")
    assert clean.stdout.rstrip().endswith("ok: no findings")


@pytest.mark.parametrize("path", [
    FIXTURES / "resnet18" / "model.onnx",
    FIXTURES / "resnet18" / "ort_all",
    FIXTURES / "resnet18" / "ort_extended",
    FIXTURES / "transformer" / "model.onnx",
    FIXTURES / "transformer" / "ort_all",
])
def test_real_fixtures_pass_clean(path):
    proc = run("check", "--json", path, check=False)
    assert proc.returncode == 0, proc.stdout[:2000] + proc.stderr
    report = json.loads(proc.stdout)
    schema("check").validate(report)
    assert report["ok"] and report["errors"] == 0
    assert report["warnings"] == 0, [
        f["message"] for level in report["levels"] for f in level["findings"]][:5]
    assert report["levels"] and all(level["nodes"] > 0 for level in report["levels"])


@pytest.mark.parametrize("path", sorted(p for p in BAD_INPUTS.iterdir() if p.is_file()),
                         ids=lambda p: p.name)
def test_every_bad_input_is_reported_without_a_crash(path):
    proc = run("check", path, check=False)
    # 1: findings (cycle, dangling input); otherwise the usual input error
    # codes (2 usage, 3 not found, 4 malformed, 5 unsupported, 6 I/O) with a
    # message. Never a signal or an internal error.
    assert proc.returncode in (1, 2, 3, 4, 5, 6), (proc.returncode, proc.stderr)
    if proc.returncode == 1:
        assert "error [" in proc.stdout
    else:
        assert "model-inspector: error:" in proc.stderr


def test_usage_and_trace_only_inputs():
    assert run("check", check=False).returncode == 2
    trace = FIXTURES / "resnet18" / "ort_all" / "onnxruntime_profile.json"
    proc = run("check", trace, check=False)
    assert proc.returncode == 2
    assert "needs a model" in proc.stderr


@pytest.mark.parametrize("fixture", ["resnet18", "transformer"])
def test_memory_route_on_real_fixtures(fixture):
    server = Server(FIXTURES / fixture / "ort_all")
    try:
        for level in ("framework", "compiled"):
            doc = server.get_json(f"/api/runs/0/levels/{level}/memory?{server.query}")
            schema("memory").validate(doc)
            assert doc["peak"]["activation_bytes"] > 0
            assert doc["weights"]["bytes"] > 0
            assert doc["peak"]["total_bytes"] == (doc["peak"]["activation_bytes"]
                                                  + doc["weights"]["bytes"])
            peak_step = doc["peak"]["step"]
            assert doc["nodes"][peak_step]["live_bytes"] == doc["peak"]["activation_bytes"]
            assert max(n["live_bytes"] for n in doc["nodes"]) == doc["peak"]["activation_bytes"]
        compiled = server.get_json(f"/api/runs/0/levels/compiled/memory?{server.query}")
        assert compiled["order"] == "trace"
        alloc = compiled["allocator"]
        assert alloc["source"] == "onnxruntime"
        assert alloc["nodes"]["compared"] > 0
        assert alloc["reported_peak_bytes"] > 0
        # The figures of the report: estimate against ORT's arena peak.
        nodes = alloc["nodes"]
        # Every compiled node's output size is known, and ORT agrees.
        assert nodes["unknown_estimate"] == 0
        assert nodes["output_matches"] == nodes["compared"]
        assert nodes["estimated_output_bytes"] == nodes["reported_output_bytes"]
        assert nodes["estimated_activation_bytes"] == nodes["reported_activation_bytes"]
        assert 0 <= nodes["reported_baseline_bytes"] < nodes["reported_peak_in_use_bytes"]
        # The figures of the report: estimate against ORT's arena.
        print(f"{fixture}: estimated activation peak {alloc['estimated_peak_bytes']} B, "
              f"ORT arena peak {alloc['reported_peak_bytes']} B "
              f"(ratio {alloc['estimate_over_reported']:.3f}); in use "
              f"{nodes['reported_peak_in_use_bytes']} B - baseline "
              f"{nodes['reported_baseline_bytes']} B (ratio "
              f"{nodes['estimate_over_reported_activations']:.3f}); output bytes "
              f"{nodes['output_matches']}/{nodes['compared']} nodes exact; parameters "
              f"{nodes['estimated_parameter_bytes']} vs {nodes['reported_parameter_bytes']} B")
    finally:
        server.close()


ASCEND_LEVEL1 = committed(SAMPLES / "ascend" / "msinsight_pt_text_level1_rank0")


def test_ascend_memory_record_peaks_per_component():
    """memory_record.csv of a torch_npu run: the allocator peaks per
    component match the CSV's own maxima (the graph here is only a carrier:
    the run has no graph of its own)."""
    import csv
    path = ASCEND_LEVEL1 / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    peaks = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            value = row["Total Allocated(MB)"].strip()
            if value:
                peaks[row["Component"]] = max(peaks.get(row["Component"], 0.0), float(value))
    server = Server("--run", FIXTURES / "resnet18" / "model.onnx", ASCEND_LEVEL1)
    try:
        doc = server.get_json(f"/api/runs/0/levels/framework/memory?{server.query}")
    finally:
        server.close()
    schema("memory").validate(doc)
    alloc = doc["allocator"]
    assert alloc["source"] == "ascend"
    got = {d["component"]: d["peak_allocated_bytes"] for d in alloc["devices"]}
    for component, mb in peaks.items():
        assert got[component] == round(mb * 1048576), component
    assert got["APP"] is None  # APP rows carry only Total Reserved
    assert alloc["reported_peak_bytes"] == got["PTA+GE"]
