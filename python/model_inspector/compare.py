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
(docs/design/compare.md). Matching, metrics and the pass/fail rule run in
C++ (`_core.compare_runs_json`, the code behind `model-inspector compare`;
`_core.compare_probe_sets_json` for probe sets built by hand); thresholds default to msprobe's
accuracy standard and are keyword arguments: rule="msprobe" (or "msit":
msit's analyser limits), cosine_min=0.99, max_abs_err_max=0.001,
cosine_floor=0.9, max_abs_err_ceiling=1.0, stats_rel_err_max=0.5, and gates
off (-1) by default: one_thousandth_min, max_rel_err_max, mean_rel_err_max,
relative_euclidean_max, rmse_max; fp16_overflow_fails=False.
"""

from __future__ import annotations

import os
import tempfile
from typing import Optional

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


def _resolve_side(side, which: str, inputs, tmps: list) -> str:
    """A side as a run directory with a probe store: itself, a ProbeStore's,
    or a temporary one the runner (a model) or the importer (a dump)
    filled."""
    from .store import ProbeStore
    if isinstance(side, ProbeStore):
        return str(side.run_dir)
    path = os.fspath(side)
    if os.path.isdir(path) and _is_store_dir(path):
        return path
    if os.path.isdir(path) and _is_msprobe_dir(path):
        from .msprobe import import_msprobe
        tmp = tempfile.TemporaryDirectory(prefix="mi_compare_")
        tmps.append(tmp)
        import_msprobe(path, tmp.name)
        return tmp.name
    if os.path.isfile(path) and path.endswith(".onnx"):
        tmp = tempfile.TemporaryDirectory(prefix="mi_compare_")
        tmps.append(tmp)
        run_model(path, inputs, tmp.name)
        return tmp.name
    from .errors import NotFound
    raise NotFound(f"side {which}: {path} is neither a run directory with a probe store "
                   "(probes/probes.db), an msprobe dump nor an .onnx model")


def compare(a, b, inputs=None, *, match: str = "auto", run_a: Optional[int] = None,
            run_b: Optional[int] = None, **thresholds):
    """Compares side A (the reference) with side B; returns the report (a
    `Result`: pass, compared / passed / failed counts, first_divergent_node,
    entries in execution order with their metrics, fused groups matched or
    why not; `.table("entries")`). See the module doc for sides and
    thresholds. The same report as `model-inspector compare A B --format
    json`: both read the run directories with `_core.compare_runs_json`."""
    t = _thresholds(thresholds)
    tmps: list = []
    try:
        dir_a = _resolve_side(a, "A", inputs, tmps)
        dir_b = _resolve_side(b, "B", inputs, tmps)
        report = decode(_core.compare_runs_json(dir_a, dir_b, run_a or 0, run_b or 0,
                                                match, t))
        report["a"] = _label(a)
        report["b"] = _label(b)
        return report
    finally:
        for tmp in tmps:
            tmp.cleanup()


def _label(side) -> str:
    from .store import ProbeStore
    return str(side.run_dir) if isinstance(side, ProbeStore) else os.fspath(side)
