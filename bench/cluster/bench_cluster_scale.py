#!/usr/bin/python3
"""A large cluster (make_big_cluster.sh: 64 ranks x ~47 MB of Kineto JSON)
read by model-inspector's `cluster` and by Holistic Trace Analysis (HTA):
each tool as a fresh process measured the same way (measure.py: wall time
from spawn to exit, CPU time, peak of the summed RSS of its processes),
against the input's size.

    bench/cluster/bench_cluster_scale.sh [build-dir] [DIR]
    /usr/bin/python3 bench_cluster_scale.py --binary BIN --hta HTA_DIR DIR
        [--jobs 2] [--hta-timeout 1800] [--hta-rss-limit-gb 12]

Ours: `model-inspector cluster DIR --format json --jobs N` (every rank read,
reduced to its summary, merged, analysed). HTA: hta_cluster_side.py with
the phases load (TraceAnalysis over DIR), overlap and temporal breakdown.
HTA is stopped at --hta-timeout seconds or when its processes hold more
than --hta-rss-limit-gb together (the machine's memory is shared); then
the phase it had reached, its time and its peak are printed.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from measure import run_measured  # noqa: E402


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def gb(n):
    return "%.2f GB" % (n / 1e9)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--hta", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--hta-timeout", type=float, default=1800)
    ap.add_argument("--hta-rss-limit-gb", type=float, default=12)
    ap.add_argument("--skip-hta", action="store_true")
    ap.add_argument("dir")
    a = ap.parse_args()
    files = [os.path.join(a.dir, f) for f in sorted(os.listdir(a.dir))
             if f.endswith(".json") or f.endswith(".json.gz")]
    size = sum(os.path.getsize(f) for f in files)
    print("input: %s, %d rank files, %s (%.1f MB per rank on average)" % (
        a.dir, len(files), gb(size), size / len(files) / 1e6))
    print("machine: %d cores, load %s at the start" % (os.cpu_count(), load()))

    ours = run_measured([a.binary, "cluster", a.dir, "--format", "json", "--jobs", str(a.jobs)])
    print("\nmodel-inspector cluster --jobs %d: exit %d, wall %.1f s, CPU %.1f s, peak RSS %s "
          "(%.1f%% of the input); load %s after" % (
              a.jobs, ours["rc"], ours["wall_s"], ours["cpu_s"], gb(ours["peak_rss_bytes"]),
              100.0 * ours["peak_rss_bytes"] / size, load()))
    if ours["rc"] == 0:
        rep = json.loads(ours["stdout"])
        slow = rep.get("slow_ranks") or []
        print("  ranks %d, world size %s, collective instances %s, steps %d; slow ranks: %s" % (
            len(rep.get("ranks", [])), rep.get("world_size"), rep.get("collective_instances"),
            len(rep.get("steps", [])),
            ", ".join(str(s.get("rank")) for s in slow[:5]) or "none"))
    else:
        print("  stderr: " + ours["stderr"][-800:])

    if a.skip_hta:
        return 0 if ours["rc"] == 0 else 1
    side = os.path.join(HERE, "hta_cluster_side.py")
    hta = run_measured(["/usr/bin/python3", side, a.hta, a.dir, "--phases", "load,overlap,temporal"],
                       timeout_s=a.hta_timeout, rss_limit_bytes=a.hta_rss_limit_gb * 1e9)
    phases = [line for _, line in hta["stderr_lines"] if line.startswith("PHASE ")]
    reached = phases[-1] if phases else "(no phase started)"
    # A killed pool's workers are never waited for: no CPU time for them.
    cpu = "n/a (stopped)" if hta["killed"] else "%.1f s" % hta["cpu_s"]
    print("\nHTA (load, overlap, temporal breakdown): exit %d, wall %.1f s, CPU %s, peak RSS %s "
          "(%.1f%% of the input); load %s after" % (
              hta["rc"], hta["wall_s"], cpu, gb(hta["peak_rss_bytes"]),
              100.0 * hta["peak_rss_bytes"] / size, load()))
    if hta["killed"]:
        print("  stopped by this script: %s; HTA had reached: %s (at %.0f s)" % (
            hta["killed"], reached, hta["wall_s"]))
    for line in phases:
        print("  " + line)
    if hta["rc"] != 0 and not hta["killed"]:
        print("  stderr: " + hta["stderr"][-800:])
    return 0 if ours["rc"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
