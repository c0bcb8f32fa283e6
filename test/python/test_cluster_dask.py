"""model_inspector.cluster.summarize over a Dask cluster of worker
processes, and in this process: both equal `model-inspector cluster
--format json` (the CLI reads and reduces the ranks on its own threads).

The fixture is test/fixtures/multirank (two Kineto ranks, see its README)."""

import json
import os

import pytest

from conftest import committed, FIXTURES, PACKAGE, run


import model_inspector as mi  # noqa: E402

MULTIRANK = FIXTURES / "multirank"


def cli_report(*paths):
    return json.loads(run("cluster", *paths, "--format", "json").stdout)


def test_in_process_equals_the_cli():
    committed(MULTIRANK / "rank0.pt.trace.json")
    report = mi.cluster.summarize([MULTIRANK])
    assert report == cli_report(MULTIRANK)
    assert [r["rank"] for r in report["ranks"]] == [0, 1]


def test_discovery_names_each_ranks_files():
    inputs = mi.cluster.discover([MULTIRANK])
    assert [r["rank"] for r in inputs["ranks"]] == [0, 1]
    assert [os.path.basename(r["files"][0]) for r in inputs["ranks"]] == \
        ["rank0.pt.trace.json", "rank1.pt.trace.json"]
    assert inputs["summary_files"] == []


def test_local_process_cluster_equals_the_cli():
    import distributed  # scripts/setup.sh installs python3-distributed
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", PACKAGE)}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, env=env) as cluster, \
            distributed.Client(cluster) as client:
        report = mi.cluster.summarize([MULTIRANK], client=client)
        # Each rank was reduced in a worker process, not here.
        pids = set(client.run(os.getpid).values())
        assert os.getpid() not in pids and len(pids) == 2
    assert report == cli_report(MULTIRANK)


def test_bad_input_raises_the_cores_error(tmp_path):
    (tmp_path / "notes.txt").write_text("not a profile")
    with pytest.raises(mi.Error):
        mi.cluster.summarize([tmp_path])
