"""CANN / Ascend execution data end to end: host launch -> device
task links on the level-1 torch_npu timeline, op-type totals against the
sample's own op_statistic.csv, every kernel_details / op_summary sample
loading with its tasks, and the msprof_slice / task_time fixtures. Expected
figures are computed here from the raw files, independently of
model-inspector."""
import csv
import json

import jsonschema
import pytest

from conftest import FIXTURES, SAMPLES, SCHEMAS, committed, run

ASCEND = SAMPLES / "ascend"
LEVEL1 = committed(ASCEND / "msinsight_pt_text_level1_rank0")
LEVEL0 = committed(ASCEND / "msinsight_pt_text_level0_rank0")
FIX = FIXTURES / "ascend"
PROF = FIX / "PROF_000001_20250101120000000_ABCDEFGHIJKLMNOP"


def export(tmp_path, *inputs):
    run("export", "--quiet", *inputs, "--out", tmp_path)
    docs = {name: json.loads((tmp_path / f"{name}.json").read_text())
            for name in ("trace", "summary")}
    for name, doc in docs.items():
        schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
        jsonschema.Draft202012Validator(schema).validate(doc)
    return docs


def csv_data_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return [r for r in rows[1:] if any(cell.strip() for cell in r)]


# --- 1. launch links -------------------------------------------------------

def test_every_node_launch_with_a_device_task_is_linked(tmp_path):
    raw = json.loads((LEVEL1 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    process = {e["pid"]: e["args"]["name"] for e in raw
               if e.get("ph") == "M" and e.get("name") == "process_name"}
    device_connections = {
        e["args"]["connection_id"] for e in raw
        if e.get("ph") == "X" and process.get(e["pid"]) in ("Ascend Hardware", "HCCL")
        and "connection_id" in e.get("args", {})}
    expected = {
        e["args"]["connection_id"] for e in raw
        if e.get("ph") == "X" and process.get(e["pid"]) == "CANN"
        and e["name"] == "Node@launch"
        and e["args"].get("connection_id") in device_connections}
    assert len(expected) == 191  # the sample's figure; guards the test itself

    tasks = export(tmp_path, LEVEL1)["trace"]["tasks"]
    linked = set()
    for t in tasks:
        launch = t["launch_task_id"]
        if launch is None:
            continue
        host = tasks[launch]
        assert host["kind"] == "runtime"
        if host["kernel_name"] == "Node@launch":
            # Rule a: same connection_id as the device task.
            assert host["correlation"] == t["correlation"], t
            linked.add(host["correlation"])
    assert linked == expected
    # No device task whose Node@launch exists points at another call.
    node_by_connection = {t["correlation"]: t["task_id"] for t in tasks
                          if t["kernel_name"] == "Node@launch"}
    for t in tasks:
        if t["kind"] in ("compute", "data_movement", "sync") and \
                t["correlation"] in node_by_connection:
            assert t["launch_task_id"] == node_by_connection[t["correlation"]], t


# --- 2. totals against op_statistic.csv --------------------------------------

# op_statistic.csv counts the kernels of kernel_details.csv only. It leaves
# out what is not a kernel (Notify Wait, EVENT_WAIT / EVENT_RECORD, Write
# Value: sync; SDMA, MEMCPY_ASYNC: data movement) and the HCCL collectives
# (communication_statistic's job), so those summary rows are not compared.
NOT_IN_OP_STATISTIC = {"sync", "data_movement", "communication"}


def test_op_type_totals_match_op_statistic(tmp_path):
    summary = export(tmp_path, LEVEL1)["summary"]
    ours = {r["op_type"]: r for r in summary["op_types"]
            if r["kind"] not in NOT_IN_OP_STATISTIC}
    with open(LEVEL1 / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv", newline="") as f:
        theirs = {r["OP Type"]: r for r in csv.DictReader(f)}
    assert set(ours) == set(theirs)
    for op_type, row in theirs.items():
        count = int(row["Count"])
        assert ours[op_type]["calls"] == count, op_type
        assert ours[op_type]["total_us"] == pytest.approx(
            float(row["Total Time(us)"]), abs=0.01 * count), op_type
    assert ours["ReduceSum"]["calls"] == 10  # was 15: MEMCPYs took the cpu_op's name


def test_kernel_details_rows_all_join_the_timeline():
    for sample in (LEVEL1, LEVEL0):
        proc = run("summary", "--format", "csv", sample)
        assert "matched no timeline task" not in proc.stderr, proc.stderr


# --- 3. CSV samples on their own -----------------------------------------------

# Rows the importer skips on purpose (no numeric start or duration); none of
# the real samples has one.
CSV_SAMPLES = [
    (LEVEL0 / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", 0),
    (LEVEL1 / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", 0),
    (ASCEND / "mstt_advisor_compute_advice" / "kernel_details.csv", 0),
    (ASCEND / "msinsight_server_tests" / "op_summary_1.csv", 0),
]


@pytest.mark.parametrize("path,skipped", CSV_SAMPLES, ids=lambda p: str(p)[-40:])
def test_csv_samples_load_one_task_per_row(tmp_path, path, skipped):
    committed(path)
    trace = export(tmp_path, path)["trace"]
    assert trace["dialect"] == "ascend"
    assert len(trace["tasks"]) == len(csv_data_rows(path)) - skipped


def test_csv_fixture_skips_rows_without_times(tmp_path):
    path = FIX / "kernel_details_level0.csv"
    proc = run("export", path, "--out", tmp_path)
    trace = json.loads((tmp_path / "trace.json").read_text())
    assert len(trace["tasks"]) == len(csv_data_rows(path)) - 1
    assert "kernel_details_level0.csv:5:" in proc.stderr


def test_csv_quoting_and_tab_suffixed_times(tmp_path):
    tasks = export(tmp_path, FIX / "op_summary_current.csv")["trace"]["tasks"]
    by_name = {t["kernel_name"]: t for t in tasks}
    # "1717575960208020.758\t": quoted, tab-suffixed, kept to the ns.
    assert by_name["Conv2D1"]["start_us"] == pytest.approx(1717575960208020.758, abs=1e-3)
    assert by_name["Conv2D1"]["op_type"] == "Conv2D"
    assert by_name["Conv2D1"]["kind"] == "compute"
    assert by_name["MEMCPY_ASYNC"]["kind"] == "data_movement"
    assert by_name["MEMCPY_ASYNC"]["op_type"] == ""  # N/A
    assert by_name["hcom_allReduce__586_0_1"]["kind"] == "compute"
    assert by_name["hcom_allReduce__586_0_1"]["category"] == "COMMUNICATION"


# --- 6. msprof slices and task_time ----------------------------------------------

def test_msprof_slices_share_tracks_and_link_launches(tmp_path):
    trace = export(tmp_path, PROF)["trace"]
    tasks = trace["tasks"]
    slices = sorted((PROF / "mindstudio_profiler_output").glob("msprof_slice_*.json"))
    raw = [e for s in slices for e in json.loads(s.read_text())]
    assert len(tasks) == sum(1 for e in raw if e.get("ph") == "X")
    # The second slice has no metadata: its events continue the tracks of
    # the first one.
    names = [(s["process_name"], s["thread_name"]) for s in trace["streams"]]
    assert sorted(names) == [("Ascend Hardware (NPU)", "Stream 2"),
                             ("Ascend Hardware (NPU)", "Stream 3"),
                             ("CANN (CPU)", "Thread 4242")]
    by_name = {t["kernel_name"]: t for t in tasks}
    for kernel in ("Conv2D1", "Cast1"):  # Node@launch, not the AscendCL flow start
        launch = tasks[by_name[kernel]["launch_task_id"]]
        assert launch["kernel_name"] == "Node@launch"
        assert launch["correlation"] == by_name[kernel]["correlation"]
    # No Node@launch: the HostToDevice flow's start.
    assert tasks[by_name["MEMCPY_ASYNC"]["launch_task_id"]]["kernel_name"] == \
        "AscendCL@aclrtMemcpyAsync"
    # op_summary joined onto both slices.
    assert by_name["Conv2D1"]["op_type"] == "Conv2D"
    assert by_name["Cast1"]["op_type"] == "Cast"


def test_task_time_variants(tmp_path):
    current = FIX / "task_time_20250101120000.csv"
    tasks = export(tmp_path / "a", current)["trace"]["tasks"]
    assert len(tasks) == len(csv_data_rows(current))
    kinds = {t["kernel_name"]: t["kind"] for t in tasks}
    assert kinds == {"Conv2D1": "compute", "Cast1": "compute",
                     "MEMCPY_ASYNC": "data_movement", "EVENT_RECORD": "sync"}
    # The runtime.db variant holds aggregates: recognised, no tasks.
    old = FIX / "task_time_runtime_20230101120000.csv"
    trace = export(tmp_path / "b", old)["trace"]
    assert trace["tasks"] == []
