"""`model-inspector cluster` end to end (docs/design/clusters.md).

- The real torch_npu text export, Level1, 2 ranks (2024) in
  test/fixtures/samples/cluster/msinsight_pt_text_level1_2rank_2024: per rank
  the count and summed time of the collectives equal facts.json (the values
  are written below with their origin), the step split equals the ranks'
  step_trace_time.csv, the first all-reduce's arrival skew equals the
  difference of its hcom_ events' starts read from trace_view.json with
  Python's gzip / json; the report validates against cluster.schema.json.
- Rank summaries: written with --rank-summaries, read back, merged with
  `cluster merge`, reduced with `cluster reduce`: the same report.
- Generated NCCL clusters (test/fixtures/cluster_nccl/README.md: built from
  the real B200 trace, one rank's vllm::moe_forward kernels stretched 1.5x,
  or one rank started late): the slow rank and the injected op type (or the
  late start) are named; per-rank last arrivals and per-instance skew equal
  the generator's truth file.
- Bad input: a rank claimed twice, a broken summary: a clear error and exit
  code.
"""
import gzip
import json
from decimal import Decimal

import jsonschema

from cluster_fixtures import nccl_cluster
from conftest import SAMPLES, SCHEMAS, committed, run

TEXT_L1 = committed(SAMPLES / "cluster" / "msinsight_pt_text_level1_2rank_2024")
SCHEMA = json.loads((SCHEMAS / "cluster.schema.json").read_text())
SUMMARY_SCHEMA = json.loads((SCHEMAS / "cluster-summary.schema.json").read_text())

# /work/shared/samples/cluster/facts.json, set msinsight_pt_text_level1_2rank_2024
# (generator bars/lib/cluster_facts.py): per rank, kernel_details.csv's HCCL
# rows (count, summed Duration(us)), trace_view.json's hcom_ op events (summed
# dur, us) and step_trace_time.csv's step 50.
FACTS = {
    0: {"hccl_rows": 4, "hccl_dur_us": 70787.345, "hccl_op_dur_us": 70787.347125,
        "computing_us": 9847.664, "communication_us": 70787.347,
        "not_overlapped_us": 66526.545},
    1: {"hccl_rows": 4, "hccl_dur_us": 55032.358, "hccl_op_dur_us": 55032.35975,
        "computing_us": 9893.263, "communication_us": 55032.36,
        "not_overlapped_us": 50785.486},
}


def cluster_json(*args):
    proc = run("cluster", *map(str, args), "--format", "json", "-q")
    doc = json.loads(proc.stdout)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    return doc


def per_rank_collectives(doc):
    out = {}
    for c in doc["collectives"]:
        for r in c["ranks"]:
            n, t = out.get(r["rank"], (0, 0))
            out[r["rank"]] = (n + 1, t + r["end_ns"] - r["start_ns"])
    return out


def test_text_level1_two_ranks_against_facts():
    doc = cluster_json(TEXT_L1)
    assert [(r["rank"], r["rank_from"]) for r in doc["ranks"]] == [
        (0, "profiler_info"), (1, "profiler_info")]
    assert doc["collective_instances"] == 4
    counts = per_rank_collectives(doc)
    for rank, facts in FACTS.items():
        n, total_ns = counts[rank]
        assert n == facts["hccl_rows"]
        # trace_view's op events, to the ns; kernel_details rounds each row
        # to 0.001 us.
        assert abs(total_ns - facts["hccl_op_dur_us"] * 1000) <= 4
        assert abs(total_ns - facts["hccl_dur_us"] * 1000) <= 4 * 10
    # One step (ProfilerStep#50) on both ranks; our split against the
    # profiler's own (step_trace_time.csv): compute within 0.1 us, exposed
    # communication = Communication(Not Overlapped) within 0.1 us.
    assert [s["step"] for s in doc["steps"]] == [50]
    for row in doc["steps"][0]["ranks"]:
        f = FACTS[row["rank"]]
        assert abs(row["compute_ns"] - f["computing_us"] * 1000) <= 100
        assert abs(row["communication_ns"] - f["communication_us"] * 1000) <= 1
        assert abs(row["exposed_communication_ns"] - f["not_overlapped_us"] * 1000) <= 100
        assert row["step_trace"]["computing_ns"] == round(f["computing_us"] * 1000)
    # Matching by (step, op name, group hash); the first all-reduce's skew
    # from the hcom_ events' own starts (trace_view.json, us).
    starts = {}
    for rank in (0, 1):
        path = TEXT_L1 / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json.gz"
        events = json.loads(gzip.decompress(path.read_bytes()))
        events = events["traceEvents"] if isinstance(events, dict) else events
        starts[rank] = [Decimal(str(e["ts"]).strip()) for e in events
                        if e.get("ph") == "X" and e.get("name") == "hcom_allReduce__538_0_1"]
    first = next(c for c in doc["collectives"] if c["name"] == "hcom_allReduce__538_0_1")
    assert first["matched_by"] == "step_name_group"
    assert first["last_rank"] == 1
    expected_skew_us = starts[1][0] - starts[0][0]  # 15563.6 us
    assert abs(first["arrival_skew_ns"] - int(expected_skew_us * 1000)) <= 1
    # Rank 1 arrived 15.6 ms late: it is the slow rank; its steps started
    # later (the clock bound is the collectives' end spread, < 0.2 ms).
    assert doc["clock"]["max_end_spread_ns"] < 200_000
    slow = doc["slow_ranks"]
    assert [s["rank"] for s in slow] == [1]
    assert slow[0]["reasons"][0]["kind"] == "late_start"
    assert any(f["rule"] == "cluster_slow_rank" and f["ranks"] == [1] for f in doc["findings"])
    # HCCS and PCIE links from communication.json, against msprof's peaks.
    assert {b["link_type"] for b in doc["bandwidth"]} == {"HCCS", "PCIE"}


def test_rank_summaries_reduce_and_merge_give_the_same_report(tmp_path):
    summaries = tmp_path / "summaries"
    direct = cluster_json(TEXT_L1, "--rank-summaries", summaries, "--jobs", "2")
    files = sorted(summaries.glob("rank_*.json"))
    assert [f.name for f in files] == ["rank_0.json", "rank_1.json"]
    for f in files:
        jsonschema.Draft202012Validator(SUMMARY_SCHEMA).validate(json.loads(f.read_text()))
    assert cluster_json(*files) == direct
    merged = tmp_path / "merged.json"
    run("cluster", "merge", *files, "--out", merged)
    assert cluster_json(merged) == direct
    reduced = tmp_path / "rank1.json"
    run("cluster", "reduce", TEXT_L1 / "rank1_ascend_pt", "--out", reduced)
    assert json.loads(reduced.read_text()) == json.loads(files[1].read_text())
    # A summary and a profile of the same rank: the error names the rank.
    proc = run("cluster", files[0], TEXT_L1 / "rank0_ascend_pt", check=False)
    assert proc.returncode == 2
    assert "rank 0 is in two inputs" in proc.stderr


def test_bad_inputs(tmp_path):
    proc = run("cluster", TEXT_L1 / "rank0_ascend_pt", TEXT_L1 / "rank0_ascend_pt", check=False)
    assert proc.returncode == 2
    assert "rank 0 is claimed by two inputs" in proc.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "model-inspector/cluster-summary/1", "ranks": [{"rank": 0}]}')
    proc = run("cluster", bad, check=False)
    assert proc.returncode == 4
    assert "ranks[0]" in proc.stderr and "rank_from" in proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run("cluster", empty, check=False)
    assert proc.returncode == 2
    assert "no rank profiles found" in proc.stderr
    peaks = tmp_path / "peaks.json"
    peaks.write_text('{"link_peaks": [{"link_type": "HCCS"}]}')
    proc = run("cluster", TEXT_L1, "--link-peaks", peaks, check=False)
    assert proc.returncode == 2
    assert "link_peaks[0]" in proc.stderr


def test_link_peaks_override():
    import tempfile, pathlib
    with tempfile.TemporaryDirectory() as d:
        peaks = pathlib.Path(d) / "peaks.json"
        peaks.write_text(json.dumps({"link_peaks": [
            {"link_type": "HCCS", "chip": "", "peak_gbps": 24, "origin": "test"}]}))
        doc = cluster_json(TEXT_L1, "--link-peaks", peaks)
    hccs = next(b for b in doc["bandwidth"] if b["link_type"] == "HCCS")
    assert hccs["peak_gbps"] == 24 and hccs["peak_origin"] == "test"
    pcie = next(b for b in doc["bandwidth"] if b["link_type"] == "PCIE")
    assert pcie["peak_gbps"] is None


def test_generated_nccl_cluster_slow_op():
    folder, truth = nccl_cluster("--ranks", "4", "--steps", "2")
    doc = cluster_json(folder, "--max-collectives", "0", "--jobs", "2")
    s = truth["summary"]
    assert [r["rank"] for r in doc["ranks"]] == [0, 1, 2, 3]
    assert {r["rank_from"] for r in doc["ranks"]} == {"distributedInfo"}
    assert doc["collective_instances"] == s["collectives_per_rank"]
    assert {c["matched_by"] for c in doc["collectives"]} == {"group_sequence"}
    # Who arrived last, per rank, as the generator placed them.
    last = [0] * s["ranks"]
    for c in doc["collectives"]:
        last[c["last_rank"]] += 1
    assert last == s["last_arrivals_per_rank"]
    # Per instance: the same last rank and skew (the generator's true
    # arrivals; one clock, so no clock error) within 1 ns of rounding.
    ours = {(c["group"], c["sequence"]): c for c in doc["collectives"]}
    for inst in truth["instances"]:
        c = ours[(inst["group"], inst["sequence"])]
        assert c["step"] == inst["step"]
        assert c["last_rank"] == inst["last_rank"]
        assert abs(c["arrival_skew_ns"] - inst["arrival_skew_us"] * 1000) <= 2
    # The slow rank and the injected op type; its compute excess is the
    # injected delay (the stretched kernels' extra time) within 5 %.
    slow = doc["slow_ranks"][0]
    assert slow["rank"] == s["slow_rank"]
    reason = slow["reasons"][0]
    assert reason["kind"] == "compute"
    assert reason["op_types"][0]["op_type"] == s["injected_op_type"]
    injected_ns = s["injected_delay_total_us"] * 1000
    assert abs(reason["excess_ns"] - injected_ns) <= 0.05 * injected_ns
    finding = next(f for f in doc["findings"] if f["rule"] == "cluster_slow_rank")
    assert s["injected_op_type"] in finding["message"]
    # NCCL on one B200 host: NVLink 5 against its 900 GB/s per direction.
    assert {c["link_type"] for c in doc["collectives"]} == {"NVLink5"}


def test_generated_nccl_cluster_late_start():
    folder, truth = nccl_cluster("--ranks", "4", "--steps", "2", "--slow-factor", "1",
                                 "--late-start", "2:300")
    doc = cluster_json(folder, "--max-collectives", "0")
    slow = doc["slow_ranks"]
    assert [x["rank"] for x in slow] == [2]
    # The others waited for rank 2 as long as the truth's summed skew when
    # it was last (one clock: no clock error), within 1 ns per instance.
    s = truth["summary"]
    assert abs(sum(
        c["arrival_skew_ns"] for c in doc["collectives"] if c["last_rank"] == 2)
        - s["summed_skew_when_last_us"][2] * 1000) <= 148
    # Steps of rank 2 start 300 us late; the median of the others is on
    # time, so the excess over two steps is 600 us. Its host stays behind
    # its devices through the step, so host-bound idle is a reason too.
    reasons = {r["kind"]: r for r in slow[0]["reasons"]}
    assert abs(reasons["late_start"]["excess_ns"] - 600_000) <= 1_000
    assert "host_bound" in reasons


def test_export_writes_cluster_json(tmp_path):
    out = tmp_path / "export"
    proc = run("export", TEXT_L1, "--out", out, "-q")
    assert "cluster.json" in proc.stdout
    doc = json.loads((out / "cluster.json").read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    direct = cluster_json(TEXT_L1)
    # The same analyses; ranks are the run's sources (rank_from "source",
    # the source's files) and task ids refer to the export's trace.json.
    for key in ("world_size", "steps", "slow_ranks", "overlap", "bandwidth",
                "matrix", "critical_path", "findings", "clock"):
        assert doc[key] == direct[key], key
    trace = json.loads((out / "trace.json").read_text())
    names = {t["task_id"]: t["kernel_name"] for t in trace["tasks"]}
    for c in doc["collectives"]:
        for r in c["ranks"]:
            assert names[r["task"]] == c["name"]
    # One rank: no cluster.json.
    single = tmp_path / "single"
    run("export", TEXT_L1 / "rank0_ascend_pt", "--out", single, "-q")
    assert not (single / "cluster.json").exists()


def test_rank_from_the_db_export_rank_device_map(tmp_path):
    """A torch_npu folder without profiler_info whose DB export says
    RANK_DEVICE_MAP(3, 3) (a hand-made SQLite file): discovery reads rank 3
    from it (the folder name says nothing); the rank has no trace we read,
    so the error names rank 3 and the folder."""
    import sqlite3
    folder = tmp_path / "node_a_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    folder.mkdir(parents=True)
    db = sqlite3.connect(folder / "ascend_pytorch_profiler_3.db")
    db.execute("CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER)")
    db.execute("INSERT INTO RANK_DEVICE_MAP VALUES (3, 3)")
    db.commit()
    db.close()
    proc = run("cluster", tmp_path, check=False)
    assert proc.returncode != 0
    assert "rank 3" in proc.stderr, proc.stderr
    assert "cannot tell which rank" not in proc.stderr


def test_clocks_one_ms_apart_are_aligned_on_collective_ends():
    """Ranks whose clocks run 1 ms apart (rank r's times = true + r ms; the
    overlap variant of the generated cluster): the ends disagree by ~7 ms,
    far more than a transfer takes, so each rank's offset is estimated from
    the collectives' ends and taken off; then the slow rank and its op type
    are found as on one clock, and the last arrivals equal the truth's."""
    folder, truth = nccl_cluster("--overlap-kernels", "3", "--clock-offset-us", "1000")
    doc = cluster_json(folder, "--max-collectives", "0", "--jobs", "2")
    clock = doc["clock"]
    assert clock["aligned"] is True
    for rank, offset in zip([r["rank"] for r in doc["ranks"]], clock["rank_offsets_ns"]):
        assert abs(offset - rank * 1_000_000) <= 10_000, (rank, offset)
    # The residual end spread is the generator's (at most 0.2 us).
    assert clock["max_end_spread_ns"] <= 20_000
    s = truth["summary"]
    slow = doc["slow_ranks"][0]
    assert slow["rank"] == s["slow_rank"]
    assert slow["reasons"][0]["op_types"][0]["op_type"] == s["injected_op_type"]
    last = [0] * s["ranks"]
    for c in doc["collectives"]:
        last[c["last_rank"]] += 1
    assert last == s["last_arrivals_per_rank"]
