"""CLI behaviour: formats, help, version, traces alone, third-party traces."""
import csv
import io
import json

import pytest

from conftest import FIXTURES, SAMPLES, run

DEMO = FIXTURES / "resnet18" / "ort_all"


def test_version_and_help():
    assert run("--version").stdout.startswith("model-inspector ")
    for command in ("summary", "export", "start", "list-diagnostics"):
        assert "--help" in run(command, "--help").stdout


def test_usage_errors_exit_2():
    assert run("summary", check=False).returncode == 2
    assert run("no-such-command", check=False).returncode == 2
    assert run("summary", DEMO, "--format", "xml", check=False).returncode == 2


def test_summary_formats_agree():
    table = run("summary", "--quiet", DEMO).stdout
    assert "Time by op type" in table and "Conv" in table and "framework nodes" in table
    md = run("summary", "--quiet", DEMO, "--format", "markdown").stdout
    assert "| op type |" in md
    rows = list(csv.reader(io.StringIO(run("summary", "--quiet", DEMO, "--format", "csv").stdout)))
    doc = json.loads(run("summary", "--quiet", DEMO, "--format", "json").stdout)
    conv = next(r for r in doc["op_types"] if r["op_type"] == "Conv")
    csv_conv = next(r for r in rows if r and r[0] == "Conv")
    assert csv_conv[2] == str(conv["calls"])
    assert doc["graph"]["framework_nodes"] == 49 and doc["graph"]["compiled_nodes"] == 34


def test_summary_per_run_filter():
    doc = json.loads(run("summary", "--quiet", DEMO, "--format", "json").stdout)
    first = json.loads(run("summary", "--quiet", DEMO, "--format", "json", "--run", "1").stdout)
    assert len(first["runs"]) == 1
    assert 0 < first["total_us"] < doc["total_us"]


def test_trace_alone_is_valid_input(tmp_path):
    profile = DEMO / "onnxruntime_profile.json"
    doc = json.loads(run("summary", "--quiet", profile, "--format", "json").stdout)
    assert doc["total_us"] > 0 and doc["dialect"] == "onnxruntime"
    run("export", "--quiet", profile, "--out", tmp_path)
    assert (tmp_path / "trace.json").exists()


def test_torch_profiler_fixture_summarises():
    doc = json.loads(run("summary", "--quiet", FIXTURES / "resnet18" / "torch_profile.pt.trace.json.gz",
                         "--format", "json").stdout)
    assert doc["basis"] == "host ops (self time)"
    assert any(r["op_type"].startswith("aten::") for r in doc["op_types"])
    assert len(doc["runs"]) >= 3  # ProfilerStep#N kept apart


def third_party_traces():
    traces = SAMPLES / "traces"
    files = sorted(p for p in traces.rglob("*") if p.is_file() and
                   p.name.endswith((".json", ".json.gz", ".csv")) and
                   "tensorrt" not in p.parts)
    return files


def test_third_party_samples_exist():
    # test/fixtures/samples/SOURCES.md lists 15 (8 + 2 Kineto, 3 ORT, 2 Perfetto).
    assert len(third_party_traces()) == 15, "test/fixtures/samples/traces incomplete"


@pytest.mark.parametrize("path", third_party_traces(), ids=lambda p: p.name)
def test_third_party_traces_load_and_summarise(path):
    doc = json.loads(run("summary", "--quiet", path, "--format", "json").stdout)
    assert doc["tasks"] > 0 and doc["total_us"] > 0


def test_pytorch_trace_aligns_with_the_onnx_export(tmp_path):
    """torch.profiler ops carry no node names; with the ONNX export of the
    same model loaded, they are aligned with its nodes run by run."""
    run("export", "--quiet", FIXTURES / "resnet18" / "model.onnx",
        FIXTURES / "resnet18" / "torch_profile.pt.trace.json.gz", "--out", tmp_path)
    graph = json.loads((tmp_path / "graph.json").read_text())
    trace = json.loads((tmp_path / "trace.json").read_text())
    summary = json.loads((tmp_path / "summary.json").read_text())
    tasks = trace["tasks"]
    steps = {t["run"] for t in tasks if t["kernel_name"].startswith("ProfilerStep#")}
    nodes = graph["nodes"]
    assert summary["aligned_host_ops"] == len(nodes) * len(steps)
    for node in nodes:
        assert node["status"] == "executed", node["name"]
        ran = {tasks[i]["run"] for i in node["mapped_task_ids"]}
        assert steps <= ran, node["name"]
    conv = next(n for n in nodes if n["name"] == "/conv1/Conv")
    names = {tasks[i]["kernel_name"] for i in conv["mapped_task_ids"]}
    assert "aten::conv2d" in names and "aten::mkldnn_convolution" in names


def test_no_progress_output_in_pipes():
    proc = run("summary", DEMO)  # stderr is a pipe here, as in CI
    assert "reading" not in proc.stderr and "%" not in proc.stderr


@pytest.mark.parametrize("level", ["framework", "compiled"])
def test_render_svg_of_each_level(tmp_path, level):
    import xml.etree.ElementTree as ET
    out = tmp_path / f"{level}.svg"
    run("render", "--quiet", DEMO, "--level", level, "--out", out)
    root = ET.parse(out).getroot()  # well-formed XML
    assert root.tag.endswith("svg")
    texts = "".join(root.itertext())
    summary = json.loads(run("summary", "--quiet", DEMO, "--format", "json").stdout)
    nodes = summary["graph"][f"{level}_nodes"]
    rects = [e for e in root.iter() if e.tag.endswith("rect")]
    assert len(rects) >= nodes  # one box per node (+ background, inputs)
    assert "Conv" in texts
    if level == "compiled":
        assert "1x16x112x112" in texts  # NCHWc blocked shape on an edge


def test_render_missing_level_is_not_found(tmp_path):
    proc = run("render", "--quiet", FIXTURES / "resnet18" / "model.onnx", "--level", "compiled",
               "--out", tmp_path / "x.svg", check=False)
    assert proc.returncode == 3 and "no compiled graph" in proc.stderr
    assert not (tmp_path / "x.svg").exists()
