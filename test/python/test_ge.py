"""CANN GraphEngine graphs end to end: GE graph dumps (ge_proto text) and ATC
JSON load through the CLI, validate against the dump schemas, and fused_from
follows what GE declares in _datadump_original_op_names."""
import json
import re

import jsonschema

from conftest import FIXTURES, SAMPLES, SCHEMAS, committed, run

GE_RUN = FIXTURES / "ge" / "resnet_block"
GE_SAMPLE = committed(SAMPLES / "ascend" / "ge_graph_dumps" / "ge_proto_00046_afterUBMatch.txt")
ATC_SAMPLE = committed(SAMPLES / "ascend" / "atc_om_json" / "test.om.json")


def export(tmp_path, *inputs):
    run("export", "--quiet", *inputs, "--out", tmp_path)
    docs = {name: json.loads((tmp_path / f"{name}.json").read_text())
            for name in ("graph", "trace", "summary")}
    for name, doc in docs.items():
        schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
        jsonschema.Draft202012Validator(schema).validate(doc)
    return docs


def declared_origins(path):
    """Op name -> _datadump_original_op_names, read from the dump text
    independently of model-inspector."""
    text = path.read_text()
    out = {}
    for op in re.finditer(r'\n  op \{\n    name: "([^"]+)"(.*?)\n  \}', text, re.S):
        body = op.group(2)
        m = re.search(r'key: "_datadump_original_op_names"\s*value \{\s*list \{(.*?)val_type',
                      body, re.S)
        if m:
            out[op.group(1)] = re.findall(r's: "([^"]*)"', m.group(1))
    return out


def test_stages_of_one_run_link_by_declared_origins(tmp_path):
    docs = export(tmp_path, GE_RUN)
    graph = docs["graph"]
    levels = {g["graph_id"]: g["layer_level"] for g in graph["graphs"]}
    assert sorted(levels.values()) == ["compiled", "framework"]
    nodes = {n["node_id"]: n for n in graph["nodes"]}
    compiled = {n["name"]: n for n in graph["nodes"] if n["layer_level"] == "compiled"}
    build = declared_origins(GE_RUN / "ge_proto_00000120_graph_1_Build.txt")
    assert build["conv1"] == ["scale_conv1", "conv1", "bn_conv1"]
    for name, origins in build.items():
        node = compiled[name]
        assert [nodes[i]["name"] for i in node["fused_from"]] == origins
        assert node.get("origin_names", []) == origins
        assert node["match"] == ("declared" if origins else "inserted")
    assert compiled["trans_TransData_0"]["status"] == "inserted"
    # NC1HWC0 and the framework's format and shape ride on the tensors.
    out = compiled["trans_TransData_0"]["outputs"][0]
    assert out["layout"] == "NC1HWC0" and out["origin_layout"] == "NCHW"
    assert out["origin_shape"] == "[1,3,224,224]" and out["shape"] == [1, 1, 224, 224, 16]
    framework = [n for n in graph["nodes"] if n["layer_level"] == "framework"]
    bn = next(n for n in framework if n["name"] == "bn_conv1")
    assert [nodes[i]["name"] for i in bn["fused_into"]] == ["conv1"]


def test_real_dump_sample_keeps_every_declared_origin(tmp_path):
    docs = export(tmp_path, GE_SAMPLE)
    declared = declared_origins(GE_SAMPLE)
    assert len(declared) > 20
    got = {n["name"]: n.get("origin_names", []) for n in docs["graph"]["nodes"]}
    for name, origins in declared.items():
        assert got[name] == origins, name


def test_atc_json_sample_loads(tmp_path):
    docs = export(tmp_path, ATC_SAMPLE)
    doc = json.loads(ATC_SAMPLE.read_text())
    ops = doc["graph"][0]["op"]
    names = {n["name"] for n in docs["graph"]["nodes"]}
    assert {op["name"] for op in ops} <= names
    with_layout = [v for n in docs["graph"]["nodes"] for v in n["outputs"] if v.get("layout")]
    assert len(with_layout) > 50


def test_bad_dump_names_line_and_column(tmp_path):
    bad = tmp_path / "ge_proto_00000001_graph_1_Build.txt"
    bad.write_text('graph {\n  op {\n    name: "a"\n    type: \n  }\n}\n')
    proc = run("summary", bad, check=False)
    assert proc.returncode == 4
    assert f"{bad}:5:" in proc.stderr, proc.stderr


def test_start_cann_then_export_finds_the_dumps(tmp_path):
    import shutil
    import subprocess
    run_dir = tmp_path / "run 1"
    out = run("start", "--output-dir", run_dir, "--backend", "cann").stdout
    # Only `export` lines and comments: the output is for `eval`.
    for line in out.splitlines():
        assert line.startswith("export ") or line.startswith("#") or not line, line
    env = subprocess.run(["bash", "-c", f'eval "$1"; echo "$DUMP_GRAPH_PATH|$DUMP_GE_GRAPH"',
                          "_", out], capture_output=True, text=True, check=True).stdout.strip()
    assert env == f"{run_dir / 'ge'}|2"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["backend"] == "cann"
    # What GE would write there: pid_<pid>_deviceid_<dev>/ge_proto_*.txt
    dump_dir = run_dir / "ge" / "pid_4242_deviceid_0"
    shutil.copytree(GE_RUN, dump_dir, ignore=shutil.ignore_patterns("README.md"))
    run("export", "--quiet", "--input-dir", run_dir)
    graph = json.loads((run_dir / "model-inspector-export" / "graph.json").read_text())
    conv = next(n for n in graph["nodes"] if n["name"] == "conv1" and n["layer_level"] == "compiled")
    assert len(conv["fused_from"]) == 3


def test_ge_stages_are_levels_of_the_run(tmp_path):
    """Any two stages can be compared: each is a level of its own."""
    import http.client
    import re as _re
    import subprocess
    out = tmp_path / "pre.json"
    run("render", "--quiet", GE_RUN, "--level", "stage:PreRunBegin", "--out", out)
    pre = json.loads(out.read_text())
    assert {i["title"] for i in pre["items"]} >= {"BatchNorm", "Scale", "Conv2D"}
    run("render", "--quiet", GE_RUN, "--level", "stage:Build", "--out", out)
    build = json.loads(out.read_text())
    assert "TransData" in {i["title"] for i in build["items"]}
    bad = run("render", GE_RUN, "--level", "stage:Nope", "--out", out, check=False)
    assert bad.returncode == 3 and "no GE stage level 'stage:Nope'" in bad.stderr
    # The server lists them as levels.
    from conftest import BINARY
    proc = subprocess.Popen([BINARY, "open", str(GE_RUN), "--port", "0", "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        host, port = _re.match(r"http://([^:/]+):(\d+)", url).groups()
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.request("GET", "/api/runs")
        runs = json.loads(conn.getresponse().read())
        assert runs["runs"][0]["levels"] == ["framework", "compiled", "stage:PreRunBegin",
                                             "stage:Build"]
        # Node details carry the layouts (the UI's layout column).
        conn.request("GET", "/api/runs/0/levels/compiled/search?q=TransData&mode=op")
        match = json.loads(conn.getresponse().read())["matches"][0]
        conn.request("GET", f"/api/runs/0/levels/compiled/nodes/{match['id']}")
        details = json.loads(conn.getresponse().read())
        out = details["outputs"][0]
        assert (out["layout"], out["origin_layout"]) == ("NC1HWC0", "NCHW")
        assert details["status"] == "inserted"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_ge_onnx_dump(tmp_path):
    """GE's ONNX form: ge:<Type> ops, control edges, desc attributes."""
    docs = export(tmp_path, FIXTURES / "ge" / "onnx_dump")
    graph = docs["graph"]
    assert [(g["layer_level"], g["producer"]) for g in graph["graphs"]] == [("compiled", "GE Build")]
    nodes = {n["name"]: n for n in graph["nodes"]}
    conv = nodes["conv1"]
    assert (conv["op_type"], conv["domain"]) == ("Conv2D", "ge")
    assert conv["origin_names"] == ["scale_conv1", "conv1", "bn_conv1"]
    assert conv["attributes"]["control_inputs"] == "[data]"
    assert len(conv["inputs"]) == 1
    out = nodes["trans_TransData_0"]["outputs"][0]
    assert (out["layout"], out["origin_layout"], out["origin_shape"]) == ("NC1HWC0", "NCHW", "[1,3,224,224]")
    bad = tmp_path / "ge_onnx_00000001_graph_1_Build.pbtxt"
    bad.write_text('ir_version: 6\ngraph {\n  node {\n    op_type: \n  }\n}\n')
    proc = run("summary", bad, check=False)
    assert proc.returncode == 4 and f"{bad}:5:" in proc.stderr, proc.stderr


def test_ge_onnx_twin_of_a_ge_proto_dump_is_not_loaded_twice(tmp_path):
    import shutil
    for f in GE_RUN.glob("ge_proto_*.txt"):
        shutil.copy(f, tmp_path / f.name)
    # GE's default DUMP_GRAPH_FORMAT writes the same stage in both forms.
    shutil.copy(FIXTURES / "ge" / "onnx_dump" / "ge_onnx_00000121_graph_1_Build.pbtxt",
                tmp_path / "ge_onnx_00000120_graph_1_Build.pbtxt")
    out = tmp_path / "out"
    docs = export(out, tmp_path)
    files = sorted(g["source_file"].rsplit("/", 1)[-1] for g in docs["graph"]["graphs"])
    assert files == ["ge_proto_00000000_graph_1_PreRunBegin.txt",
                     "ge_proto_00000120_graph_1_Build.txt"]


def test_start_cann_with_dumps_and_a_torch_npu_profile(tmp_path):
    """The whole CANN capture layout: GE dumps under D/ge, a torch_npu
    profile directory under D/prof; export --input-dir finds both."""
    import shutil
    sample = committed(SAMPLES / "ascend" / "msinsight_pt_text_level1_rank0")
    run_dir = tmp_path / "run"
    run("start", "--output-dir", run_dir, "--backend", "cann")
    shutil.copytree(sample, run_dir / "prof" / "worker_20250109_ascend_pt")
    shutil.copytree(GE_RUN, run_dir / "ge" / "pid_7_deviceid_0",
                    ignore=shutil.ignore_patterns("README.md"))
    run("export", "--quiet", "--input-dir", run_dir)
    out = run_dir / "model-inspector-export"
    graph = json.loads((out / "graph.json").read_text())
    trace = json.loads((out / "trace.json").read_text())
    assert sorted(g["layer_level"] for g in graph["graphs"]) == ["compiled", "framework"]
    kinds = [t["kind"] for t in trace["tasks"]]
    # The level-1 sample's device work: 191 kernels (as its kernel_details.csv
    # has rows), data movement and synchronisation.
    assert kinds.count("compute") == 191
    assert kinds.count("data_movement") > 0 and kinds.count("sync") > 0
    # Every unlinked task has a reason: these GE dumps are not the profiled
    # model, so kernels name nodes the graphs lack; copies and waits name none.
    summary = json.loads((out / "summary.json").read_text())
    reasons = summary["unlinked_reasons"]
    assert sum(reasons.values()) == summary["unlinked_tasks"] > 0
    assert reasons["without_node_name"] > 0 and reasons["unknown_node"] > 0


def test_ub_fusion_scopes_group_the_compiled_graph(tmp_path):
    """GE's UB fusion (ops sharing a fusion_scope ran as one kernel) shows as
    fusion groups of the compiled level."""
    out = tmp_path / "ub.json"
    run("render", "--quiet", GE_SAMPLE, "--level", "compiled", "--groups", "fusion",
        "--out", out)
    doc = json.loads(out.read_text())
    fusion = [g for g in doc["groups"] if g["kind"] == "fusion"]
    scopes = {}
    for m in re.finditer(r'\n  op \{\n    name: "([^"]+)"(.*?)\n  \}', GE_SAMPLE.read_text(), re.S):
        s = re.search(r'key: "fusion_scope"\s*value \{\s*i: (-?\d+)', m.group(2))
        if s:
            scopes.setdefault(s.group(1), []).append(m.group(1))
    expected = {f"UB fusion {k}" for k, ops in scopes.items() if len(ops) >= 2}
    assert {g["label"].split(" (")[0] for g in fusion} == expected
    assert len(expected) > 20


def test_atc_group_op_name_groups_and_task_counts(tmp_path):
    """ATC JSON: ops sharing group_op_name (ATC's decoding of the model's
    fusion_model_def) form a fusion group; task_index_op_name counts tasks."""
    def op(name, typ, inputs, group=None):
        attrs = [{"key": "_datadump_original_op_names",
                  "value": {"list": {"s": [name], "val_type": "VT_LIST_STRING"}}}]
        if group:
            attrs.append({"key": "group_op_name", "value": {"s": group}})
        return {"name": name, "type": typ, "input": inputs, "attr": attrs,
                "output_desc": [{"dtype": "DT_FLOAT16", "layout": "NC1HWC0",
                                 "shape": {"dim": [1, 1, 8, 8, 16]}}]}
    model = {"attr": [{"key": "soc_version", "value": {"s": "Ascend310"}},
                      {"key": "task_index_op_name",
                       "value": {"list": {"s": ["conv", "conv", "relu"],
                                          "val_type": "VT_LIST_STRING"}}}],
             "graph": [{"name": "g", "op": [
                 op("data", "Data", []),
                 op("conv", "Conv2D", ["data:0"], "group_op_ub_1_0"),
                 op("relu", "Relu", ["conv:0"], "group_op_ub_1_0"),
                 op("out", "NetOutput", ["relu:0"])]}]}
    path = tmp_path / "model.om.json"
    path.write_text(json.dumps(model))
    out = tmp_path / "view.json"
    run("render", "--quiet", path, "--level", "compiled", "--groups", "fusion", "--out", out)
    doc = json.loads(out.read_text())
    assert [g["label"] for g in doc["groups"] if g["kind"] == "fusion"] == ["group_op_ub_1_0"]
    docs = export(tmp_path / "dumps", path)
    conv = next(n for n in docs["graph"]["nodes"] if n["name"] == "conv")
    assert conv["attributes"]["om_task_count"] == 2


ATC_INDENTED = committed(FIXTURES / "ge" / "atc_json_indented" / "model.json.gz")


def test_indented_atc_json_under_a_neutral_name_is_read_as_atc_json(tmp_path):
    """`atc --mode=1` writes indented JSON; named model.json it must still be
    read as ATC JSON (not as a Chrome trace) and give the same ops."""
    import collections
    import gzip
    text = gzip.decompress(ATC_INDENTED.read_bytes()).decode()
    model = tmp_path / "model.json"
    model.write_text(text)
    assert text.startswith('{\n    "attr": [')
    out = tmp_path / "out"
    docs = export(out, model)
    assert [g["layer_level"] for g in docs["graph"]["graphs"]] == ["compiled"]
    ops = json.loads(text)["graph"][0]["op"]
    expected = collections.Counter(op["type"] for op in ops)
    nodes = {n["name"]: n for n in docs["graph"]["nodes"]}
    assert {op["name"] for op in ops} <= set(nodes)
    got = collections.Counter(nodes[op["name"]]["op_type"] for op in ops)
    assert got == expected
    # The gzipped file itself loads the same way.
    docs_gz = export(tmp_path / "gz", ATC_INDENTED)
    assert {op["name"] for op in ops} <= {n["name"] for n in docs_gz["graph"]["nodes"]}
