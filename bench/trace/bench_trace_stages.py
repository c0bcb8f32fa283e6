#!/usr/bin/python3
"""Big traces, side by side in one run: simdjson alone (parse only), our
importer stage by stage, `model-inspector summary` (import, link and every
analysis), Python's json.load and Holistic Trace Analysis (load + kernel
breakdown), on the same files.

    bench/trace/bench_trace_stages.sh [build-dir] TRACE...   (the wrapper)
    /usr/bin/python3 bench_trace_stages.py --build DIR --hta HTA_DIR TRACE...

Each measurement is a fresh process, after the page cache was warmed with
the file; wall time, and the process's peak resident memory from wait4()
(the kernel's own figure, the same for every tool). Peers run under an
address-space limit (--peer-memory-gb, default 20 on this 24 GiB machine):
a peer that needs more fails with MemoryError, reported as such, instead
of pushing the machine into swap.

Stages (mi_bench_trace_stages, decompressed file in memory, best of
--repeat, default 2): read (+ inflate), simdjson DOM parse, simdjson On-Demand walk of
every field of every event, our tokenizer, tokenizer + parser, the importer
(+ builder); then Session::Open and each analysis alone.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def run_captured(cmd, timeout):
    """Runs cmd; returns (stdout, stderr, returncode); -9 on timeout."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return out, f"timeout > {timeout} s", -9
    return out, err, proc.returncode


def measured(cmd, timeout, memory_limit=None):
    """Runs cmd under /usr/bin/time-like accounting: a small Python wrapper
    forks and execs it (under the address-space limit, if any) and reports
    wall seconds and that one child's ru_maxrss from wait4() (getrusage's
    RUSAGE_CHILDREN would be a maximum over every child so far)."""
    wrapper = [sys.executable, "-c", (
        "import os,sys,time,json,resource\n"
        "lim=int(sys.argv[1])\n"
        "t0=time.perf_counter()\n"
        "pid=os.fork()\n"
        "if pid==0:\n"
        "    lim and resource.setrlimit(resource.RLIMIT_AS,(lim,lim))\n"
        "    os.execvp(sys.argv[2],sys.argv[2:])\n"
        "_,status,ru=os.wait4(pid,0)\n"
        "sys.stderr.write('MEASURED '+json.dumps({'s':time.perf_counter()-t0,"
        "'rss_mb':ru.ru_maxrss/1024,'rc':os.waitstatus_to_exitcode(status)})+'\\n')\n"
    ), str(memory_limit or 0)] + cmd
    out, err, rc = run_captured(wrapper, timeout)
    m = None
    rest = []
    for line in err.splitlines():
        if line.startswith("MEASURED "):
            m = json.loads(line[9:])
        else:
            rest.append(line)
    if m is None:
        return {"error": (rest[-1] if rest else f"exit {rc}")[:300]}
    r = {"s": m["s"], "rss_mb": m["rss_mb"], "rc": m["rc"], "stdout": out,
         "stderr": "\n".join(rest)}
    if m["rc"] != 0:
        tail = [l for l in rest if l.strip()]
        r["error"] = (tail[-1] if tail else f"exit {m['rc']}")[:300]
    return r


def last_json(text, prefix=""):
    for line in reversed(text.splitlines()):
        line = line[len(prefix):] if prefix and line.startswith(prefix) else line
        if line.startswith("{"):
            return json.loads(line)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--hta", required=True)
    # Best of 2 by default: simdjson's first parse of a file allocates and
    # first touches its parser's buffers (several times the file for the
    # DOM), which on this VM costs more than the parse; the second reuses
    # them, as a long-lived parser would. Every stage gets the same.
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=3600)
    ap.add_argument("--peer-memory-gb", type=float, default=20)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()
    stages_bin = os.path.join(a.build, "src/session/mi_bench_trace_stages")
    cli = os.path.join(a.build, "src/cli/model-inspector")
    limit = int(a.peer_memory_gb * (1 << 30))
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
          f"{time.strftime('%Y-%m-%d', time.gmtime())}")
    results = []
    for path in a.traces:
        with open(path, "rb") as f:  # warm the page cache for every tool alike
            while f.read(1 << 24):
                pass
        row = {"trace": path}
        st = measured([stages_bin, path, "--repeat", str(a.repeat)], a.timeout)
        row["stages"] = last_json(st.get("stdout", "")) if "error" not in st else st
        mb = row["stages"].get("megabytes") if isinstance(row["stages"], dict) else None
        events = row["stages"].get("events") if isinstance(row["stages"], dict) else None
        imp = measured([os.path.join(a.build, "src/importers/chrome_trace/mi_bench_trace_ingest"),
                        path], a.timeout)
        row["import_process"] = {k: imp.get(k) for k in ("s", "rss_mb", "error")}
        summ = measured([cli, "summary", path, "--format", "json"], a.timeout)
        row["summary"] = {k: summ.get(k) for k in ("s", "rss_mb", "error")}
        if not a.no_peers:
            js = measured([sys.executable, os.path.join(HERE, "ingest_peer.py"), "json", path],
                          a.timeout, limit)
            row["json_load"] = {k: js.get(k) for k in ("s", "rss_mb", "error")}
            hta = measured([sys.executable, os.path.join(REPO, "bench/analysis/hta_side.py"),
                            a.hta, path, "--repeat", "1", "--no-critical-path"], a.timeout, limit)
            h = last_json(hta.get("stdout", ""), "RESULT ") or {}
            row["hta"] = {"s": hta.get("s"), "rss_mb": hta.get("rss_mb"),
                          "load_ms": h.get("load_ms"), "breakdown_ms": h.get("breakdown_ms"),
                          "error": hta.get("error") or h.get("load_error")
                          or h.get("breakdown_error")}
        results.append(row)

        print(f"\n== {os.path.basename(path)}: {mb:.1f} MB, {events} events")
        if isinstance(row["stages"], dict) and "stages" in row["stages"]:
            s = row["stages"]["stages"]
            lim = s.get("simdjson_ondemand", {}).get("seconds")
            for name, v in s.items():
                frac = f"{lim / v['seconds']:.2f} of simdjson" if lim and v["seconds"] > 0 else ""
                print(f"   {name:18s} {v['seconds']:9.3f} s {v['mb_per_s']:8.1f} MB/s  {frac}")
            if "simdjson_unavailable" in row["stages"]:
                print(f"   simdjson: cannot: {row['stages']['simdjson_unavailable']}")

        def line(name, r):
            if r.get("error") or r.get("s") is None:
                return f"   {name:18s} failed: {r.get('error')}"
            per_event = r["rss_mb"] * 1e6 / events if events else 0
            return (f"   {name:18s} {r['s']:9.2f} s {mb / r['s']:8.1f} MB/s  peak {r['rss_mb']:8.0f} MB"
                    f" ({per_event:.0f} B/event)")
        print(line("importer (process)", row["import_process"]))
        print(line("summary (CLI)", row["summary"]))
        if not a.no_peers:
            print(line("json.load", row["json_load"]))
            print(line("HTA load+breakdown", row["hta"]))
            if row["summary"].get("s") and row["json_load"].get("s") and not row["json_load"].get("error"):
                print(f"   summary vs json.load: {row['json_load']['s'] / row['summary']['s']:.1f}x")
            if row["summary"].get("s") and row["hta"].get("s") and not row["hta"].get("error"):
                print(f"   summary vs HTA: {row['hta']['s'] / row['summary']['s']:.1f}x wall, "
                      f"{row['hta']['rss_mb'] / row['summary']['rss_mb']:.1f}x memory")
        sys.stdout.flush()
    print("\nRESULTS " + json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
