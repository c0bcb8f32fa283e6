"""End-to-end tests of `model-inspector open`: the real binary on port 0,
driven over HTTP with the standard library (docs/reference/http-api.md).
Covers the API, the security rules (token, Host check, traversal, limits)
and a clean shutdown on SIGTERM."""
import concurrent.futures
import json
import random
import re
import signal
import socket
import struct
import subprocess
import threading
import urllib.parse

import pytest

from conftest import BINARY, FIXTURES
from served import ServedProcess

RUN_DIR = FIXTURES / "resnet18" / "ort_all"
MODEL = FIXTURES / "resnet18" / "model.onnx"
START_TIMEOUT = 120


class Server(ServedProcess):
    """A running `model-inspector open`; always stopped by close()."""

    def __init__(self, *args):
        super().__init__(["open", "--no-browser", "--quiet", *args], START_TIMEOUT)


@pytest.fixture(scope="module")
def server():
    s = Server()  # no PATH: the bundled demo run
    try:
        yield s
    finally:
        # A clean shutdown; under ASan a leak or error makes this non-zero.
        assert s.close() == 0


def assert_error(server, path, status, **kwargs):
    doc = server.get_json(path, status=status, **kwargs)
    assert doc["error"]["status"] == status
    assert doc["error"]["message"]
    return doc["error"]["message"]


def test_prints_a_loopback_url(server):
    assert server.host == "127.0.0.1"
    assert server.port > 0
    assert server.query == ""


def test_runs(server):
    doc = server.get_json("/api/runs")
    assert len(doc["runs"]) == 1
    run = doc["runs"][0]
    assert run["id"] == 0 and run["name"] == "demo: resnet18 (ONNX Runtime)"
    assert run["levels"] == ["framework", "compiled"]
    assert run["has_trace"] is True
    assert sorted(i["role"] for i in run["inputs"]) == ["compiled", "framework", "trace"]
    # The demo is built into the binary: no path of the source tree is listed.
    assert run["paths"] == ["(bundled demo)/resnet18/ort_all"]
    assert all(i["path"].startswith("(bundled demo)/resnet18/") for i in run["inputs"])
    assert str(FIXTURES) not in json.dumps(doc)


def test_security_headers(server):
    _, headers, _ = server.request("/api/runs")
    assert headers["Cache-Control"] == "no-store"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    code, headers, body = server.request("/")
    assert code == 200 and headers["Content-Type"].startswith("text/html")
    assert b"<html" in body.lower()
    assert "default-src 'self'" in headers["Content-Security-Policy"]


def test_summary(server):
    doc = server.get_json("/api/runs/0/summary")
    assert isinstance(doc, dict) and doc
    assert_error(server, "/api/runs/0/summary?top=x", 400)


def decode_header(buf):
    assert buf[:4] == b"MILY"
    header = struct.unpack_from("<3I2f10I", buf, 4)
    version, header_bytes = header[0], header[1]
    nsec = header[13]
    assert version == 1
    assert header_bytes == 64 + 16 * nsec
    assert len(buf) % 4 == 0
    return {"direction": header[2], "items": header[6], "groups": header[10]}


def test_layout_binary(server):
    path = "/api/runs/0/levels/framework/layout"
    code, headers, body = server.request(path)
    assert code == 200
    assert headers["Content-Type"] == "application/octet-stream"
    h = decode_header(body)
    assert h["items"] > 0 and h["groups"] > 1 and h["direction"] == 0
    code, _, lr = server.request(path + "?direction=lr&grouping=fusion&max_items=20")
    assert code == 200 and decode_header(lr)["direction"] == 1
    # Stateless: the same request gives the same bytes after other requests.
    server.request(path + "?expand=1,2,3&collapse=4")
    assert server.request(path)[2] == body
    code, _, compiled = server.request("/api/runs/0/levels/compiled/layout?grouping=none")
    assert code == 200 and decode_header(compiled)["items"] > 0
    assert_error(server, path + "?expand=999999", 404)
    assert_error(server, path + "?expand=abc", 400)
    assert_error(server, path + "?collapse=0", 400)
    assert_error(server, path + "?grouping=weird", 400)
    assert_error(server, path + "?direction=up", 400)
    assert_error(server, "/api/runs/0/levels/ge_stage9/layout", 404)


TYPES = {1: "B", 2: "i", 3: "I", 4: "f"}


def sections(buf):
    """Section id -> list of values (docs/reference/layout-binary.md)."""
    decode_header(buf)
    nsec = struct.unpack_from("<I", buf, 56)[0]
    out = {}
    for k in range(nsec):
        sid, typ, offset, count = struct.unpack_from("<4I", buf, 64 + 16 * k)
        out[sid] = list(struct.unpack_from(f"<{count}{TYPES[typ]}", buf, offset))
    return out


ITEM_KIND, ITEM_MODEL_ID, GROUP_PARENT, GROUP_FLAGS = 2, 4, 15, 18
NODE_ITEM, NODE_MODEL_ID, NODE_STATUS, NODE_TIME_US, NODE_TASK_COUNT = 26, 27, 31, 32, 33


def test_layout_reveal(server):
    path = "/api/runs/0/levels/framework/layout?max_items=6"
    node = search(server, "/layer4/layer4.1/conv2/Conv", "glob")["matches"][0]["id"]
    code, _, before = server.request(path)
    assert code == 200
    s = sections(before)
    v = s[NODE_MODEL_ID].index(node)
    assert s[ITEM_KIND][s[NODE_ITEM][v]] == 3  # folded into a group
    code, _, after = server.request(f"{path}&reveal={node}")
    assert code == 200
    t = sections(after)
    item = t[NODE_ITEM][v]
    assert t[ITEM_KIND][item] == 0 and t[ITEM_MODEL_ID][item] == node
    # The client's new state is in group_flags: every group above the node
    # is expanded, and sending them as `expand` draws the same.
    opened = [g for g, f in enumerate(t[GROUP_FLAGS])
              if g > 0 and f & 1 and not s[GROUP_FLAGS][g] & 1]
    assert opened
    code, _, same = server.request(f"{path}&expand={','.join(map(str, opened))}")
    assert same == after
    assert server.request(path)[2] == before  # stateless
    assert_error(server, f"{path}&reveal=x", 400)
    assert_error(server, f"{path}&reveal=99999999", 404)
    compiled = server.get_json("/api/runs/0/levels/compiled/search?q=ReorderOutput&mode=op")
    assert_error(server, f"{path}&reveal={compiled['matches'][0]['id']}", 404)


def test_layout_node_status_and_times(server):
    code, _, body = server.request("/api/runs/0/levels/compiled/layout?max_items=0")
    assert code == 200
    s = sections(body)
    n = len(s[NODE_MODEL_ID])
    assert len(s[NODE_STATUS]) == len(s[NODE_TIME_US]) == len(s[NODE_TASK_COUNT]) == n
    status = [["none", "executed", "fused", "not_executed", "inserted"][c] for c in s[NODE_STATUS]]
    assert "executed" in status and "inserted" in status
    checked = 0
    for v in range(n):
        if s[ITEM_KIND][s[NODE_ITEM][v]] != 0:
            assert (status[v], s[NODE_TIME_US][v], s[NODE_TASK_COUNT][v]) == ("none", -1, 0)
            continue
        details = server.get_json(f"/api/runs/0/levels/compiled/nodes/{s[NODE_MODEL_ID][v]}")
        expected = "none" if details["status"] == "unknown" else details["status"]
        assert status[v] == expected
        assert s[NODE_TASK_COUNT][v] == details["task_count"]
        if details["task_count"]:
            assert s[NODE_TIME_US][v] == pytest.approx(details["task_total_ns"] / 1e3, rel=1e-6)
        else:
            assert s[NODE_TIME_US][v] == -1
        checked += 1
    assert checked > 20


def test_node_details_operator_docs(server):
    conv = search(server, "Conv", "op")["matches"][0]
    doc = server.get_json(f"/api/runs/0/levels/framework/nodes/{conv['id']}")["doc"]
    assert doc["domain"] == "" and doc["since_version"] >= 1
    assert doc["summary"].startswith("The convolution operator")
    assert "\n" not in doc["summary"] and len(doc["summary"]) <= 1503
    reorder = server.get_json("/api/runs/0/levels/compiled/search?q=ReorderOutput&mode=op")
    node = server.get_json(f"/api/runs/0/levels/compiled/nodes/{reorder['matches'][0]['id']}")
    assert node["doc"] is None  # com.microsoft.nchwc: not in ONNX's registry


def check_model_explorer(graph, node_data, times):
    """Structure of Model Explorer's graph JSON (GraphCollection) and
    node-data JSON (ModelNodeData); `times`: node id -> time in us."""
    assert isinstance(graph["label"], str) and len(graph["graphs"]) == 1
    g = graph["graphs"][0]
    assert isinstance(g["id"], str) and g["nodes"]
    ids = [n["id"] for n in g["nodes"]]
    assert len(ids) == len(set(ids))
    for n in g["nodes"]:
        assert isinstance(n["label"], str) and isinstance(n["namespace"], str)
        assert not n["namespace"].startswith("/")
        for a in n.get("attrs", []):
            assert set(a) == {"key", "value"} and isinstance(a["value"], str)
        for e in n.get("incomingEdges", []):
            assert set(e) == {"sourceNodeId", "sourceNodeOutputId", "targetNodeInputId"}
            assert e["sourceNodeId"] in ids
            src = next(m for m in g["nodes"] if m["id"] == e["sourceNodeId"])
            assert e["sourceNodeOutputId"] in [o["id"] for o in src.get("outputsMetadata", [])]
        for md in n.get("outputsMetadata", []) + n.get("inputsMetadata", []):
            assert isinstance(md["id"], str)
            assert all(set(a) == {"key", "value"} for a in md["attrs"])
    assert list(node_data) == [g["id"]]
    gd = node_data[g["id"]]
    assert gd["results"]
    assert [x["stop"] for x in gd["gradient"]][0] == 0 and gd["gradient"][-1]["stop"] == 1
    for key, result in gd["results"].items():
        assert key in ids
        assert result["value"] == pytest.approx(times[key], rel=1e-9)
    return g


def test_model_explorer_export(server, tmp_path):
    base = "/api/runs/0/levels/compiled/export"
    code, headers, graph_body = server.request(f"{base}/model-explorer-graph")
    assert code == 200 and headers["Content-Type"].startswith("application/json")
    assert "attachment" in headers["Content-Disposition"]
    graph = json.loads(graph_body)
    node_data = server.get_json(f"{base}/model-explorer-node-data")
    times = {}
    for n in graph["graphs"][0]["nodes"]:
        if n["id"].isdigit():
            d = server.get_json(f"/api/runs/0/levels/compiled/nodes/{n['id']}")
            if d["task_count"]:
                times[n["id"]] = d["task_total_ns"] / 1e3
            # Namespace = our scope path; label = op type.
            assert n["namespace"] == d["scope"].strip("/")
            assert n["label"] == d["op_type"]
    g = check_model_explorer(graph, node_data, times)
    assert set(node_data[g["id"]]["results"]) == set(times)
    kinds = {next(a["value"] for a in n["attrs"] if a["key"] == "op_type") for n in g["nodes"]}
    assert {"GraphInput", "GraphOutput", "ReorderOutput"} <= kinds
    assert_error(server, f"{base}/netron", 404)
    assert_error(server, "/api/runs/0/levels/ge/export/model-explorer-graph", 404)
    # The CLI writes the same files.
    out_graph, out_data = tmp_path / "g.json", tmp_path / "d.json"
    subprocess.run([BINARY, "export-model-explorer", "--quiet", RUN_DIR, "--level", "compiled",
                    "--out-graph", out_graph, "--out-node-data", out_data],
                   check=True, capture_output=True, timeout=120)
    assert out_graph.read_bytes() == graph_body
    assert json.loads(out_data.read_text()) == node_data


def test_model_explorer_export_framework_level(server):
    base = "/api/runs/0/levels/framework/export"
    graph = server.get_json(f"{base}/model-explorer-graph")
    node_data = server.get_json(f"{base}/model-explorer-node-data")
    # Fused framework nodes carry the time of the compiled node that ran them.
    times = {k: v["value"] for k, v in next(iter(node_data.values()))["results"].items()}
    g = check_model_explorer(graph, node_data, times)
    conv = search(server, "/layer1/layer1.0/conv1/Conv", "glob")["matches"][0]
    node = next(n for n in g["nodes"] if n["id"] == str(conv["id"]))
    assert node["namespace"] == "layer1/layer1.0/conv1"
    details = server.get_json(f"/api/runs/0/levels/framework/nodes/{conv['id']}")
    assert times[str(conv["id"])] == pytest.approx(details["task_total_ns"] / 1e3)


def search(server, q, mode, status=200):
    query = urllib.parse.urlencode({"q": q, "mode": mode})
    return server.get_json(f"/api/runs/0/levels/framework/search?{query}", status=status)


def test_search_modes(server):
    convs = search(server, "Conv", "op")
    assert convs["total"] == 20 and len(convs["matches"]) == 20
    assert all(m["op_type"] == "Conv" for m in convs["matches"])
    assert search(server, "conv", "op")["total"] == 20
    assert search(server, "LAYER1.0/conv", "text")["total"] == 2
    assert search(server, "layer1/*/conv1/Conv", "glob")["total"] == 2
    assert search(server, "layer?/*/conv1/Conv", "glob")["total"] == 8
    assert search(server, "layer1/**/Conv", "glob")["total"] == 4
    assert search(server, r"layer[34]\.1/conv\d/Conv$", "regex")["total"] == 4
    assert search(server, "group=1", "attr")["total"] == 20
    assert search(server, "nothing-like-this", "text")["total"] == 0
    doc = search(server, "(unclosed", "regex", status=400)
    assert "regex" in doc["error"]["message"]
    search(server, "x", "sql", status=400)
    assert_error(server, "/api/runs/0/levels/framework/search?mode=text", 400)
    limited = server.get_json("/api/runs/0/levels/framework/search?q=Conv&mode=op&limit=5")
    assert len(limited["matches"]) == 5 and limited["total"] == 20 and limited["truncated"]


def test_node_details_of_a_conv(server):
    conv = search(server, "/layer1/layer1.0/conv1/Conv", "glob")["matches"][0]
    doc = server.get_json(f"/api/runs/0/levels/framework/nodes/{conv['id']}")
    assert doc["id"] == conv["id"]
    assert doc["op_type"] == "Conv"
    assert doc["name"] == "/layer1/layer1.0/conv1/Conv"
    assert doc["scope"]
    attrs = {a["name"]: a for a in doc["attributes"]}
    assert "kernel_shape" in attrs and attrs["group"]["value"] == 1
    x = doc["inputs"][0]
    assert x["dtype"] == "float32" and x["shape"] == [1, 8, 56, 56] and x["producer"] is not None
    assert doc["outputs"][0]["consumers"]
    assert doc["status"] == "fused"
    assert doc["fused_into"] is not None
    compiled = server.get_json(f"/api/runs/0/levels/compiled/nodes/{doc['fused_into']['id']}")
    assert conv["id"] in [f["id"] for f in compiled["fused_from"]]
    assert compiled["task_count"] > 0 and compiled["tasks"]
    task = compiled["tasks"][0]
    assert task["duration_ns"] >= 0 and "start_ns" in task and "track" in task
    assert_error(server, f"/api/runs/0/levels/compiled/nodes/{conv['id']}", 404)
    assert_error(server, "/api/runs/0/levels/framework/nodes/99999999", 404)
    assert_error(server, "/api/runs/0/levels/framework/nodes/-1", 400)


def test_unknown_run_and_endpoint(server):
    msg = assert_error(server, "/api/runs/7/summary", 404)
    assert "7" in msg
    assert_error(server, "/api/runs/abc/summary", 400)
    assert_error(server, "/api/nothing", 404)
    assert_error(server, "/no/such/page", 404)


TRAVERSALS = [
    "/../../../../etc/passwd",
    "/assets/../../../etc/passwd",
    "/%2e%2e/%2e%2e/etc/passwd",
    "/%2E%2E/%2E%2E/etc/passwd",
    "/assets/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/%252e%252e/%252e%252e/etc/passwd",
    "/assets/..%2f..%2f..%2fetc/passwd",
    "/..%5c..%5c..%5cetc%5cpasswd",
    "/assets\\..\\..\\etc\\passwd",
    "/assets/..\\..\\index.html",
    "//etc/passwd",
    "/./index.html",
    "/index.html%00.js",
    "/%c0%ae%c0%ae/etc/passwd",
    "/api/../index.html",
    "/api/runs/0/../../../etc/passwd",
    "/etc/passwd",
    "/CMakeLists.txt",
    "/src/server/api.cc",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_traversal_is_404(server, path):
    code, headers, body = server.request(path)
    assert code == 404, (path, code, body[:200])
    assert headers["Content-Type"].startswith("application/json")
    assert b"root:" not in body


def test_only_get_and_head(server):
    code, headers, _ = server.request("/api/runs", method="DELETE")
    assert code == 405 and headers["Allow"] == "GET, HEAD"
    code, _, body = server.request("/api/runs", method="HEAD")
    assert code == 200 and body == b""


def test_oversized_body_is_413(server):
    code, headers, body = server.request("/api/runs", method="POST", body=b"x" * (2 << 20),
                                         headers={"Content-Type": "application/octet-stream"})
    assert code == 413
    assert json.loads(body)["error"]["status"] == 413


def test_long_url_is_414(server):
    code, _, body = server.request("/api/runs?q=" + "a" * 9000)
    assert code == 414
    assert json.loads(body)["error"]["status"] == 414


def test_dns_rebinding_host_is_refused(server):
    assert_error(server, "/api/runs", 403, headers={"Host": f"attacker.example:{server.port}"})
    server.get_json("/api/runs", headers={"Host": f"localhost:{server.port}"})


def test_concurrent_requests(server):
    paths = ["/api/runs", "/api/runs/0/summary", "/api/runs/0/levels/framework/layout",
             "/api/runs/0/levels/compiled/layout", "/api/runs/0/levels/framework/search?q=relu"] * 8
    with concurrent.futures.ThreadPoolExecutor(max_workers=20) as pool:
        codes = list(pool.map(lambda p: server.request(p)[0], paths))
    assert codes == [200] * len(paths)


def test_odd_query_strings_never_crash(server):
    rng = random.Random(7)
    keys = ["q", "mode", "limit", "expand", "collapse", "max_items", "grouping", "direction",
            "top", "iteration", "token", "", "q[]", "%"]
    endpoints = ["/api/runs/0/levels/framework/search", "/api/runs/0/levels/framework/layout",
                 "/api/runs/0/summary", "/api/runs/0/levels/compiled/nodes/3", "/"]
    for _ in range(200):
        parts = []
        for _ in range(rng.randrange(0, 5)):
            raw = bytes(rng.randrange(0, 256) for _ in range(rng.randrange(0, 12)))
            value = rng.choice([urllib.parse.quote(raw), "%", "%zz", "%00", "(", "**", "1,,2",
                                "-1", "18446744073709551616", "regex", "glob", "+", "&&", "=="])
            parts.append(f"{rng.choice(keys)}={value}")
        path = rng.choice(endpoints) + "?" + "&".join(parts)
        code, _, _ = server.request(path)
        assert code in (200, 400, 404), (path, code)
    server.get_json("/api/runs")  # still alive


def test_non_loopback_without_token_is_refused():
    proc = subprocess.run([BINARY, "open", "--no-browser", "--host", "0.0.0.0"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "--token" in proc.stderr and "loopback" in proc.stderr
    assert proc.stdout == ""


def test_bad_token_is_refused():
    proc = subprocess.run([BINARY, "open", "--no-browser", "--token", "has space"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--token" in proc.stderr


def test_token_required():
    s = Server("--token", "s3cret-Token_1")
    try:
        assert s.query == "token=s3cret-Token_1"
        assert_error(s, "/api/runs", 403)
        assert_error(s, "/", 403)
        assert_error(s, "/api/runs", 403, headers={"X-MI-Token": "wrong"})
        assert_error(s, "/api/runs?token=s3cret-Token_", 403)
        s.get_json("/api/runs", headers={"X-MI-Token": "s3cret-Token_1"})
        code, headers, _ = s.request("/?token=s3cret-Token_1")
        assert code == 200
        cookie = headers["Set-Cookie"].split(";")[0]
        assert cookie == "mi_token=s3cret-Token_1" and "HttpOnly" in headers["Set-Cookie"]
        s.get_json("/api/runs", headers={"Cookie": cookie})
        # With a token the Host header is not checked (remote access).
        s.get_json("/api/runs", headers={"X-MI-Token": "s3cret-Token_1", "Host": "box:1"})
    finally:
        assert s.close() == 0


def test_auto_token():
    s = Server("--token", "auto")
    try:
        token = urllib.parse.parse_qs(s.query)["token"][0]
        assert len(token) == 32
        assert_error(s, "/api/runs", 403)
        s.get_json(f"/api/runs?token={token}")
    finally:
        assert s.close() == 0


def test_slow_clients_and_strangers_do_not_starve_others():
    """Ten connections that drip a request head (one header line at a time)
    and a wrong-token request: the normal request is answered while the slow
    ones are still open, the stranger gets 403, and each slow client ends
    with the server's 408 once its whole-request deadline has passed
    (docs/reference/http-api.md, "Limits"). Timeouts are failure guards."""
    s = Server("--token", "slow-Token")
    stop = threading.Event()
    slow, fates = [], {}

    def drip(i, sock):
        sock.sendall(b"GET /api/runs HTTP/1.1\r\nHost: x\r\n")
        n = 0
        while not stop.wait(0.5):
            try:
                sock.sendall(b"X-Drip-%d: %d\r\n" % (i, n))
            except OSError:
                break  # the server closed it (after its 408)
            n += 1
        fates[i] = sock.recv(4096)

    try:
        for i in range(10):
            sock = socket.create_connection((s.host, s.port), timeout=120)
            slow.append(threading.Thread(target=drip, args=(i, sock)))
            slow[-1].start()
        doc = s.get_json("/api/runs", headers={"X-MI-Token": "slow-Token"})
        assert len(doc["runs"]) == 1
        # Every slow client was still dripping when the answer came.
        assert all(t.is_alive() for t in slow) and not fates
        code, headers, body = s.request("/api/runs", headers={"X-MI-Token": "wrong"})
        assert code == 403 and headers["Connection"] == "close"
        assert "access token" in json.loads(body)["error"]["message"]
        for t in slow:
            t.join(120)
        assert sorted(fates) == list(range(10))
        assert all(f.startswith(b"HTTP/1.1 408 ") for f in fates.values()), fates
    finally:
        stop.set()
        for t in slow:
            t.join(120)
        assert s.close() == 0


def test_connections_per_client_are_capped():
    """The 33rd connection from one address is answered 503 and closed
    (kMaxConnectionsPerClient, server.h; docs/reference/http-api.md)."""
    s = Server()
    held = []
    try:
        held = [socket.create_connection((s.host, s.port), timeout=60) for _ in range(32)]
        over = socket.create_connection((s.host, s.port), timeout=60)
        reply = b""
        while chunk := over.recv(4096):
            reply += chunk
        over.close()
        assert reply.startswith(b"HTTP/1.1 503 "), reply
        assert b"Retry-After: 1" in reply and b"too many connections" in reply
        # The held ones are served as usual.
        held[0].sendall(b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % s.port)
        assert held[0].recv(4096).startswith(b"HTTP/1.1 200 ")
    finally:
        for h in held:
            h.close()
        assert s.close() == 0


def test_summary_cache_is_keyed_by_parameters(server):
    """top=50 is the documented default: served from the default's entry."""
    _, first, body = server.request("/api/runs/0/summary?top=3")
    assert first["X-Cache"] in ("miss", "hit")
    _, again, body2 = server.request("/api/runs/0/summary?top=3")
    assert again["X-Cache"] == "hit" and body2 == body
    _, plain, body3 = server.request("/api/runs/0/summary")
    _, top50, body4 = server.request("/api/runs/0/summary?top=50")
    assert top50["X-Cache"] == "hit" and body4 == body3


def test_several_runs_and_clean_shutdown():
    s = Server(RUN_DIR, "--run", MODEL)
    try:
        runs = s.get_json("/api/runs")["runs"]
        assert [r["name"] for r in runs] == ["ort_all", "model.onnx"]
        assert runs[1]["levels"] == ["framework"] and runs[1]["has_trace"] is False
        assert_error(s, "/api/runs/1/levels/compiled/layout", 404)
        code, _, body = s.request("/api/runs/1/levels/framework/layout")
        assert code == 200 and body[:4] == b"MILY"
    finally:
        assert s.close() == 0


def truncated_trace(tmp_path):
    """A real ONNX Runtime profile cut inside its third event."""
    text = (RUN_DIR / "onnxruntime_profile.json").read_text()
    lines = text.splitlines(keepends=True)
    bad = tmp_path / "cut_profile.json"
    bad.write_text("".join(lines[:3]) + lines[3][:40])
    return bad


def test_keep_going_serves_the_runs_that_open(tmp_path):
    bad = truncated_trace(tmp_path)
    s = Server("--keep-going", RUN_DIR, bad)
    try:
        runs = s.get_json("/api/runs")["runs"]
        assert [r["name"] for r in runs] == ["ort_all", "cut_profile.json"]
        assert "error" not in runs[0]
        err = runs[1]["error"]
        assert err["code"] == "malformed input"
        # file:line:col of the event the file ends in (line 4, the cut one).
        assert err["message"].startswith(f"{bad}:4:"), err
        assert runs[1]["levels"] == [] and runs[1]["inputs"] == []
        message = assert_error(s, "/api/runs/1/summary", 404)
        assert "could not be opened" in message and str(bad) in message
        assert s.get_json("/api/runs/0/summary")["tasks"] > 0
    finally:
        assert s.close() == 0


def test_without_keep_going_a_bad_run_stops_open(tmp_path):
    proc = subprocess.run([BINARY, "open", "--no-browser", str(RUN_DIR), str(truncated_trace(tmp_path))],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4 and "cut_profile.json:4:" in proc.stderr
    assert proc.stdout == ""


def test_keep_going_with_no_run_that_opens_fails(tmp_path):
    proc = subprocess.run([BINARY, "open", "--no-browser", "--keep-going", str(truncated_trace(tmp_path))],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4 and "cut_profile.json:4:" in proc.stderr
    assert proc.stdout == ""


def test_links_say_why_tasks_stay_unlinked():
    # The framework model with the profile of the optimized one.
    s = Server("--run", MODEL, RUN_DIR / "onnxruntime_profile.json")
    try:
        links = s.get_json("/api/runs/0/links")
        summary = subprocess.run([BINARY, "summary", "--quiet", str(MODEL), str(RUN_DIR / "onnxruntime_profile.json")],
                                 capture_output=True, text=True, timeout=120, check=True).stdout
        why = ", ".join(f"{r['count']} {r['text']}" for r in links["reasons"])
        assert f"{links['linked_tasks']} linked to nodes / {links['unlinked_tasks']} unlinked ({why})" in summary
        assert links["unlinked_tasks"] > 0
    finally:
        assert s.close() == 0


def test_missing_path_fails_before_serving():
    proc = subprocess.run([BINARY, "open", "--no-browser", "/no/such/run"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3 and "no such file" in proc.stderr
    assert proc.stdout == ""


def test_port_in_use_and_sigint():
    first = Server()
    try:
        proc = subprocess.run([BINARY, "open", "--no-browser", "-q", "--port", str(first.port)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 6 and "cannot listen" in proc.stderr
    finally:
        first.proc.send_signal(signal.SIGINT)
        assert first.proc.wait(timeout=20) == 0
        first.close()


def test_pair_a_trace_only_run_over_http():
    """POST /api/runs/{run}/pair through the real CLI opener and socket:
    token required, JSON only, idempotent; the new run has the model's
    graph and links the trace's tasks as `open --run MODEL TRACE` does."""
    trace = FIXTURES / "resnet18" / "torch_profile.pt.trace.json.gz"
    s = Server("--token", "pair-Token", trace)
    token = {"X-MI-Token": "pair-Token"}
    json_post = {**token, "Content-Type": "application/json"}
    try:
        runs = s.get_json("/api/runs", headers=token)["runs"]
        assert len(runs) == 1 and runs[0]["levels"] == []
        assert runs[0]["pair_candidates"] == [str(MODEL)]
        # No token: refused before anything is opened.
        code, _, _ = s.request("/api/runs/0/pair", method="POST", body=b'{"candidate": 0}',
                               headers={"Content-Type": "application/json"})
        assert code == 403
        code, _, _ = s.request("/api/runs/0/pair", method="POST", body=b'{"candidate": 0}',
                               headers={**token, "Content-Type": "text/plain"})
        assert code == 415
        code, _, body = s.request("/api/runs/0/pair", method="POST", body=b'{"candidate": 1}',
                                  headers=json_post)
        assert code == 400 and json.loads(body)["error"]["message"] == "candidate: expected 0..0, found 1"
        assert len(s.get_json("/api/runs", headers=token)["runs"]) == 1
        code, _, body = s.request("/api/runs/0/pair", method="POST", body=b'{"candidate": 0}',
                                  headers=json_post)
        assert code == 201, body
        assert json.loads(body) == {"run": 1, "created": True}
        code, _, body = s.request("/api/runs/0/pair", method="POST", body=b'{"candidate": 0}',
                                  headers=json_post)
        assert code == 200 and json.loads(body) == {"run": 1, "created": False}
        runs = s.get_json("/api/runs", headers=token)["runs"]
        assert len(runs) == 2
        assert runs[1]["paths"] == [str(MODEL), str(trace)]
        assert runs[1]["levels"] == ["framework"] and runs[1]["has_trace"] is True
        # The CLI's summary of the same two files aligns as many host ops
        # (a CPU trace: its ops link to nodes by alignment).
        proc = subprocess.run([BINARY, "summary", "--quiet", str(MODEL), str(trace)],
                              capture_output=True, text=True, timeout=120)
        aligned = int(re.search(r"(\d+) host ops aligned to graph nodes", proc.stdout).group(1))
        assert aligned > 0
        assert s.get_json("/api/runs/1/links", headers=token)["aligned_host_ops"] == aligned
    finally:
        assert s.close() == 0


def test_diff_of_two_served_runs_and_the_run_history(tmp_path):
    """`open A B --history DB`: GET /api/diff over the two runs (the compiled
    levels' node counts as python3-onnx reads the two models), cached; the
    history the CLI wrote, served read only."""
    import onnx

    extended = FIXTURES / "resnet18" / "ort_extended"
    db = tmp_path / "history.db"
    for label, run in (("extended", extended), ("all", RUN_DIR)):
        subprocess.run([BINARY, "history", "add", "--history", str(db), "--model", "resnet18",
                        "--label", label, str(run)], capture_output=True, text=True, timeout=120, check=True)
    s = Server("--history", str(db), str(extended), str(RUN_DIR))
    try:
        assert s.get_json("/api/runs")["history"] is True
        code, headers, body = s.request("/api/diff?base=0&new=1")
        assert code == 200 and headers["X-Cache"] == "miss", body[:300]
        report = json.loads(body)
        compiled = next(lv for lv in report["structure"] if lv["level"] == "compiled")
        assert compiled["base_nodes"] == len(onnx.load(str(extended / "model.optimized.onnx")).graph.node)
        assert compiled["new_nodes"] == len(onnx.load(str(RUN_DIR / "model.optimized.onnx")).graph.node)
        code, headers, again = s.request("/api/diff?base=0&new=1")
        assert code == 200 and headers["X-Cache"] == "hit" and again == body
        assert "fail_on: " in assert_error(s, "/api/diff?base=0&new=1&fail_on=nodes%3E", 400)
        assert assert_error(s, "/api/diff?base=0&new=2", 404) == "new: no run 2; runs are 0..1"
        runs = s.get_json("/api/history/runs?model=resnet18")["runs"]
        assert [r["label"] for r in runs] == ["all", "extended"]
        trend = s.get_json("/api/history/trend?model=resnet18")
        assert [p["run_id"] for p in trend["points"]] == [r["id"] for r in reversed(runs)]
        assert [p["total_median_ns"] for p in trend["points"]] == [r["total_median_ns"] for r in reversed(runs)]
    finally:
        assert s.close() == 0
    # No history file: an error naming it before serving.
    proc = subprocess.run([BINARY, "open", "--no-browser", "--history", str(tmp_path / "none.db"), str(RUN_DIR)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3 and "none.db" in proc.stderr and proc.stdout == ""
