"""msprobe (Ascend mstt) dumps as probe data (docs/guides/compare.md).

    import model_inspector as mi
    mi.import_msprobe("dump/step0/rank0", "runs/npu")   # -> [run ids]
    mi.compare("runs/gpu", "runs/npu")                   # probe by probe

A dump is `dump_path/step{N}/rank{R}/dump.json` (+ `dump_tensor_data/`
with one .npy or .pt file per tensor when the task was "tensor"), as
msprobe's PyTorch and MindSpore dumps write it. `dump.json` holds
`{task, level, framework, dump_data_dir, data: {"<API or Module>.<name>.<n>
.forward|backward": {input_args: [...], input_kwargs: {...}, output: [...]}}}`
where each tensor item carries `dtype, shape, Max, Min, Mean, Norm`
(statistics; `data_name` names its tensor file).

Each dump.json becomes one run of the run directory's probe store
(backend "msprobe", label "step0/rank0"). Each entry is a node (the entry's
name), in the file's order (msprobe writes entries as they execute);
output k is probe `<entry>:<k>`, positional input k `<entry>:in<k>`, keyword
input `name` `<entry>:in.<name>`, a backward entry's `input` / `output`
gradients `<entry>:grad_in<k>` / `<entry>:grad<k>` (kind "grad"). Items
that are lists or tuples of tensors are flattened in order, each taking the
next index. Non-tensor items (ints, None) keep their position but make no
probe. Statistics: Max -> max, Min -> min, Mean -> mean, Norm -> l2 (the
L2 norm), count = the product of the shape; NaN/Inf counts are unknown
(unknown); md5 and requires_grad are kept as extra statistics, a Max /
Min / Mean / Norm that is not finite ("inf", "nan") as `msprobe_max` etc.
With a tensor file (task "tensor"), the tensor itself is kept and its
statistics are computed from it.
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any, Iterator, Optional

_STATS = {"Max": "max", "Min": "min", "Mean": "mean", "Norm": "l2"}
_TENSOR_TYPES = ("torch.Tensor", "mindspore.Tensor", "numpy.ndarray", "torch.nn.parameter.Parameter")


def find_dump_files(path: str) -> list[str]:
    """The dump.json files of an msprobe dump: `path` itself, or a folder
    holding dump.json, or a dump tree (step*/rank*/dump.json), sorted."""
    if os.path.isfile(path):
        return [path] if os.path.basename(path) == "dump.json" else []
    found = []
    for root, _dirs, files in os.walk(path):
        if "dump.json" in files:
            with open(os.path.join(root, "dump.json"), "rb") as f:
                head = f.read(4096)
            if b'"data"' in head or b'"task"' in head:
                found.append(os.path.join(root, "dump.json"))
    return sorted(found)


def _dtype_name(dtype: Optional[str]) -> str:
    if not dtype:
        return ""
    name = dtype.split(".")[-1]
    return {"float": "float32", "half": "float16", "double": "float64",
            "long": "int64", "int": "int32", "Float32": "float32",
            "Float16": "float16", "BFloat16": "bfloat16", "Int64": "int64",
            "Int32": "int32", "Bool": "bool"}.get(name, name)


def _number(v: Any) -> Optional[float]:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):  # "inf", "-inf", "nan" as msprobe writes them
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _is_tensor(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") in _TENSOR_TYPES


def _flatten(items: Any) -> Iterator[Any]:
    """Items in order; nested lists / tuples of tensors flattened."""
    if isinstance(items, list):
        for item in items:
            if isinstance(item, list):
                yield from _flatten(item)
            else:
                yield item
    elif items is not None:
        yield items


def _stats_of(item: dict) -> dict:
    shape = list(item.get("shape") or [])
    count = 1
    for d in shape:
        count *= int(d)
    stats = {"count": count, "nan": -1, "pos_inf": -1, "neg_inf": -1, "zero": -1,
             "min": None, "max": None, "mean": None, "std": None, "l2": None,
             "abs_max": None, "dtype": _dtype_name(item.get("dtype")), "shape": shape}
    for key, name in _STATS.items():
        value = _number(item.get(key))
        stats[name] = value if value is None or math.isfinite(value) else None
        if value is not None and not math.isfinite(value):
            stats[f"msprobe_{key.lower()}"] = value
    if stats["max"] is not None and stats["min"] is not None:
        stats["abs_max"] = max(abs(stats["max"]), abs(stats["min"]))
    for extra in ("md5", "requires_grad"):
        if extra in item:
            stats[extra] = item[extra]
    return stats


def _probes_of(name: str, entry: dict) -> Iterator[tuple[str, str, int, dict]]:
    """(probe, kind, index, item) of one dump.json entry."""
    backward = name.endswith(".backward") or ".backward." in name
    if backward:
        for k, item in enumerate(_flatten(entry.get("input"))):
            yield f"{name}:grad_in{k}", "grad", k, item
        for k, item in enumerate(_flatten(entry.get("output"))):
            yield f"{name}:grad{k}", "grad", k, item
        return
    args = list(_flatten(entry.get("input_args", entry.get("input"))))
    for k, item in enumerate(args):
        yield f"{name}:in{k}", "input", k, item
    kwargs = entry.get("input_kwargs") or {}
    for j, (key, item) in enumerate(kwargs.items()):
        for sub in _flatten(item):
            yield f"{name}:in.{key}", "input", len(args) + j, sub
    for k, item in enumerate(_flatten(entry.get("output"))):
        yield f"{name}:{k}", "output", k, item


def _load_tensor(path: str):
    if path.endswith(".npy"):
        import numpy as np
        return np.load(path, allow_pickle=False)
    import torch
    return torch.load(path, map_location="cpu")


def import_msprobe(dump_dir: str | os.PathLike, run_dir: str | os.PathLike,
                   keep_runs: int = 10) -> list[int]:
    """Imports every dump.json under `dump_dir` into the probe store of
    `run_dir` (created when absent); returns the new run ids, one per
    dump.json in path order."""
    from .errors import MalformedInput, NotFound
    from .store import ProbeStore

    dump_dir = os.fspath(dump_dir)
    files = find_dump_files(dump_dir)
    if not files:
        raise NotFound(f"{dump_dir}: no msprobe dump.json found (expected "
                       "dump.json, or step*/rank*/dump.json below it)")
    run_ids = []
    with ProbeStore(run_dir, keep_runs=keep_runs) as store:
        for path in files:
            try:
                with open(path, encoding="utf-8") as f:
                    dump = json.load(f)
            except (OSError, ValueError) as e:
                raise MalformedInput(f"{path}: not an msprobe dump.json: {e}") from None
            if not isinstance(dump, dict) or not isinstance(dump.get("data"), dict):
                raise MalformedInput(f"{path}: no 'data' object; expected msprobe's "
                                     "dump.json {task, level, framework, data}")
            folder = os.path.dirname(path)
            tensor_dir = dump.get("dump_data_dir") or os.path.join(folder, "dump_tensor_data")
            if not os.path.isabs(tensor_dir):
                tensor_dir = os.path.join(folder, tensor_dir)
            label = os.path.relpath(folder, dump_dir) if folder != dump_dir else ""
            run = store.begin_run("msprobe", model=dump.get("framework", ""),
                                  level="framework",
                                  label=label or os.path.basename(os.path.abspath(folder)),
                                  inputs=path)
            for order, (name, entry) in enumerate(dump["data"].items()):
                if not isinstance(entry, dict):
                    continue
                for probe, kind, index, item in _probes_of(name, entry):
                    if not _is_tensor(item):
                        continue
                    stats = _stats_of(item)
                    data_name = item.get("data_name")
                    tensor_path = os.path.join(tensor_dir, data_name) if data_name else ""
                    if tensor_path and os.path.isfile(tensor_path):
                        store.add(run, probe, _load_tensor(tensor_path), node=name,
                                  kind=kind, index=index, order=order, keep="tensor")
                    else:
                        store.add_stats(run, probe, stats, node=name, kind=kind,
                                        index=index, order=order)
            store.end_run(run)
            run_ids.append(run)
    return run_ids


def main(argv=None) -> int:
    """`python3 -m model_inspector.msprobe DUMP_DIR RUN_DIR`: import_msprobe
    from the command line (what `model-inspector compare` runs for a dump
    side). Exit codes: 0 done, 2 usage, 3 no dump found, 4 a malformed
    dump.json."""
    import argparse
    from .errors import MalformedInput, NotFound
    parser = argparse.ArgumentParser(
        prog="python3 -m model_inspector.msprobe",
        description="import an msprobe dump into a run directory's probe store")
    parser.add_argument("dump_dir")
    parser.add_argument("run_dir")
    parser.add_argument("--keep-runs", type=int, default=10)
    args = parser.parse_args(argv)
    try:
        runs = import_msprobe(args.dump_dir, args.run_dir, keep_runs=args.keep_runs)
    except NotFound as e:
        print(f"model_inspector.msprobe: error: {e}", file=sys.stderr)
        return 3
    except MalformedInput as e:
        print(f"model_inspector.msprobe: error: {e}", file=sys.stderr)
        return 4
    print(f"imported {len(runs)} run(s) into {args.run_dir}: {', '.join(map(str, runs))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
