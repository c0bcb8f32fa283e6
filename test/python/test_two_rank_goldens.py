"""The goldens of two ranks loaded together, checked against figures that
do not come from model-inspector:

- test/golden/timing/two_ranks_calibration.out and two_ranks_idle_overlap.out
  (the timing_truth traces) against test/fixtures/timing_truth/expected.json,
  which generate.py derived from the drawn true timeline: each rank's device
  clock domain has the expected offset estimate, interval and error bound
  (two domains, one per rank, though both ranks call their GPU "device 0"),
  and each rank's streams the true busy and idle time and idle by reason;
- test/golden/summary/multirank_two_ranks.out against sums over the raw
  events of test/fixtures/multirank (read here with json): per rank and
  stream, the kernel and copy time; per op type, the kernel time of the
  kernels whose own rank's cpu_op launched them (External id matched within
  the file, never across files).

Printed figures are compared as printed (microseconds with one decimal).
"""
import json
from collections import defaultdict

from conftest import FIXTURES, ROOT, committed

GOLDEN = ROOT / "test" / "golden"
TRUTH = json.loads(committed(FIXTURES / "timing_truth" / "expected.json").read_text())


def us(ns):
    return f"{ns / 1000:.1f}"


def section(text, title):
    """The rows of the table under `title` (header line, dashes, rows)."""
    lines = text.splitlines()
    start = lines.index(title)
    header = lines[start + 1]
    assert set(lines[start + 2]) <= {"-", " "}, lines[start + 2]
    rows = []
    for line in lines[start + 3:]:
        if not line.strip():
            break
        rows.append(line)
    return header, rows


def test_calibration_golden_has_one_device_domain_per_rank_with_the_true_offsets():
    text = committed(GOLDEN / "timing" / "two_ranks_calibration.out").read_text()
    _, rows = section(text, "Clock calibration / domains")
    by_name = {r.split("  ")[0].strip(): r for r in rows}
    assert set(by_name) == {"rank 0 · host", "rank 0 · device 0",
                            "rank 1 · host", "rank 1 · device 0"}
    for rank in ("0", "1"):
        want = TRUTH["ranks"][rank]["calibration"]
        row = by_name[f"rank {rank} · device 0"]
        # offset, interval lower/upper, error bound, in that order after the
        # reference/anchored columns.
        numbers = [tok for tok in row.split() if tok.replace(".", "").lstrip("-").isdigit()]
        expected = [us(want["estimate_ns"]), us(want["lower_ns"]), us(want["upper_ns"]),
                    us(want["error_bound_ns"])]
        assert all(x in numbers for x in expected), (row, expected)
        # The estimate sits within the truth's error bound.
        assert abs(want["estimate_ns"] - want["true_offset_ns"]) <= want["error_bound_ns"]
    # Anchors by kind: the sum over both ranks of the truth's counts.
    launch = sum(TRUTH["ranks"][r]["calibration"]["launch_anchors"] for r in ("0", "1"))
    sync = sum(TRUTH["ranks"][r]["calibration"]["sync_anchors"] for r in ("0", "1"))
    sync_copy = sum(TRUTH["ranks"][r]["calibration"]["sync_copy_anchors"] for r in ("0", "1"))
    assert f"launch: {launch}" in text
    assert f"sync: {sync}" in text
    assert f"sync copy: {sync_copy}" in text


def test_idle_overlap_golden_streams_equal_the_true_busy_and_idle():
    text = committed(GOLDEN / "timing" / "two_ranks_idle_overlap.out").read_text()
    header, rows = section(text, "Idle time and overlap / streams")
    seen = set()
    for row in rows:
        name = next(n for n in (f"rank {r} · GPU 0 · stream {s}" for r in "01" for s in ("7", "20"))
                    if n in row)
        rank, stream = name.split()[1], name.split()[-1]
        want = TRUTH["ranks"][rank]["streams"][stream]
        tail = row.split(name, 1)[1].split()
        tasks, _start, _end, busy, idle, host, other_stream, other, _gaps = tail
        assert int(tasks) == want["tasks"], name
        assert busy == us(want["busy_ns"]) and idle == us(want["idle_ns"]), name
        assert [host, other_stream, other] == [us(want["idle_by_reason"][k]) for k in
                                               ("host", "other_stream", "other")], name
        seen.add(name)
    assert len(seen) == 4
    assert "idle by reason.host (us)" in header
    # Synchronize calls: one per rank, with the truth's duration and idle.
    _, waits = section(text, "Idle time and overlap / sync / waits")
    got = sorted((w.split()[1], w.split()[2]) for w in waits)
    want = sorted((us(s["duration_ns"]), us(s["device_idle_ns"]))
                  for r in ("0", "1") for s in TRUTH["ranks"][r]["sync_waits"])
    assert got == want


def multirank_events(rank):
    raw = json.loads(committed(FIXTURES / "multirank" / f"rank{rank}.pt.trace.json").read_text())
    return raw["traceEvents"]


def test_multirank_summary_golden_sums_each_rank_apart():
    text = committed(GOLDEN / "summary" / "multirank_two_ranks.out").read_text()
    per_stream = {}
    per_op_type = defaultdict(int)
    for rank in ("0", "1"):
        events = multirank_events(rank)
        op_by_external = {e["args"]["External id"]: e["name"] for e in events
                          if e.get("cat") == "cpu_op" and e.get("ph") == "X"}
        busy = 0
        for e in events:
            if e.get("ph") != "X" or e.get("cat") not in ("kernel", "gpu_memcpy"):
                continue
            busy += e["dur"]
            if e["cat"] == "kernel":
                per_op_type[op_by_external[e["args"]["External id"]]] += e["dur"]
        per_stream[f"rank {rank} · GPU 0 · stream 7"] = busy
    per_stream_total = dict(per_stream)
    _, rows = section(text, "Streams")
    for row in rows:
        name = row[:row.index("device_stream")].strip()
        assert row.split()[-3] == f"{per_stream.pop(name):.1f}", row  # busy (us)
    assert not per_stream
    total = sum(busy for busy in per_stream_total.values())
    _, rows = section(text, f"Time by op type (execution tasks, 6 tasks, total {total:.1f} us)")
    printed = {r.split()[0]: r.split()[3] for r in rows if not r.startswith("[")}
    assert printed == {k: f"{v:.1f}" for k, v in per_op_type.items()}
