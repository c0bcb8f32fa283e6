"""Tensor statistics and the probe store of a run directory.

    from model_inspector import ProbeStore, tensor_stats
    tensor_stats(np.array([1.0, np.nan, 3.0]))
    # {'count': 3, 'nan': 1, ..., 'min': 1.0, 'max': 3.0, 'mean': 2.0, ...}

    with ProbeStore("runs/r1") as store:
        run = store.begin_run("torch", model="resnet18.onnx")
        store.add(run, "/conv1/Conv:0", array, node="/conv1/Conv")
        store.end_run(run)
        store.series("/conv1/Conv:0", stat="mean")   # over the last runs

The store is ``<run_dir>/probes/probes.db`` (SQLite) plus kept tensors as
``<run_dir>/probes/arrays/<run id>/<n>.npy``; the last ``keep_runs`` runs are
kept. A run's rows appear when ``end_run`` commits them, all at once. The
statistics are computed in C++ in one pass, without the GIL. Layout, tables
and sampling rule: docs/reference/probe-store.md.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional

import numpy as np

from . import _core

#: The statistics every probe has, in table order.
STATS_NAMES = tuple(_core.tensor_stats_names)
#: Kept tensors above this many elements are kept as an evenly strided
#: sample of at most this many elements (stride ceil(count / limit)).
SAMPLE_LIMIT = _core.probe_sample_limit


def _as_array(tensor: Any) -> tuple[np.ndarray, Optional[str]]:
    """A NumPy view of `tensor` the C++ kernel can read, and the dtype name
    to read it as when NumPy has none (bfloat16)."""
    dtype = None
    if hasattr(tensor, "detach") and hasattr(tensor, "dtype"):  # torch
        t = tensor.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if str(t.dtype) == "torch.bfloat16":
            import torch  # only reached with a torch tensor in hand
            t = t.contiguous().view(torch.int16)
            dtype = "bfloat16"
        tensor = t.numpy()
    array = np.asarray(tensor)
    if array.dtype.kind not in "fiub" or array.dtype.itemsize > 8:
        from .errors import Unsupported
        raise Unsupported(f"tensor of dtype {array.dtype}: statistics read float16/32/64, "
                          "bfloat16, int8..int64, uint8..uint64 and bool")
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("="))
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)
    return array, dtype


def tensor_stats(tensor: Any, dtype: Optional[str] = None) -> dict:
    """Statistics of one tensor (a NumPy array, a torch tensor, or anything
    numpy.asarray takes): ``count, nan, pos_inf, neg_inf, zero`` (element
    counts), ``min, max, mean, std, l2, abs_max`` over the finite elements
    (None when there is none; std is the population one, as numpy.std),
    ``dtype`` (NumPy's name; "bfloat16" for torch bfloat16, or when `dtype`
    says so for a uint16/int16 array holding bfloat16 bits) and ``shape``."""
    array, found = _as_array(tensor)
    return _core.tensor_stats(array, dtype or found)


def _loads(text: str) -> Any:
    return json.loads(text)


class ProbeStore:
    """The probe store of one run directory (created when absent)."""

    def __init__(self, run_dir: str | os.PathLike, keep_runs: int = 10):
        if keep_runs < 1:
            raise ValueError(f"keep_runs must be at least 1, got {keep_runs}")
        self.run_dir = os.fspath(run_dir)
        self.keep_runs = keep_runs
        self._store = _core.ProbeStore(self.run_dir, keep_runs=keep_runs, create=True)
        self.probes_dir = self._store.probes_dir

    # -- writing ---------------------------------------------------------

    def begin_run(self, backend: str, model: str = "", level: str = "framework",
                  label: str = "", inputs: str = "") -> int:
        """Starts a run; returns its id (increasing, never reused)."""
        return self._store.begin_run(backend, model=str(model), level=level,
                                     label=label, inputs=str(inputs))

    def add(self, run_id: int, probe: str, tensor: Any, *, node: str,
            kind: str = "output", index: int = 0, step: Optional[int] = None,
            order: int = 0, keep: str = "stats", fp16: bool = False) -> dict:
        """Adds one probed tensor to a run and returns its statistics.
        keep="tensor" also keeps the tensor as a .npy file (a strided
        sample above SAMPLE_LIMIT elements; float16 when `fp16`)."""
        if keep not in ("stats", "tensor"):
            raise ValueError(f"keep must be 'stats' or 'tensor', got {keep!r}")
        array, dtype = _as_array(tensor)
        return self._store.add(run_id, probe, array, node=node, kind=kind,
                               index=index, step=step, order=order,
                               keep_tensor=keep == "tensor", fp16=fp16,
                               dtype=dtype)

    def add_stats(self, run_id: int, probe: str, stats: dict, *, node: str,
                  kind: str = "output", index: int = 0,
                  step: Optional[int] = None, order: int = 0) -> None:
        """Adds statistics computed elsewhere (an imported dump): the keys
        of tensor_stats' dict, any missing or None; other keys are kept as
        extra statistics."""
        try:
            # tensor_stats' own dicts hold plain floats, ints and lists: no
            # walk through them (it cost more than the statistics).
            payload = json.dumps(stats, allow_nan=False)
        except (TypeError, ValueError):
            payload = json.dumps(_plain(stats))
        self._store.add_stats(run_id, probe, payload, node=node,
                              kind=kind, index=index, step=step, order=order)

    def add_plugin_metrics(self, run_id: int, probe: str, plugin: str,
                           metrics: dict) -> None:
        """A plugin's results for one probe ("" for the whole run)."""
        self._store.add_plugin_metrics(run_id, probe, plugin,
                                       json.dumps(_plain(metrics)))

    def add_trigger_hit(self, run_id: int, trigger: str, probe: str, node: str,
                        role: str, detail: str = "", order: int = 0) -> None:
        """A trigger that fired: role "producer" (the node's inputs were
        clean) or "propagator" (an input already had it)."""
        self._store.add_trigger_hit(run_id, trigger, probe, node, role,
                                    detail=detail, order=order)

    def end_run(self, run_id: int, status: str = "complete",
                stopped_at: Optional[str] = None, elapsed_ns: int = 0) -> None:
        """Writes the run (one transaction) as "complete" or "stopped" (a
        trigger paused it at probe `stopped_at`), then deletes runs beyond
        the last keep_runs."""
        self._store.end_run(run_id, status=status, stopped_at=stopped_at or "",
                            elapsed_ns=int(elapsed_ns))

    # -- reading (finished runs) ------------------------------------------

    def runs(self) -> list[dict]:
        """Finished runs, oldest first."""
        return _loads(self._store.runs_json())

    def latest_run(self, level: str = "") -> Optional[dict]:
        return _loads(self._store.latest_run_json(level))

    def _run_or_latest(self, run_id: Optional[int]) -> Optional[int]:
        if run_id is not None:
            return run_id
        latest = self.latest_run()
        return latest["id"] if latest else None

    def probes(self, run_id: Optional[int] = None) -> list[dict]:
        """Rows of a run (the latest when None) in execution order: probe,
        node, kind, index, step, order, stats (tensor_stats' dict), extra,
        array (the kept tensor's file, relative to probes_dir), sampled,
        sample_stride."""
        run = self._run_or_latest(run_id)
        return [] if run is None else _loads(self._store.probes_json(run))

    def _whole(self, rows: list[dict]) -> Optional[dict]:
        # The whole tensor's row (step None) before per-step rows.
        for row in rows:
            if row["step"] is None:
                return row
        return rows[0] if rows else None

    def stats(self, probe: str, run_id: Optional[int] = None) -> Optional[dict]:
        """Statistics of a probe in a run (the latest when None); None when
        the run has no such probe."""
        run = self._run_or_latest(run_id)
        if run is None:
            return None
        row = self._whole(_loads(self._store.probe_rows_json(probe, run=run)))
        return None if row is None else row["stats"]

    def steps(self, probe: str, run_id: Optional[int] = None) -> list[dict]:
        """Per-time-step statistics of a recurrent op's probe:
        [{"step": k, "stats": {...}}] in step order."""
        run = self._run_or_latest(run_id)
        if run is None:
            return []
        rows = _loads(self._store.probe_rows_json(probe, run=run))
        return [{"step": r["step"], "stats": r["stats"]} for r in rows
                if r["step"] is not None]

    def series(self, probe: str, stat: str = "mean", last: int = 10) -> list:
        """One statistic of a probe over the last `last` finished runs that
        have it, oldest first: [{"run": id, "value": v}]."""
        if stat not in STATS_NAMES:
            raise ValueError(f"unknown statistic {stat!r}; expected one of "
                             f"{', '.join(STATS_NAMES)}")
        rows = _loads(self._store.probe_rows_json(probe, run=0, last=last))
        out = []
        for row in rows:
            if row["step"] is None:
                out.append({"run": row["run"], "value": row["stats"][stat]})
        return out

    def tensor(self, probe: str, run_id: Optional[int] = None) -> Optional[np.ndarray]:
        """The kept tensor of a probe (None when only statistics were
        kept). A sampled tensor comes back 1-D (see the row's
        sample_stride)."""
        run = self._run_or_latest(run_id)
        if run is None:
            return None
        row = self._whole(_loads(self._store.probe_rows_json(probe, run=run)))
        if row is None or not row["array"]:
            return None
        return np.load(os.path.join(self.probes_dir, row["array"]))

    def trigger_hits(self, run_id: Optional[int] = None) -> list[dict]:
        run = self._run_or_latest(run_id)
        return [] if run is None else _loads(self._store.trigger_hits_json(run))

    def plugin_metrics(self, run_id: Optional[int] = None) -> list[dict]:
        run = self._run_or_latest(run_id)
        return [] if run is None else _loads(self._store.plugin_metrics_json(run))

    def table(self, run_id: Optional[int] = None):
        """The run's probes as a pandas DataFrame (one row per probe and
        step, one column per statistic)."""
        import pandas as pd
        rows = []
        for r in self.probes(run_id):
            row = {k: r[k] for k in ("probe", "node", "kind", "index", "step", "order")}
            row.update({k: r["stats"][k] for k in STATS_NAMES})
            row["dtype"] = r["stats"]["dtype"]
            row["shape"] = tuple(r["stats"]["shape"])
            rows.append(row)
        return pd.DataFrame(rows)

    # -- lifetime -----------------------------------------------------------

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> "ProbeStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ProbeStore({self.run_dir!r}, keep_runs={self.keep_runs})"


def _plain(value: Any) -> Any:
    """numpy scalars and arrays to what json.dumps takes."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, float) and value != value:
        return None
    return value
