"""`model-inspector open DIR` on a directory of ranks: the real binary on port
0 serving the cluster (docs/reference/http-api.md "Cluster"), on the real
2-rank torch_npu text export (test/fixtures/samples/cluster/
msinsight_pt_text_level1_2rank_2024, origins in samples/SOURCES.md).

Expected values come from the rank folders themselves (profiler_info_N.json
names each rank) and from `model-inspector cluster DIR --format json` (the
command line's report, which the server must serve as it is)."""
import json

import pytest

from conftest import SAMPLES, committed, run
from served import ServedProcess

CLUSTER = SAMPLES / "cluster" / "msinsight_pt_text_level1_2rank_2024"
JSON_POST = {"Content-Type": "application/json"}


def rank_folders():
    """rank id -> its folder, read from each folder's profiler_info_N.json."""
    out = {}
    for folder in sorted(committed(CLUSTER).glob("*_ascend_pt")):
        info = next(folder.glob("profiler_info_*.json"))
        out[json.loads(info.read_text())["rank_id"]] = folder
    return out


@pytest.fixture(scope="module")
def served():
    s = ServedProcess(["open", "--no-browser", committed(CLUSTER)], 300)
    try:
        yield s
    finally:
        assert s.close() == 0


def post_ranks(s, ranks, headers=JSON_POST):
    return s.request("/api/cluster/ranks", method="POST", headers=headers,
                     body=json.dumps({"ranks": ranks}))


def test_serves_the_command_lines_report_and_no_run(served):
    report = served.get_json("/api/cluster")
    assert report["schema"] == "model-inspector/cluster/1"
    ranks = rank_folders()
    assert sorted(ranks) == [0, 1]
    assert [r["rank"] for r in report["ranks"]] == sorted(ranks)
    for r in report["ranks"]:
        assert r["rank_from"] == "profiler_info"
        assert r["files"] and all(str(ranks[r["rank"]]) in f for f in r["files"])
    cli = json.loads(run("cluster", CLUSTER, "--format", "json").stdout)
    assert report == cli
    # The UI's first screen: the same without the collectives' per-rank rows,
    # which come one collective at a time.
    light = served.get_json("/api/cluster?collective_ranks=0")
    assert light["collectives"] and all(c["ranks"] == [] for c in light["collectives"])
    assert [dict(c, ranks=[]) for c in report["collectives"]] == light["collectives"]
    assert {k: v for k, v in light.items() if k != "collectives"} == \
        {k: v for k, v in report.items() if k != "collectives"}
    for i, c in enumerate(report["collectives"]):
        assert served.get_json(f"/api/cluster/collectives/{i}")["collectives"] == [c]
    served.get_json(f"/api/cluster/collectives/{len(report['collectives'])}", status=404)
    # Ranks open only when asked: no run at first.
    assert served.get_json("/api/runs") == {"runs": [], "cluster": True, "history": False}
    assert served.get_json("/api/runs/0/summary", status=404)["error"]["message"] == \
        "no run 0; the server has no runs yet"


def test_ranks_open_as_runs_once(served):
    ranks = rank_folders()
    code, _, body = post_ranks(served, [1])
    assert code in (200, 201), body
    one = json.loads(body)
    assert one["ranks"] == [1]
    runs = served.get_json("/api/runs")["runs"]
    run1 = runs[one["run"]]
    assert run1["name"] == "rank 1" and run1["has_trace"]
    assert run1["inputs"] and all(str(ranks[1]) in i["path"] for i in run1["inputs"])
    # The run is an ordinary run: its timeline, its summary.
    assert served.get_json(f"/api/runs/{one['run']}/timeline")["task_count"] > 0
    served.get_json(f"/api/runs/{one['run']}/summary")
    # Asked again: the same run, nothing added.
    code, _, body = post_ranks(served, [1, 1])
    assert code == 200 and json.loads(body) == {"run": one["run"], "created": False, "ranks": [1]}
    # Both ranks: one run of both folders' files.
    code, _, body = post_ranks(served, [1, 0])
    assert code in (200, 201), body
    both = json.loads(body)
    assert both["ranks"] == [0, 1] and both["run"] != one["run"]
    inputs = served.get_json("/api/runs")["runs"][both["run"]]["inputs"]
    assert any(str(ranks[0]) in i["path"] for i in inputs)
    assert any(str(ranks[1]) in i["path"] for i in inputs)


def test_bad_requests(served):
    code, _, body = post_ranks(served, [7])
    assert code == 400
    assert json.loads(body)["error"]["message"] == \
        "ranks: the cluster has no rank 7; its ranks are 0, 1"
    code, _, _ = served.request("/api/cluster/ranks", method="POST", headers=JSON_POST,
                                body='{"ranks": "0"}')
    assert code == 400
    code, _, _ = post_ranks(served, [0], headers={"Content-Type": "text/plain"})
    assert code == 415
    code, headers, _ = served.request("/api/cluster/ranks")
    assert code == 405 and headers["Allow"] == "POST"
    code, _, _ = post_ranks(served, [0], headers={**JSON_POST, "Origin": "http://evil.example"})
    assert code == 403


def test_token_and_no_cluster():
    guarded = ServedProcess(["open", "--no-browser", "--quiet", "--token", "s3cret",
                             committed(CLUSTER)], 300)
    try:
        code, _, _ = guarded.request("/api/cluster")
        assert code == 403
        code, _, _ = post_ranks(guarded, [0])
        assert code == 403
        report = guarded.get_json("/api/cluster", headers={"X-MI-Token": "s3cret"})
        assert len(report["ranks"]) == 2
    finally:
        assert guarded.close() == 0
    # --no-cluster: the directory as one run of both ranks, as before.
    plain = ServedProcess(["open", "--no-browser", "--quiet", "--no-cluster",
                           committed(CLUSTER)], 300)
    try:
        assert plain.get_json("/api/cluster", status=404)["error"]["status"] == 404
        runs = plain.get_json("/api/runs")
        assert len(runs["runs"]) == 1 and runs["cluster"] is False
    finally:
        assert plain.close() == 0
