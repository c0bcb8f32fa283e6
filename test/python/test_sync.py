"""Syncs and waits are not work: the summary's totals, op-type rows and
stream busy times count kernels, copies and memsets alone, and the waits
(Kineto's cuda_sync records; CANN's EVENT_RECORD / EVENT_WAIT / Notify Wait
/ Write Value tasks) have rows of their own (kind "sync"). Expected figures
are summed here from the raw files with the json module, independently of
model-inspector."""
import collections
import csv
import gzip
import json

import pytest

from conftest import FIXTURES, SAMPLES, committed, run

KINETO_SYNC = committed(FIXTURES / "sync" / "kineto_event_sync.pt.trace.json")
ASCEND_LEVEL1 = committed(SAMPLES / "ascend" / "msinsight_pt_text_level1_rank0")
KINETO_H100 = committed(SAMPLES / "traces" / "kineto" / "tracelens" /
                        "h100__gaunernst_bert-small-uncased__1016001.json.gz")

KINETO_WORK = {"kernel", "gpu_memcpy", "gpu_memset"}


def summary(path):
    return json.loads(run("summary", "--format", "json", "--quiet", path).stdout)


def rows_by_kind(doc):
    out = collections.defaultdict(float)
    for r in doc["op_types"]:
        out[r["kind"]] += r["total_us"]
    return out


def test_kineto_event_sync_is_not_aten_mm_compute():
    events = json.loads(KINETO_SYNC.read_text())["traceEvents"]
    device = [e for e in events if e.get("ph") == "X" and e["pid"] == 0]
    work = sum(e["dur"] for e in device if e["cat"] in KINETO_WORK)
    sync = sum(e["dur"] for e in device if e["cat"] == "cuda_sync")
    # The launching op of each kernel: correlation -> runtime call's
    # External id -> the cpu_op with that External id.
    op_of_external = {e["args"]["External id"]: e["name"] for e in events
                      if e.get("cat") == "cpu_op"}
    external_of_corr = {e["args"]["correlation"]: e["args"]["External id"]
                        for e in events if e.get("cat") == "cuda_runtime"}
    kernels_by_op = collections.defaultdict(float)
    for e in device:
        if e["cat"] == "kernel":
            op = op_of_external[external_of_corr[e["args"]["correlation"]]]
            kernels_by_op[op] += e["dur"]
    assert (work, sync, dict(kernels_by_op)) == (105, 60, {"aten::mm": 100})

    doc = summary(KINETO_SYNC)
    rows = {r["op_type"]: r for r in doc["op_types"]}
    assert doc["total_us"] == pytest.approx(work)
    assert rows["aten::mm"]["total_us"] == pytest.approx(kernels_by_op["aten::mm"])
    assert rows["aten::mm"]["calls"] == 2
    assert rows["[sync]"]["kind"] == "sync"
    assert rows["[sync]"]["calls"] == 3
    assert rows["[sync]"]["total_us"] == pytest.approx(sync)
    by_kind = rows_by_kind(doc)
    assert by_kind["sync"] == pytest.approx(sync)
    assert sum(v for k, v in by_kind.items() if k != "sync") == pytest.approx(work)
    (stream,) = doc["streams"]
    assert stream["busy_us"] == pytest.approx(work)  # no overlaps here


# The real torch_npu level-1 run: its Ascend Hardware tasks by Task Type.
# Kernels, DSA and copies are work; Notify Wait, Write Value and the
# EVENT_RECORD / EVENT_WAIT SQEs are waits; PLACE_HOLDER_SQE is neither
# (not an execution task). The HCCL "Group N Communication" collectives are
# work too ("Plane N" rows are their detail).
ASCEND_WORK = {"AI_CORE", "MIX_AIV", "SDMA", "PCIE_DMA_SQE", "SDMA_SQE", "DSA_SQE"}
ASCEND_SYNC = {"Notify Wait", "Write Value", "EVENT_RECORD_SQE", "EVENT_WAIT_SQE"}
ASCEND_NEITHER = {"PLACE_HOLDER_SQE"}


def test_ascend_waits_are_apart_from_work_on_a_real_trace():
    raw = json.loads((ASCEND_LEVEL1 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    process = {e["pid"]: e["args"]["name"] for e in raw
               if e.get("ph") == "M" and e.get("name") == "process_name"}
    thread = {(e["pid"], e["tid"]): e["args"]["name"] for e in raw
              if e.get("ph") == "M" and e.get("name") == "thread_name"}
    by_type = collections.defaultdict(float)
    communication = 0.0
    for e in raw:
        if e.get("ph") != "X":
            continue
        p = process.get(e["pid"])
        if p == "Ascend Hardware" and "Task Type" in e.get("args", {}):
            by_type[e["args"]["Task Type"]] += float(e["dur"])
        elif p in ("HCCL", "Communication") and \
                thread.get((e["pid"], e["tid"]), "").startswith("Group"):
            communication += float(e["dur"])
    assert set(by_type) == ASCEND_WORK | ASCEND_SYNC | ASCEND_NEITHER
    work = sum(by_type[t] for t in ASCEND_WORK) + communication
    sync = sum(by_type[t] for t in ASCEND_SYNC)
    assert communication > 0 and sync > 0

    doc = summary(ASCEND_LEVEL1)
    by_kind = rows_by_kind(doc)
    assert by_kind["sync"] == pytest.approx(sync, abs=0.01)
    assert doc["total_us"] == pytest.approx(work, abs=0.01)
    assert sum(v for k, v in by_kind.items() if k != "sync") == pytest.approx(work, abs=0.01)
    # Shares are of the work total.
    work_share = sum(r["share"] for r in doc["op_types"] if r["kind"] != "sync")
    assert work_share == pytest.approx(1.0)


def test_kineto_real_trace_totals_are_kernels_and_copies():
    """A real H100 trace: its only syncs are host calls (cudaStreamSynchronize,
    cudaDeviceSynchronize), so the total is its kernels, copies and memsets
    and there is no sync row."""
    with gzip.open(KINETO_H100, "rt") as f:
        events = json.load(f)["traceEvents"]
    work = sum(float(e["dur"]) for e in events
               if e.get("ph") == "X" and e.get("cat") in KINETO_WORK)
    assert not any(e.get("cat") == "cuda_sync" for e in events)
    doc = summary(KINETO_H100)
    assert doc["total_us"] == pytest.approx(work, rel=1e-9, abs=0.01)
    assert "sync" not in {r["kind"] for r in doc["op_types"]}


# The goldens ascend/task_time_current and ascend/msprof_slices_run_dir print
# "4 tasks (1 of them syncs and waits, not in the total), total 328.1 us".
# Derived here from the raw files: four device tasks, one of them the
# EVENT_RECORD (0.02 us, a wait, not work), and 313.886 + 12.0 + 2.26 =
# 328.146 us of work.
ASCEND_GOLDEN_FIXTURES = {
    "task_time_current": FIXTURES / "ascend" / "task_time_20250101120000.csv",
    "msprof_slices_run_dir": FIXTURES / "ascend" /
    "PROF_000001_20250101120000000_ABCDEFGHIJKLMNOP" /
    "mindstudio_profiler_output",
}
ASCEND_SYNC_TYPES = ("EVENT_RECORD", "EVENT_WAIT", "NOTIFY_WAIT",
                     "STREAM_WAIT")


def ascend_device_tasks(path):
    """(name or type, duration in us) of every device task in the file(s)."""
    if path.suffix == ".csv":
        with committed(path).open() as f:
            return [(r["kernel_type"], float(r["task_time(us)"]))
                    for r in csv.DictReader(f)]
    events = []
    for slice_path in sorted(committed(path).glob("msprof_slice_*.json")):
        doc = json.loads(slice_path.read_text())
        events += doc if isinstance(doc, list) else doc["traceEvents"]
    # Slices after the first do not repeat the process names.
    hardware = {e["pid"] for e in events
                if e.get("ph") == "M" and e["name"] == "process_name"
                and e["args"]["name"] == "Ascend Hardware"}
    return [(e["args"].get("Task Type", e["name"]), e["dur"])
            for e in events if e.get("ph") == "X" and e["pid"] in hardware]


@pytest.mark.parametrize("golden", sorted(ASCEND_GOLDEN_FIXTURES))
def test_ascend_golden_header_counts_the_wait_apart(golden):
    tasks = ascend_device_tasks(ASCEND_GOLDEN_FIXTURES[golden])
    syncs = [t for t in tasks if t[0].startswith(ASCEND_SYNC_TYPES)]
    work_us = sum(d for t, d in tasks if not t.startswith(ASCEND_SYNC_TYPES))
    expected = (f"# Time by op type (execution tasks, {len(tasks)} tasks "
                f"({len(syncs)} of them syncs and waits, not in the total), "
                f"total {work_us:.1f} us)")
    assert (len(tasks), len(syncs)) == (4, 1)
    golden_text = committed(FIXTURES.parent / "golden" / "ascend" /
                            f"{golden}.out").read_text()
    assert expected in golden_text.splitlines()
