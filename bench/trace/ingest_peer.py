#!/usr/bin/python3
"""One peer loading one trace, timed in this process the way
mi_bench_trace_ingest times ours: wall time from opening the file to the
loaded result (gzip inflated on the way, as ours does).

    /usr/bin/python3 ingest_peer.py json TRACE
    /usr/bin/python3 ingest_peer.py hta TRACE HTA_DIR

json: Python's json.load (the parse alone, no model of the trace).
hta:  Holistic Trace Analysis' TraceAnalysis(trace_dir=...,
      include_last_profiler_step=True): parse + one DataFrame of events with
      a symbol table (interned names), the form its analyses read.
Prints one JSON line: ms, events, and for json the distinct event names.
"""
import gzip
import json
import logging
import os
import shutil
import sys
import tempfile
import time


def main():
    tool, path = sys.argv[1], sys.argv[2]
    out = {"tool": tool}
    if tool == "json":
        t0 = time.perf_counter()
        with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as f:
            doc = json.load(f)
        out["ms"] = (time.perf_counter() - t0) * 1e3
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        out["events"] = len(events)
        out["distinct_names"] = len({e.get("name") for e in events if isinstance(e, dict)})
    elif tool == "hta":
        sys.path.insert(0, sys.argv[3])
        logging.disable(logging.WARNING)
        from hta.trace_analysis import TraceAnalysis  # noqa: E402  (peer import)
        tmp = tempfile.mkdtemp(prefix="mi_hta_")
        try:
            os.symlink(os.path.abspath(path), os.path.join(tmp, os.path.basename(path)))
            t0 = time.perf_counter()
            try:
                analysis = TraceAnalysis(trace_dir=tmp, include_last_profiler_step=True)
            except Exception as e:  # HTA's own failure, reported as such
                out["error"] = f"{type(e).__name__}: {e}"[:300]
            else:
                out["ms"] = (time.perf_counter() - t0) * 1e3
                out["events"] = int(len(analysis.t.get_trace(0)))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"unknown tool {tool}", file=sys.stderr)
        return 2
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
