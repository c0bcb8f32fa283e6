"""The Python package `model_inspector` (python/, src/python) as built in the
build tree: ctest puts its folder first on PYTHONPATH (MI_PYTHON_PACKAGE).

Expected figures come from independent readers: python3-onnx for node counts,
names and op types, the ONNX Runtime profile's own events summed with the
json module for times, the CLI's stderr for error messages, the schema file
for table columns, hashlib for the wheel's RECORD.
"""

import base64
import collections
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import zipfile

import onnx
import pytest

from conftest import BUILD_DIR, FIXTURES, PACKAGE, ROOT, committed, run

RESNET = FIXTURES / "resnet18"
ORT_ALL = RESNET / "ort_all"

# A normal build without the package fails here, saying why.
assert (pathlib.Path(PACKAGE) / "model_inspector").is_dir(), (
    f"the Python package was not built into {PACKAGE} (MI_PYTHON=OFF: pybind11-dev or "
    "python3-dev missing at configure time; see scripts/setup.sh)")

import model_inspector as mi  # noqa: E402


def profile_events():
    return json.loads(committed(ORT_ALL / "onnxruntime_profile.json").read_text())


def kernel_events():
    # ONNX Runtime writes one "<node>_kernel_time" event per node run.
    return [e for e in profile_events()
            if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]


@pytest.fixture(scope="module")
def resnet():
    with mi.open(committed(ORT_ALL)) as r:
        yield r


def test_imports_this_build():
    assert pathlib.Path(mi.__file__).resolve().parent == \
        (pathlib.Path(PACKAGE) / "model_inspector").resolve()
    assert mi.__version__ == run("--version").stdout.split()[1]


def test_inputs_levels_and_graph_counts(resnet):
    framework = onnx.load(committed(RESNET / "model.onnx"))
    compiled = onnx.load(committed(ORT_ALL / "model.optimized.onnx"))
    roles = {pathlib.Path(f["path"]).name: (f["format"], f["role"]) for f in resnet.inputs}
    assert roles == {"model.onnx": ("onnx", "framework"),
                     "model.optimized.onnx": ("onnx", "compiled"),
                     "onnxruntime_profile.json": (roles["onnxruntime_profile.json"][0], "trace")}
    assert resnet.levels == ["framework", "compiled"]
    graph = resnet.summary()["graph"]
    assert graph["framework_nodes"] == len(framework.graph.node) == 49
    assert graph["compiled_nodes"] == len(compiled.graph.node) == 34
    assert all(d["severity"] != "error" for d in resnet.diagnostics)


def test_summary_times_are_the_profiles_own(resnet):
    events = kernel_events()
    calls = collections.Counter(e["args"]["op_name"] for e in events)
    total = collections.defaultdict(int)
    for e in events:
        total[e["args"]["op_name"]] += e["dur"]  # microseconds
    s = resnet.summary()
    assert s["total_us"] == pytest.approx(sum(total.values()))
    got = {row["op_type"]: (row["calls"], row["total_us"]) for row in s["op_types"]}
    assert got == {op: (calls[op], pytest.approx(total[op])) for op in calls}


def test_summary_tables_are_dataframes_with_the_documented_columns(resnet):
    import pandas
    schema = json.loads((ROOT / "docs/reference/schemas/summary.schema.json").read_text())
    columns = list(schema["properties"]["op_types"]["items"]["properties"])
    table = resnet.summary().table("op_types")
    assert isinstance(table, pandas.DataFrame)
    assert list(table.columns) == columns
    assert table["calls"].sum() == len(kernel_events())
    # Nested objects flatten to "outer.inner" columns, as in the CLI's tables.
    paths = resnet.summary().table_paths()
    assert "op_types" in paths and "streams" in paths


def test_tables_without_pandas_are_lists_of_dicts():
    # A fresh interpreter where `import pandas` fails, as on a machine
    # without it.
    code = ("import sys; sys.modules['pandas'] = None\n"
            "import json, model_inspector as mi\n"
            f"r = mi.open({str(ORT_ALL)!r})\n"
            "t = r.summary().table('op_types')\n"
            "print(json.dumps([type(t).__name__, type(t[0]).__name__, sorted(t[0])]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    kind, row_kind, keys = json.loads(out.stdout)
    assert (kind, row_kind) == ("list", "dict")
    assert keys == sorted(["op_type", "kind", "nodes", "calls", "total_us", "average_us",
                           "share"])


def test_node_by_name_and_id_match_onnx(resnet):
    framework = onnx.load(committed(RESNET / "model.onnx"))
    first = framework.graph.node[0]
    by_name = resnet.node("framework", first.name)
    assert by_name["op_type"] == first.op_type
    node_id = resnet.node_id("framework", first.name)
    assert resnet.node("framework", node_id) == by_name
    assert json.dumps(by_name).count(first.input[0]) >= 1


def test_search_by_op_type_counts_as_onnx(resnet):
    framework = onnx.load(committed(RESNET / "model.onnx"))
    convs = [n.name for n in framework.graph.node if n.op_type == "Conv"]
    found = resnet.search("framework", "Conv", mode="op", limit=1000)
    assert found["total"] == len(convs) == 20
    assert found["mode"] == "op"


def test_properties_and_tensor_values_match_onnx(resnet):
    import numpy
    from onnx import numpy_helper
    framework = onnx.load(committed(RESNET / "model.onnx"))
    props = resnet.properties("framework")
    assert props["initializer_count"] == len(framework.graph.initializer)
    assert [i["name"] for i in props["initializers"]] == \
        [i.name for i in framework.graph.initializer]
    weight = next(i for i in framework.graph.initializer if len(i.dims) == 4)
    array = numpy_helper.to_array(weight).astype(numpy.float64)
    values = resnet.tensor_values("framework", weight.name, limit=7)
    assert values["shape"] == list(weight.dims) and values["elements"] == array.size
    assert values["values"] == pytest.approx(array.ravel()[:7].tolist())
    stats = values["stats"]
    assert stats["complete"] and stats["nan"] == 0
    assert (stats["min"], stats["max"]) == (pytest.approx(array.min()), pytest.approx(array.max()))
    assert stats["mean"] == pytest.approx(array.mean(), rel=1e-6, abs=1e-9)
    with pytest.raises(mi.NotFound):
        resnet.tensor_values("framework", "no such initializer")


def test_detect_format_and_registered_analyses():
    assert mi.detect_format(RESNET / "model.onnx") == "onnx"
    assert mi.detect_format(ROOT / "README.md") == ""
    listed = json.loads(run("analyze", "--list", "--format", "json").stdout)["analyses"]
    assert mi.registered_analyses() == listed


def test_analyses_and_analyze_match_the_cli(resnet):
    listed = json.loads(run("analyze", "--list", "--format", "json").stdout)["analyses"]
    ids = [a["id"] for a in resnet.analyses()]
    assert ids == [a["id"] for a in listed]
    assert all("applies" in a for a in resnet.analyses())
    cli = json.loads(run("analyze", "idle_overlap", ORT_ALL, "--param",
                         "gap_threshold_ns=5000", "--format", "json").stdout)
    assert resnet.analyze("idle_overlap", gap_threshold_ns=5000) == cli


def test_every_applicable_analysis_arrives_as_the_cli_writes_it(resnet):
    applicable = [a["id"] for a in resnet.analyses() if a["applies"]]
    assert {"critical_path", "idle_overlap", "findings"} <= set(applicable)
    for analysis in applicable:
        cli = json.loads(run("analyze", analysis, ORT_ALL, "--format", "json").stdout)
        got = resnet.analyze(analysis)
        assert got == cli, analysis
        assert isinstance(got, mi.ResultList if isinstance(cli, list) else mi.Result)
    # An array result's rows as a table: the findings of the profile.
    findings = resnet.analyze("findings").table()
    assert "rule" in list(findings.columns) and len(findings) == len(resnet.analyze("findings"))


def test_nested_objects_become_outer_inner_columns(resnet):
    # idle_overlap's streams: each row holds "idle_by_reason_ns": {"host",
    # "other_stream", "other"} (docs/reference/schemas/analyses.schema.json).
    streams = resnet.analyze("idle_overlap").table("streams")
    reasons = [c for c in streams.columns if c.startswith("idle_by_reason_ns.")]
    assert reasons == ["idle_by_reason_ns.host", "idle_by_reason_ns.other_stream",
                       "idle_by_reason_ns.other"]
    row = resnet.analyze("idle_overlap")["streams"][0]
    assert [streams[c][0] for c in reasons] == [row["idle_by_reason_ns"][k]
                                                for k in ("host", "other_stream", "other")]


def test_export_writes_the_dumps(resnet, tmp_path):
    out = resnet.export(tmp_path / "dumps")
    names = sorted(p.name for p in out.iterdir())
    assert names == ["analyses.json", "graph.json", "summary.json", "trace.json"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["graph"]["framework_nodes"] == 49
    assert summary["total_us"] == pytest.approx(sum(e["dur"] for e in kernel_events()))


def test_digest_counts_nodes_and_runs(resnet):
    framework = onnx.load(committed(RESNET / "model.onnx"))
    compiled = onnx.load(committed(ORT_ALL / "model.optimized.onnx"))
    digest = resnet.digest(model="resnet18", label="base")
    assert digest["meta"]["model"] == "resnet18"
    nodes = {level["level"]: len(level["nodes"]) for level in digest["levels"]}
    assert nodes == {"framework": len(framework.graph.node),
                     "compiled": len(compiled.graph.node)}
    # One run per model_run event of the profile; the total of a run is its
    # wall time, first kernel start to last kernel end (docs/design/diff.md).
    model_runs = sorted((e for e in profile_events() if e.get("name") == "model_run"),
                        key=lambda e: e["ts"])
    assert digest["timing"]["run_count"] == len(model_runs) == 3
    wall_ns, counts = [], []
    for r in model_runs:
        kernels = [k for k in kernel_events() if r["ts"] <= k["ts"] < r["ts"] + r["dur"]]
        end = max(k["ts"] + k["dur"] for k in kernels)
        wall_ns.append((end - min(k["ts"] for k in kernels)) * 1000)
        counts.append(len(kernels))
    assert digest["timing"]["total"]["run_ns"] == wall_ns == [2174000, 1844000, 1483000]
    assert digest["timing"]["total"]["count"] == counts


def test_diff_of_a_run_with_itself_and_with_another(resnet, tmp_path):
    same = mi.diff(resnet, resnet.digest())
    assert same["failed"] is False
    # The default rules are the CLI's.
    assert f"default: {mi.default_fail_on()})" in run("diff", "--help").stdout
    assert [r["rule"] for r in same["rules"]] == mi.default_fail_on().split(",")
    assert all(level["added"] == level["removed"] == level["changed"] == 0
               for level in same["structure"])
    # A digest file on one side, a run directory on the other.
    digest_file = tmp_path / "base.midigest.json"
    digest_file.write_text(json.dumps(resnet.digest()))
    basic = committed(RESNET / "ort_basic")
    other = mi.diff(digest_file, basic, fail_on="nodes!=0")
    compiled = next(s for s in other["structure"] if s["level"] == "compiled")
    assert compiled["base_nodes"] == 34
    assert compiled["new_nodes"] == len(onnx.load(basic / "model.optimized.onnx").graph.node)
    assert other["failed"] == (compiled["added"] + compiled["removed"] + compiled["changed"]
                               + compiled["renamed"] > 0)


def assert_cli_says(error, *args):
    # The CLI prints "model-inspector: error: <code>: <message>" for the
    # same failure.
    proc = run(*args, check=False)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[0] == \
        f"model-inspector: error: {error.code}: {error}", proc.stderr


def test_errors_raise_the_class_of_their_code_with_the_message(resnet, tmp_path):
    missing = tmp_path / "no_such_run"
    with pytest.raises(mi.NotFound) as e:
        mi.open(missing)
    assert_cli_says(e.value, "summary", missing)
    assert isinstance(e.value, LookupError) and isinstance(e.value, mi.Error)

    broken = tmp_path / "profile.json"
    broken.write_text('[{"cat": "Node", "name": "x_kernel_time", "ph": "X", "ts": 1, "dur": ')
    with pytest.raises(mi.MalformedInput) as e:
        mi.open(broken)
    assert_cli_says(e.value, "summary", broken)

    # 100000 bytes: less than model.onnx alone (about 1 MiB on disk).
    assert (RESNET / "model.onnx").stat().st_size > 100000
    with pytest.raises(mi.MemoryLimit) as e:
        mi.open(ORT_ALL, memory_limit=100000)
    assert isinstance(e.value, MemoryError)
    assert_cli_says(e.value, "summary", ORT_ALL, "--memory-limit", "100000")

    with pytest.raises(mi.NotFound) as e:
        resnet.analyze("no_such_analysis")
    assert_cli_says(e.value, "analyze", "no_such_analysis", ORT_ALL)
    with pytest.raises(mi.InvalidArgument) as e:
        resnet.analyze("idle_overlap", no_such_parameter=1)
    assert "no_such_parameter" in str(e.value)
    with pytest.raises(mi.NotFound):
        resnet.node("framework", "no such node")
    with pytest.raises(mi.NotFound):
        resnet.node("compiled", 100000)
    with pytest.raises(mi.InvalidArgument):
        resnet.search("framework", "(", mode="regex")
    with pytest.raises(mi.InvalidArgument) as e:
        mi.diff(resnet, resnet, fail_on="total>>5%")
    assert "total>>5%" in str(e.value)


def test_closed_run_refuses_queries():
    r = mi.open(committed(ORT_ALL))
    r.close()
    with pytest.raises(ValueError):
        r.summary()


def _record_ok(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        record_name = next(n for n in names if n.endswith(".dist-info/RECORD"))
        rows = [line.split(",") for line in z.read(record_name).decode().splitlines()]
        listed = {r[0] for r in rows}
        assert listed == set(names)
        for name, digest, size in rows:
            if name == record_name:
                assert digest == size == ""
                continue
            data = z.read(name)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == "sha256=" + expected.decode() and int(size) == len(data)
        return names, z.read(next(n for n in names if n.endswith("/WHEEL"))).decode()


def test_wheel_builds_and_imports_from_its_files_alone(tmp_path):
    built = subprocess.run(
        [sys.executable, str(ROOT / "python" / "build_wheel.py"), "--no-build",
         "--build-dir", str(BUILD_DIR), "--out-dir", str(tmp_path / "dist")],
        capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    wheel = pathlib.Path(built.stdout.strip())
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert wheel.name == f"model_inspector-{mi.__version__}-{tag}-{tag}-linux_x86_64.whl"
    names, wheel_file = _record_ok(wheel)
    assert "Root-Is-Purelib: false" in wheel_file
    assert any(n.startswith("model_inspector/_core") and n.endswith(".so") for n in names)
    unpacked = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(unpacked)
    # Only the unpacked wheel on the path, run from elsewhere.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(unpacked)
    code = ("import model_inspector as mi, pathlib, sys\n"
            f"r = mi.open({str(ORT_ALL)!r})\n"
            "print(pathlib.Path(mi.__file__).parent.parent)\n"
            "print(r.summary()['graph']['compiled_nodes'])\n")
    out = subprocess.run([sys.executable, "-s", "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    where, compiled = out.stdout.split()
    assert pathlib.Path(where) == unpacked and int(compiled) == 34


def test_pip_builds_the_wheel_offline_through_the_in_tree_backend(tmp_path):
    # Debian's pip, no index, no build isolation: pyproject.toml's backend
    # (python/build_wheel.py) packs the package this build made.
    env = {**os.environ, "MI_BUILD_DIR": str(BUILD_DIR)}
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
         "--no-index", "--config-settings", "no-build=1", "-w", str(tmp_path),
         str(ROOT / "python")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    wheels = list(tmp_path.glob("model_inspector-*.whl"))
    assert [w.name.split("-")[1] for w in wheels] == [mi.__version__]
    names, _ = _record_ok(wheels[0])
    with zipfile.ZipFile(wheels[0]) as z:
        metadata = z.read(f"model_inspector-{mi.__version__}.dist-info/METADATA").decode()
    assert "Name: model_inspector" in metadata and "Requires-Python: >=3.11" in metadata
