#!/usr/bin/python3
"""Holistic Trace Analysis (HTA) on one trace, each phase timed on its own,
the same way bench/analysis/analyses_main.cc times ours (best of REPEAT,
in one process, wall clock around the call):
  load           TraceAnalysis(trace_dir=DIR, include_last_profiler_step=True)
                 (DIR holds the trace alone; by default HTA drops the device
                 work of the last profiler step, we keep the whole trace)
  breakdown      get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
  idle           get_idle_time_breakdown(visualize=False)
  critical_path  critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=0)

    /usr/bin/python3 hta_side.py HTA_DIR TRACE [--repeat R] [--no-critical-path]

HTA_DIR is the folder holding HTA's `hta` package (the peer copy). Prints
one line `RESULT {json}`: times in ms, and HTA's answers (kernel time per
kernel type, idle time per stream, critical path length), or the error HTA
raised for a phase.
"""
import argparse
import json
import logging
import os
import shutil
import sys
import tempfile
import time
import traceback


def best_ms(repeat, fn):
    best, value = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, (time.perf_counter() - t0) * 1e3)
    return best, value


def error_text(e):
    line = traceback.format_exception_only(type(e), e)[-1].strip()
    return line[:300]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hta_dir")
    ap.add_argument("trace")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-critical-path", action="store_true")
    a = ap.parse_args()
    sys.path.insert(0, a.hta_dir)
    logging.disable(logging.WARNING)  # HTA logs every parse at INFO/WARNING
    from hta.trace_analysis import TraceAnalysis  # noqa: E402  (peer import)

    out = {"trace": a.trace, "repeat": a.repeat}
    tmp = tempfile.mkdtemp(prefix="mi_hta_")
    try:
        # HTA reads a folder of per-rank trace files; give it this one only.
        os.symlink(os.path.abspath(a.trace), os.path.join(tmp, os.path.basename(a.trace)))
        try:
            out["load_ms"], analysis = best_ms(a.repeat, lambda: TraceAnalysis(trace_dir=tmp, include_last_profiler_step=True))
        except Exception as e:  # HTA's own failure, reported as such
            out["load_error"] = error_text(e)
            print("RESULT " + json.dumps(out))
            return 0
        df = analysis.t.get_trace(0)
        out["events"] = int(len(df))
        # The device tasks HTA kept (it drops kernels it cannot tie to a
        # host launch inside its profiler steps).
        sym = analysis.t.symbol_table.get_sym_id_map()
        cats = [sym.get(c, -1000) for c in ("kernel", "Kernel", "gpu_memset", "Memset",
                                             "gpu_memcpy", "Memcpy")]
        out["device_tasks"] = int((df["stream"].ne(-1) & df["cat"].isin(cats)).sum())
        try:
            out["breakdown_ms"], (types, kernels) = best_ms(
                a.repeat, lambda: analysis.get_gpu_kernel_breakdown(
                    visualize=False, include_memory_kernels=True, num_kernels=10))
            out["kernel_sum_us_by_type"] = {
                k: float(v) for k, v in kernels.groupby("kernel_type")["sum (us)"].sum().items()}
            out["kernel_union_us_by_type"] = {
                r["kernel_type"]: float(r["sum"]) for _, r in types.iterrows()}
        except Exception as e:
            out["breakdown_error"] = error_text(e)
        try:
            out["idle_ms"], (idle, _) = best_ms(
                a.repeat, lambda: analysis.get_idle_time_breakdown(visualize=False))
            out["idle_us_by_stream"] = {
                str(int(s)): float(v) for s, v in idle.groupby("stream")["idle_time"].sum().items()}
        except Exception as e:
            out["idle_error"] = error_text(e)
        if not a.no_critical_path:
            try:
                ms, result = best_ms(a.repeat, lambda: analysis.critical_path_analysis(
                    rank=0, annotation="ProfilerStep", instance_id=0))
                if result is None:
                    raise RuntimeError("critical_path_analysis returned None")
                cp, ok = result
                if not ok:
                    out["critical_path_error"] = "critical_path_analysis returned success=False"
                else:
                    edf = cp.get_critical_path_breakdown()
                    ts = [cp.node_list[n].ts for n in cp.critical_path_nodes]
                    # length: the sum of the path's edge weights (HTA's
                    # figure); span: its first node to its last.
                    out["critical_path_ms"] = ms
                    out["critical_path"] = {"length_us": float(edf.duration.sum()),
                                            "span_us": float(max(ts) - min(ts)),
                                            "edges": int(len(edf))}
            except Exception as e:
                out["critical_path_error"] = error_text(e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("RESULT " + json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
