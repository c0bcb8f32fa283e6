"""`model-inspector cluster` on a generated 8-rank NCCL cluster
(test/fixtures/cluster_nccl: the real B200 trace replayed on 8 ranks; here
with collectives on their own stream beside 3 compute kernels each, rank
3's vllm::moe_forward kernels x1.5, rank clocks 1 ms apart): each rank's
communication/computation overlap and idle time equal the same figures
computed in this test, independently, from the rank files' JSON.

Definitions (Holistic Trace Analysis's overlap; docs/design/clusters-hta.md):
- device tasks: the trace's kernel, gpu_memcpy and gpu_memset events;
  communication: the kernels whose name starts with "nccl"; compute: the
  other kernels (copies and memsets are neither).
- U(x): the union of the intervals of x. overlapped = |U(comm) n U(compute)|,
  communication = |U(comm)|, overlap share = overlapped / communication.
- step window (docs/design/clusters-hta.md): from the step's ProfilerStep#N
  start to the next step's start; the last step to its annotation's end
  (here every device task ends before it). idle per step = the window's
  length - |U(device tasks) n window|; a rank's idle is the sum over its
  steps.
Times are taken from the JSON as exact decimals and turned into integer
nanoseconds (Kineto writes microseconds with 3 decimals); ours may differ
by a nanosecond per task edge from reading them as doubles, so the
tolerances are 2 ns per task counted.
"""
import gzip
import json
import sys
from decimal import Decimal

import pytest

from cluster_fixtures import in_child, nccl_cluster
from conftest import run

ARGS = ("--overlap-kernels", "3", "--clock-offset-us", "1000")
DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def ns(x):
    return int(Decimal(x) * 1000)


def merged(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def covered(merged_a, merged_b):
    """|A n B| for two merged interval lists."""
    i = j = total = 0
    while i < len(merged_a) and j < len(merged_b):
        lo = max(merged_a[i][0], merged_b[j][0])
        hi = min(merged_a[i][1], merged_b[j][1])
        total += max(0, hi - lo)
        if merged_a[i][1] < merged_b[j][1]:
            i += 1
        else:
            j += 1
    return total


def expected_rank(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=Decimal)
    comm, comp, device, steps = [], [], [], []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        start = ns(e["ts"])
        end = start + ns(e.get("dur", 0))
        if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"):
            steps.append((int(e["name"].split("#")[1]), start, end))
        if e.get("cat") not in DEVICE_CATS:
            continue
        device.append((start, end))
        if e["cat"] == "kernel":
            (comm if e["name"].startswith("nccl") else comp).append((start, end))
    u_comm, u_comp, u_dev = merged(comm), merged(comp), merged(device)
    steps.sort(key=lambda x: x[1])
    step_idle = {}
    for k, (step, s, e) in enumerate(steps):
        if k + 1 < len(steps):
            e = steps[k + 1][1]
        else:
            assert all(end <= e for _, end in device), "device work after the last step"
        step_idle[step] = (e - s) - covered([[s, e]], u_dev)
    communication = sum(e - s for s, e in u_comm)
    overlapped = covered(u_comm, u_comp)
    return {
        "rank": doc["distributedInfo"]["rank"],
        "communication_ns": communication,
        "overlapped_ns": overlapped,
        "overlap_share": overlapped / communication,
        "step_idle_ns": step_idle,
        "comm_tasks": len(comm),
        "device_tasks": len(device),
    }


@pytest.fixture(scope="module")
def cluster():
    folder, truth = nccl_cluster(*ARGS)
    report = json.loads(run("cluster", folder, "--format", "json", "--jobs", "2").stdout)
    expected = {}
    for path in sorted(folder.glob("rank-*.pt.trace.json.gz")):
        # Read in a child (cluster_fixtures.in_child says why).
        r = in_child(__file__, path)
        r["step_idle_ns"] = {int(k): v for k, v in r["step_idle_ns"].items()}
        r["overlap_share"] = float(r["overlap_share"])
        expected[r["rank"]] = r
    return report, expected, truth


def test_every_rank_is_read(cluster):
    report, expected, truth = cluster
    assert len(expected) == 8, "the generator wrote 8 ranks"
    assert sorted(r["rank"] for r in report["ranks"]) == list(range(8))
    assert report["world_size"] == 8
    assert report["missing_ranks"] == []
    # 148 collectives per rank (README: 74 per step, 2 steps).
    assert truth["summary"]["collectives_per_rank"] == 148
    for r in report["ranks"]:
        assert r["collectives"] == 148, r


def test_overlap_per_rank_matches_the_interval_computation(cluster):
    report, expected, _ = cluster
    ours = {o["rank"]: o for o in report["overlap"]}
    assert sorted(ours) == list(range(8))
    for rank, want in expected.items():
        got = ours[rank]
        tol = 2 * want["comm_tasks"]
        assert abs(got["communication_ns"] - want["communication_ns"]) <= tol, (rank, got, want)
        assert abs(got["overlapped_ns"] - want["overlapped_ns"]) <= tol, (rank, got, want)
        assert got["overlap_share"] == pytest.approx(want["overlap_share"], abs=1e-6), (rank, got, want)
    # The figures are not trivial (fixture README): ranks that wait inside
    # the MoE all-reduces run compute beside them (4.28-4.30%); rank 3,
    # the last to arrive there, runs none beside its collectives.
    shares = {r: ours[r]["overlap_share"] for r in ours}
    assert all(0.04 < shares[r] < 0.045 for r in shares if r != 3), shares
    assert shares[3] == 0, shares


def test_idle_per_rank_and_step_matches_the_interval_computation(cluster):
    report, expected, _ = cluster
    steps = {s["step"]: s for s in report["steps"]}
    assert sorted(steps) == [0, 1]
    for step, s in steps.items():
        by_rank = {r["rank"]: r for r in s["ranks"]}
        assert sorted(by_rank) == list(range(8))
        for rank, want in expected.items():
            tol = 2 * want["device_tasks"]
            assert abs(by_rank[rank]["idle_ns"] - want["step_idle_ns"][step]) <= tol, (
                step, rank, by_rank[rank]["idle_ns"], want["step_idle_ns"][step])
    for r in report["ranks"]:
        want = sum(expected[r["rank"]]["step_idle_ns"].values())
        assert abs(r["idle_ns"] - want) <= 2 * expected[r["rank"]]["device_tasks"], (r, want)


if __name__ == "__main__":
    print(json.dumps(expected_rank(sys.argv[1])))
