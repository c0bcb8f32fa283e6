"""Every table of an Ascend profile directory besides tasks: api_statistic,
l2_cache, operator_memory, npu_module_mem and static_op_mem, in their
torch_npu (ASCEND_PROFILER_OUTPUT) and msprof (`<table>_<timestamp>.csv`)
forms. Each figure model-inspector reports is compared with an independent
reading of the same file by Python's csv module (sums in decimal, so no
float rounding differs from the tool's)."""
import collections
import csv
import json
from decimal import Decimal

from conftest import FIXTURES, SAMPLES, committed, run

LEVEL1 = committed(SAMPLES / "ascend" / "msinsight_pt_text_level1_rank0")
OUTPUT = LEVEL1 / "ASCEND_PROFILER_OUTPUT"
STATIC = committed(SAMPLES / "ascend" / "msinsight_server_tests" / "static_op_mem.csv")
MSPROF = FIXTURES / "ascend" / "msprof_tables"


def rows(path):
    with open(committed(path), newline="") as f:
        return list(csv.DictReader(f))


def cell(v):
    """A cell as the profiler writes it: tab-suffixed times, N/A absent."""
    v = v.strip(" \t")
    return None if v in ("", "N/A") else v


def us_to_ns(v):
    return int(Decimal(cell(v)) * 1000)


def analyze(analysis, *inputs):
    out = run("analyze", analysis, *inputs, "--format", "json").stdout
    return json.loads(out)


def check_api_statistics(path, result):
    table = rows(path)
    assert result["calls"] == sum(int(r["Count"]) for r in table)
    assert result["total_ns"] == sum(us_to_ns(r["Time(us)"]) for r in table)
    assert len(result["apis"]) == len(table)
    per_level = collections.defaultdict(lambda: [0, 0, 0])
    for r in table:
        level = per_level[r["Level"]]
        level[0] += 1
        level[1] += int(r["Count"])
        level[2] += us_to_ns(r["Time(us)"])
    got = {l["level"]: [l["apis"], l["calls"], l["total_ns"]] for l in result["levels"]}
    assert got == {k: v for k, v in per_level.items()}
    # Largest total first, each row as written.
    largest = max(table, key=lambda r: Decimal(r["Time(us)"]))
    first = result["apis"][0]
    assert (first["level"], first["name"]) == (largest["Level"], largest["API Name"])
    assert first["max_ns"] == us_to_ns(largest["Max(us)"])
    return table


def test_api_statistic_torch_npu_form():
    result = analyze("api_statistics", OUTPUT / "api_statistic.csv")
    table = check_api_statistics(OUTPUT / "api_statistic.csv", result)
    assert "Device_id" not in table[0]
    assert all(a["device"] is None for a in result["apis"])


def test_api_statistic_msprof_form_with_device_id():
    path = MSPROF / "api_statistic_20250101120000.csv"
    result = analyze("api_statistics", path)
    check_api_statistics(path, result)
    # Device_id "host" is no device; a number is one.
    devices = {a["name"]: a["device"] for a in result["apis"]}
    assert devices["HcclAllReduce"] == 0
    assert devices["aclrtSynchronizeStream"] is None


def test_api_statistic_read_from_the_run_directory():
    result = analyze("api_statistics", LEVEL1)
    check_api_statistics(OUTPUT / "api_statistic.csv", result)


def mean(values):
    values = [float(v) for v in values if v is not None]
    return (sum(values) / len(values)) if values else None


def close(a, b):
    return (a is None and b is None) or abs(a - b) < 1e-12


def test_l2_cache_rates_join_the_tasks_the_kernel_table_names(tmp_path):
    """Every l2_cache row joins the task kernel_details.csv lists with the
    same Stream ID and Task ID (the profiler's own key), checked through the
    joined task's name and start."""
    table = rows(OUTPUT / "l2_cache.csv")
    result = analyze("cache_hit_rates", LEVEL1)
    assert result["rows"] == len(table)
    assert result["joined"] == len(table)
    hits = [cell(r["Hit Rate"]) for r in table]
    victims = [cell(r["Victim Rate"]) for r in table]
    assert result["hit_measured"] == sum(v is not None for v in hits)
    assert result["victim_measured"] == sum(v is not None for v in victims)
    assert close(result["mean_hit_share"], mean(hits))
    assert close(result["mean_victim_share"], mean(victims))
    per_op = collections.defaultdict(list)
    for r in table:
        per_op[r["Op Name"]].append(cell(r["Victim Rate"]))
    for op in result["ops"]:
        assert op["tasks"] == len(per_op[op["op_name"]])
        assert close(op["mean_victim_share"], mean(per_op[op["op_name"]]))

    kernels = {(r["Stream ID"], r["Task ID"]): r for r in rows(OUTPUT / "kernel_details.csv")}
    run("export", "--quiet", LEVEL1, "--out", tmp_path)
    tasks = json.loads((tmp_path / "trace.json").read_text())["tasks"]
    for row, got in zip(table, result["tasks"]):
        kernel = kernels[(row["Stream Id"], row["Task Id"])]
        task = tasks[got["task"]]
        assert task["kernel_name"] == kernel["Name"] == row["Op Name"]
        start_us = float(cell(kernel["Start Time(us)"]))
        assert abs(task["start_us"] - start_us) <= 1.0, row


def test_l2_cache_msprof_form():
    path = MSPROF / "l2_cache_20250101120000.csv"
    table = rows(path)
    result = analyze("cache_hit_rates", path)
    assert result["rows"] == len(table) == 4
    assert result["joined"] == 0  # no tasks in a lone table
    assert close(result["mean_hit_share"], mean(cell(r["Hit Rate"]) for r in table))
    assert close(result["mean_victim_share"], mean(cell(r["Victim Rate"]) for r in table))
    conv = next(o for o in result["ops"] if o["op_name"] == "Conv2D1")
    assert conv["tasks"] == 2
    assert close(conv["mean_hit_share"], (0.912 + 0.871) / 2)  # rows 1 and 4


def kb_to_bytes(v):
    return int(Decimal(cell(v)) * 1024 + Decimal("0.5"))


def mb_to_bytes(v):
    return int(Decimal(cell(v)) * 1024 * 1024 + Decimal("0.5"))


def check_operator_memory(path, result, host_ops=None):
    table = rows(path)
    assert result["operator_blocks"] == len(table)
    assert result["operator_total_bytes"] == sum(kb_to_bytes(r["Size(KB)"]) for r in table)
    per_name = collections.defaultdict(list)
    for r in table:
        per_name[r["Name"]].append(r)
    got = {o["name"]: o for o in result["operators"]}
    assert set(got) == set(per_name)
    for name, blocks in per_name.items():
        assert got[name]["blocks"] == len(blocks)
        assert got[name]["total_bytes"] == sum(kb_to_bytes(b["Size(KB)"]) for b in blocks)
        assert got[name]["largest_bytes"] == max(kb_to_bytes(b["Size(KB)"]) for b in blocks)
        released = [b for b in blocks if cell(b.get("Release Time(us)") or b.get("Duration(us)") or "")]
        assert got[name]["released"] == len(released)
        if host_ops is not None:
            # Independent join: a host op of the same name whose interval
            # holds the allocation time (trace.json times are float us).
            joined = 0
            for b in blocks:
                t = float(cell(b["Allocation Time(us)"]))
                if any(h["start_us"] - 0.5 <= t <= h["start_us"] + h["duration_us"] + 0.5
                       for h in host_ops.get(name, [])):
                    joined += 1
            assert got[name]["joined"] == joined, name


def test_operator_memory_torch_npu_form_joins_the_allocating_host_ops(tmp_path):
    result = analyze("profiled_memory", LEVEL1)
    run("export", "--quiet", LEVEL1, "--out", tmp_path)
    host_ops = collections.defaultdict(list)
    for t in json.loads((tmp_path / "trace.json").read_text())["tasks"]:
        if t["kind"] == "host_op":
            host_ops[t["kernel_name"]].append(t)
    check_operator_memory(OUTPUT / "operator_memory.csv", result, host_ops)
    joined = sum(o["joined"] for o in result["operators"])
    # 127 of the 184 blocks fall inside a host op of their name; the others
    # were allocated outside any recorded op of that name.
    assert joined == 127


def test_operator_memory_msprof_form():
    path = MSPROF / "operator_memory_20250101120000.csv"
    result = analyze("profiled_memory", path)
    check_operator_memory(path, result)
    # Hand sum: 2048.5 + 512 + 1024.25 KB = 3584.75 KB.
    assert result["operator_total_bytes"] == 3670784


def check_modules(path, result, to_bytes, column):
    table = rows(path)
    assert result["module_samples"] == len(table)
    per_module = collections.defaultdict(list)
    for r in table:
        per_module[r["Component"]].append(to_bytes(r[column]))
    got = {m["module"]: m for m in result["modules"]}
    assert set(got) == set(per_module)
    for module, sizes in per_module.items():
        assert got[module]["samples"] == len(sizes)
        assert got[module]["peak_reserved_bytes"] == max(sizes)
        assert got[module]["last_reserved_bytes"] == sizes[-1]


def test_npu_module_mem_per_module_torch_npu_form():
    result = analyze("profiled_memory", LEVEL1)
    check_modules(OUTPUT / "npu_module_mem.csv", result, mb_to_bytes, "Total Reserved(MB)")


def test_npu_module_mem_per_module_msprof_form():
    path = MSPROF / "npu_module_mem_20250101120000.csv"
    result = analyze("profiled_memory", path)
    check_modules(path, result, kb_to_bytes, "Total Reserved(KB)")
    hccl = next(m for m in result["modules"] if m["module"] == "HCCL")
    assert hccl["peak_reserved_bytes"] == 83886592  # 81920.5 KB by hand


def test_static_op_mem_totals_and_peak():
    table = rows(STATIC)
    result = analyze("profiled_memory", STATIC)
    ops = [r for r in table if r["Op Name"] != "TOTAL"]
    assert result["static_ops"] == len(ops)
    assert result["static_total_bytes"] == sum(kb_to_bytes(r["Size(KB)"]) for r in ops)
    graphs = collections.defaultdict(list)
    totals = {}
    for r in table:
        key = (r["Model Name"], int(r["Graph ID"]))
        if r["Op Name"] == "TOTAL":
            totals[key] = kb_to_bytes(r["Size(KB)"])
        else:
            graphs[key].append(r)
    got = {(g["model_name"], g["graph_id"]): g for g in result["static_graphs"]}
    assert set(got) == set(graphs)
    peaks = []
    for key, members in graphs.items():
        # Independent sweep over every node index: sizes alive at it.
        ends = [int(r["Node Index End"]) for r in members]
        last = max([int(r["Node Index Start"]) for r in members] +
                   [e for e in ends if e != 4294967295])
        peak = 0
        for i in range(last + 1):
            live = sum(Decimal(r["Size(KB)"]) for r in members
                       if int(r["Node Index Start"]) <= i <=
                       (last if int(r["Node Index End"]) == 4294967295 else int(r["Node Index End"])))
            peak = max(peak, live)
        peaks.append(peak)
        assert got[key]["ops"] == len(members)
        assert abs(got[key]["peak_bytes"] - peak * 1024) <= len(members)  # per-row rounding
        assert got[key]["total_bytes"] == totals[key]
    assert abs(result["static_peak_bytes"] - max(peaks) * 1024) <= len(ops)


def test_the_run_directory_leaves_out_only_the_tables_nothing_reads():
    """The folder holds 11 files in ASCEND_PROFILER_OUTPUT/; the timeline,
    the six tables above and the communication files (communication.json,
    communication_matrix.json, step_trace_time.csv: test_cluster_text.py)
    are read, op_statistic.csv is left out."""
    listed = sorted(p.name for p in OUTPUT.iterdir())
    assert len(listed) == 11
    err = run("summary", "-v", LEVEL1).stderr
    line = next(l for l in err.splitlines() if "summary nothing reads" in l)
    assert "1 file left out" in line
    assert line.endswith("(op_statistic.csv)")


def test_empty_or_headerless_table_names_the_format_its_name_promises(tmp_path):
    empty = tmp_path / "api_statistic.csv"
    empty.write_text("")
    proc = run("summary", empty, check=False)
    assert proc.returncode != 0
    assert ("api_statistic.csv:1: empty file; expected the CANN API statistics header "
            "'[Device_id,]Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance'") in proc.stderr
    headerless = tmp_path / "operator_memory_20250101120000.csv"
    headerless.write_text("aten::add,4.5,1736408883694624.810,,,,,1,2,1,,,,1,NPU:0\n")
    proc = run("summary", headerless, check=False)
    assert proc.returncode != 0
    assert "no CANN operator memory header; expected the CANN operator memory header 'Name,Size(KB)" in proc.stderr
    assert "found 'aten::add" in proc.stderr


GE_PROFILED = committed(FIXTURES / "ascend" / "ge_profiled")


def test_measured_memory_and_l2_rates_on_the_nodes_of_a_ge_graph():
    """The hand-written GE graph + profile (ge_profiled/README.md holds the
    hand computation): the memory analysis shows GE's planned TOTAL as the
    peak, each op's static size as its measured bytes, the estimate for the
    rest; node details carry the L2 rates of the node's tasks."""
    from test_server import Server
    memory = analyze("memory", GE_PROFILED)
    assert memory["level"] == "compiled"
    measured = memory["measured"]
    assert measured["peak_source"] == "static_op_mem"
    assert measured["peak_bytes"] == measured["static_planned_bytes"] == 4704 * 1024
    assert measured["static_peak_bytes"] == 6272 * 1024
    assert measured["static_ops"] == measured["static_ops_matched"] == 5
    static = {r["Op Name"]: kb_to_bytes(r["Size(KB)"])
              for r in rows(GE_PROFILED / "block_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "static_op_mem.csv")
              if r["Op Name"] != "TOTAL"}
    for node in memory["nodes"]:
        if node["name"] in static:
            assert (node["measured_bytes"], node["bytes_source"]) == (static[node["name"]], "static_op_mem")
        else:
            assert "measured_bytes" not in node and node["bytes_source"] == "estimate"
    # A run without the tables writes neither field (the schema's old shape).
    plain = analyze("memory", FIXTURES / "ge" / "resnet_block")
    assert "measured" not in plain and all("bytes_source" not in n for n in plain["nodes"])

    server = Server(GE_PROFILED)
    try:
        found = server.get_json("/api/runs/0/levels/compiled/search?q=conv1&mode=text")["matches"]
        conv = next(m for m in found if m["name"] == "conv1")
        node = server.get_json(f"/api/runs/0/levels/compiled/nodes/{conv['id']}")
        assert node["l2_tasks"] == 2
        assert abs(node["l2_hit_rate"] - 0.85) < 1e-12
        assert abs(node["l2_victim_rate"] - 0.1) < 1e-12
        assert node["measured_memory_bytes"] == 3136 * 1024
        assert node["measured_memory_source"] == "static_op_mem"
        found = server.get_json("/api/runs/0/levels/compiled/search?q=relu1&mode=text")["matches"]
        relu = server.get_json(f"/api/runs/0/levels/compiled/nodes/{found[0]['id']}")
        assert relu["l2_tasks"] == 1 and relu["l2_hit_rate"] is None
        assert abs(relu["l2_victim_rate"] - 0.2) < 1e-12
    finally:
        server.close()
