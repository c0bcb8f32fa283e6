#!/usr/bin/python3
"""Holistic Trace Analysis (HTA) over a folder of per-rank Kineto traces,
each phase timed in-process (wall clock around the call):

  load      TraceAnalysis(trace_dir=DIR, include_last_profiler_step=True)
            (HTA drops the last profiler step by default; we keep it)
  overlap   get_comm_comp_overlap(visualize=False): per rank, time comm and
            compute kernels both run / merged comm time, as a percentage
            rounded to 2 decimals
  temporal  get_temporal_breakdown(visualize=False): per rank idle, compute,
            non-compute and kernel time (us) over the rank's device span
  idle      get_idle_time_breakdown(ranks=all, visualize=False): per rank and
            stream, idle time by category (host_wait, kernel_wait, other)

    /usr/bin/python3 hta_cluster_side.py HTA_DIR TRACE_DIR [--phases load,overlap,temporal,idle]

HTA_DIR is the folder holding HTA's `hta` package (the peer copy). Prints
`PHASE <name> start|done <seconds>` lines on stderr as it goes (so a run
stopped from outside says where it was) and one line `RESULT {json}` on
stdout, with the error HTA raised for a phase where it failed.
"""
import argparse
import json
import logging
import sys
import time
import traceback


def error_text(e):
    return traceback.format_exception_only(type(e), e)[-1].strip()[:300]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hta_dir")
    ap.add_argument("trace_dir")
    ap.add_argument("--phases", default="load,overlap,temporal,idle")
    a = ap.parse_args()
    phases = a.phases.split(",")
    sys.path.insert(0, a.hta_dir)
    logging.disable(logging.WARNING)  # HTA logs every parse at INFO/WARNING
    t_import = time.perf_counter()
    from hta.trace_analysis import TraceAnalysis  # noqa: E402  (peer import)
    out = {"trace_dir": a.trace_dir, "import_s": time.perf_counter() - t_import}

    def phase(name, fn):
        print("PHASE %s start" % name, file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:
            value = fn()
        except Exception as e:  # HTA's own failure, reported as such
            out[name + "_error"] = error_text(e)
            print("PHASE %s failed %.3f" % (name, time.perf_counter() - t0), file=sys.stderr, flush=True)
            return None
        out[name + "_s"] = time.perf_counter() - t0
        print("PHASE %s done %.3f" % (name, out[name + "_s"]), file=sys.stderr, flush=True)
        return value

    analysis = phase("load", lambda: TraceAnalysis(trace_dir=a.trace_dir,
                                                   include_last_profiler_step=True))
    if analysis is None:
        print("RESULT " + json.dumps(out))
        return 0
    ranks = sorted(analysis.t.traces.keys())
    out["ranks"] = [int(r) for r in ranks]
    if "overlap" in phases:
        df = phase("overlap", lambda: analysis.get_comm_comp_overlap(visualize=False))
        if df is not None:
            out["overlap_pctg"] = {str(int(r)): float(v) for r, v in
                                   zip(df["rank"], df["comp_comm_overlap_pctg"])}
    if "temporal" in phases:
        df = phase("temporal", lambda: analysis.get_temporal_breakdown(visualize=False))
        if df is not None:
            out["temporal"] = {str(int(row["rank"])): {
                "idle_us": float(row["idle_time(us)"]), "compute_us": float(row["compute_time(us)"]),
                "non_compute_us": float(row["non_compute_time(us)"]),
                "kernel_us": float(row["kernel_time(us)"])} for _, row in df.iterrows()}
    if "idle" in phases:
        res = phase("idle", lambda: analysis.get_idle_time_breakdown(ranks=ranks, visualize=False))
        if res is not None:
            idle = res[0]
            per = {}
            for _, row in idle.iterrows():
                d = per.setdefault(str(int(row["rank"])), {})
                d[row["idle_category"]] = d.get(row["idle_category"], 0.0) + float(row["idle_time"])
            out["idle_by_category_us"] = per
    print("RESULT " + json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
