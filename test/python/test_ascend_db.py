"""torch_npu's DB export (test/fixtures/samples/cluster/msinsight_pt_db_*,
origins in test/fixtures/samples/SOURCES.md) read by model-inspector,
checked against the same databases read here with Python's own sqlite3
module (an independent reader) and against the shared facts.json figures
repeated in SOURCES.md:

- per rank folder one source, rank from profiler_info_<rank>.json (= the
  RANK_DEVICE_MAP row), host from HOST_INFO, time base epoch;
- the communication tasks are the COMMUNICATION_OP rows: same count, same
  names, Σ(endNs - startNs) equal to the ns (cluster.md cross-check 4:
  also = analysis.db CommAnalyzerTime Σ elapse_time x 1000);
- each HCCL op spans exactly the TASK rows of its sub-tasks
  (COMMUNICATION_TASK_INFO.opId, cross-check 5), so our op task equals the
  envelope computed here;
- the device tasks are the TASK rows (count per task type), each run is a
  STEP_TIME row, and a device task's launch is a CANN_API call with its
  connectionId.
"""
import json
import sqlite3
from collections import Counter

import pytest

from conftest import SAMPLES, committed, run

CLUSTER = SAMPLES / "cluster"
SETS = ["msinsight_pt_db_level1_2rank_2025", "msinsight_pt_db_level1_2rank_2024",
        "msinsight_pt_db_level0_2rank_2025"]
# facts.json: (set, rank) -> COMMUNICATION_OP rows, Σ duration in us.
FACTS = {
    ("msinsight_pt_db_level1_2rank_2025", 0): (4, 102108.1),
    ("msinsight_pt_db_level1_2rank_2025", 1): (4, 98590.19),
    ("msinsight_pt_db_level1_2rank_2024", 0): (4, 32528.325),
    ("msinsight_pt_db_level1_2rank_2024", 1): (4, 22665.868),
    ("msinsight_pt_db_level0_2rank_2025", 0): (4, 89880.576),
    ("msinsight_pt_db_level0_2rank_2025", 1): (4, 93993.858),
}


def connect(path):
    return sqlite3.connect(f"file:{committed(path)}?immutable=1", uri=True)


def profiler_db(folder, rank):
    return folder / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / \
        f"ascend_pytorch_profiler_{rank}.db"


def analysis_db(folder, rank):
    return folder / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "analysis.db"


@pytest.fixture(scope="module", params=SETS)
def exported(request, tmp_path_factory):
    folder = CLUSTER / request.param
    out = tmp_path_factory.mktemp(request.param)
    run("export", "--quiet", committed(folder), "--out", out)
    trace = json.loads((out / "trace.json").read_text())
    return request.param, folder, trace


def by_source(trace):
    source_of_stream = {i: s["source"] for i, s in enumerate(trace["streams"])}
    tasks = {}
    for t in trace["tasks"]:
        tasks.setdefault(source_of_stream[t["stream_id"]], []).append(t)
    return tasks


def test_each_rank_folder_is_one_source(exported):
    name, folder, trace = exported
    sources = trace["sources"]
    assert [(s["key"].rsplit("/", 1)[-1], s["rank"], s["dialect"], s["time_base"])
            for s in sources] == [("rank0_ascend_pt", 0, "ascend", "epoch"),
                                  ("rank1_ascend_pt", 1, "ascend", "epoch")]
    for s in sources:
        rank = s["rank"]
        assert [f.rsplit("/", 1)[-1] for f in s["files"]] == [
            f"ascend_pytorch_profiler_{rank}.db", "analysis.db"]
        db = connect(profiler_db(folder, rank))
        assert db.execute("SELECT rankId FROM RANK_DEVICE_MAP").fetchall() == [(rank,)]
        assert s["host"] == db.execute("SELECT hostName FROM HOST_INFO").fetchone()[0]


def test_communication_tasks_are_the_hccl_ops(exported):
    name, folder, trace = exported
    tasks = by_source(trace)
    for s in trace["sources"]:
        rank = s["rank"]
        db = connect(profiler_db(folder, rank))
        strings = dict(db.execute("SELECT id, value FROM STRING_IDS"))
        ops = db.execute("SELECT opName, startNs, endNs FROM COMMUNICATION_OP").fetchall()
        ours = [t for t in tasks[s["source"]] if t["category"] == "communication"]
        assert sorted(t["kernel_name"] for t in ours) == sorted(strings[o[0]] for o in ops)
        total_ns = sum(e - b for _, b, e in ops)
        count, facts_us = FACTS[(name, rank)]
        assert len(ops) == count and total_ns == round(facts_us * 1000)
        # duration_us is computed from integer ns: equal to the ns here.
        assert round(sum(t["duration_us"] for t in ours) * 1000) == total_ns
        # Cross-check 4: CommAnalyzerTime Σ elapse (ms) = Σ op durations.
        adb = connect(analysis_db(folder, rank))
        if adb.execute("SELECT count(*) FROM sqlite_master WHERE name = "
                       "'CommAnalyzerTime'").fetchone()[0]:
            elapse_ms = adb.execute("SELECT sum(elapse_time) FROM CommAnalyzerTime").fetchone()[0]
            assert abs(elapse_ms * 1e6 - total_ns) < 10


def test_each_hccl_op_spans_its_sub_tasks(exported):
    name, folder, trace = exported
    tasks = by_source(trace)
    for s in trace["sources"]:
        db = connect(profiler_db(folder, s["rank"]))
        strings = dict(db.execute("SELECT id, value FROM STRING_IDS"))
        envelope = db.execute(
            "SELECT o.opName, min(t.startNs), max(t.endNs) FROM COMMUNICATION_OP o "
            "JOIN COMMUNICATION_TASK_INFO c ON c.opId = o.opId "
            "JOIN TASK t ON t.globalTaskId = c.globalTaskId GROUP BY o.opId").fetchall()
        assert len(envelope) == 4
        ours = {t["kernel_name"]: t for t in tasks[s["source"]]
                if t["category"] == "communication"}
        for op, start, end in envelope:
            t = ours[strings[op]]
            assert round(t["duration_us"] * 1000) == end - start, op
        # Starts agree too; start_us is epoch microseconds as a double
        # (a quarter-microsecond step at 1.7e15 us).
        for op, start, end in envelope:
            assert abs(ours[strings[op]]["start_us"] - start / 1000) <= 0.5, op


def test_device_tasks_steps_and_launches(exported):
    name, folder, trace = exported
    tasks = by_source(trace)
    streams = trace["streams"]
    for s in trace["sources"]:
        db = connect(profiler_db(folder, s["rank"]))
        strings = dict(db.execute("SELECT id, value FROM STRING_IDS"))
        # TASK rows that are an HCCL op itself (2025 exports: an AI_CORE
        # row per op on the HCCL stream, no COMPUTE_/COMMUNICATION_TASK_INFO,
        # the op's connectionId and interval) are read as the op only.
        op_rows = {r[0] for r in db.execute(
            "SELECT t.rowid FROM TASK t JOIN COMMUNICATION_OP o ON "
            "o.connectionId = t.connectionId WHERE t.startNs <= o.startNs AND "
            "t.endNs >= o.endNs AND t.globalTaskId NOT IN (SELECT globalTaskId "
            "FROM COMPUTE_TASK_INFO) AND t.globalTaskId NOT IN (SELECT "
            "globalTaskId FROM COMMUNICATION_TASK_INFO)")}
        assert len(op_rows) in (0, 4)
        rows = [(r[1],) for r in db.execute("SELECT rowid, taskType FROM TASK")
                if r[0] not in op_rows]
        device = [t for t in tasks[s["source"]]
                  if streams[t["stream_id"]]["kind"] == "device_stream"
                  and t["category"] != "communication"]
        assert len(device) == len(rows)
        # Sub-tasks are named by their task type, as the timeline names them.
        expected = Counter(strings[r[0]] for r in rows)
        for kind in ("Notify Wait", "Write Value", "SDMA", "NOTIFY_WAIT",
                     "NOTIFY_RECORD", "MEMCPY_ASYNC"):
            assert Counter(t["kernel_name"] for t in device)[kind] == expected[kind], kind
        syncs = sum(expected[k] for k in ("Notify Wait", "Write Value", "NOTIFY_WAIT",
                                          "NOTIFY_RECORD", "EVENT_RECORD", "EVENT_WAIT"))
        assert sum(1 for t in device if t["kind"] == "sync") == syncs
        # Runs: STEP_TIME rows are ProfilerStep#<id> of this source.
        steps = db.execute("SELECT id FROM STEP_TIME").fetchall()
        assert [r["name"] for r in trace["runs"] if r["source"] == s["source"]
                and r["name"].startswith("ProfilerStep#")] == [
                    f"ProfilerStep#{i}" for (i,) in steps]
        # Launches: a CANN_API call with the task's connectionId.
        connections = {c for (c,) in db.execute("SELECT connectionId FROM CANN_API")}
        by_id = {t["task_id"]: t for t in tasks[s["source"]]}
        launched = [t for t in device if t["launch_task_id"] is not None]
        assert launched
        for t in launched:
            assert t["correlation"] in connections
            assert by_id[t["launch_task_id"]]["correlation"] == t["correlation"]


def test_summary_of_the_2025_level1_folder_works():
    folder = committed(CLUSTER / "msinsight_pt_db_level1_2rank_2025")
    proc = run("summary", folder)
    assert "no input" not in proc.stdout + proc.stderr
    assert "rank 0" in proc.stdout and "rank 1" in proc.stdout


@pytest.mark.parametrize("content, fragment", [
    (b"step,computing\n50,1.0\n", "not an SQLite database"),
    (b"", "empty file"),
])
def test_a_broken_db_file_is_a_clear_error(tmp_path, content, fragment):
    path = tmp_path / "analysis.db"
    path.write_bytes(content)
    proc = run("summary", path, check=False)
    assert proc.returncode == 4, proc.stderr
    assert str(path) in proc.stderr and fragment in proc.stderr


def test_a_db_missing_a_column_names_table_and_column(tmp_path):
    path = tmp_path / "ascend_pytorch_profiler_0.db"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE STRING_IDS(id, value);"
                     "CREATE TABLE TASK(startNs, endNs, deviceId, taskType);")
    db.close()
    proc = run("summary", path, check=False)
    assert proc.returncode == 4, proc.stderr
    assert "table TASK has no column 'streamId'" in proc.stderr


def test_a_db_past_the_memory_limit_stops_naming_table_and_row(tmp_path):
    """600,000 TASK rows build about 54 MB of tasks (90 bytes each, trace.h):
    past a 32 MB limit the read stops at a charge point (every 65,536 rows)
    naming the file, the table and the row (exit 7)."""
    path = tmp_path / "ascend_pytorch_profiler_0.db"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE STRING_IDS(id INTEGER, value TEXT);"
                     "INSERT INTO STRING_IDS VALUES (1, 'KERNEL_AIVEC');"
                     "CREATE TABLE TASK(startNs INTEGER, endNs INTEGER, deviceId INTEGER,"
                     " streamId INTEGER, taskType INTEGER);")
    db.executemany("INSERT INTO TASK VALUES (?, ?, 0, 2, 1)",
                   ((i * 10, i * 10 + 5) for i in range(600_000)))
    db.commit()
    db.close()
    proc = run("summary", path, "--memory-limit", "32M", check=False)
    assert proc.returncode == 7, proc.stderr
    assert f"{path}: table TASK row " in proc.stderr
