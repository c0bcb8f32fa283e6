"""Per-rank communication/computation overlap and idle time computed here,
straight from each rank's Kineto JSON (exact decimals: timestamps are
~1e12 us with ns digits), as the two tools define them, so that both
tools' figures can be checked against something neither computed:

- Device work, model-inspector's: the kernel, gpu_memcpy and gpu_memset
  events ("exact"). HTA's: the X events carrying an args "stream" (what HTA
  keeps as GPU events: those, and also a host op that names a stream, as
  one op of the B200 trace does, 74 us per step) ("rounded", "hta_exact").
  Communication: names matching HTA's pattern
  `^nccl|^hip|^hccl|ncclKernel`; memory: `^(hip)?Memcpy|^(hip)?Memset|^dma`;
  computation: HTA's inverse pattern (neither of those, nor a name holding
  Sync, Memcpy, Memset, dma, `Stream Wait Event`, a launch call, ...).
- overlap share = |U(comm) n U(comp)| / |U(comm)|, U = union of intervals
  (HTA's comm-comp overlap; model-inspector's overlap_share).
- HTA idle (temporal breakdown) = last end - first start of all device
  work - |U(device work)|.
- step idle (model-inspector's per-step idle, summed over steps) = each
  step window's length - |U(device work) n window|; a step's window runs
  from its ProfilerStep#N start to the next step's start, the last one to
  the later of its end and its device work's end.
- "rounded": the same over times rounded as HTA rounds them (start up and
  end down to whole microseconds).
"""
import gzip
import json
import math
import re
from decimal import Decimal

COMM = re.compile(r"(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)")
MEMORY = re.compile(r"(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)")
NOT_COMPUTE = re.compile(
    r"(^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)|(cuda.*LaunchKernel)"
    r"|(^runFunction)|(^hip)|(^job_exe)|(^packet)|(^pe_exe)|(^cpum_exe_subgraph)|(^hccl)"
    r"|(^collective_subgraph_execution)")


def union(intervals):
    """Sorted, merged intervals."""
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def length(merged):
    return sum(e - s for s, e in merged)


def intersect(a, b):
    i = j = 0
    total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def kind(name):
    if COMM.match(name):
        return "comm"
    if MEMORY.match(name):
        return "memory"
    if not NOT_COMPUTE.match(name):
        return "comp"
    return "other"


def rank_figures(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    rank = (doc.get("distributedInfo") or {}).get("rank") if isinstance(doc, dict) else None
    exact = {"comm": [], "comp": [], "all": []}
    hta_exact = {"comm": [], "comp": [], "all": []}
    rounded = {"comm": [], "comp": [], "all": []}
    steps = []
    host_with_stream = 0
    for e in events:
        if e.get("ph") != "X":
            continue
        name = str(e.get("name", ""))
        ts, dur = Decimal(e["ts"]), Decimal(e.get("dur", 0))
        if name.startswith("ProfilerStep#") and e.get("cat") in ("user_annotation", "cpu_op"):
            steps.append((ts, ts + dur))
        if "stream" not in (e.get("args") or {}):
            continue
        k = kind(name)
        iv = (ts, ts + dur)
        ri = (Decimal(math.ceil(ts)), Decimal(math.floor(ts + dur)))
        on_device = e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
        host_with_stream += not on_device
        for sets, x, keep in ((exact, iv, on_device), (hta_exact, iv, True), (rounded, ri, True)):
            if not keep:
                continue
            sets["all"].append(x)
            if k in ("comm", "comp"):
                sets[k].append(x)
    out = {"rank": rank, "path": path, "host_ops_with_stream": host_with_stream}
    for label, sets in (("exact", exact), ("hta_exact", hta_exact), ("rounded", rounded)):
        comm, comp, dev = union(sets["comm"]), union(sets["comp"]), union(sets["all"])
        comm_us = length(comm)
        both = intersect(comm, comp)
        out[label] = {
            "communication_us": float(comm_us), "overlapped_us": float(both),
            "overlap_share": float(both / comm_us) if comm_us else 0.0,
            "hta_idle_us": float(dev[-1][1] - dev[0][0] - length(dev)) if dev else 0.0,
        }
        if label == "exact":
            idle = Decimal(0)
            steps.sort()
            for k, (s, e) in enumerate(steps):
                if k + 1 < len(steps):
                    e = steps[k + 1][0]
                elif dev:
                    e = max(e, dev[-1][1])
                idle += (e - s) - intersect([[s, e]], dev)
            out[label]["step_idle_us"] = float(idle)
            out[label]["steps"] = len(steps)
    return out
