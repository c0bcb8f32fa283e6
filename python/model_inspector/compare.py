"""Compare two runs tensor by tensor (docs/guides/compare.md).

    import model_inspector as mi
    res = mi.compare("runs/fp32", "runs/npu")            # two probe stores
    res = mi.compare("model.onnx", "model.optimized.onnx", inputs=x)
    res["pass"], res["first_divergent_node"]
    res.table("entries")                                  # a DataFrame

A side is a run directory with a probe store (`<dir>/probes/probes.db`; its
latest run, or `run_a` / `run_b`), a `ProbeStore`, a model file (.onnx: run
as it is, once, on `inputs` — arrays or .npy paths; None: the runner's
deterministic input — on ONNX Runtime with every node probed and tensors
kept, as `python3 -m model_inspector.runner` does), or an msprobe dump
directory (imported first, see `import_msprobe`).

Matching: by probe name (two runs of one model, two inputs, PyTorch against
its ONNX export), or, when B is the compiled form of A's model (its graph
carries fused_from other than itself), through fused_from: a compiled
node's output against the framework tensor it computes
(docs/design/compare.md). Metrics and the pass/fail rule run in C++
(`_core.compare_probe_sets_json`); thresholds default to msprobe's
accuracy standard and are keyword arguments: rule="msprobe" (or "msit":
msit's analyser limits), cosine_min=0.99, max_abs_err_max=0.001,
cosine_floor=0.9, max_abs_err_ceiling=1.0, stats_rel_err_max=0.5, and gates
off (-1) by default: one_thousandth_min, max_rel_err_max, mean_rel_err_max,
relative_euclidean_max, rmse_max; fp16_overflow_fails=False.
"""

from __future__ import annotations

import os
import pathlib
import sys
import tempfile
import types
from typing import Any, Optional

from . import _core
from .results import decode

THRESHOLDS = ("rule", "cosine_min", "max_abs_err_max", "cosine_floor",
              "max_abs_err_ceiling", "stats_rel_err_max", "one_thousandth_min",
              "max_rel_err_max", "mean_rel_err_max", "relative_euclidean_max",
              "rmse_max", "fp16_overflow_fails")


def compare_tensors(a, b, *, dtype_a: str = "", dtype_b: str = "", **thresholds) -> dict:
    """Metrics of two arrays of the same element count (any numeric dtypes;
    A is the reference) and the verdict: cosine, max_abs_err, mean_abs_err,
    rmse, max_rel_err, mean_rel_err, one_thousandth_ratio,
    five_thousandths_ratio, ten_thousandth_ratio, relative_euclidean,
    NaN/Inf mismatches, fp16_overflow_a/b, verdict, reasons. `dtype_a` /
    `dtype_b` name the element type of raw buffers ("bfloat16" for torch's
    bfloat16 viewed as int16)."""
    import numpy as np
    dtype_a = dtype_a or _bfloat16_name(a)
    dtype_b = dtype_b or _bfloat16_name(b)
    xa = _as_numpy(a)
    xb = _as_numpy(b)
    return _core.compare_tensors(np.ascontiguousarray(xa), np.ascontiguousarray(xb),
                                 _thresholds(thresholds), dtype_a, dtype_b)


def _bfloat16_name(x) -> str:
    return "bfloat16" if str(getattr(x, "dtype", "")) == "torch.bfloat16" else ""


def _as_numpy(x):
    import numpy as np
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor
        x = x.detach().cpu()
        if str(x.dtype) == "torch.bfloat16":
            import torch
            return x.view(torch.int16).numpy().view(np.uint16)
        return x.numpy()
    return np.asarray(x)


def _thresholds(given: dict) -> dict:
    for key in given:
        if key not in THRESHOLDS:
            raise TypeError(f"unknown threshold {key!r}; expected one of "
                            f"{', '.join(THRESHOLDS)}")
    return {k: v for k, v in given.items() if v is not None}


class _Side:
    """One side of a compare: its probe store, run and model."""

    def __init__(self, store, run: dict, label: str, tmp=None):
        self.store = store
        self.run = run
        self.label = label
        self.tmp = tmp  # a TemporaryDirectory that holds a run made here

    @property
    def model(self) -> str:
        model = self.run.get("model") or ""
        if model and not os.path.isabs(model) and not os.path.exists(model):
            candidate = os.path.join(str(self.store.run_dir), model)
            if os.path.exists(candidate):
                return candidate
        return model

    @property
    def compiled_model(self) -> str:
        """The graph the run probed: for a run of ONNX Runtime's compiled
        graph (level "compiled", as the runner's --level compiled records
        it), the optimized model kept in the run directory."""
        if self.run.get("level") == "compiled":
            kept = os.path.join(str(self.store.run_dir), "ort", "model.optimized.onnx")
            if os.path.isfile(kept):
                return kept
        return self.model

    def probe_set(self, nodes=None) -> dict:
        probes_dir = pathlib.Path(self.store.probes_dir)
        rows = []
        for row in self.store.probes(self.run["id"]):
            stats = row.get("stats") or {}
            array = row.get("array") or ""
            rows.append({
                "probe": row["probe"], "node": row["node"],
                "kind": row.get("kind", "output"), "index": row.get("index", 0),
                "step": row.get("step"), "order": row.get("order", 0),
                "dtype": stats.get("dtype", ""), "shape": stats.get("shape") or [],
                "stats": stats,
                "array_path": str(probes_dir / array) if array else "",
            })
        return {"label": self.label, "level": self.run.get("level", ""),
                "probes": rows, "nodes": nodes or []}


def run_model(model: str, inputs, out_dir: str) -> dict:
    """Runs the model file as it is (no further graph optimization) once on
    `inputs` (arrays, .npy paths as the runner takes them, or None: the
    runner's deterministic input x[i] = (i % 7) / 7) with every node probed
    and tensors kept, into the probe store of `out_dir`: the runner's
    `probe_run`, what `python3 -m model_inspector.runner` does."""
    from .runner import load_inputs, probe_run
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [os.fspath(inputs)]
    if isinstance(inputs, (list, tuple)) and inputs and all(
            isinstance(i, (str, os.PathLike)) for i in inputs):
        import onnx
        graph = onnx.load(model, load_external_data=False).graph
        names = [i.name for i in graph.input
                 if i.name not in {t.name for t in graph.initializer}]
        inputs = load_inputs([os.fspath(i) for i in inputs], names)
    elif inputs is not None and not isinstance(inputs, dict):
        inputs = _as_numpy(inputs) if not isinstance(inputs, tuple) else tuple(
            _as_numpy(i) for i in inputs)
    return probe_run(model, out_dir, inputs=inputs, probes=("*",), keep="tensor",
                     level="framework")


def _is_store_dir(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "probes", "probes.db"))


def _is_msprobe_dir(path: str) -> bool:
    from .msprobe import find_dump_files
    try:
        return bool(find_dump_files(path))
    except Exception:
        return False


def _open_side(side, which: str, inputs, run_id: Optional[int]) -> _Side:
    from .store import ProbeStore
    if isinstance(side, ProbeStore):
        store, label, tmp = side, str(side.run_dir), None
    else:
        path = os.fspath(side)
        tmp = None
        if os.path.isdir(path) and _is_store_dir(path):
            store, label = ProbeStore(path), path
        elif os.path.isdir(path) and _is_msprobe_dir(path):
            from .msprobe import import_msprobe
            tmp = tempfile.TemporaryDirectory(prefix="mi_compare_")
            import_msprobe(path, tmp.name)
            store, label = ProbeStore(tmp.name), path
        elif os.path.isfile(path) and path.endswith(".onnx"):
            tmp = tempfile.TemporaryDirectory(prefix="mi_compare_")
            run_model(path, inputs, tmp.name)
            store, label = ProbeStore(tmp.name), path
        else:
            from .errors import NotFound
            raise NotFound(f"side {which}: {path} is neither a run directory with a "
                           "probe store (probes/probes.db), an msprobe dump nor an "
                           ".onnx model")
    runs = store.runs()
    if not runs:
        from .errors import NotFound
        raise NotFound(f"side {which}: the probe store of {label} holds no run")
    if run_id is None:
        run = max(runs, key=lambda r: r["id"])
    else:
        matching = [r for r in runs if r["id"] == run_id]
        if not matching:
            from .errors import NotFound
            raise NotFound(f"side {which}: run {run_id} is not in the probe store of "
                           f"{label} (runs {', '.join(str(r['id']) for r in runs)})")
        run = matching[0]
    return _Side(store, run, label, tmp)


def _compiled_of(graphs: dict) -> bool:
    """Whether B's graph is a compiled form of A's: a node that replaced
    other framework nodes than itself."""
    return any(n["fused_from"] and n["fused_from"] != [n["name"]]
               for n in graphs["compiled"])


def _is_model(side) -> bool:
    return isinstance(side, (str, os.PathLike)) and os.fspath(side).endswith(".onnx") \
        and os.path.isfile(os.fspath(side))


def compare(a, b, inputs=None, *, match: str = "auto", run_a: Optional[int] = None,
            run_b: Optional[int] = None, **thresholds):
    """Compares side A (the reference) with side B; returns the report (a
    `Result`: pass, compared / passed / failed counts, first_divergent_node,
    entries in execution order with their metrics, fused groups matched or
    why not; `.table("entries")`). See the module doc for sides and
    thresholds."""
    t = _thresholds(thresholds)
    graphs = None
    if _is_model(a) and _is_model(b) and match != "name":
        graphs = _core.level_graphs(os.fspath(a), os.fspath(b))
    side_a = _open_side(a, "A", inputs, run_a)
    side_b = _open_side(b, "B", inputs, run_b)
    try:
        nodes_a = nodes_b = None
        if match != "name":
            if graphs is None:
                model_a, model_b = side_a.model, side_b.compiled_model
                if model_a and model_b and os.path.isfile(model_a) and os.path.isfile(model_b):
                    graphs = _core.level_graphs(model_a, model_b)
            if graphs is not None and (_compiled_of(graphs) or match == "fused_from"):
                nodes_a, nodes_b = graphs["framework"], graphs["compiled"]
        set_a = side_a.probe_set(nodes_a)
        set_b = side_b.probe_set(nodes_b)
        if nodes_b:
            set_a["level"], set_b["level"] = "framework", "compiled"
        return decode(_core.compare_probe_sets_json(set_a, set_b, match, t))
    finally:
        for side in (side_a, side_b):
            if side.tmp is not None:
                side.store.close()
                side.tmp.cleanup()


class _CallableModule(types.ModuleType):
    """`model_inspector.compare` is both this module and the function: once
    the module is imported (``from model_inspector.compare import ...``)
    the package's attribute is the module, so calling it calls compare()."""

    def __call__(self, *args, **kwargs):
        return compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
