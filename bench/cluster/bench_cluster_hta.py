#!/usr/bin/python3
"""model-inspector's `cluster` and Holistic Trace Analysis (HTA) side by side
on the same folders of per-rank Kineto traces: per-rank
communication/computation overlap and idle time from both tools, next to
the same figures computed here from the JSON (cluster_reference.py), with
their differences; and both tools' wall time and peak memory, each run as
a fresh process measured the same way (measure.py: spawn to exit, summed
RSS of its processes).

    bench/cluster/bench_cluster_hta.sh [build-dir]      (the wrapper finds HTA)
    /usr/bin/python3 bench_cluster_hta.py --binary BIN --hta HTA_DIR [--jobs 2] DIR...

Ours: `model-inspector cluster DIR --format json --jobs N`: overlap[]
(overlap_share, communication_ns, overlapped_ns) and steps[].ranks[].idle_ns
summed per rank. HTA: hta_cluster_side.py (TraceAnalysis over DIR,
get_comm_comp_overlap, get_temporal_breakdown, get_idle_time_breakdown).

Agreement checked (and printed) per rank:
  ours  overlap share = the exact reference within 1e-6; idle = the
        reference's step idle (the ProfilerStep windows minus the union of
        the rank's device work in them) within 1 us per step.
  HTA   overlap % = the reference over HTA-rounded times, to HTA's 2
        decimals; temporal idle = the reference's HTA idle over rounded
        times within 1 us.
The two tools differ by definition (docs/design/clusters-hta.md): HTA rounds every device task to whole microseconds
(start up, end down) before measuring, and its idle runs from the rank's
first device task to its last, ours over the profiler steps.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cluster_reference  # noqa: E402
from measure import mb, run_measured  # noqa: E402


def rank_files(d):
    out = []
    for name in sorted(os.listdir(d)):
        if name.endswith(".json") or name.endswith(".json.gz"):
            out.append(os.path.join(d, name))
    return out


def ours_figures(report):
    """Per rank: overlap share, communication, overlapped (us), idle (us)."""
    per = {}
    for o in report.get("overlap", []):
        per.setdefault(o["rank"], {}).update({
            "overlap_share": o["overlap_share"], "communication_us": o["communication_ns"] / 1e3,
            "overlapped_us": o["overlapped_ns"] / 1e3})
    for step in report.get("steps", []):
        for r in step.get("ranks", []):
            d = per.setdefault(r["rank"], {})
            d["idle_us"] = d.get("idle_us", 0.0) + r["idle_ns"] / 1e3
            d["steps"] = d.get("steps", 0) + 1
    return per


def fmt(x, spec="%.2f"):
    return "-" if x is None else spec % x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--hta", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    failures = 0
    for d in a.dirs:
        files = rank_files(d)
        size = sum(os.path.getsize(f) for f in files)
        print("\n## %s: %d rank files, %s on disk" % (d, len(files), mb(size)))
        ours = run_measured([a.binary, "cluster", d, "--format", "json", "--jobs", str(a.jobs)])
        hta = run_measured(["/usr/bin/python3", os.path.join(HERE, "hta_cluster_side.py"), a.hta, d])
        report, hta_res = None, None
        if ours["rc"] == 0:
            report = json.loads(ours["stdout"])
        else:
            print("ours failed (exit %d): %s" % (ours["rc"], ours["stderr"][-500:]))
            failures += 1
        for line in hta["stdout"].splitlines():
            if line.startswith("RESULT "):
                hta_res = json.loads(line[7:])
        if hta_res is None:
            print("HTA failed (exit %d): %s" % (hta["rc"], hta["stderr"][-500:]))
            failures += 1
        print("\n| tool | wall (s) | peak RSS (summed) | phases (s, in-process) |")
        print("|---|---:|---:|---|")
        print("| model-inspector cluster --jobs %d | %.2f | %s | - |" % (a.jobs, ours["wall_s"], mb(ours["peak_rss_bytes"])))
        phases = ", ".join("%s %.2f" % (p, hta_res[p + "_s"]) for p in ("import", "load", "overlap", "temporal", "idle")
                           if hta_res and p + "_s" in hta_res)
        print("| HTA | %.2f | %s | %s |" % (hta["wall_s"], mb(hta["peak_rss_bytes"]), phases))
        if hta_res:
            for k, v in hta_res.items():
                if k.endswith("_error"):
                    print("HTA %s: %s" % (k, v))
                    failures += 1
        refs = {}
        for f in files:
            r = cluster_reference.rank_figures(f)
            refs[r["rank"]] = r
        mine = ours_figures(report) if report else {}
        print("\nOverlap (communication time with compute beside it / merged communication time), %:")
        print("\n| rank | ours | reference | HTA | reference, HTA-rounded | ours - HTA |")
        print("|---:|---:|---:|---:|---:|---:|")
        for rank in sorted(refs):
            ref = refs[rank]
            o = mine.get(rank, {}).get("overlap_share")
            h = (hta_res or {}).get("overlap_pctg", {}).get(str(rank))
            ex, rd = 100 * ref["exact"]["overlap_share"], 100 * ref["rounded"]["overlap_share"]
            print("| %d | %s | %.4f | %s | %.4f | %s |" % (
                rank, fmt(None if o is None else 100 * o, "%.4f"), ex, fmt(h), rd,
                fmt(None if o is None or h is None else 100 * o - h)))
            if o is not None and abs(o - ref["exact"]["overlap_share"]) > 1e-6:
                print("  MISMATCH ours overlap rank %d: %.6f vs reference %.6f" % (rank, o, ref["exact"]["overlap_share"]))
                failures += 1
            if h is not None and abs(h - round(rd, 2)) > 0.011:
                print("  MISMATCH HTA overlap rank %d: %.2f vs reference %.4f" % (rank, h, rd))
                failures += 1
        print("\nIdle (us): ours over the profiler steps, HTA from the first device task to the last:")
        print("\n| rank | ours (steps) | reference, steps | HTA temporal | reference, HTA definition and rounding "
              "| reference, HTA definition exact | ours - HTA |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for rank in sorted(refs):
            ref = refs[rank]
            oi = mine.get(rank, {}).get("idle_us")
            ht = (hta_res or {}).get("temporal", {}).get(str(rank), {}).get("idle_us")
            print("| %d | %s | %.3f | %s | %.0f | %.3f | %s |" % (
                rank, fmt(oi, "%.3f"), ref["exact"]["step_idle_us"], fmt(ht, "%.0f"),
                ref["rounded"]["hta_idle_us"], ref["hta_exact"]["hta_idle_us"],
                fmt(None if oi is None or ht is None else oi - ht, "%.1f")))
            if oi is not None and abs(oi - ref["exact"]["step_idle_us"]) > max(1, ref["exact"]["steps"]):
                print("  MISMATCH ours idle rank %d: %.3f vs reference %.3f" % (rank, oi, ref["exact"]["step_idle_us"]))
                failures += 1
            if ht is not None and abs(ht - ref["rounded"]["hta_idle_us"]) > 1:
                print("  MISMATCH HTA idle rank %d: %.0f vs reference %.0f" % (rank, ht, ref["rounded"]["hta_idle_us"]))
                failures += 1
    print("\n%s" % ("all figures agree with the reference" if not failures else "%d mismatches" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
