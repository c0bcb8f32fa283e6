#!/usr/bin/python3
"""Write ONE large PyTorch-profiler (Kineto) JSON trace built from varied real
traces, for benchmarks at size (issue 20: a 587 MB and a 5 GB trace).

Why not one trace copied N times: a parser's string interning and caches would
flatter copies (every name, every argument list seen before), and a copied
trace has one model's shape. Here every block is a real trace - B200 eager,
H100 and MI300 ViT / BERT (and Qwen with --extra-trace), SGLang decode, MI210
GPU-only, torch.compile/Triton, 2021 V100 ResNet-50 (tb_plugin format) - with
its own kernel names, op names, shapes, call stacks and Python frames.

What it builds:
  - blocks: each block is all events of one source trace; each round of blocks
    uses every source once, in a seeded shuffled order, until the target size
    is passed (it stops at the first block boundary past --target-bytes or
    --target-events);
  - one timeline: block k starts at the end of block k-1 plus a gap (1 ms,
    +-10 %); inside a block time goes through a random monotone piecewise-
    linear warp (slopes 0.9 .. 1.1 over 64 segments), so every duration and
    gap is jittered by up to +-10 % yet nesting, launch -> kernel order and
    flow order stay intact, and no two blocks are identical;
  - one process: every source's host pid becomes --host-pid; its host threads
    become host-pid, host-pid+1, ... (the main thread first, then by event
    count; a tid written as a string stays a string). Each GPU model gets one
    device 0..7 (so device k is one kind of GPU, and deviceProperties say
    which); a source's GPU pids map onto it, streams (tids) keep their
    numbers; args "device" / "Device Id" follow;
  - ids unique across the file: per block, External id / external id,
    correlation and flow ids (one space, as in Kineto), Ev Idx, Python id /
    Python parent id and Sequence number are renumbered densely (order kept)
    into a range of their own; ids <= 0 (External id, correlation) or < 0
    (the others) and nulls are sentinels and stay. ProfilerStep#N is
    renumbered consecutively across blocks (CPU and GPU annotation alike);
  - metadata (ph "M") once at the start, deduplicated per (pid, tid, name);
    the other events keep their keys, categories and args as in the source
    (2021-format categories stay: a mixed file).

Output layout is Kineto's (schemaVersion, deviceProperties, traceEvents,
baseTimeNanoseconds, displayTimeUnit), one event per few lines. Written
streaming: each source is turned once into per-event text templates, each
block fills in times and ids; memory is the sources, never the output.
A manifest (OUT.blocks.json) lists the blocks; --validate OUT checks a file.

  /usr/bin/python3 bench/trace/make_big_trace.py --target-bytes 587e6 --out /tmp/mi_big_587.json \\
      [--extra-trace .../h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz ...]
  /usr/bin/python3 bench/trace/make_big_trace.py --target-events 10_000_000 --out OUT
  /usr/bin/python3 bench/trace/make_big_trace.py --validate OUT
"""
import argparse
import bisect
import collections
import glob
import gzip
import json
import math
import os
import random
import re
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KINETO = os.path.join(REPO, "test", "fixtures", "samples", "traces", "kineto")
DEFAULT_SOURCES = (sorted(glob.glob(os.path.join(KINETO, "tracelens", "*.json.gz"))) +
                   sorted(glob.glob(os.path.join(KINETO, "tb_plugin", "*.json.gz"))))

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "Kernel", "Memcpy", "Memset"}
# args key -> id space; flow "id" is in the correlation space, as in Kineto.
ID_KINDS = ("ext", "corr", "evidx", "py", "seq")
ARG_ID_KIND = {"External id": "ext", "external id": "ext", "correlation": "corr", "Ev Idx": "evidx",
               "Python id": "py", "Python parent id": "py", "Sequence number": "seq"}
ZERO_IS_SENTINEL = {"ext", "corr"}
STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")
PLACEHOLDER = "@@MI_SLOT@@"
WARP_SEGMENTS = 64


def load_trace(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def checked_ids(e):
    """The ("cat|field", value) pairs whose uniqueness --validate checks: External
    id, correlation, Python id of X events, Ev Idx of any event, flow ids."""
    ph = e.get("ph")
    cat = str(e.get("cat"))
    a = e.get("args")
    if a and isinstance(a, dict):
        for key in ("External id", "correlation", "Python id", "Ev Idx"):
            v = a.get(key)
            if (ph == "X" or key == "Ev Idx") and id_of(ARG_ID_KIND[key], v):
                yield cat + "|" + key, v
    if ph in ("s", "f") and "id" in e:
        yield ph + ":" + cat + "|id", e["id"]


def is_int(v):
    return type(v) is int


def id_of(kind, v):
    """True when v is a real id of this kind (not a sentinel)."""
    if not is_int(v):
        return False
    return v > 0 if kind in ZERO_IS_SENTINEL else v >= 0


class Source:
    """One real trace, turned into per-event templates.

    Each body event becomes (ts, dur, int_time, template, slots): template is the event's
    Kineto-style text with "%s" where per-block values go; slots says what each
    is: ("ts",), ("dur",), ("id", kind_index, rank), ("step", rank)."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        d = load_trace(path)
        events = d.get("traceEvents", d if isinstance(d, list) else [])
        self.device_props = d.get("deviceProperties", []) if isinstance(d, dict) else []
        self.base_ns = d.get("baseTimeNanoseconds") if isinstance(d, dict) else None
        self.meta = [e for e in events if e.get("ph") == "M"]
        self.body = [e for e in events if e.get("ph") != "M"]
        self.gpu_model = None
        for p in self.device_props:
            self.gpu_model = p.get("name")
            break
        # GPU tracks: (pid, tid) with GPU activity; host: every other int pid >= 0 track.
        self.gpu_tracks = {(e.get("pid"), e.get("tid")) for e in self.body
                           if e.get("ph") == "X" and e.get("cat") in GPU_CATS}
        self.gpu_pids = sorted({p for p, _ in self.gpu_tracks if is_int(p)})
        host_count = collections.Counter()
        for e in self.body:
            p, t = e.get("pid"), e.get("tid")
            if is_int(p) and p >= 0 and (p, t) not in self.gpu_tracks:
                host_count[(p, str(t))] += 1
        pid_count = collections.Counter()
        for (p, _), n in host_count.items():
            pid_count[p] += n
        self.host_pid = pid_count.most_common(1)[0][0] if pid_count else None
        main = (self.host_pid, str(self.host_pid))
        self.host_threads = sorted(host_count, key=lambda k: (k != main, -host_count[k], k))
        # ids: dense rank per kind over every value the source uses
        values = {k: set() for k in ID_KINDS}
        for e in self.body:
            if e.get("ph") in ("s", "f") and id_of("corr", e.get("id")):
                values["corr"].add(e["id"])
            a = e.get("args")
            if a:
                for key, kind in ARG_ID_KIND.items():
                    v = a.get(key)
                    if id_of(kind, v):
                        values[kind].add(v)
        self.rank = {k: {v: i for i, v in enumerate(sorted(values[k]))} for k in ID_KINDS}
        self.id_span = {k: len(values[k]) for k in ID_KINDS}
        steps = sorted({int(m.group(1)) for e in self.body
                        for m in [STEP_RE.match(str(e.get("name", "")))] if m})
        self.step_rank = {s: i for i, s in enumerate(steps)}
        # time range of the block
        lo, hi = float("inf"), float("-inf")
        for e in self.body:
            ts = e.get("ts")
            if isinstance(ts, (int, float)):
                lo = min(lo, ts)
                hi = max(hi, ts + (e.get("dur") or 0))
        self.t0, self.t1 = lo, hi
        self.int_time = all(is_int(e["ts"]) for e in self.body if "ts" in e)
        self.unique = self._uniqueness()
        self.device_map = {}
        self.track_map = {}
        self.templates = None
        self.n_events = len(self.body)

    def _uniqueness(self):
        """"cat|field" -> whether the values are unique within this source, for
        the id fields the validator checks."""
        seen = collections.defaultdict(list)
        for e in self.body:
            for k, v in checked_ids(e):
                seen[k].append(v)
        return {k: len(v) == len(set(v)) for k, v in seen.items()}

    def assign(self, host_pid, device_slot):
        """Fix this source's pid/tid mapping (constant for all its blocks)."""
        for r, p in enumerate(self.gpu_pids):
            self.device_map[p] = (device_slot + r) % 8
        self.host_tid_new = {}
        for r, key in enumerate(self.host_threads):
            self.host_tid_new[key] = host_pid + r
        self.new_host_pid = host_pid

    def map_track(self, pid, tid):
        if not is_int(pid) or pid < 0:
            return pid, tid  # "Spans", "Traces", "" and Kineto's pid -1 overhead track stay
        if (pid, tid) in self.gpu_tracks:
            return self.device_map[pid], tid
        new = self.host_tid_new.get((pid, str(tid)))
        if new is None:
            return pid, tid
        return self.new_host_pid, (str(new) if isinstance(tid, str) else new)

    def mapped_meta(self, meta_ts):
        """This source's metadata events with pids/tids mapped; those naming
        pids or tracks the source does not use are dropped."""
        out = []
        for e in self.meta:
            e = dict(e)
            pid, tid = e.get("pid"), e.get("tid")
            a = dict(e.get("args") or {})
            name = e.get("name", "")
            if not is_int(pid):
                pass
            elif name.startswith("thread"):
                if (pid, tid) in self.gpu_tracks:
                    e["pid"] = self.device_map[pid]
                elif (pid, str(tid)) in self.host_tid_new:
                    np_, nt = self.map_track(pid, tid)
                    e["pid"], e["tid"] = np_, nt
                    if "name" in a and isinstance(a["name"], str):
                        a["name"] = re.sub(r"\b%s\b" % re.escape(str(tid)), str(nt), a["name"])
                    if a.get("sort_index") == tid:
                        a["sort_index"] = int(nt)
                else:
                    continue
            else:  # process_*
                if pid in self.device_map:
                    slot = self.device_map[pid]
                    e["pid"] = slot
                    if a.get("labels") == "GPU %d" % pid:
                        a["labels"] = "GPU %d" % slot
                    if a.get("sort_index") == 5000000 + pid:
                        a["sort_index"] = 5000000 + slot
                elif pid == self.host_pid:
                    e["pid"] = self.new_host_pid
                    if a.get("sort_index") == pid:
                        a["sort_index"] = self.new_host_pid
                else:
                    continue
            if "ts" in e:
                e["ts"] = int(meta_ts) if is_int(e["ts"]) else float(meta_ts)  # the first timestamp
            if "args" in e:
                e["args"] = a
            out.append(e)
        return out

    def build_templates(self):
        """Per event: (ts, dur, int_time, format string, slots). Frees the parsed events."""
        kind_index = {k: i for i, k in enumerate(ID_KINDS)}
        templates = []
        for e in self.body:
            slots = []
            head = {}
            for k, v in e.items():
                if k in ("ts", "dur", "args"):
                    continue
                if k == "pid":
                    v = self.map_track(e.get("pid"), e.get("tid"))[0]
                elif k == "tid":
                    v = self.map_track(e.get("pid"), e.get("tid"))[1]
                elif k == "id" and e.get("ph") in ("s", "f") and id_of("corr", v):
                    slots.append(("id", kind_index["corr"], self.rank["corr"][v]))
                    v = PLACEHOLDER
                elif k == "name" and isinstance(v, str):
                    m = STEP_RE.match(v)
                    if m:
                        slots.append(("step", self.step_rank[int(m.group(1))]))
                        v = PLACEHOLDER
                head[k] = v
            text = "  {\n    " + json.dumps(head)[1:-1]
            ts, dur = e.get("ts"), e.get("dur")
            has_ts = isinstance(ts, (int, float))
            if has_ts:
                text += ",\n    \"ts\": " + PLACEHOLDER
                slots.append(("ts",))
                if isinstance(dur, (int, float)):
                    text += ", \"dur\": " + PLACEHOLDER
                    slots.append(("dur",))
                else:
                    dur = None
            if "args" in e:
                a = e["args"]
                if isinstance(a, dict):
                    a = dict(a)
                    for key in a:
                        kind = ARG_ID_KIND.get(key)
                        if kind and id_of(kind, a[key]):
                            slots.append(("id", kind_index[kind], self.rank[kind][a[key]]))
                            a[key] = PLACEHOLDER
                    if is_int(a.get("device")) and a["device"] in self.device_map:
                        a["device"] = self.device_map[a["device"]]
                    if is_int(a.get("Device Id")) and a["Device Id"] >= 0 and self.gpu_pids:
                        a["Device Id"] = self.device_map[self.gpu_pids[0]] + a["Device Id"]
                    body = json.dumps(a)[1:-1]
                    text += ",\n    \"args\": {\n      " + body + "\n    }" if body else ",\n    \"args\": {}"
                else:
                    text += ",\n    \"args\": " + json.dumps(a)
            text += "\n  }"
            # placeholders in text order: the head's (id / step), then ts, dur, then args'
            fmt = text.replace("%", "%%").replace('"%s"' % PLACEHOLDER, "%s").replace(PLACEHOLDER, "%s")
            templates.append((ts if has_ts else None, dur, is_int(ts), fmt, tuple(slots)))
        self.templates = templates
        self.body = None
        self.meta = None


class Warp:
    """Monotone piecewise-linear map of a source's time range onto the output
    timeline: start at `start`, slopes uniform in [1-j, 1+j] per segment."""

    def __init__(self, t0, t1, start, rng, jitter):
        span = max(t1 - t0, 1e-3)
        n = WARP_SEGMENTS
        self.knots = [t0 + span * i / n for i in range(n)]
        self.slopes = [1.0 + rng.uniform(-jitter, jitter) for _ in range(n)]
        self.base = []
        acc = start
        for i in range(n):
            self.base.append(acc)
            acc += self.slopes[i] * span / n
        self.end = acc

    def __call__(self, t):
        i = bisect.bisect_right(self.knots, t) - 1
        if i < 0:
            i = 0
        return self.base[i] + (t - self.knots[i]) * self.slopes[i]


def render_block(src, warp, id_base, step_base):
    """Yield the block's event texts."""
    kb = id_base
    for ts, dur, int_time, fmt, slots in src.templates:
        if ts is not None:
            a = warp(ts)
            if int_time:
                tsn = int(round(a))
                durn = int(round(warp(ts + dur))) - tsn if dur is not None else None
            else:
                tsn = round(a, 3)
                durn = round(round(warp(ts + dur), 3) - tsn, 3) if dur is not None else None
        vals = []
        for s in slots:
            c = s[0]
            if c == "ts":
                vals.append(repr(tsn))
            elif c == "dur":
                vals.append(repr(durn))
            elif c == "id":
                vals.append(kb[s[1]] + s[2])
            else:
                vals.append('"ProfilerStep#%d"' % (step_base + s[1]))
        yield fmt % tuple(vals) if vals else fmt


def device_properties(sources):
    props = {}
    for s in sources:
        for p, slot in s.device_map.items():
            if slot in props:
                continue
            entry = next((q for q in s.device_props if q.get("id") == p), None)
            if entry is None and s.device_props:
                entry = s.device_props[0]
            if entry is not None:
                entry = dict(entry)
                entry["id"] = slot
                props[slot] = entry
    return [props[k] for k in sorted(props)]


def write_trace(args):
    paths = list(args.source or DEFAULT_SOURCES) + list(args.extra_trace or [])
    if not paths:
        sys.exit("no source traces")
    t_start = time.time()
    # one source at a time: parse, map, template, free the parsed events
    sources, models, meta, seen = [], [], [], set()
    for p in paths:
        s = Source(p)
        if not s.body or not s.t1 > s.t0:
            print("skipping %s: no timed events" % p, file=sys.stderr)
            continue
        if s.gpu_model not in models:  # one device per GPU model, in order of first appearance
            models.append(s.gpu_model)
        s.assign(args.host_pid, models.index(s.gpu_model) % 8)
        for e in s.mapped_meta(args.start_us):
            key = (e.get("pid"), str(e.get("tid")), e.get("name"))  # tid 7 and "7": one track
            if key not in seen:
                seen.add(key)
                meta.append(e)
        s.build_templates()
        sources.append(s)
    base_ns = next((s.base_ns for s in sources if s.base_ns), 0)
    print("sources (%d), %.1f s to load:" % (len(sources), time.time() - t_start), file=sys.stderr)
    for s in sources:
        print("  %-70s %7d events  device %s  %s" % (s.name, s.n_events,
              sorted(set(s.device_map.values())), s.gpu_model), file=sys.stderr)

    rng = random.Random(args.seed)
    out = open(args.out, "w", encoding="ascii", newline="\n", buffering=1 << 22)
    written = 0

    def w(text):
        nonlocal written
        out.write(text)
        written += len(text)

    dp = device_properties(sources)
    w('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n')
    w(",\n".join("    {\n      " + json.dumps(p)[1:-1] + "\n    }" for p in dp))
    w('\n  ],\n  "traceEvents": [\n')
    n_events = 0
    first = True

    def emit(texts):
        nonlocal first, n_events
        chunk = []
        for t in texts:
            chunk.append(t)
            if len(chunk) >= 8192:
                w(("" if first else ",\n") + ",\n".join(chunk))
                first = False
                n_events += len(chunk)
                chunk = []
        if chunk:
            w(("" if first else ",\n") + ",\n".join(chunk))
            first = False
            n_events += len(chunk)

    def meta_text(e):
        head = {k: v for k, v in e.items() if k != "args"}
        t = "  {\n    " + json.dumps(head)[1:-1]
        if "args" in e:
            t += ",\n    \"args\": {\n      " + json.dumps(e["args"])[1:-1] + "\n    }"
        return t + "\n  }"

    emit(meta_text(e) for e in meta)
    id_next = [1] * len(ID_KINDS)  # ids start at 1 (0 is a sentinel for External id / correlation)
    step_next = 1
    cursor = args.start_us
    blocks = []
    order = []
    next_report = 500e6
    done = lambda: ((args.target_bytes and written >= args.target_bytes) or
                    (args.target_events and n_events >= args.target_events))
    while not done():
        if not order:
            order = list(range(len(sources)))
            rng.shuffle(order)
        s = sources[order.pop(0)]
        # integer-microsecond sources (2021 format) start on a whole microsecond
        warp = Warp(s.t0, s.t1, math.ceil(cursor) if s.int_time else cursor, rng, args.jitter)
        base = list(id_next)
        first_event = n_events
        emit(render_block(s, warp, base, step_next))
        start, end = warp(s.t0), warp.end
        blocks.append({"source": s.name, "first_event": first_event, "events": n_events - first_event,
                       "ts_start": round(start, 3), "ts_end": round(end, 3),
                       "ids": dict(zip(ID_KINDS, base)), "first_step": step_next,
                       "steps": len(s.step_rank)})
        for i, k in enumerate(ID_KINDS):
            id_next[i] += s.id_span[k]
        step_next += len(s.step_rank)
        cursor = end + args.gap_us * (1.0 + rng.uniform(-args.jitter, args.jitter))
        if written >= next_report:
            print("  %.2f GB, %d events, %d blocks, %.0f s" % (written / 1e9, n_events, len(blocks),
                                                             time.time() - t_start), file=sys.stderr)
            next_report += 500e6
    w('\n  ],\n  "baseTimeNanoseconds": %d,\n  "displayTimeUnit": "ms"\n}\n' % base_ns)
    out.close()
    size = os.path.getsize(args.out)
    per_source = collections.Counter(b["source"] for b in blocks)
    manifest = {"out": os.path.abspath(args.out), "bytes": size, "events": n_events,
                "metadata_events": len(meta), "blocks": blocks, "seed": args.seed,
                "sources": [{"name": s.name, "path": s.path, "events": s.n_events,
                             "blocks": per_source[s.name], "devices": sorted(set(s.device_map.values())),
                             "gpu_model": s.gpu_model, "unique": s.unique} for s in sources]}
    with open(args.out + ".blocks.json", "w") as f:
        json.dump(manifest, f, indent=1)
    secs = time.time() - t_start
    print("blocks per source:", file=sys.stderr)
    for s in sources:
        print("  %-70s %5d" % (s.name, per_source[s.name]), file=sys.stderr)
    print("wrote %s: %d bytes, %d events (%d metadata), %d blocks, %.1f s (%.1f MB/s)"
          % (args.out, size, n_events, len(meta), len(blocks), secs, size / 1e6 / max(secs, 1e-9)))


def validate(path):
    """Parse with json.load and check the file against its manifest."""
    t = time.time()
    with open(path + ".blocks.json") as f:
        man = json.load(f)
    with open(path) as f:
        d = json.load(f)
    ev = d["traceEvents"]
    problems = []

    def check(ok, what):
        if not ok:
            problems.append(what)
        print(("ok   " if ok else "FAIL ") + what)

    check(set(d) >= {"schemaVersion", "deviceProperties", "traceEvents", "baseTimeNanoseconds",
                     "displayTimeUnit"}, "top-level keys")
    check(len(ev) == man["events"], "event count %d == printed %d" % (len(ev), man["events"]))
    check(os.path.getsize(path) == man["bytes"], "bytes %d" % os.path.getsize(path))
    nm = man["metadata_events"]
    check(all(e.get("ph") == "M" for e in ev[:nm]) and all(e.get("ph") != "M" for e in ev[nm:]),
          "%d metadata events, all at the start" % nm)
    mk = [(e.get("pid"), str(e.get("tid")), e.get("name")) for e in ev[:nm]]
    check(len(mk) == len(set(mk)), "metadata unique per (pid, tid, name)")
    xs = [e for e in ev if e.get("ph") == "X"]
    check(all(isinstance(e.get("ts"), (int, float)) and isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0
              for e in xs), "all %d X events have ts and dur >= 0" % len(xs))
    # blocks: disjoint, increasing, every event inside its block's range
    prev_end = float("-inf")
    inside = True
    ordered = True
    for b in man["blocks"]:
        lo, hi = b["ts_start"] - 0.001, b["ts_end"] + 0.001
        if b["ts_start"] <= prev_end:
            ordered = False
        prev_end = b["ts_end"]
        for e in ev[b["first_event"]:b["first_event"] + b["events"]]:
            ts = e.get("ts")
            if isinstance(ts, (int, float)) and not (lo <= ts and ts + (e.get("dur") or 0) <= hi + 1):
                inside = False
    check(ordered, "%d blocks in time order, not overlapping" % len(man["blocks"]))
    check(inside, "every event inside its block's time range")
    # ids: unique per (category, field) where unique in the source; disjoint across blocks always
    uniq_src = {s["name"]: s["unique"] for s in man["sources"]}
    values = collections.defaultdict(list)      # key -> values from sources where unique
    per_block = collections.defaultdict(list)   # key -> [set per block]
    for b in man["blocks"]:
        u = uniq_src[b["source"]]
        sets = collections.defaultdict(set)
        for e in ev[b["first_event"]:b["first_event"] + b["events"]]:
            for k, v in checked_ids(e):
                sets[k].add(v)
                if u.get(k):
                    values[k].append(v)
        for k, s in sets.items():
            per_block[k].append(s)
    for k in sorted(values):
        v = values[k]
        check(len(v) == len(set(v)), "%-32s unique (%d values)" % (k, len(v)))
    for k in sorted(per_block):
        total = sum(len(s) for s in per_block[k])
        check(len(set().union(*per_block[k])) == total, "%-32s disjoint across blocks" % k)
    # ProfilerStep#N: CPU-side annotations consecutive, in time order
    steps = [(e["ts"], int(e["name"].split("#")[1])) for e in xs
             if e.get("cat") in ("user_annotation", "Operator") and STEP_RE.match(e.get("name", ""))]
    nums = [n for _, n in sorted(steps)]
    check(nums == list(range(1, len(nums) + 1)), "ProfilerStep#1..#%d consecutive in time order" % len(nums))
    # links kept: per block, kernels whose correlation meets a runtime event's,
    # flow ends meeting a correlation, runtime events whose External id meets
    # an op's; every block of a source must count the same
    links = collections.defaultdict(set)
    for b in man["blocks"]:
        corr_rt, corr_gpu, flow, ext_op, ext_rt = set(), [], [], set(), []
        for e in ev[b["first_event"]:b["first_event"] + b["events"]]:
            a = e.get("args") or {}
            cat = e.get("cat")
            if e.get("ph") in ("s", "f"):
                flow.append(e.get("id"))
            elif cat in ("cuda_runtime", "Runtime", "cuda_driver"):
                corr_rt.add(a.get("correlation"))
                ext_rt.append(a.get("External id", a.get("external id")))
            elif cat in GPU_CATS:
                corr_gpu.append(a.get("correlation"))
            elif cat in ("cpu_op", "Operator", "user_annotation"):
                ext_op.add(a.get("External id"))
        links[b["source"]].add((sum(c in corr_rt for c in corr_gpu), sum(f in corr_rt for f in flow),
                                sum(x in ext_op for x in ext_rt)))
    check(all(len(v) == 1 for v in links.values()),
          "launch/kernel/flow/op links: same counts in every block of a source (%s)"
          % "; ".join("%s %s" % (k.split(".json")[0], sorted(v)) for k, v in sorted(links.items())))
    print("%s: %d events, %d blocks, validated in %.1f s: %s" % (
        path, len(ev), len(man["blocks"]), time.time() - t,
        "OK" if not problems else "%d problems" % len(problems)))
    return not problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="output JSON path")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--target-bytes", type=float, help="stop at the first block boundary past this size (e.g. 587e6, 5e9)")
    g.add_argument("--target-events", type=lambda s: int(float(s.replace("_", ""))),
                   help="stop at the first block boundary past this many events (e.g. 10_000_000)")
    ap.add_argument("--extra-trace", action="append", metavar="PATH",
                    help="another Kineto trace (.json or .json.gz) to add to the sources; repeatable")
    ap.add_argument("--source", action="append", metavar="PATH",
                    help="replace the default sources (the repo's Kineto fixtures); repeatable")
    ap.add_argument("--seed", type=int, default=1, help="seed for block order and jitter (default 1)")
    ap.add_argument("--jitter", type=float, default=0.10, help="relative jitter of durations and gaps (default 0.10)")
    ap.add_argument("--gap-us", type=float, default=1000.0, help="gap between blocks in us (default 1000)")
    ap.add_argument("--start-us", type=float, default=1_400_000_000_000.0,
                    help="first timestamp, us after baseTimeNanoseconds (default 1.4e12)")
    ap.add_argument("--host-pid", type=int, default=4242, help="the one host pid (default 4242)")
    ap.add_argument("--validate", metavar="OUT", help="check OUT (and OUT.blocks.json) instead of writing")
    args = ap.parse_args()
    if args.validate:
        sys.exit(0 if validate(args.validate) else 1)
    if not args.out or not (args.target_bytes or args.target_events):
        ap.error("--out and one of --target-bytes / --target-events are required")
    write_trace(args)


if __name__ == "__main__":
    main()
