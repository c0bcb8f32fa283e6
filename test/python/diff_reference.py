"""An independent reading of Kineto (PyTorch profiler) traces for the timing
diff's tests, with the standard library only: per step (ProfilerStep#N) the
wall time, per device stream the busy time, per op type the kernel time,
their medians over the steps, and the diff of two traces' medians.

Definitions (docs/design/diff.md "Timing"):
- steps: the host ProfilerStep#N events; a host event belongs to the step
  with the latest start at or before its own start, device work to the
  step of the runtime call that launched it (same correlation id), so the
  kernels a step launched stay with it; events before the first step
  (setup) belong to none. A trace without steps is one step.
- work: complete ('X') events that are host ops, runtime / driver calls,
  kernels, copies and memsets; not annotations (ProfilerStep, user
  ranges), Python frames, the 'Trace' span, instants, flows; on a device
  stream only kernels, copies and memsets.
- wall: a step's last work end minus its first work start.
- device work: kernels, copies, memsets, except CUDA sync records.
- stream busy: union of a stream's device work intervals in the step; key
  "device D · stream S" from the events' args.
- op type: the host op that launched the device work (the cpu_op with the
  kernel's External id); copies and memsets are "[data movement]".
- median and spread (p75 - p25): linearly interpolated quantiles over the
  steps, a key absent from a step counting 0 there; the verdict follows
  the noise rule of docs/design/diff.md.
Times: microsecond decimals to integer nanoseconds, rounding half up.
"""

import gzip
import json
from decimal import ROUND_HALF_UP, Decimal

DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
COPY_CATS = {"gpu_memcpy", "gpu_memset", "Memcpy", "Memset"}
HOST_WORK_CATS = {"cpu_op", "Operator", "cuda_runtime", "Runtime", "cuda_driver"}


def ns(value):
    return int((Decimal(value) * 1000).quantize(Decimal(1), ROUND_HALF_UP))


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def merged_length(intervals):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def quantile(values, q):
    v = sorted(values)
    if not v:
        return 0
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])


def median(values):
    # Interpolated, then to the nearest nanosecond, halves up.
    return int(Decimal(str(quantile(values, 0.5))).quantize(Decimal(1), ROUND_HALF_UP))


def steps_of(events):
    """Per step (in order): wall, stream busy, op type time."""
    marks = sorted(ns(e["ts"]) for e in events
                   if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")
                   and e.get("cat") in ("cpu_op", "Operator", "user_annotation"))
    external = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "Operator"):
            ext = (e.get("args") or {}).get("External id")
            if ext is not None:
                external.setdefault(ext, e["name"])

    launch_ts = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "Runtime"):
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None:
                launch_ts[corr] = ns(e["ts"])

    def step_of(start):
        if not marks:
            return 0
        k = -1
        for i, m in enumerate(marks):
            if m <= start:
                k = i
        return k

    n = max(len(marks), 1)
    first = [None] * n
    last = [None] * n
    busy = [dict() for _ in range(n)]
    ops = [dict() for _ in range(n)]
    for e in events:
        if e.get("ph") != "X" or "dur" not in e:
            continue
        cat = e.get("cat")
        name = str(e.get("name", ""))
        device = cat in DEVICE_CATS
        if not device and (cat not in HOST_WORK_CATS or name.startswith("ProfilerStep#")):
            continue
        start = ns(e["ts"])
        end = start + ns(e["dur"])
        corr = (e.get("args") or {}).get("correlation") if device else None
        k = step_of(launch_ts.get(corr, start))
        if k < 0:
            continue
        first[k] = start if first[k] is None else min(first[k], start)
        last[k] = end if last[k] is None else max(last[k], end)
        if not device:
            continue
        args = e.get("args") or {}
        key = f"device {args['device']} \u00b7 stream {args['stream']}"
        busy[k].setdefault(key, []).append((start, end))
        if cat in COPY_CATS:
            op = "[data movement]"
        else:
            ext = args.get("External id", args.get("external id"))
            op = external.get(ext, name)
        ops[k][op] = ops[k].get(op, 0) + (end - start)
    out = []
    for k in range(n):
        out.append({
            "wall": (last[k] - first[k]) if first[k] is not None else 0,
            "streams": {s: merged_length(v) for s, v in busy[k].items()},
            "ops": ops[k],
        })
    return out


def half_up(x):
    return int(Decimal(str(x)).quantize(Decimal(1), ROUND_HALF_UP))


def stat(values):
    """Median and spread (p75 - p25), to the nearest ns, halves up."""
    return {"median": half_up(quantile(values, 0.5)),
            "spread": half_up(quantile(values, 0.75) - quantile(values, 0.25))}


def medians(path):
    steps = steps_of(load(path))
    keys_s = sorted({s for st in steps for s in st["streams"]})
    keys_o = sorted({o for st in steps for o in st["ops"]})
    totals = [st["wall"] for st in steps]
    return {
        "steps": len(steps),
        "total": median(totals),
        "total_stat": stat(totals),
        "streams": {s: median([st["streams"].get(s, 0) for st in steps]) for s in keys_s},
        "stream_stats": {s: stat([st["streams"].get(s, 0) for st in steps]) for s in keys_s},
        "ops": {o: median([st["ops"].get(o, 0) for st in steps]) for o in keys_o},
        "op_stats": {o: stat([st["ops"].get(o, 0) for st in steps]) for o in keys_o},
    }


def verdict(base, new, floor_ns=1000, floor_fraction=0.01, k=2.0):
    """The documented noise rule (docs/design/diff.md "Timing") on two stats
    (None: the key is absent from that run)."""
    if base is None:
        return "added"
    if new is None:
        return "removed"
    delta = new["median"] - base["median"]
    noise = max(floor_ns, floor_fraction * base["median"],
                k * (base["spread"] ** 2 + new["spread"] ** 2) ** 0.5)
    if abs(delta) <= noise:
        return "same"
    return "slower" if delta > 0 else "faster"


if __name__ == "__main__":
    import sys
    for p in sys.argv[1:]:
        m = medians(p)
        print(p, m["steps"], m["total"], m["streams"])
        for o, v in sorted(m["ops"].items()):
            print("  ", o, v)
