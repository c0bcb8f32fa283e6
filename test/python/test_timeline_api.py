"""End-to-end tests of the timeline, task, mapping and summary-range endpoints
(docs/reference/http-api.md, docs/reference/timeline-binary.md): the real
`model-inspector open` on port 0 over HTTP, on the bundled ORT run and an
Ascend (CANN) profile with host launches."""
import concurrent.futures
import json
import struct
import urllib.parse

import pytest

from conftest import FIXTURES, run
from test_server import Server

ORT_RUN = FIXTURES / "resnet18" / "ort_all"
ASCEND_RUN = FIXTURES / "ascend" / "PROF_000001_20250101120000000_ABCDEFGHIJKLMNOP"
KINDS = ["compute", "data_movement", "sync", "host_op", "runtime", "annotation", "overhead", "other"]


@pytest.fixture(scope="module")
def ort():
    s = Server(ORT_RUN)
    try:
        yield s
    finally:
        assert s.close() == 0


@pytest.fixture(scope="module")
def ascend():
    s = Server(ASCEND_RUN)
    try:
        yield s
    finally:
        assert s.close() == 0


def query(path, **params):
    return path + "?" + urllib.parse.urlencode(params)


def decode_window(buf):
    """The MITW binary, decoded by following docs/reference/timeline-binary.md."""
    assert buf[:4] == b"MITW"
    version, n, string_count = struct.unpack_from("<3I", buf, 4)
    assert version == 1
    start_ns, end_ns = struct.unpack_from("<2d", buf, 16)
    total, reserved = struct.unpack_from("<2I", buf, 32)
    assert reserved == 0
    offset = 40
    columns = {}
    for name, fmt, size in [("start_ns", "d", 8), ("end_ns", "d", 8), ("task", "I", 4),
                            ("count", "I", 4), ("track", "I", 4), ("label", "I", 4),
                            ("busy", "f", 4), ("kind", "B", 1), ("row", "B", 1),
                            ("flags", "B", 1)]:
        offset = (offset + 7) // 8 * 8
        columns[name] = list(struct.unpack_from(f"<{n}{fmt}", buf, offset))
        offset += n * size
    offset = (offset + 7) // 8 * 8
    lengths = struct.unpack_from(f"<{string_count}I", buf, offset)
    offset += 4 * string_count
    strings = []
    for length in lengths:
        strings.append(buf[offset:offset + length].decode("utf-8"))
        offset += length
    assert offset == len(buf)
    items = []
    for i in range(n):
        item = {k: v[i] for k, v in columns.items()}
        item["label"] = strings[item["label"]]
        item["kind"] = KINDS[item["kind"]]
        item["task"] = None if item["task"] == 0xFFFFFFFF else item["task"]
        items.append(item)
    return {"start_ns": start_ns, "end_ns": end_ns, "total_tasks_in_window": total, "items": items}


def test_timeline_overview(ort):
    doc = ort.get_json("/api/runs/0/timeline")
    assert doc["task_count"] == 110
    assert doc["has_calibration"] is False
    assert doc["start_ns"] < doc["end_ns"]
    assert [r["name"] for r in doc["runs"]][1:] == ["model_run #1", "model_run #2", "model_run #3"]
    assert {"Conv", "Gemm", "MaxPool"} <= set(doc["op_types"])
    (track,) = doc["tracks"]
    assert track["kind"] == "host_thread" and track["task_count"] == 110
    assert track["rows"] == 3  # model_run > SequentialExecutor::Execute > kernels
    assert 0 < track["busy_ns"] <= doc["end_ns"] - doc["start_ns"]


def test_window_binary_equals_json(ort):
    doc = ort.get_json("/api/runs/0/timeline")
    params = {"start_ns": doc["start_ns"], "end_ns": doc["end_ns"], "px": 300}
    code, headers, body = ort.request(query("/api/runs/0/timeline/window", **params))
    assert code == 200 and headers["Content-Type"] == "application/octet-stream"
    binary = decode_window(body)
    as_json = ort.get_json(query("/api/runs/0/timeline/window", format="json", **params))
    assert binary["total_tasks_in_window"] == as_json["total_tasks_in_window"] == 110
    assert len(binary["items"]) == len(as_json["items"])
    for b, j in zip(binary["items"], as_json["items"]):
        assert b["start_ns"] == j["start_ns"] and b["end_ns"] == j["end_ns"]
        assert b["busy"] == pytest.approx(j["busy"], rel=1e-6)
        for key in ("task", "count", "track", "label", "kind", "row", "flags"):
            assert b[key] == j[key], key
    assert sum(i["count"] for i in binary["items"]) == 110


def test_level_of_detail(ort):
    doc = ort.get_json("/api/runs/0/timeline")
    start, end = doc["start_ns"], doc["end_ns"]
    # Two pixels: every kernel is narrower than a pixel, so the kernel row
    # holds at most one aggregate per column.
    coarse = ort.get_json(query("/api/runs/0/timeline/window", start_ns=start, end_ns=end, px=2,
                                format="json"))
    kernel_row = [i for i in coarse["items"] if i["row"] == 2]
    assert 1 <= len(kernel_row) <= 2
    assert all(i["flags"] & 1 and i["task"] is None for i in kernel_row)
    assert sum(i["count"] for i in kernel_row) == 102
    assert all(0 < i["busy"] <= 1 for i in kernel_row)
    # Zoomed to one kernel: it is sent alone, with its task id.
    conv = next(i for i in ort.get_json(query("/api/runs/0/timeline/window", start_ns=start,
                                              end_ns=end, px=20000, format="json"))["items"]
                if i["label"] == "Conv" and i["task"] is not None)
    fine = ort.get_json(query("/api/runs/0/timeline/window", start_ns=conv["start_ns"],
                              end_ns=conv["end_ns"], px=100, format="json"))
    assert conv["task"] in [i["task"] for i in fine["items"]]
    assert all(i["count"] == 1 for i in fine["items"])


def test_filters(ort):
    doc = ort.get_json("/api/runs/0/timeline")
    base = {"start_ns": doc["start_ns"], "end_ns": doc["end_ns"], "px": 20000, "format": "json"}
    conv = ort.get_json(query("/api/runs/0/timeline/window", op="Conv", **base))
    assert conv["items"] and {i["label"] for i in conv["items"]} == {"Conv"}
    annotations = ort.get_json(query("/api/runs/0/timeline/window", kind="annotation", **base))
    assert {i["kind"] for i in annotations["items"]} == {"annotation"}
    named = ort.get_json(query("/api/runs/0/timeline/window", name="LAYER4", **base))
    assert 0 < named["total_tasks_in_window"] < 110
    none = ort.get_json(query("/api/runs/0/timeline/window", op="NoSuchOp", **base))
    assert none["total_tasks_in_window"] == 0 and none["items"] == []


@pytest.mark.parametrize("params,status", [
    ({}, 400),
    ({"start_ns": 0}, 400),
    ({"start_ns": "abc", "end_ns": 10}, 400),
    ({"start_ns": 10, "end_ns": 10}, 400),
    ({"start_ns": 0, "end_ns": 10, "px": 0}, 400),
    ({"start_ns": 0, "end_ns": 10, "px": 20001}, 400),
    ({"start_ns": 0, "end_ns": 10, "clock": "wall"}, 400),
    ({"start_ns": 0, "end_ns": 10, "kind": "kernel"}, 400),
    ({"start_ns": 0, "end_ns": 10, "tracks": "7"}, 400),
    ({"start_ns": 0, "end_ns": 10, "format": "xml"}, 400),
])
def test_window_errors(ort, params, status):
    doc = ort.get_json(query("/api/runs/0/timeline/window", **params), status=status)
    assert doc["error"]["status"] == status and doc["error"]["message"]


def test_task_node_and_mapping(ort):
    mapping = ort.get_json(query("/api/runs/0/mapping", sort="total_ns", limit=5))
    assert mapping["level"] == "compiled" and mapping["total"] >= 34
    top = mapping["rows"][0]
    assert top["kind"] == "node" and top["status"] == "executed"
    assert top["fused_from"], "the heaviest ORT node is a fused Conv"
    node = ort.get_json(query("/api/runs/0/tasks", node=top["node"]["id"]))
    assert len(node["tasks"]) == top["task_count"]
    assert top["first_task"] in node["tasks"]
    task = ort.get_json(f"/api/runs/0/tasks/{top['first_task']}")
    assert task["node"]["id"] == top["node"]["id"]
    assert [f["id"] for f in task["fused_from"]] == [f["id"] for f in top["fused_from"]]
    assert node["start_ns"] == task["start_ns"]
    # A framework node fused into it: the same tasks.
    fused = ort.get_json(query("/api/runs/0/tasks", node=top["fused_from"][0]["id"]))
    assert fused["tasks"] == node["tasks"]
    page = ort.get_json(query("/api/runs/0/mapping", sort="name", desc=0, offset=2, limit=2))
    assert len(page["rows"]) == 2 and page["total"] == mapping["total"]
    ort.get_json("/api/runs/0/tasks/999999", status=404)
    ort.get_json(query("/api/runs/0/tasks", node=999999), status=404)
    ort.get_json(query("/api/runs/0/mapping", sort="speed"), status=400)


def test_host_launch_flows(ascend):
    doc = ascend.get_json("/api/runs/0/timeline")
    kinds = [t["kind"] for t in doc["tracks"]]
    assert kinds == sorted(kinds, key=lambda k: k != "device_stream"), "device streams first"
    window = ascend.get_json(query("/api/runs/0/timeline/window", start_ns=doc["start_ns"],
                                   end_ns=doc["end_ns"], px=20000, kind="compute",
                                   format="json"))
    conv = next(i for i in window["items"] if i["label"].startswith("Conv2D"))
    task = ascend.get_json(f"/api/runs/0/tasks/{conv['task']}")
    assert task["launch"]["name"] == "Node@launch"
    (flow,) = [f for f in task["flows"] if f["kind"] == "launch"]
    assert flow["to_task"] == task["id"] and flow["from_task"] == task["launch"]["id"]
    assert flow["from_track"] != flow["to_track"]
    host = ascend.get_json(f"/api/runs/0/tasks/{task['launch']['id']}")
    assert task["id"] in [f["to_task"] for f in host["flows"]]


def test_summary_range_matches_the_cli(ort):
    whole = ort.get_json("/api/runs/0/summary")
    run_row = whole["runs"][2]  # model_run #2
    from_ns = round(run_row["start_us"] * 1000)
    to_ns = from_ns + round(run_row["duration_us"] * 1000)
    api = ort.get_json(query("/api/runs/0/summary", from_ns=from_ns, to_ns=to_ns))
    cli = json.loads(run("summary", ORT_RUN, "--format", "json", "--top", "50",
                         "--from-us", f"{from_ns / 1000:.3f}", "--to-us",
                         f"{to_ns / 1000:.3f}").stdout)
    assert api == cli
    assert 0 < api["tasks"] < whole["tasks"]
    assert [r["name"] for r in api["runs"]] == ["model_run #2"]
    assert api["total_us"] == pytest.approx(api["runs"][0]["task_time_us"])
    calibrated = ort.get_json(query("/api/runs/0/summary", from_ns=from_ns, to_ns=to_ns,
                                    clock="calibrated"))
    assert calibrated == api  # no calibration offsets in this run


def test_summary_range_errors(ort, mi):
    ort.get_json(query("/api/runs/0/summary", from_ns="x"), status=400)
    ort.get_json(query("/api/runs/0/summary", from_ns=5, to_ns=5), status=400)
    ort.get_json(query("/api/runs/0/summary", clock="tai"), status=400)
    for args in (["--from-us", "abc"], ["--from-us", "10", "--to-us", "5"],
                 ["--to-us", "1.23456"], ["--clock", "tai"]):
        proc = mi("summary", ORT_RUN, *args, check=False)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.strip()


def test_first_requests_in_parallel_share_one_index():
    """The index is built on the first timeline request; eight at once (the
    server's thread count) all get the same, complete answer."""
    s = Server(ORT_RUN)
    try:
        path = query("/api/runs/0/timeline/window", start_ns=0, end_ns=10**12, px=500, format="json")

        def fetch(_):
            code, _, body = s.request(path)
            assert code == 200
            return json.loads(body)

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(fetch, range(8)))
        assert all(a == answers[0] for a in answers)
        assert answers[0]["total_tasks_in_window"] == 110
    finally:
        assert s.close() == 0
