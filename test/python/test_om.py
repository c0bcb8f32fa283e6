"""Ascend offline models (.om) end to end: the two public samples read by
`model-inspector export` agree with an independent decode of the same bytes
(om_reference.py, standard library only); bad files fail with the byte
offset; an ONNX model and its .om link; the seed command line
(`model-inspector --model x.om ...`) serves as `open` does."""
import collections
import json
import struct

import pytest

import om_reference as ref
from conftest import FIXTURES, committed, run
from served import ServedProcess

OM = FIXTURES / "om"
AUTOENCODER = OM / "modelzoo_tf_autoencoder_hh_om.om"
DYNAMIC = OM / "ge_st_dynamic_and_static_graph_without_unfold.om"
RESNET = FIXTURES / "resnet18" / "model.onnx"


def export(tmp_path, *paths):
    out = tmp_path / "export"
    run("export", *paths, "--out", out)
    return json.loads((out / "graph.json").read_text())


def attr_list(node, prefix):
    """om_task_0, om_task_1, ... in order."""
    out = []
    while f"{prefix}{len(out)}" in node["attributes"]:
        out.append(node["attributes"][f"{prefix}{len(out)}"])
    return out


def expected_tasks(models):
    """Op name -> its tasks, as the format notes attribute them: the model
    attr task_index_op_name names each task's op; without it, a kernel
    task's op_index is the OpDef.id of its op (in its own model)."""
    per_op = collections.defaultdict(list)
    for m in models:
        model = m.get("model")
        if model is None:
            continue
        names = model["task_index_op_name"]
        by_id = {}
        for g in model["graphs"]:
            for op in g["ops"]:
                by_id.setdefault(op["id"], op["name"])
        for i, task in enumerate(m.get("tasks", [])):
            op = names[i] if i < len(names) else by_id.get(task.get("op_index"))
            if op is not None:
                per_op[op].append(task)
    return per_op


@pytest.mark.parametrize("sample", [AUTOENCODER, DYNAMIC], ids=lambda p: p.name)
def test_sample_matches_independent_decode(tmp_path, sample):
    data = committed(sample).read_bytes()
    header, models = ref.read(data)
    graph = export(tmp_path, sample)
    # Every graph of the root model (its subgraphs included); the samples'
    # submodels are the root model's subgraphs, so no other root graph.
    want_graphs = {g["name"]: g["ops"] for g in models[0]["model"]["graphs"]}
    got_names = {g["graph_id"]: g["name"] for g in graph["graphs"]}
    assert sorted(got_names.values()) == sorted(want_graphs)
    assert all(g["layer_level"] == "compiled" for g in graph["graphs"])
    got_by_graph = collections.defaultdict(list)
    for n in graph["nodes"]:
        got_by_graph[got_names[n["graph_id"]]].append(n)
    for name, ops in want_graphs.items():
        nodes = got_by_graph[name]
        assert [n["name"] for n in nodes] == [o["name"] for o in ops]
        assert collections.Counter(n["op_type"] for n in nodes) == \
            collections.Counter(o["type"] for o in ops)
        # Device layouts of the outputs, as the op's output_desc has them.
        for n, o in zip(nodes, ops):
            for out, layout in zip(n["outputs"], o["output_layouts"]):
                assert out.get("layout", "") == layout, (n["name"], out)
    # Tasks per op: count, type and kernel name.
    per_op = expected_tasks(models)
    nodes = {n["name"]: n for n in graph["nodes"]}
    total = 0
    for op, tasks in per_op.items():
        node = nodes[op]
        lines = attr_list(node, "om_task_")
        assert node["attributes"]["om_task_count"] == len(tasks), op
        assert len(lines) == len(tasks), op
        total += len(tasks)
        for line, task in zip(lines, tasks):
            kernel = task.get("kernel_name") or task.get("stub_func")
            if task["type"] == 0 and kernel:
                assert line.startswith("KERNEL " + kernel), (op, line)
            assert f"stream {task['stream_id']}" in line
    assert total == sum(n["attributes"].get("om_task_count", 0)
                        for n in graph["nodes"])
    # Kernel binaries are stored under their op's name.
    kernels = set()
    for m in models:
        kernels |= set(m["kernels"])
    with_binary = {n["name"] for n in graph["nodes"]
                   if "om_kernel_binary" in n["attributes"]}
    assert with_binary == kernels & set(nodes)
    # A Const's size is its weight_size.
    for o in models[0]["model"]["graphs"][0]["ops"]:
        if o["type"] == "Const" and o.get("weight_size"):
            assert nodes[o["name"]]["attributes"]["om_weight_bytes"] == \
                f"{o['weight_size']} (WEIGHTS_DATA offset {o['data_offset']})"


def test_reference_decode_gives_the_format_notes_numbers():
    """docs/reference/om.md section 7, counted by a separate probe."""
    header, models = ref.read(committed(AUTOENCODER).read_bytes())
    assert header["version"] == 0x20000000 and header["model_length"] == 0
    assert models[0]["partitions"] == [0, 1, 2, 3]
    ops = models[0]["model"]["graphs"][0]["ops"]
    assert len(ops) == 46
    assert sum(o["type"] == "Const" for o in ops) == 17
    assert len(models[0]["tasks"]) == 30
    assert len(models[0]["kernels"]) == 26
    # The two ways to name a task's op agree (om.md section 5): a kernel
    # task's context.op_index is the OpDef.id of task_index_op_name[i].
    by_id = {o["id"]: o["name"] for o in ops}
    names = models[0]["model"]["task_index_op_name"]
    kernel_tasks = [(i, t) for i, t in enumerate(models[0]["tasks"]) if "op_index" in t]
    assert kernel_tasks
    for i, task in kernel_tasks:
        assert by_id[task["op_index"]] == names[i]
    header, models = ref.read(committed(DYNAMIC).read_bytes())
    assert header["model_num"] == 3 and header["is_unknow_model"] == 1
    assert [(g["name"], len(g["ops"])) for g in models[0]["model"]["graphs"]] == \
        [("root", 6), ("sub_1", 4), ("sub_2", 4)]


def test_summary_and_check_read_an_om(tmp_path):
    proc = run("summary", AUTOENCODER, "--format", "json")
    doc = json.loads(proc.stdout)
    assert doc["graph"]["compiled_nodes"] == 46
    assert doc["graph"]["framework_nodes"] == 0
    run("check", AUTOENCODER)


# ------------------------------------------------------------ bad input

def good_parts():
    model = ref.model_def_bytes("m", [("g", [ref.op_def("a", "Relu", 0)])])
    return [(ref.MODEL_DEF, model), (ref.TASK_INFO, ref.kernel_task(0, "k"))]


def bad_files():
    good = ref.om_file(good_parts())
    pico = b"PICO" + good[4:]
    zipped = b"PK\x03\x04" + good[4:]
    # The second tiny entry (TASK_INFO) starts at 256 + 4 + 12.
    entry = 256 + 4 + 12
    beyond = bytearray(good)
    struct.pack_into("<I", beyond, entry + 8, 1 << 20)
    overlap = bytearray(good)
    struct.pack_into("<I", overlap, entry + 4, 1)
    return {
        "truncated_header": (good[:200], "byte 200: truncated"),
        "truncated_body": (good[:-3], "byte 76: the header says"),
        "pico": (pico, "byte 0: the magic is 'PICO'"),
        "zip": (zipped, "OM2"),
        "encrypted": (ref.om_file(good_parts(), encrypt=1),
                      "byte 80: the model is encrypted"),
        "beyond_eof": (bytes(beyond), f"byte {entry}: partition 2 (TASK_INFO)"),
        "overlap": (bytes(overlap), "overlaps the partition before it"),
        "size_mismatch": (good + b"xx", "byte 76: the header says"),
    }


@pytest.mark.parametrize("case", sorted(bad_files()))
def test_bad_om_fails_with_the_byte_offset(tmp_path, case):
    data, fragment = bad_files()[case]
    path = tmp_path / f"{case}.om"
    path.write_bytes(data)
    proc = run("check", path, check=False)
    assert proc.returncode > 0, proc.stderr  # an error, not a signal
    assert f"{case}.om: byte " in proc.stderr
    assert fragment in proc.stderr, proc.stderr


def test_good_hand_built_om_loads(tmp_path):
    path = tmp_path / "good.om"
    path.write_bytes(ref.om_file(good_parts(), wide=True))
    graph = export(tmp_path, path)
    assert [n["name"] for n in graph["nodes"]] == ["a"]
    assert graph["nodes"][0]["attributes"]["om_task_0"] == \
        "KERNEL k, stream 0, block_dim 1"


# ------------------------------------------------------------ ONNX + .om

def resnet_om():
    """A compiled graph of resnet18's stem: conv1+relu fused into one op
    (GE names the framework ops in _datadump_original_op_names), then the
    max pool."""
    fused = ref.op_def("conv1_relu", "Conv2D", 1, attrs={
        "_datadump_original_op_names": ref.attr_list_s(["/conv1/Conv", "/relu/Relu"])})
    pool = ref.op_def("maxpool", "MaxPool", 2, inputs=["conv1_relu:0"], attrs={
        "_datadump_original_op_names": ref.attr_list_s(["/maxpool/MaxPool"])})
    model = ref.model_def_bytes("resnet18", [("resnet18_stem", [fused, pool])])
    tasks = ref.kernel_task(1, "te_conv2d_relu__kernel0") + \
        ref.kernel_task(2, "te_maxpool__kernel0")
    return ref.om_file([(ref.MODEL_DEF, model), (ref.TASK_INFO, tasks)])


def test_onnx_and_its_om_link(tmp_path):
    om = tmp_path / "resnet18.om"
    om.write_bytes(resnet_om())
    graph = export(tmp_path, committed(RESNET), om)
    by_id = {n["node_id"]: n for n in graph["nodes"]}
    fused = next(n for n in graph["nodes"] if n["name"] == "conv1_relu")
    assert fused["layer_level"] == "compiled"
    assert sorted(by_id[i]["name"] for i in fused["fused_from"]) == \
        ["/conv1/Conv", "/relu/Relu"]


# ------------------------------------------------------------ seed CLI

class Seed(ServedProcess):
    """`model-inspector --model ...` running; always stopped by close()."""

    def __init__(self, *args):
        super().__init__(args)

    def get(self, path):
        return self.get_json(path)

    def runs(self):
        return self.get("/api/runs")["runs"]


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_seed_command_line_serves_the_model():
    port = free_port()
    seed = Seed("--model", committed(AUTOENCODER), "--port", port, "--log-level", "error")
    try:
        assert seed.host == "127.0.0.1" and seed.port == port
        runs = seed.runs()
        assert len(runs) == 1
        assert runs[0]["inputs"][0]["format"] == "om"
        assert runs[0]["levels"] == ["compiled"]
        # The node details the UI's panel shows: op 1 (atomic_addr_clean)
        # launches the task list's first two tasks, FUSION_START and its
        # kernel (om_reference decode: task 1 is a kernel task, op_index 1).
        node = seed.get("/api/runs/0/levels/compiled/nodes/1")
        attrs = {a["name"]: a["value"] for a in node["attributes"]}
        assert node["name"] == "atomic_addr_clean-1_0"
        assert attrs["om_task_0"] == "FUSION_START, stream 0"
        assert attrs["om_task_1"].startswith("KERNEL te_atomicaddrclean_")
    finally:
        assert seed.close() == 0


def test_seed_compare_two_oms_is_two_runs():
    seed = Seed("--model", committed(AUTOENCODER), "--compare", committed(DYNAMIC),
                "--log-level", "error")
    try:
        assert [r["name"] for r in seed.runs()] == [AUTOENCODER.name, DYNAMIC.name]
    finally:
        assert seed.close() == 0


def test_seed_compare_onnx_and_om_is_one_linked_run(tmp_path):
    om = tmp_path / "resnet18.om"
    om.write_bytes(resnet_om())
    seed = Seed("--model", committed(RESNET), "--compare", om, "--log-level", "error")
    try:
        runs = seed.runs()
        assert len(runs) == 1
        assert sorted(runs[0]["levels"]) == ["compiled", "framework"]
    finally:
        assert seed.close() == 0


def test_seed_host_follows_open_rules():
    proc = run("--model", AUTOENCODER, "--host", "0.0.0.0", check=False)
    assert proc.returncode != 0
    assert "--token" in proc.stderr


def test_seed_needs_a_model_or_a_subcommand():
    proc = run(check=False)
    assert proc.returncode == 2
    proc = run("--compare", AUTOENCODER, check=False)
    assert proc.returncode == 2


# ------------------------------------------------------------ a profile

OP_SUMMARY_HEADER = ("Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,"
                     "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Num\n")


def test_profile_tasks_link_to_the_om_ops(tmp_path):
    """msprof's op_summary names the ops the .om's task list launches: its
    device tasks link to those nodes (two rows written by hand, with the
    op names and types of the sample's first kernels)."""
    csv = tmp_path / "op_summary_20250101120000.csv"
    csv.write_text(OP_SUMMARY_HEADER +
                   "0,1,2,0,trans_Cast_0,Cast,static,AI_CORE,1000.0,5.0,0,2\n"
                   "0,1,3,0,trans_TransData_1,TransData,static,AI_CORE,1010.0,7.0,0,2\n")
    graph = export(tmp_path, committed(AUTOENCODER), csv)
    nodes = {n["name"]: n for n in graph["nodes"]}
    for name in ("trans_Cast_0", "trans_TransData_1"):
        assert len(nodes[name]["mapped_task_ids"]) == 1, nodes[name]
        assert nodes[name]["attributes"]["om_task_count"] >= 1
