"""The generated NCCL cluster says what test/fixtures/cluster_nccl/README.md
says it does, checked on the rank files themselves (not on the
generator's bookkeeping), so that tests diagnosing it rest on facts:
ranks and groups, the collectives' ends aligned across ranks once the
clock offsets are removed, the last arrival's kernel the shortest, the
injected op type's time on the slow rank, and the truth file's arrivals
equal to the kernels' starts in the files.
"""
import gzip
import json
import statistics
import sys
from decimal import Decimal

import pytest

from cluster_fixtures import in_child, nccl_cluster

OFFSET_US = Decimal(1000)
ARGS = ("--clock-offset-us", "1000")


def load(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=Decimal)


def rank_facts(path):
    """What the tests check of one rank file, small enough to pass back
    from the child that reads it."""
    doc = load(path)
    events = doc["traceEvents"]
    colls = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
                    and e["name"].startswith("nccl")), key=lambda e: e["ts"])
    keep = ("Process Group Name", "Collective name", "In msg nelems", "Group size", "dtype",
            "External id")
    rpc_rank = {e["args"]["External id"]: e["args"]["Rank"] for e in events
                if e.get("name") == "record_param_comms"}
    op_of = {e["args"]["External id"]: e["name"] for e in events if e.get("cat") == "cpu_op"}
    moe = sum(e["dur"] for e in events if e.get("cat") == "kernel"
              and op_of.get(e["args"].get("External id")) == "vllm::moe_forward")
    return {"distributedInfo": {k: doc["distributedInfo"][k] for k in ("rank", "world_size", "backend")},
            # Exact decimals travel as strings.
            "collectives": [{"ts": str(c["ts"]), "dur": str(c["dur"]),
                             "args": {k: c["args"][k] for k in keep},
                             "rpc_rank": rpc_rank.get(c["args"]["External id"])} for c in colls],
            "moe_us": str(moe)}


@pytest.fixture(scope="module")
def ranks():
    folder, truth = nccl_cluster(*ARGS)
    docs = {}
    for path in sorted(folder.glob("rank-*.pt.trace.json.gz")):
        doc = in_child(__file__, path)
        for c in doc["collectives"]:
            c["ts"], c["dur"] = Decimal(c["ts"]), Decimal(c["dur"])
        doc["moe_us"] = Decimal(doc["moe_us"])
        docs[doc["distributedInfo"]["rank"]] = doc
    return docs, truth


def collectives(doc):
    return doc["collectives"]


def test_ranks_and_groups(ranks):
    docs, truth = ranks
    assert sorted(docs) == list(range(8))
    for r, doc in docs.items():
        info = doc["distributedInfo"]
        assert (info["rank"], info["world_size"], info["backend"]) == (r, 8, "nccl")
        colls = collectives(doc)
        assert len(colls) == 148 == truth["summary"]["collectives_per_rank"]
        groups = [c["args"]["Process Group Name"] for c in colls]
        assert groups.count("0") == 146 and groups.count("3") == 2
        ar = [c for c in colls if c["args"]["Collective name"] == "allreduce"]
        assert len(ar) == 146
        # The source's 73 all-reduces per step: 37 of 2,557,440 and 36 of
        # 2,727,936 bf16 elements (their ops' Input Dims).
        sizes = [c["args"]["In msg nelems"] for c in ar]
        assert (sizes.count(2557440), sizes.count(2727936)) == (74, 72)
        assert all(c["args"]["Group size"] == 8 and c["args"]["dtype"] == "BFloat16" for c in ar)
        # Every collective kernel has its record_param_comms with the same
        # External id, naming this rank.
        for c in colls:
            assert c["rpc_rank"] == r


def test_collective_ends_align_and_the_last_arrival_is_shortest(ranks):
    docs, truth = ranks
    per_rank = {r: collectives(doc) for r, doc in docs.items()}
    for i in range(148):
        # True time: the file's clock minus the rank's offset (r x 1000 us).
        starts = {r: per_rank[r][i]["ts"] - r * OFFSET_US for r in docs}
        ends = {r: starts[r] + per_rank[r][i]["dur"] for r in docs}
        assert max(ends.values()) - min(ends.values()) <= Decimal("0.2") + Decimal("0.002"), i
        last = max(starts, key=starts.get)
        # The last to arrive waits least: its kernel is the shortest, up
        # to the ends' spread.
        durs = {r: per_rank[r][i]["dur"] for r in docs}
        assert durs[last] <= min(durs.values()) + Decimal("0.2") + Decimal("0.002"), i
        inst = truth["instances"][i]
        assert inst["last_rank"] == last
        for rr in inst["ranks"]:
            assert Decimal(str(rr["arrival_us"])) == per_rank[rr["rank"]][i]["ts"], (i, rr)


def test_slow_rank_spends_half_again_in_the_injected_op_type(ranks):
    docs, truth = ranks
    assert truth["summary"]["slow_rank"] == 3
    assert truth["summary"]["injected_op_type"] == "vllm::moe_forward"
    moe = {r: doc["moe_us"] for r, doc in docs.items()}
    others = statistics.median(float(moe[r]) for r in docs if r != 3)
    # x1.5 before a jitter of +-0.5% per kernel.
    assert float(moe[3]) / others == pytest.approx(1.5, abs=0.01)
    # Summed over the 2 steps: the source's 6,078.4 us per step (README).
    assert others == pytest.approx(2 * 6078.4, rel=0.01)
    # Rank 3 arrives last at every collective after a MoE block, by the
    # injected delay (mean 84.4 us) within the jitter.
    hit = [i for i in truth["instances"] if i["injected_delay_us"] > 0]
    assert len(hit) == 72
    assert all(i["last_rank"] == 3 for i in hit)
    for i in hit:
        assert i["arrival_skew_us"] == pytest.approx(i["injected_delay_us"], abs=25)


if __name__ == "__main__":
    print(json.dumps(rank_facts(sys.argv[1])))
