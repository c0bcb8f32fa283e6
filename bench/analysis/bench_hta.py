#!/usr/bin/python3
"""model-inspector and Holistic Trace Analysis (HTA) side by side on the
same real PyTorch (Kineto) traces: trace load, kernel breakdown, idle time
and critical path, each phase timed the same way on both sides: the wall
time around the call, the first call after loading, in a fresh process
(bench/analysis/analyses_main.cc for ours, hta_side.py for HTA); each tool
runs REPEAT times per trace and the best time of each phase counts. Their
answers checked against each other and against figures computed here from
the trace JSON itself.

    bench/analysis/bench_hta.sh [build-dir]     (the wrapper finds HTA and the traces)
    /usr/bin/python3 bench_hta.py --driver BIN --hta HTA_DIR [--repeat R] TRACE...

What each phase does:
  load           ours: import + link (Session::Open); HTA: TraceAnalysis(),
                 parse + DataFrame per rank.
  breakdown      ours: device time per op type / kind and per stream; HTA:
                 get_gpu_kernel_breakdown (per kernel name and kernel type).
  idle           ours: per-stream idle by reason; HTA: get_idle_time_breakdown.
  critical path  ours: the first ProfilerStep run's critical path; HTA:
                 critical_path_analysis(annotation="ProfilerStep", instance_id=0).

HTA runs with include_last_profiler_step=True (whole trace, as ours).

Agreement (independent reference: this script's sums over the trace JSON):
  device time    sum of kernel, memcpy and memset durations; ours must
                 equal it. HTA rounds sub-microsecond times (start up, end
                 down: trace_parser.round_down_time_stamps), so it is
                 compared with the same sum over rounded times, and only
                 when it kept every device task (it drops kernels it cannot
                 tie to a host launch in its profiler steps). HTA's kernel
                 breakdown also counts host events that carry a "stream"
                 argument (torch.compile's Triton launches do); those are
                 added to its expected figure and named.
  idle           per stream: first start to last end minus the union of
                 the kernel / memcpy / memset intervals; ours must equal
                 it. HTA sums each task's gap to the previous task's end
                 (in start order), which differs where tasks on a stream
                 overlap: it is compared with those gaps over rounded
                 times.
  critical path  not the same definition (HTA: the longest path by edge
                 weight over its start/end-node graph; ours: the longest
                 dependency chain); both spans are printed, not compared.
"""
import argparse
import gzip
import json
import math
import os
import subprocess
import sys
from decimal import Decimal

DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}


def load_json(path):
    # Exact decimals: Kineto timestamps are ~1e15 us with ns digits, beyond
    # a double's precision.
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=Decimal)


def reference(path):
    """Device time and per-stream idle straight from the trace JSON."""
    doc = load_json(path)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    streams = {}
    host_with_stream, host_with_stream_us = 0, 0
    for e in events:
        if e.get("ph") == "X" and e.get("cat") not in DEVICE_CATS and \
                "stream" in (e.get("args") or {}):
            host_with_stream += 1
            host_with_stream_us += math.floor(Decimal(e["ts"]) + Decimal(e.get("dur", 0))) - \
                math.ceil(Decimal(e["ts"]))
        if e.get("ph") != "X" or e.get("cat") not in DEVICE_CATS:
            continue
        ts, dur = Decimal(e["ts"]), Decimal(e.get("dur", 0))
        stream = (e.get("args") or {}).get("stream", e.get("tid"))
        streams.setdefault((e.get("pid"), stream), []).append((ts, ts + dur))

    def figures(rounded):
        total, idle, gaps = Decimal(0), Decimal(0), Decimal(0)
        for spans in streams.values():
            if rounded:  # as HTA: start rounded up, end down
                spans = [(math.ceil(s), math.floor(e)) for s, e in spans]
            spans = sorted(spans)
            total += sum(e - s for s, e in spans)
            gaps += sum(spans[i][0] - spans[i - 1][1] for i in range(1, len(spans)))
            busy, cur_s, cur_e = Decimal(0), spans[0][0], spans[0][1]
            for s, e in spans[1:]:
                if s > cur_e:
                    busy += cur_e - cur_s
                    cur_s, cur_e = s, e
                else:
                    cur_e = max(cur_e, e)
            busy += cur_e - cur_s
            idle += max(e for _, e in spans) - spans[0][0] - busy
        return float(total), float(idle), float(gaps)

    device_us, idle_us, _ = figures(False)
    device_rounded_us, _, gaps_rounded_us = figures(True)
    return {"events": len(events), "kernels": sum(len(v) for v in streams.values()),
            "device_us": device_us, "idle_us": idle_us,
            "device_rounded_us": device_rounded_us, "gaps_rounded_us": gaps_rounded_us,
            "host_with_stream": host_with_stream, "host_with_stream_us": host_with_stream_us}


def run_json(cmd, prefix=""):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(prefix) and line[len(prefix):].lstrip().startswith("{"):
            return json.loads(line[len(prefix):])
    return {"error": (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1][:300]}


def best_of(repeat, run):
    """Runs `run` repeat times: the first run's answers, each *_ms the best."""
    first = run()
    for _ in range(repeat - 1):
        again = run()
        for k, v in again.items():
            if k.endswith("_ms") and k in first:
                first[k] = min(first[k], v)
    return first


def ratio(peer, ours):
    if peer is None or ours is None or ours <= 0:
        return "-"
    return "%.1fx" % (peer / ours)


def fmt_ms(v):
    return "-" if v is None else ("%.1f" % v if v >= 1 else "%.3f" % v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", required=True, help="build/src/session/mi_bench_analyses")
    ap.add_argument("--hta", required=True, help="folder holding HTA's hta package")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    rows = []
    for path in a.traces:
        name = os.path.basename(path)
        ref = reference(path)
        ours = best_of(a.repeat, lambda: run_json([a.driver, path, "--repeat", "1"]))
        hta = best_of(a.repeat, lambda: run_json(
            [sys.executable, os.path.join(here, "hta_side.py"), a.hta, path, "--repeat", "1"],
            prefix="RESULT "))
        rows.append((name, ref, ours, hta))
        print(f"== {name}: {ref['events']} events, {ref['kernels']} device tasks")
        if "error" in ours:
            print(f"   ours failed: {ours['error']}")
        for phase, ours_key, hta_key in (("load", "open_ms", "load_ms"),
                                          ("kernel breakdown", "breakdown_ms", "breakdown_ms"),
                                          ("idle time", "idle_ms", "idle_ms"),
                                          ("critical path", "critical_path_ms", "critical_path_ms")):
            o, h = ours.get(ours_key), hta.get(hta_key)
            err = hta.get(hta_key.replace("_ms", "_error")) or hta.get("load_error")
            note = ""
            if phase == "critical path":
                err = err or hta.get("critical_path_error")
                if "error" in ours.get("critical_path", {}):
                    o = None
                    note = "   (ours: " + ours["critical_path"]["error"] + ")"
            if h is None and err:
                note = f"   (HTA: {err})" + note
            print(f"   {phase:17s} ours {fmt_ms(o) if o is not None else 'failed':>9s} ms   "
                  f"HTA {fmt_ms(h) if h is not None else 'failed':>9s} ms   HTA/ours {ratio(h, o)}{note}")
        # Answers.
        def same(x, y):
            return "equal" if abs(x - y) < 0.01 else "DIFFERS"

        kept = hta.get("device_tasks")
        whole = kept == ref["kernels"]
        print(f"   device tasks      JSON {ref['kernels']}   ours {ours.get('tasks', '-')}   "
              f"HTA kept {kept if kept is not None else '-'}")
        ours_dev = sum((ours.get("device_us_by_kind") or {}).get(k, 0.0)
                       for k in ("compute", "data_movement", "communication"))
        hta_dev = sum((hta.get("kernel_sum_us_by_type") or {}).values()) \
            if "kernel_sum_us_by_type" in hta else None
        line = (f"   device time (us)  JSON {ref['device_us']:.3f}   ours {ours_dev:.3f} "
                f"({same(ours_dev, ref['device_us'])})")
        if hta_dev is not None:
            expect = ref["device_rounded_us"] + ref["host_with_stream_us"]
            line += (f"   HTA {hta_dev:.0f}; JSON rounded as HTA rounds {expect:.0f} "
                     f"({same(hta_dev, expect) if whole else 'HTA dropped tasks'}"
                     + (f"; includes {ref['host_with_stream']} host op(s) with a stream argument, "
                        f"{ref['host_with_stream_us']} us" if ref["host_with_stream"] else "") + ")")
        print(line)
        ours_idle = sum(s["idle_us"] for s in ours.get("streams", []))
        hta_idle = sum(hta["idle_us_by_stream"].values()) if "idle_us_by_stream" in hta else None
        line = (f"   idle (us)         JSON {ref['idle_us']:.3f}   ours {ours_idle:.3f} "
                f"({same(ours_idle, ref['idle_us'])})")
        if hta_idle is not None:
            line += (f"   HTA {hta_idle:.0f}; JSON gaps to the previous end, rounded "
                     f"{ref['gaps_rounded_us']:.0f} "
                     f"({same(hta_idle, ref['gaps_rounded_us']) if whole else 'HTA dropped tasks'})")
        print(line)
        ocp = ours.get("critical_path", {})
        hcp = hta.get("critical_path")
        print(f"   critical path     ours span {ocp.get('length_us', float('nan')):.1f} us, "
              f"{ocp.get('tasks', '-')} tasks" +
              (f"   HTA span {hcp['span_us']:.0f} us, weight {hcp['length_us']:.0f} us, {hcp['edges']} edges"
               if hcp else f"   HTA failed: {hta.get('critical_path_error', hta.get('load_error', '-'))}"))
        sys.stdout.flush()
    print("\nRESULTS " + json.dumps([{"trace": n, "reference": r, "ours": o, "hta": h}
                                    for n, r, o, h in rows]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
