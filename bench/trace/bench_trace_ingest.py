#!/usr/bin/python3
"""Trace ingest: model-inspector's importer vs Python json.load, Node
JSON.parse and Holistic Trace Analysis' trace load, on the same files.

Every tool runs in a fresh process per measurement and times itself the
same way: wall clock from opening the file to the loaded result, gzip
inflated on the way (ours: mi_bench_trace_ingest, the streaming importer
building the trace's task columns; json.load / JSON.parse: the parse
alone; HTA: parse + its DataFrame, ingest_peer.py). Each tool runs REPEAT
times per file (once for files over 100 MB); the best time counts. The
page cache is warmed first.

    bench/trace/bench_trace_ingest.sh [build-dir]    (the wrapper picks the inputs)
    /usr/bin/python3 bench_trace_ingest.py --driver BIN --hta HTA_DIR [--repeat R] TRACE...
"""
import argparse
import gzip
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_line(cmd, timeout):
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout > {timeout} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    err = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    return {"error": err[:200]}


def ours(driver, path, timeout):
    try:
        proc = subprocess.run([driver, path], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout > {timeout} s"}
    if proc.returncode != 0:
        return {"error": proc.stderr.strip()[:200]}
    fields = dict(line.split(": ", 1) for line in proc.stdout.splitlines() if ": " in line)
    return {"ms": float(fields["seconds"]) * 1e3, "events": int(fields["events"]),
            "mb": float(fields["bytes"].split()[0]), "peak_rss_mb": float(fields["peak_rss_MB"]),
            "tasks": int(fields["tasks"])}


def best(repeat, run):
    results = [run() for _ in range(repeat)]
    ok = [r for r in results if "ms" in r]
    if not ok:
        return results[0]
    first = dict(ok[0])
    first["ms"] = min(r["ms"] for r in ok)
    return first


def is_kineto(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        head = f.read(4096)
    return head.lstrip().startswith("{")  # ORT profiles are bare arrays


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", required=True)
    ap.add_argument("--hta", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()
    rows = []
    for path in a.traces:
        with open(path, "rb") as f:  # warm the page cache for every tool alike
            while f.read(1 << 24):
                pass
        big = os.path.getsize(path) > 100e6
        r = 1 if big else a.repeat
        o = best(r, lambda: ours(a.driver, path, a.timeout))
        py = best(r, lambda: run_line([sys.executable, os.path.join(HERE, "ingest_peer.py"),
                                       "json", path], a.timeout))
        nd = best(r, lambda: run_line(["node", "--max-old-space-size=16000",
                                       os.path.join(HERE, "ingest_node.mjs"), path], a.timeout))
        if is_kineto(path):
            hta = best(r, lambda: run_line([sys.executable, os.path.join(HERE, "ingest_peer.py"),
                                            "hta", path, a.hta], a.timeout))
        else:
            hta = {"error": "not a PyTorch (Kineto) trace: HTA does not read it"}
        rows.append({"trace": os.path.basename(path), "ours": o, "json": py, "node": nd, "hta": hta})
        mb = o.get("mb")
        print(f"== {os.path.basename(path)}: {mb} MB decompressed, {o.get('events')} events, "
              f"{py.get('distinct_names', '-')} distinct names, runs {r}")

        def cell(name, res):
            if "ms" not in res:
                return f"   {name:12s} failed: {res.get('error')}"
            line = f"   {name:12s} {res['ms']:10.1f} ms  {mb / (res['ms'] / 1e3):7.1f} MB/s"
            if name != "ours" and "ms" in o:
                line += f"   {res['ms'] / o['ms']:.1f}x ours' time"
            return line

        print(cell("ours", o) + (f"   peak RSS {o['peak_rss_mb']:.0f} MB" if "ms" in o else ""))
        print(cell("json.load", py))
        print(cell("JSON.parse", nd))
        print(cell("HTA load", hta))
        sys.stdout.flush()
    print("\nRESULTS " + json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
