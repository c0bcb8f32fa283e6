"""End-to-end tests of `export` and `summary` on the real fixtures: dumps
validate against the documented schemas, fused_from matches the independent
expectation, and summary times match the ONNX Runtime profile itself."""
import collections
import json
import shutil

import jsonschema
import pytest

from conftest import FIXTURES, SCHEMAS, run

RUNS = [("resnet18", "ort_all"), ("resnet18", "ort_extended"),
        ("transformer", "ort_all"), ("transformer", "ort_extended")]


def load_schema(name):
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    out = {}
    for model, level in RUNS:
        d = tmp_path_factory.mktemp(f"{model}_{level}")
        run("export", "--quiet", FIXTURES / model / level, "--out", d)
        out[(model, level)] = {name: json.loads((d / f"{name}.json").read_text())
                               for name in ("graph", "trace", "summary")}
    return out


@pytest.mark.parametrize("model,level", RUNS)
def test_dumps_validate_against_schemas(exports, model, level):
    for name, doc in exports[(model, level)].items():
        jsonschema.Draft202012Validator(load_schema(name)).validate(doc)


@pytest.mark.parametrize("model,level", RUNS)
def test_fused_from_matches_independent_expectation(exports, model, level):
    expected = json.loads((FIXTURES / "expected_fusion.json").read_text())[model][level]
    graph = exports[(model, level)]["graph"]
    nodes = graph["nodes"]
    compiled = [n for n in nodes if n["layer_level"] == "compiled"]
    framework_names = {n["node_id"]: n["name"] for n in nodes if n["layer_level"] == "framework"}
    assert len(compiled) == len(expected["compiled_nodes"])
    mismatches = []
    for node in compiled:
        want = expected["compiled_nodes"][node["name"]]
        got = sorted(framework_names[i] for i in node["fused_from"])
        if got != sorted(want["fused_from"]):
            mismatches.append((node["name"], got, sorted(want["fused_from"])))
        assert (node["status"] == "inserted") == want["inserted"], node["name"]
    assert not mismatches, mismatches
    assert graph["links"]["unexplained_compiled_nodes"] == 0
    folded = sorted(framework_names[i] for i in graph["links"]["folded_framework_nodes"])
    assert folded == sorted(expected["folded_framework_nodes"])


def test_every_compiled_node_is_explained(exports):
    for key, docs in exports.items():
        for node in docs["graph"]["nodes"]:
            if node["layer_level"] == "compiled":
                assert node["fused_from"] or node["status"] == "inserted", (key, node["name"])


@pytest.mark.parametrize("model,level", RUNS)
def test_summary_times_match_the_ort_profile(exports, model, level):
    profile = json.loads((FIXTURES / model / level / "onnxruntime_profile.json").read_text())
    totals = collections.Counter()
    for e in profile:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            totals[e["args"]["op_name"]] += e["dur"]
    summary = exports[(model, level)]["summary"]
    got = {row["op_type"]: row["total_us"] for row in summary["op_types"]}
    assert got == pytest.approx(dict(totals))
    assert summary["total_us"] == pytest.approx(sum(totals.values()))
    assert summary["unlinked_tasks"] == 0
    assert len(summary["runs"]) >= 3


def test_tasks_link_to_compiled_nodes_and_framework_nodes_see_them(exports):
    docs = exports[("resnet18", "ort_all")]
    nodes = {n["node_id"]: n for n in docs["graph"]["nodes"]}
    kernel_tasks = [t for t in docs["trace"]["tasks"] if t["kind"] == "compute"]
    assert kernel_tasks and all(t["op_node_id"] is not None for t in kernel_tasks)
    conv = next(n for n in nodes.values() if n["name"] == "/conv1/Conv")
    assert conv["status"] == "fused" or conv["status"] == "executed"
    assert conv["mapped_task_ids"], "framework Conv must see the tasks of its compiled node"
    relu = next(n for n in nodes.values() if n["name"] == "/relu/Relu")
    assert relu["status"] == "executed"  # the NCHWc node is named after its output
    assert set(relu["mapped_task_ids"]) == set(conv["mapped_task_ids"])


def test_start_then_export_input_dir_detects_by_content(tmp_path):
    run_dir = tmp_path / "run"
    out = run("start", "--output-dir", run_dir, "--enable-graph", "--enable-runtime").stdout
    assert "optimized_model_filepath" in out and "profile_file_prefix" in out
    assert (run_dir / "manifest.json").exists()
    src = FIXTURES / "resnet18"
    shutil.copy(src / "model.onnx", run_dir / "model.onnx")
    shutil.copy(src / "ort_all" / "model.optimized.onnx", run_dir / "ort" / "model.optimized.onnx")
    # A profile with an unhelpful name is still recognised by its content.
    shutil.copy(src / "ort_all" / "onnxruntime_profile.json", run_dir / "ort" / "profile_2026.dat")
    run("export", "--quiet", "--input-dir", run_dir, "--format", "json")
    export_dir = run_dir / "model-inspector-export"
    summary = json.loads((export_dir / "summary.json").read_text())
    assert summary["graph"]["compiled_nodes"] == 34
    assert summary["linked_tasks"] > 0
    jsonschema.Draft202012Validator(load_schema("graph")).validate(
        json.loads((export_dir / "graph.json").read_text()))
    again = run("start", "--output-dir", run_dir, check=False)
    assert again.returncode == 2 and "already holds a run" in again.stderr


def test_export_to_unwritable_place_fails_without_partial_files(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = run("export", "--quiet", FIXTURES / "resnet18" / "ort_all", "--out", blocker / "x",
               check=False)
    assert proc.returncode == 6
    assert "cannot create directory" in proc.stderr
    assert not (blocker.parent / "x").exists()


def test_diagnostics_reference_is_generated_from_the_code():
    from conftest import ROOT
    generated = run("list-diagnostics").stdout
    assert (ROOT / "docs" / "reference" / "errors.md").read_text() == generated


@pytest.mark.parametrize("model,level", RUNS)
def test_every_edge_has_dtype_and_shape(exports, model, level):
    """Compiled files lack shapes after contrib ops (no schema for ONNX shape
    inference); they are completed from the framework graph and from the
    shapes ONNX Runtime recorded for each node."""
    missing = [(n["name"], v["name"]) for n in exports[(model, level)]["graph"]["nodes"]
               for v in n["inputs"] + n["outputs"]
               if v["name"] and (v["shape"] is None or v["dtype"] == "?")]
    assert not missing, missing[:10]
    nodes = exports[(model, level)]["graph"]["nodes"]
    if model == "resnet18" and level == "ort_all":
        # NCHWc blocked layout: the runtime's real (channel-padded) shape.
        first = next(n for n in nodes if n["name"] == "/relu/Relu_output_0_nchwc")
        assert first["outputs"][0]["shape"] == [1, 16, 112, 112]


def _tree(path):
    """Every file under `path` (hidden ones too) by relative path, with its bytes."""
    return {str(p.relative_to(path)): p.read_bytes()
            for p in sorted(path.rglob("*")) if p.is_file()}


def _export_with_file_size_limit(out, limit, ignore_sigxfsz):
    """Exports the resnet18 PyTorch run (graph.json 30 KB, trace.json 420 KB:
    measured) to `out` with no file allowed past `limit` bytes
    (RLIMIT_FSIZE). The kernel then kills the export with SIGXFSZ while it
    writes trace.json, after graph.json was written in full, running no
    cleanup (as SIGKILL); with SIGXFSZ ignored the write fails with EFBIG
    instead, like a full disk."""
    import resource
    import signal
    import subprocess
    from conftest import BINARY

    def limit_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if ignore_sigxfsz:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    return subprocess.run(
        [BINARY, "export", "--quiet", FIXTURES / "resnet18" / "model.onnx",
         FIXTURES / "resnet18" / "torch_profile.pt.trace.json.gz", "--out", out],
        capture_output=True, text=True, timeout=300, preexec_fn=limit_files)


@pytest.mark.parametrize("users_folder", [False, True], ids=["export_folder", "users_folder"])
def test_killed_export_leaves_the_previous_set_whole(tmp_path, users_folder):
    """A previous export, then an export of another run killed midway: the
    folder still holds exactly the previous set (never a new graph.json
    beside an old trace.json), and the next export removes what the killed
    one left behind and writes the new set whole."""
    import signal
    out = tmp_path / "out"
    run("export", "--quiet", FIXTURES / "resnet18" / "ort_all", "--out", out)
    if users_folder:  # not only the export's files: replaced in place
        (out / "notes.txt").write_text("the user's own file")
    before = _tree(out)
    assert set(before) >= {"graph.json", "trace.json", "summary.json", "analyses.json"}

    proc = _export_with_file_size_limit(out, 100_000, ignore_sigxfsz=False)
    assert proc.returncode == -signal.SIGXFSZ, (proc.returncode, proc.stderr)
    assert {k: v for k, v in _tree(out).items() if not k.startswith(".")} == before
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "out"] + \
                [k for k in _tree(out) if k.startswith(".")]
    assert leftovers, "the killed export left nothing behind: was it killed midway?"

    reference = tmp_path / "reference"
    run("export", "--quiet", FIXTURES / "resnet18" / "model.onnx",
        FIXTURES / "resnet18" / "torch_profile.pt.trace.json.gz", "--out", reference)
    run("export", "--quiet", FIXTURES / "resnet18" / "model.onnx",
        FIXTURES / "resnet18" / "torch_profile.pt.trace.json.gz", "--out", out)
    expected = _tree(reference)
    if users_folder:
        expected["notes.txt"] = b"the user's own file"
    assert _tree(out) == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "reference"]


def test_failed_export_keeps_the_previous_set_and_no_temp_files(tmp_path):
    out = tmp_path / "out"
    run("export", "--quiet", FIXTURES / "resnet18" / "ort_all", "--out", out)
    before = _tree(out)
    proc = _export_with_file_size_limit(out, 100_000, ignore_sigxfsz=True)
    assert proc.returncode == 6, (proc.returncode, proc.stderr)
    assert "trace.json: write failed: File too large" in proc.stderr
    assert _tree(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
