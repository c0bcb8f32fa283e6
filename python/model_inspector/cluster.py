"""The ranks of a distributed job side by side, the per-rank reduction
spread over a Dask cluster (docs/guides/python.md "Clusters";
docs/design/clusters.md).

    import model_inspector as mi
    report = mi.cluster.summarize(["prof/"])                 # in this process
    from distributed import Client
    with Client("tcp://scheduler:8786") as client:
        report = mi.cluster.summarize(["prof/"], client=client)
    report["slow_ranks"], report.table("collectives")

The steps are the C++ core's (include/model_inspector/cluster.h):
discovery (`discover`: which files make up which rank), then one
`reduce_rank` per rank (opens that rank's files, reduces them to a compact
summary, closes them), mapped over the client's workers with `client.map`
(each worker reads its rank's files: the paths must be readable where the
workers run), then the summaries merged and analysed here. The report is
the one `model-inspector cluster --format json` writes.
"""

from __future__ import annotations

import os
import tempfile
from typing import Iterable, Optional

from . import _core
from .results import decode


def discover(paths: Iterable[str | os.PathLike]) -> dict:
    """The ranks `paths` hold: {"ranks": [{rank, rank_from, files,
    world_size, device_name}], "summary_files": [rank summaries given as
    inputs]}."""
    return _core.discover_cluster_ranks([os.fspath(p) for p in _as_list(paths)])


def reduce_rank(rank: dict) -> str:
    """One rank's summary (the cluster-summary JSON text) from its files; a
    top-level function so that Dask can ship it to a worker."""
    return _core.reduce_cluster_rank(rank)


def _as_list(paths) -> list:
    if isinstance(paths, (str, os.PathLike)):
        return [paths]
    return list(paths)


def summarize(paths, client=None, link_peaks: Optional[str | os.PathLike] = None):
    """Discovers the ranks of `paths`, reduces each (on `client`'s workers
    when given: a `distributed.Client`; else one after another here),
    merges the summaries and analyses the cluster. Returns the report (a
    `Result`; `.table("collectives")`). `link_peaks`: a link-peaks JSON
    file overriding the built-in table (as `cluster --link-peaks`)."""
    inputs = discover(paths)
    ranks = inputs["ranks"]
    if client is not None and ranks:
        futures = client.map(reduce_rank, ranks, pure=False,
                             key=[f"model-inspector-reduce-rank-{r['rank']}-{os.getpid()}-{id(ranks)}"
                                  for r in ranks])
        summaries = client.gather(futures)
    else:
        summaries = [reduce_rank(r) for r in ranks]
    with tempfile.TemporaryDirectory(prefix="mi_cluster_") as tmp:
        files = list(inputs["summary_files"])
        for rank, text in zip(ranks, summaries):
            path = os.path.join(tmp, f"rank_{rank['rank']}.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            files.append(path)
        return decode(_core.analyze_cluster_json(
            files, os.fspath(link_peaks) if link_peaks else ""))
