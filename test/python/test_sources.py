"""Several sources in one run: two ranks' traces loaded together keep their
ids, devices and names apart (test/fixtures/multirank, expected values
computed by hand in its README), and models are placed by content, with
the ones that cannot be placed reported instead of dropped."""
import json
import shutil

import jsonschema
import onnx
from onnx import TensorProto, helper

from conftest import FIXTURES, SAMPLES, SCHEMAS, run

MULTIRANK = FIXTURES / "multirank"
RANK0 = MULTIRANK / "rank0.pt.trace.json"
RANK1 = MULTIRANK / "rank1.pt.trace.json"


def summary_json(*inputs):
    doc = json.loads(run("summary", "--quiet", "--format", "json", "--top", "50",
                         *inputs).stdout)
    jsonschema.Draft202012Validator(
        json.loads((SCHEMAS / "summary.schema.json").read_text())).validate(doc)
    return doc


def export(tmp_path, *inputs):
    run("export", "--quiet", *inputs, "--out", tmp_path)
    docs = {name: json.loads((tmp_path / f"{name}.json").read_text())
            for name in ("trace", "summary")}
    for name, doc in docs.items():
        schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
        jsonschema.Draft202012Validator(schema).validate(doc)
    return docs


# --- two ranks ---------------------------------------------------------------

def test_two_ranks_keep_their_op_types_streams_and_times():
    doc = summary_json(RANK0, RANK1)
    ops = {r["op_type"]: (r["calls"], r["total_us"]) for r in doc["op_types"]}
    # README "Expected values": rank 1's kernels carry rank 1's host ops.
    assert ops == {"aten::conv2d": (1, 50.0), "aten::mm": (1, 30.0),
                   "aten::relu": (1, 10.0), "[data movement]": (2, 9.0),
                   "aten::add": (1, 8.0)}
    assert doc["tasks"] == 6 and doc["total_us"] == 107.0
    streams = {r["name"]: r for r in doc["streams"]}
    assert sorted(streams) == ["rank 0 · GPU 0 · stream 7",
                               "rank 1 · GPU 0 · stream 7"]
    r0, r1 = streams["rank 0 · GPU 0 · stream 7"], streams["rank 1 · GPU 0 · stream 7"]
    assert (r0["tasks"], r0["total_us"], r0["busy_us"], r0["span_us"]) == (3, 45.0, 45.0, 85.0)
    assert (r1["tasks"], r1["total_us"], r1["busy_us"], r1["span_us"]) == (3, 62.0, 62.0, 99.0)
    runs = {r["name"]: (r["tasks"], r["task_time_us"]) for r in doc["runs"]}
    assert runs["rank 0 · ProfilerStep#1"] == (3, 45.0)
    assert runs["rank 1 · ProfilerStep#1"] == (3, 62.0)
    assert runs["rank 0 · before ProfilerStep#1"] == (0, 0.0)
    assert doc["dialect"] == "pytorch"


def test_two_ranks_in_the_text_table():
    out = run("summary", "--quiet", RANK0, RANK1).stdout
    assert "rank 0 · GPU 0 · stream 7" in out
    assert "rank 1 · GPU 0 · stream 7" in out
    assert "stream 7 (python3 (GPU 0))" not in out


def test_one_rank_alone_keeps_the_traces_own_names():
    doc = summary_json(RANK1)
    assert [r["name"] for r in doc["streams"]] == ["stream 7 (python3 (GPU 0))"]
    assert {r["op_type"] for r in doc["op_types"]} == {
        "aten::conv2d", "aten::add", "[data movement]"}
    assert [r["name"] for r in doc["runs"]] == ["before ProfilerStep#1", "ProfilerStep#1"]


def test_trace_dump_lists_sources_and_links_within_each(tmp_path):
    trace = export(tmp_path, RANK0, RANK1)["trace"]
    sources = trace["sources"]
    assert [(s["source"], s["rank"], s["dialect"], s["time_base"]) for s in sources] == [
        (0, 0, "pytorch", "epoch"), (1, 1, "pytorch", "epoch")]
    assert all(s["base_ns"] == 1751410836000000000 for s in sources)
    assert [s["files"] for s in sources] == [[str(RANK0)], [str(RANK1)]]
    assert [s["name"] for s in sources] == ["rank 0", "rank 1"]
    tasks = trace["tasks"]
    streams = trace["streams"]
    by_name = {}
    for t in tasks:
        by_name.setdefault(t["kernel_name"], []).append(t)
    conv = by_name["k_aten::conv2d"][0]
    assert conv["op_type"] == "aten::conv2d"
    parent = tasks[conv["parent_task_id"]]
    assert parent["kernel_name"] == "aten::conv2d"
    assert streams[parent["stream_id"]]["source"] == streams[conv["stream_id"]]["source"] == 1
    assert by_name["k_aten::add"][0]["op_type"] == "aten::add"
    assert by_name["k_aten::mm"][0]["op_type"] == "aten::mm"
    # Two GPU 0 / stream 7 tracks, one per source.
    gpu = [s for s in streams if s["kind"] == "device_stream"]
    assert [(s["source"], s["device"], s["stream"]) for s in gpu] == [(0, 0, 7), (1, 0, 7)]
    assert [s["name"] for s in gpu] == ["rank 0 · GPU 0 · stream 7",
                                        "rank 1 · GPU 0 · stream 7"]
    assert {r["source"] for r in trace["runs"]} == {0, 1}


def test_host_threads_are_named_by_rank_too(tmp_path):
    trace = export(tmp_path, RANK0, RANK1)["trace"]
    hosts = [s["name"] for s in trace["streams"] if s["kind"] == "host_thread"]
    assert "rank 1 · python3 (CPU) · thread 4102 (python3)" in hosts


# --- model roles -------------------------------------------------------------

def tiny_model(path, nodes, inputs=("x",), outputs=("y",)):
    """A float model: `nodes` are (op, name, inputs, outputs)."""
    graph = helper.make_graph(
        [helper.make_node(op, list(i), list(o), name=name) for op, name, i, o in nodes],
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in outputs])
    model = helper.make_model(graph, producer_name="test",
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, path)
    return path


def ort_profile(path, kernels):
    """An ONNX Runtime profile naming `kernels` as (node name, op type)."""
    events = [{"cat": "Session", "pid": 1, "tid": 1, "dur": 100, "ts": 0, "ph": "X",
               "name": "model_run", "args": {}}]
    for i, (node, op) in enumerate(kernels):
        events.append({"cat": "Node", "pid": 1, "tid": 1, "dur": 10, "ts": 1 + 20 * i,
                       "ph": "X", "name": f"{node}_kernel_time",
                       "args": {"op_name": op, "provider": "CPUExecutionProvider"}})
    path.write_text(json.dumps(events))
    return path


FRAMEWORK = [("Relu", "a", ["x"], ["t"]), ("Identity", "b", ["t"], ["u"]),
             ("Sigmoid", "c", ["u"], ["y"])]
# What an optimizer left of it: same inputs / outputs, Identity removed.
OPTIMIZED = [("Relu", "a", ["x"], ["t"]), ("Sigmoid", "c", ["t"], ["y"])]


def summarize(*args):
    """`summary --format csv`: (file name -> role from its Inputs table,
    the process)."""
    proc = run("summary", "--format", "csv", *args, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = lines.index("# Inputs") + 2  # after the header row
    result = {}
    for line in lines[start:]:
        if not line:
            break
        path, _, role = line.rsplit(",", 2)
        result[path.rsplit("/", 1)[-1]] = role
    return result, proc


def test_the_graph_the_trace_names_best_is_the_compiled_one(tmp_path):
    fw = tiny_model(tmp_path / "first.onnx", FRAMEWORK)
    opt = tiny_model(tmp_path / "second.onnx", OPTIMIZED)
    # The trace names "a" and "c": both graphs have them, a tie...
    prof = ort_profile(tmp_path / "profile.json", [("a", "Relu"), ("c", "Sigmoid")])
    got, tied = summarize(fw, opt, prof)
    assert got == {"first.onnx": "framework", "second.onnx": "unplaced",
                   "profile.json": "trace"}
    assert "model_unplaced" in tied.stderr and "second.onnx" in tied.stderr
    # ... a node only the second graph has decides it (whatever the order).
    opt2 = tiny_model(tmp_path / "third.onnx",
                      [("Relu", "a", ["x"], ["t"]), ("Sigmoid", "c_fused", ["t"], ["y"])])
    prof2 = ort_profile(tmp_path / "profile2.json", [("a", "Relu"), ("c_fused", "Sigmoid")])
    got, _ = summarize(opt2, fw, prof2)
    assert got == {"third.onnx": "compiled", "first.onnx": "framework",
                   "profile2.json": "trace"}
    doc = summary_json(opt2, fw, prof2)
    assert doc["linked_tasks"] == 2 and doc["graph"]["compiled_nodes"] == 2


def test_a_file_name_is_only_a_last_resort_guess(tmp_path):
    fw = tiny_model(tmp_path / "model.onnx", FRAMEWORK)
    opt = tiny_model(tmp_path / "model.optimized.onnx", OPTIMIZED)
    got, proc = summarize("--verbose", opt, fw)  # the guess is an info
    assert got == {"model.optimized.onnx": "compiled", "model.onnx": "framework"}
    assert "model_role_guessed" in proc.stderr


def test_models_that_cannot_be_placed_are_reported(tmp_path):
    fw = tiny_model(tmp_path / "model.onnx", FRAMEWORK)
    other = tiny_model(tmp_path / "other.onnx", [("Relu", "r", ["p"], ["q"])],
                       inputs=("p",), outputs=("q",))
    got, proc = summarize(fw, other)
    assert got == {"model.onnx": "framework", "other.onnx": "unplaced"}
    assert "model_unplaced" in proc.stderr and "another model" in proc.stderr
    # A third model when the framework and the compiled graph are placed.
    src = FIXTURES / "resnet18"
    third = tmp_path / "third.onnx"
    shutil.copy(src / "ort_extended" / "model.optimized.onnx", third)
    got, proc = summarize(src / "model.onnx", src / "ort_all" / "model.optimized.onnx", third)
    assert got == {"model.onnx": "framework", "model.optimized.onnx": "compiled",
                   "third.onnx": "unplaced"}
    assert "one model too many" in proc.stderr


# --- repeated node names -----------------------------------------------------

def test_a_repeated_node_name_is_decided_by_op_type_or_left_unlinked(tmp_path):
    model = tiny_model(tmp_path / "dup.onnx",
                       [("Relu", "block", ["x"], ["t"]), ("Sigmoid", "block", ["t"], ["y"])])
    prof = ort_profile(tmp_path / "profile.json",
                       [("block", "Sigmoid"), ("block", "Tanh")])
    proc = run("summary", "--format", "json", model, prof)
    doc = json.loads(proc.stdout)
    assert "duplicate_node_name" in proc.stderr
    assert doc["linked_tasks"] == 1 and doc["unlinked_tasks"] == 1
    assert doc["unlinked_reasons"]["ambiguous_node"] == 1
    nodes = {(n["op_type"], n["status"]) for n in doc["top_nodes"]}
    assert ("Sigmoid", "executed") in nodes
    # `path --node` refuses the shared name and takes an id instead.
    refused = run("path", model, "--node", "block", check=False)
    assert refused.returncode == 2 and "#0 (Relu)" in refused.stderr
    assert run("path", model, "--node", "#1").returncode == 0


# --- two torch_npu rank folders ----------------------------------------------

def test_two_torch_npu_rank_folders_are_two_sources_joined_within(tmp_path):
    """The 2-rank torch_npu text export (test/fixtures/samples/cluster, the
    timelines gzipped): each rank folder
    (timeline, kernel_details, memory_record and the communication files)
    is one source with the rank
    its profiler_info_<rank>.json gives, and every kernel_details row joins
    a timeline task of its own folder (same name, start within 1 us)."""
    import csv
    cluster = SAMPLES / "cluster" / "msinsight_pt_text_level1_2rank_2024"
    proc = run("export", "--quiet", cluster, "--out", tmp_path)
    assert "csv_row_skipped" not in proc.stderr
    trace = json.loads((tmp_path / "trace.json").read_text())
    jsonschema.Draft202012Validator(
        json.loads((SCHEMAS / "trace.schema.json").read_text())).validate(trace)
    sources = trace["sources"]
    assert [(s["key"].rsplit("/", 1)[-1], s["rank"], s["dialect"], s["time_base"])
            for s in sources] == [("rank0_ascend_pt", 0, "ascend", "epoch"),
                                  ("rank1_ascend_pt", 1, "ascend", "epoch")]
    for s in sources:
        assert sorted(f.rsplit("/", 1)[-1] for f in s["files"]) == [
            "communication.json", "communication_matrix.json", "kernel_details.csv",
            "memory_record.csv", "step_trace_time.csv", "trace_view.json.gz"]
    source_of = [trace["streams"][t["stream_id"]]["source"] for t in trace["tasks"]]
    for s in sources:
        folder = cluster / f"rank{s['rank']}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
        with open(folder / "kernel_details.csv", newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["Type"].strip() not in ("", "N/A")]
        ours = {}
        for t, src in zip(trace["tasks"], source_of):
            if src == s["source"]:
                ours.setdefault(t["kernel_name"], []).append(t)
        for row in rows:
            start = float(row["Start Time(us)"].strip())
            match = [t for t in ours.get(row["Name"], [])
                     if abs(t["start_us"] - start) <= 1.0]
            assert match, (s["rank"], row["Name"], start)
            assert any(t["op_type"] == row["Type"] for t in match), (s["rank"], row["Name"])
