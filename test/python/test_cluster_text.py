"""Collectives and communication tables of the text exports, checked
against independent readings of the same files with Python's json / csv /
gzip modules (docs/reference/cluster-formats.md section "Cross-checks"):

- torch_npu text export, Level1, 2 ranks (2024): one collective record per
  hcom_* op of trace_view.json's HCCL process; per rank the ops' summed time
  equals kernel_details' HCCL rows, step_trace_time's Communication and
  communication.json's summed Elapse; communication.json's split joins onto
  the records (Elapse = Transit + Wait + Idle); bandwidth and matrix rows as
  written; the group hash after '@' ends in the op name's <G>.
- msprof-analyze's cluster_analysis_output: cluster_step_trace_time.csv rows
  (rank and stage rows; a stage row is the column-wise max of its ranks) and
  cluster_communication.json per-rank rows.
- Kineto b200 trace: every NCCL kernel is a record with its args; world size
  and process groups from distributedInfo.

Figures come from trace.json of `model-inspector export`."""
import csv
import gzip
import json
from decimal import ROUND_HALF_UP, Decimal

import jsonschema

from conftest import SAMPLES, SCHEMAS, committed, run

TEXT_L1 = committed(SAMPLES / "cluster" / "msinsight_pt_text_level1_2rank_2024")
CLUSTER_OUT = committed(SAMPLES / "ascend" / "msinsight_cluster_analysis_output")
B200 = committed(SAMPLES / "traces" / "kineto" / "tracelens" / "b200__eager_trace.json.gz")


def export(tmp_path, *inputs):
    out = tmp_path / "export"
    run("export", *map(str, inputs), "--out", str(out), "-q")
    trace = json.loads((out / "trace.json").read_text())
    jsonschema.Draft202012Validator(
        json.loads((SCHEMAS / "trace.schema.json").read_text())).validate(trace)
    return trace


def us_to_ns(v):
    return int((Decimal(str(v).strip()) * 1000).to_integral_value(ROUND_HALF_UP))


def scaled_ns(ms):
    # The tool rounds ms x 1e6 in double precision; Decimal of the JSON
    # number's shortest repr gives the same integer within 1 ns.
    return Decimal(repr(ms)) * 1000000


def output_dir(rank):
    return TEXT_L1 / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"


def hccl_ops_of_trace_view(rank):
    """The hcom_* X events on the process named HCCL (or Communication)."""
    with gzip.open(output_dir(rank) / "trace_view.json.gz", "rt") as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    hccl = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
            and e.get("args", {}).get("name") in ("HCCL", "Communication")}
    return [e for e in events if e.get("ph") == "X" and e.get("pid") in hccl
            and e.get("name", "").startswith("hcom_")]


def kernel_details_hccl_us(rank):
    with open(output_dir(rank) / "kernel_details.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["Accelerator Core"].strip() == "HCCL"]
    return sum(Decimal(r["Duration(us)"].strip()) for r in rows), len(rows)


def test_text_level1_collectives_and_tables(tmp_path):
    trace = export(tmp_path, TEXT_L1)
    comm = trace["communication"]
    sources = {s["rank"]: s["source"] for s in trace["sources"] if s["rank"] is not None}
    assert sorted(sources) == [0, 1]
    for rank, source in sources.items():
        records = [r for r in comm["collectives"] if r["source"] == source]
        ops = hccl_ops_of_trace_view(rank)
        # One record per hcom_* op, in the timeline's names.
        assert sorted(r["name"] for r in records) == sorted(e["name"] for e in ops)
        total_ns = sum(r["end_ns"] - r["start_ns"] for r in records)
        trace_view_ns = sum(us_to_ns(e["dur"]) for e in ops)
        assert abs(total_ns - trace_view_ns) <= len(ops)
        # = kernel_details' HCCL rows (3 decimals in the CSV: 0.01 us per op).
        kd_us, kd_rows = kernel_details_hccl_us(rank)
        assert kd_rows == len(records)
        assert abs(total_ns - kd_us * 1000) <= 10 * kd_rows
        # = step_trace_time Communication, read as written.
        with open(output_dir(rank) / "step_trace_time.csv", newline="") as f:
            steps = list(csv.DictReader(f))
        rows = [r for r in comm["step_trace"] if r["source"] == source]
        assert len(rows) == len(steps) == 1
        for column, key in [("Computing", "computing_ns"),
                            ("Communication(Not Overlapped)", "communication_not_overlapped_ns"),
                            ("Overlapped", "overlapped_ns"), ("Communication", "communication_ns"),
                            ("Free", "free_ns"), ("Stage", "stage_ns"), ("Bubble", "bubble_ns"),
                            ("Preparing", "preparing_ns")]:
            assert rows[0][key] == us_to_ns(steps[0][column]), column
        assert rows[0]["step"] == steps[0]["Step"]
        assert abs(total_ns - rows[0]["communication_ns"]) <= 10 * len(records)
        # = communication.json's Elapse, and its split joined per op.
        with open(output_dir(rank) / "communication.json") as f:
            doc = json.load(f)
        elapse_ms = Decimal(0)
        expected_bandwidth = []
        for step, kinds in doc.items():
            for kind, entries in kinds.items():
                for key, op in entries.items():
                    name, _, group = key.partition("@")
                    for transport, figures in op["Communication Bandwidth Info"].items():
                        expected_bandwidth.append((step, name, transport, figures))
                    if name == "Total Op Info":
                        continue
                    info = op["Communication Time Info"]
                    elapse_ms += Decimal(repr(info["Elapse Time(ms)"]))
                    [record] = [r for r in records if r["name"] == name]
                    assert record["step"] == step
                    assert record["group"] == group
                    # <G> of hcom_<op>__<G>_<k>_<m> = the hash's last 3 digits.
                    tag, seq = name.split("__")[1].split("_")[:2]
                    assert group.endswith(tag) and record["sequence"] == int(seq)
                    for field, key_ns in [("Transit Time(ms)", "transit_ns"), ("Wait Time(ms)", "wait_ns"),
                                          ("Synchronization Time(ms)", "synchronization_ns"),
                                          ("Idle Time(ms)", "idle_ns")]:
                        assert abs(record[key_ns] - scaled_ns(info[field])) <= 1, field
                    # Elapse = Transit + Wait + Idle, and = the op's duration.
                    assert abs(record["transit_ns"] + record["wait_ns"] + record["idle_ns"]
                               - scaled_ns(info["Elapse Time(ms)"])) <= 3
                    assert abs(record["end_ns"] - record["start_ns"]
                               - scaled_ns(info["Elapse Time(ms)"])) <= 1000
        assert abs(total_ns - elapse_ms * 1000000) <= 10 * len(records)
        # The groups the ops name, known by hash only (no metadata in 2024).
        [src] = [s for s in trace["sources"] if s["source"] == source]
        assert {g["name"] for g in src["process_groups"]} == {r["group"] for r in records}
        assert all(g["global_ranks"] == [] for g in src["process_groups"])
        # Bandwidth rows: one per op (and Total Op Info) and transport, as
        # written; SDMA stays its own row (an aggregate of the others).
        bandwidth = [r for r in comm["bandwidth"] if r["source"] == source]
        assert len(bandwidth) == len(expected_bandwidth)
        for (step, name, transport, figures), row in zip(expected_bandwidth, bandwidth):
            assert (row["step"], row["op_name"], row["transport"]) == (step, name, transport)
            assert abs(row["size_bytes"] - Decimal(repr(figures["Transit Size(MB)"])) * 1000000) <= 1
            if "Bandwidth(GB/s)" in figures:
                assert row["bandwidth_gbps"] == figures["Bandwidth(GB/s)"]
            else:
                assert row["bandwidth_gbps"] is None  # Total Op Info has none
        # Matrix rows: one per (statistic, link).
        with open(output_dir(rank) / "communication_matrix.json") as f:
            matrix = json.load(f)
        expected_links = [(stat.partition("@")[0], link, figures)
                          for kinds in matrix.values() for entries in kinds.values()
                          for stat, links in entries.items() for link, figures in links.items()]
        links = [r for r in comm["links"] if r["source"] == source]
        assert len(links) == len(expected_links)
        for (stat, link, figures), row in zip(expected_links, links):
            src, dst = map(int, link.split("-"))
            assert (row["statistic"], row["src_rank"], row["dst_rank"]) == (stat, src, dst)
            assert row["transport"] == figures["Transport Type"]
            assert row["op_name"] == figures.get("Op Name", "")
            assert abs(row["transit_ns"] - scaled_ns(figures["Transit Time(ms)"])) <= 1


def test_text_level1_rank0_figures_of_the_format_notes(tmp_path):
    """The sample's figures quoted in cluster-formats.md: 70787.347 us of
    HCCL op time on rank 0, 55032.36 us on rank 1 (trace_view)."""
    trace = export(tmp_path, TEXT_L1)
    by_rank = {s["rank"]: s["source"] for s in trace["sources"]}
    for rank, expected_ns in [(0, 70787347), (1, 55032360)]:
        total = sum(r["end_ns"] - r["start_ns"] for r in trace["communication"]["collectives"]
                    if r["source"] == by_rank[rank])
        assert abs(total - expected_ns) <= 4


def test_cluster_analysis_output(tmp_path):
    trace = export(tmp_path, CLUSTER_OUT)
    comm = trace["communication"]
    assert len(trace["sources"]) == 1  # the folder is one source
    with open(CLUSTER_OUT / "cluster_step_trace_time.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    got = comm["step_trace"]
    assert len(got) == len(rows) == 18
    columns = [("Computing", "computing_ns"),
               ("Communication(Not Overlapped)", "communication_not_overlapped_ns"),
               ("Overlapped", "overlapped_ns"), ("Communication", "communication_ns"),
               ("Free", "free_ns"), ("Stage", "stage_ns"), ("Bubble", "bubble_ns"),
               ("Communication(Not Overlapped and Exclude Receive)",
                "communication_not_overlapped_excluding_receive_ns")]
    for row, g in zip(rows, got):
        assert (g["step"], g["type"]) == (row["Step"], row["Type"])
        index = row["Index"].strip("()")
        assert g["ranks"] == [int(x) for x in index.split(",")]
        for column, key in columns:
            assert g[key] == us_to_ns(row[column]), column
        assert g["preparing_ns"] is None  # the 2023 file has no Preparing
    # A stage row is the column-wise max over its ranks (msprof-analyze).
    by_rank = {g["ranks"][0]: g for g in got if g["type"] == "rank"}
    stages = [g for g in got if g["type"] == "stage"]
    assert len(stages) == 2
    for stage in stages:
        for _, key in columns:
            if key == "bubble_ns" and stage["ranks"][0] == 0:
                continue  # written as 0 without decimals; ranks' are 0.0
            assert stage[key] == max(by_rank[r][key] for r in stage["ranks"]), key
    with open(CLUSTER_OUT / "cluster_communication.json") as f:
        doc = json.load(f)
    expected = [(group, step, key.partition("@")[0], int(rank), op["Communication Time Info"])
                for group, steps in doc.items() for step, ops in steps.items()
                for key, ranks in ops.items() for rank, op in ranks.items()]
    rows = comm["cluster_communication"]
    assert len(rows) == len(expected)
    for (group, step, name, rank, info), row in zip(expected, rows):
        assert row["group_ranks"] == ([] if group == "p2p" else
                                      [int(x) for x in group.strip("()").split(",")])
        assert (row["step"], row["op_name"], row["rank"]) == (step, name, rank)
        assert abs(row["elapse_ns"] - scaled_ns(info["Elapse Time(ms)"])) <= 1
        assert abs(row["wait_ns"] - scaled_ns(info["Wait Time(ms)"])) <= 1


def test_b200_nccl_kernels(tmp_path):
    with gzip.open(B200, "rt") as f:
        doc = json.load(f)
    kernels = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"
               and e.get("name", "").startswith("nccl")]
    trace = export(tmp_path, B200)
    records = trace["communication"]["collectives"]
    assert len(records) == len(kernels) >= 1
    assert sum(r["end_ns"] - r["start_ns"] for r in records) == sum(us_to_ns(e["dur"]) for e in kernels)
    [param] = [e for e in doc["traceEvents"] if e.get("name") == "record_param_comms"]
    args = param["args"]
    record = records[0]
    assert record["type"] == "all_gather"
    assert record["in_elements"] == args["In msg nelems"] == 25136
    assert record["out_elements"] == args["Out msg nelems"] == 201088
    assert record["dtype"] == args["dtype"] == "BFloat16"
    assert record["group_size"] == args["Group size"] == 8
    assert record["group"] == args["Process Group Name"] == "3"
    # nccl-tests' S of an all-gather: the gathered array, 201088 x 2 bytes.
    assert record["bytes"] == 201088 * 2
    assert (record["algorithm"], record["protocol"]) == ("RING", "LL")
    source = trace["sources"][0]
    info = doc["distributedInfo"]
    assert source["rank"] == info["rank"] and source["world_size"] == info["world_size"] == 8
    groups = {g["name"]: g for g in source["process_groups"]}
    for pg in info["pg_config"]:
        assert groups[pg["pg_name"]]["global_ranks"] == pg["ranks"]
        assert groups[pg["pg_name"]]["description"] == pg["pg_desc"]


def test_kernel_details_alone_makes_the_records_and_communication_joins(tmp_path):
    """Without a timeline the HCCL rows of kernel_details.csv are the
    collectives; communication.json named after it joins onto them by name
    (the table's run is 'whole trace', not a ProfilerStep)."""
    out = output_dir(0)
    trace = export(tmp_path, out / "kernel_details.csv", out / "communication.json")
    records = trace["communication"]["collectives"]
    with open(out / "kernel_details.csv", newline="") as f:
        hccl = [r for r in csv.DictReader(f) if r["Accelerator Core"].strip() == "HCCL"]
    assert [r["name"] for r in records] == [r["Name"] for r in hccl]
    for record, row in zip(records, hccl):
        assert record["task_id"] is not None
        assert record["end_ns"] - record["start_ns"] == us_to_ns(row["Duration(us)"])
        assert record["step"] == "step50" and record["transit_ns"] is not None
    assert len({r["source"] for r in records}) == 1


def test_step_trace_identities_of_the_samples(tmp_path):
    """torch_npu's identities, on what was read: Computing + Communication(Not
    Overlapped) + Free = Stage + Bubble within 0.2 us; Communication -
    Communication(Not Overlapped) = Overlapped."""
    trace = export(tmp_path, TEXT_L1)
    rows = trace["communication"]["step_trace"]
    assert len(rows) == 2
    for r in rows:
        assert abs(r["computing_ns"] + r["communication_not_overlapped_ns"] + r["free_ns"]
                   - r["stage_ns"] - r["bubble_ns"]) <= 200
        assert abs(r["communication_ns"] - r["communication_not_overlapped_ns"]
                   - r["overlapped_ns"]) <= 1
