#!/usr/bin/env python3
"""Writes a PyTorch-profiler (Kineto) trace of about --mb megabytes from a
real Kineto sample, for the trace-only UI benchmark (bench_trace_only.mjs).

The sample (default: the tb_plugin ResNet-50 training trace in
test/fixtures/samples/traces/kineto/, 35.2 MB once decompressed) is written
out as plain JSON, and when the target is larger, its events are repeated
after it: each copy shifted by the sample's time span (so the copies' steps
follow one another on the same threads and streams) and with every id that
links events (flow `id`, `External id`, `correlation`, `external id`)
offset past the previous copy's, so launches, kernels and operators of one
copy never link to another's. Metadata events (ph "M") are written once (with the first copy, which is
the sample's own text).
The output is not committed; the benchmark caches it in $TMPDIR.

Usage: make_kineto_trace.py --out FILE [--mb 35] [--sample FILE.json.gz]
"""
import argparse
import copy
import gzip
import json
import os
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = (REPO / "test/fixtures/samples/traces/kineto/tb_plugin/"
          "samples__resnet50_num_workers_0__worker0.1623143566756.pt.trace.json.gz")
ID_ARGS = ("External id", "correlation", "external id")


def load(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=pathlib.Path)
    parser.add_argument("--mb", type=float, default=35.0)
    parser.add_argument("--sample", type=pathlib.Path, default=SAMPLE)
    args = parser.parse_args()
    doc = load(args.sample)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    body = [e for e in events if e.get("ph") != "M"]
    starts = [e["ts"] for e in body if isinstance(e.get("ts"), (int, float))]
    ends = [e["ts"] + e.get("dur", 0) for e in body if isinstance(e.get("ts"), (int, float))]
    span = max(ends) - min(starts)
    max_id = 0
    for e in body:
        if isinstance(e.get("id"), int):
            max_id = max(max_id, e["id"])
        for k in ID_ARGS:
            v = (e.get("args") or {}).get(k)
            if isinstance(v, int):
                max_id = max(max_id, v)
    opener = gzip.open if str(args.sample).endswith(".gz") else open
    with opener(args.sample, "rt") as f:
        raw = f.read()
    copies = max(1, round(args.mb * 1e6 / len(raw)))
    # The sample's own text first (one copy is the real file, byte for
    # byte), then the further copies' events, one per line, before the
    # closing of traceEvents (the sample ends with "]}", its last key).
    tail = raw.rstrip()
    if not tail.endswith("]}"):
        sys.exit(f"{args.sample}: expected the file to end with the traceEvents array ']}}'")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(args.out.suffix + ".tmp")
    count = len(events)
    with open(tmp, "w") as f:
        f.write(tail[:-2] if copies > 1 else raw)
        for k in range(1, copies):
            for e in body:
                e = copy.deepcopy(e)
                if isinstance(e.get("ts"), (int, float)):
                    e["ts"] += k * (span + 1000)
                if isinstance(e.get("id"), int):
                    e["id"] += k * (max_id + 1)
                a = e.get("args")
                if a:
                    for key in ID_ARGS:
                        if isinstance(a.get(key), int) and a[key] >= 0:
                            a[key] += k * (max_id + 1)
                f.write(",\n  " + json.dumps(e))
                count += 1
        if copies > 1:
            f.write("\n]}\n")
    os.replace(tmp, args.out)
    size = args.out.stat().st_size
    print(f"{args.out}: {size / 1e6:.1f} MB, {count:,} events "
          f"({copies} cop{'y' if copies == 1 else 'ies'} of {args.sample.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
