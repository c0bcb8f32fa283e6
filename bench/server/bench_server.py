#!/usr/bin/python3
"""Load test of `model-inspector open`: a bounded, repeatable mixed workload
on a large Kineto trace and a large model, with and without hostile clients,
for one or two server binaries side by side (bench/README.md, "Server").

Each server opens two runs: the trace (summaries, timeline windows) and the
model (layout, node details, search), with --token. Per scenario, --clients
threads each keep one keep-alive connection (as a browser tab does) and send
requests drawn from a fixed mix with a fixed seed for --seconds:

  summary   GET /api/runs/T/summary with one of 11 parameter sets
            (default, top=50 which is the default, other tops, iterations,
            the calibrated clock, two time ranges): the heavy route
  timeline  GET /api/runs/T/timeline/window, a random window 1/1000..1 of
            the trace at px=1500 (binary)
  layout    GET /api/runs/M/levels/framework/layout, one of 4 expand sets
  node      GET /api/runs/M/levels/framework/nodes/{id}, a random node
  search    GET /api/runs/M/levels/framework/search, one of 7 queries

Scenario "attack" adds, from other loopback addresses (so a per-address cap
does not mix them with the workload): 10 connections that send a request
head one header line every 2 s (reconnecting when the server closes them),
and a flood of requests with a wrong token (about 50 per second).

Prints, per server and scenario: requests, errors, p50/p99/max per route,
throughput, server RSS before and after, the slow clients' fate and the
flood's answers. Figures depend on the machine's load: say what else ran.

  /usr/bin/python3 bench/server/bench_server.py \\
      --binary build/src/cli/model-inspector \\
      [--baseline /path/to/previous/model-inspector] [--seconds 60] \\
      [--clients 8] [--scenarios mixed,attack] [--trace F] [--model F]

--seconds 5 is a smoke run. The inputs are generated once into $TMPDIR
(bench/ui/make_kineto_trace.py --mb 884: 813 MB, 1,892,470 events, 25
copies of the ResNet-50 sample; bench/ui/make_big_model.py 30000: 30,018
nodes).
"""
import argparse
import http.client
import json
import os
import pathlib
import random
import re
import socket
import struct
import subprocess
import sys
import threading
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
TOKEN = "bench-token-0123456789"
TMP = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / "mi_server_bench"


def percentile(sorted_values, q):
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[i]


def rss_mib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


class Served:
    """One `model-inspector open` process on a free port."""

    def __init__(self, binary, paths, start_timeout=900):
        self.proc = subprocess.Popen(
            [binary, "open", "--no-browser", "--quiet", "--token", TOKEN, *map(str, paths)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        box = []
        reader = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
        t0 = time.monotonic()
        reader.start()
        reader.join(start_timeout)
        self.open_s = time.monotonic() - t0
        line = box[0].strip() if box else ""
        m = re.match(r"http://([^:/]+):(\d+)/", line)
        if not m:
            self.close()
            raise SystemExit(f"{binary}: no URL printed ({line!r})")
        self.host, self.port = m.group(1), int(m.group(2))

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def get(host, port, path, timeout=120, token=TOKEN):
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"X-MI-Token": token})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def discover(s):
    """Run ids, the trace's extent, the model's groups and some node ids."""
    _, body = get(s.host, s.port, "/api/runs")
    runs = json.loads(body)["runs"]
    trace = next(r["id"] for r in runs if r["has_trace"] and not r["levels"])
    model = next(r["id"] for r in runs if r["levels"])
    _, body = get(s.host, s.port, f"/api/runs/{trace}/timeline")
    tl = json.loads(body)
    _, body = get(s.host, s.port, f"/api/runs/{model}/levels/framework/layout")
    groups = struct.unpack_from("<I", body, 44)[0]
    _, body = get(s.host, s.port, f"/api/runs/{model}/levels/framework/search?q=MatMul&limit=1000")
    nodes = [m["id"] for m in json.loads(body)["matches"]]
    return {"trace": trace, "model": model, "start": tl["start_ns"], "end": tl["end_ns"],
            "tasks": tl["task_count"], "groups": groups, "nodes": nodes,
            "iterations": len(tl.get("runs", []))}


def workload(info):
    t, m = info["trace"], info["model"]
    start, end = info["start"], info["end"]
    span = end - start
    g = max(2, info["groups"])
    summaries = ["", "?top=50", "?top=10", "?top=20", "?top=100", "?top=5",
                 "?iteration=0", "?iteration=1", "?clock=calibrated",
                 f"?from_ns={start}&to_ns={start + span // 4}",
                 f"?from_ns={start + span // 2}&to_ns={end}"]
    if info["iterations"] < 2:
        summaries = [s for s in summaries if "iteration" not in s]
    layouts = ["", f"?expand={1 % g}", f"?expand={1 % g},{2 % g}", f"?expand={3 % g}&collapse={1 % g}"]
    searches = ["MatMul", "layers.1", "attn", "Add", "*/q_proj/*", "Softmax", "norm"]

    def summary(rng):
        return f"/api/runs/{t}/summary" + rng.choice(summaries)

    def timeline(rng):
        width = max(1000, int(span * 10 ** rng.uniform(-3, 0)))
        a = start + int(rng.uniform(0, max(1, span - width)))
        return f"/api/runs/{t}/timeline/window?start_ns={a}&end_ns={a + width}&px=1500"

    def layout(rng):
        return f"/api/runs/{m}/levels/framework/layout" + rng.choice(layouts)

    def node(rng):
        return f"/api/runs/{m}/levels/framework/nodes/{rng.choice(info['nodes'])}"

    def search(rng):
        return f"/api/runs/{m}/levels/framework/search?limit=100&q=" + rng.choice(searches)

    # (route, weight, path maker)
    return [("summary", 10, summary), ("timeline", 30, timeline), ("layout", 25, layout),
            ("node", 20, node), ("search", 15, search)]


def client(s, mix, seed, stop_at, out):
    rng = random.Random(seed)
    names = [n for n, _, _ in mix]
    weights = [w for _, w, _ in mix]
    makers = {n: f for n, _, f in mix}
    conn = None
    while time.monotonic() < stop_at:
        route = rng.choices(names, weights)[0]
        path = makers[route](rng)
        t0 = time.monotonic()
        status = None
        try:
            if conn is None:
                conn = http.client.HTTPConnection(s.host, s.port, timeout=60)
            conn.request("GET", path, headers={"X-MI-Token": TOKEN})
            r = conn.getresponse()
            r.read()
            status = r.status
            if r.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = None
        except (OSError, http.client.HTTPException) as e:
            status = type(e).__name__
            if conn is not None:
                conn.close()
            conn = None
        out.append((route, time.monotonic() - t0, status, t0))
    if conn is not None:
        conn.close()


def bound_socket(source, host, port, timeout):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.bind((source, 0))
    sock.connect((host, port))
    return sock


def dripper(s, stop, stats, index):
    """Sends a request head one line every 2 s; reconnects when closed."""
    while not stop.is_set():
        try:
            sock = bound_socket("127.0.0.2", s.host, s.port, 5)
        except OSError:
            stats["connect_failed"] += 1
            stop.wait(0.5)
            continue
        stats["connections"] += 1
        try:
            sock.sendall(b"GET /api/runs HTTP/1.1\r\nHost: x\r\n")
            n = 0
            while not stop.wait(2.0):
                # The server's answer (a 408) or its close ends this one.
                sock.setblocking(False)
                try:
                    data = sock.recv(4096)
                    if data.startswith(b"HTTP/1.1 408"):
                        stats["408"] += 1
                    elif data.startswith(b"HTTP/1.1 "):
                        stats["other_reply"] += 1
                    else:
                        stats["closed"] += 1
                    break
                except BlockingIOError:
                    pass
                finally:
                    sock.setblocking(True)
                sock.sendall(f"X-Drip-{index}-{n}: 1\r\n".encode())
                n += 1
        except OSError:
            stats["closed"] += 1
        finally:
            sock.close()


def flood(s, stop, out):
    """Requests with a wrong token, about 50 a second, one connection each."""
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            sock = bound_socket("127.0.0.3", s.host, s.port, 60)
            sock.sendall(b"GET /api/runs/0/summary?top=7 HTTP/1.1\r\nHost: x\r\n"
                         b"X-MI-Token: not-the-token\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
            sock.close()
            status = int(data[9:12]) if data.startswith(b"HTTP/1.1 ") else "no reply"
        except OSError as e:
            status = type(e).__name__
        out.append((time.monotonic() - t0, status))
        stop.wait(max(0.0, 0.02 - (time.monotonic() - t0)))


def run_scenario(s, info, scenario, seconds, clients):
    mix = workload(info)
    results = []
    rss_before = rss_mib(s.proc.pid)
    stop = threading.Event()
    drip_stats = {"connections": 0, "408": 0, "other_reply": 0, "closed": 0, "connect_failed": 0}
    flood_out = []
    attackers = []
    if scenario == "attack":
        attackers = [threading.Thread(target=dripper, args=(s, stop, drip_stats, i)) for i in range(10)]
        attackers.append(threading.Thread(target=flood, args=(s, stop, flood_out)))
        for a in attackers:
            a.start()
        time.sleep(1.0)  # the slow clients are connected before the load starts
    t_start = time.monotonic()
    stop_at = t_start + seconds
    per_client = [[] for _ in range(clients)]
    threads = [threading.Thread(target=client, args=(s, mix, 1000 + i, stop_at, per_client[i]))
               for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t_start
    stop.set()
    for a in attackers:
        a.join()
    for r in per_client:
        results.extend(r)
    rss_after = rss_mib(s.proc.pid)
    return {"results": results, "elapsed": elapsed, "rss_before": rss_before,
            "rss_after": rss_after, "drip": drip_stats, "flood": flood_out}


def report(label, scenario, out):
    rows = []
    res = out["results"]
    routes = ["summary", "timeline", "layout", "node", "search"]
    for route in routes + ["all"]:
        sel = [r for r in res if route == "all" or r[0] == route]
        lat = sorted(r[1] * 1000 for r in sel)
        ok = sum(1 for r in sel if r[2] == 200)
        errors = len(sel) - ok
        rows.append(f"| {label} | {scenario} | {route} | {len(sel)} | {ok / out['elapsed']:.1f} | "
                    f"{percentile(lat, 0.5):.1f} | {percentile(lat, 0.99):.1f} | "
                    f"{(lat[-1] if lat else float('nan')):.1f} | {errors} |")
    extra = f"RSS {out['rss_before']:.0f} -> {out['rss_after']:.0f} MiB"
    if scenario == "attack":
        d = out["drip"]
        fl = out["flood"]
        fl_lat = sorted(x[0] * 1000 for x in fl)
        statuses = {}
        for _, st in fl:
            statuses[st] = statuses.get(st, 0) + 1
        extra += (f"; slow clients: {d['connections']} connections, {d['408']} answered 408, "
                  f"{d['closed']} closed, {d['other_reply']} other replies; wrong-token flood: "
                  f"{len(fl)} requests {statuses}, p50 {percentile(fl_lat, 0.5):.1f} ms, "
                  f"p99 {percentile(fl_lat, 0.99):.1f} ms")
    return rows, extra


def ensure_inputs(args):
    TMP.mkdir(parents=True, exist_ok=True)
    if args.trace is None:
        args.trace = TMP / "kineto_1p9m_events.json"
        if not args.trace.exists():
            subprocess.run([sys.executable, str(REPO / "bench/ui/make_kineto_trace.py"),
                            "--out", str(args.trace), "--mb", "884"], check=True)
    if args.model is None:
        args.model = TMP / "model_30k.onnx"
        if not args.model.exists():
            subprocess.run([sys.executable, str(REPO / "bench/ui/make_big_model.py"), "30000",
                            str(args.model)], check=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--binary", required=True)
    p.add_argument("--baseline", help="a previous build, measured first in the same run")
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--scenarios", default="mixed,attack")
    p.add_argument("--trace", type=pathlib.Path)
    p.add_argument("--model", type=pathlib.Path)
    args = p.parse_args()
    ensure_inputs(args)
    servers = ([("baseline", args.baseline)] if args.baseline else []) + [("this build", args.binary)]
    table = ["| server | scenario | route | requests | ok/s | p50 ms | p99 ms | max ms | errors |",
             "|---|---|---|---|---|---|---|---|---|"]
    notes = []
    load0 = os.getloadavg()
    for label, binary in servers:
        s = Served(binary, [args.trace, args.model])
        try:
            rss_open = rss_mib(s.proc.pid)
            info = discover(s)
            notes.append(f"{label}: opened in {s.open_s:.1f} s, {info['tasks']} tasks, "
                         f"{len(info['nodes'])} node ids, RSS after open {rss_open:.0f} MiB")
            for scenario in args.scenarios.split(","):
                out = run_scenario(s, info, scenario, args.seconds, args.clients)
                rows, extra = report(label, scenario, out)
                table.extend(rows)
                notes.append(f"{label}, {scenario}: {extra}")
                print("\n".join(rows), flush=True)
        finally:
            s.close()
    load1 = os.getloadavg()
    print()
    print(f"{args.clients} clients, {args.seconds:g} s per scenario; trace {args.trace.name} "
          f"({args.trace.stat().st_size / 1e6:.0f} MB), model {args.model.name}; "
          f"load average before {load0[0]:.2f}, after {load1[0]:.2f}; {os.cpu_count()} CPUs")
    print("\n".join(table))
    print()
    for n in notes:
        print("- " + n)


if __name__ == "__main__":
    main()
