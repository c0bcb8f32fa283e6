"""`python3 -m model_inspector.runner`: one probed run of an ONNX model into a
run directory's probe store, for callers outside Python (`model-inspector
compare` with models, the UI's re-run).

    python3 -m model_inspector.runner --model M.onnx --out RUN_DIR
        [--inputs x.npy | --inputs a.npy --inputs b.npy | --inputs name=x.npy | --inputs xs.npz]
        [--probes PATTERN]... [--triggers T]... [--plugins NAME]...
        [--keep stats|tensor] [--fp16]
        [--level framework|compiled] [--label TEXT] [--keep-runs N]
        [--runtime auto|python|node] [--optimization disabled|basic|extended|all]
        [--format text|json]

The model runs on ONNX Runtime (model_inspector.backends.onnxruntime) through
the Inspector: every probed tensor's statistics (and, with --keep tensor,
the tensor) go into RUN_DIR/probes (model_inspector.store.ProbeStore) as
one run; triggers stop it at the first tensor that fires (pause on NaN),
plugins add their metrics. RUN_DIR is
created when missing; when it holds no run yet (no manifest.json) the model
is copied in as model.onnx (and, with --level compiled, ONNX Runtime's
optimized graph as ort/model.optimized.onnx) with a manifest, so the
directory opens with its graph; an existing run is left as it is.

Probes (default `*`, every node): node names or probe names
(`<node>:<k>` outputs, `<node>:in<k>` inputs), exact or as globs with the
node search's rules (case-insensitive, `/`-separated segments, `*` within a
segment, `**` across segments, a pattern matches a trailing run of whole
segments of a node's name or of its scope's path; a leading `/` anchors).
Several may be given (repeat the option or separate with commas); so may
triggers and plugins.

Inputs: one .npy per model input in order, `name=path.npy` by input name,
or one .npz keyed by input names. Without --inputs every float input of
static shape gets the fixtures' deterministic input x[i] = (i % 7) / 7
(test/fixtures/ort_run.mjs).

Exit codes: 0 done (also when a probe stopped the run), 2 bad arguments, 3
a model, input or pattern not found, 1 any other failure (message on
stderr). --format json prints one JSON object: run_dir, store, run_id,
backend, runtime, model, level, probes (tensors recorded), nodes (probed),
status ("complete" | "stopped"), stopped_at (node), first_hit ({trigger,
probe, node, role, detail} or null), elapsed_ns, outputs ({name: shape}).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import sys
import time
from typing import Optional, Sequence

import numpy as np

def load_inputs(specs: Sequence[str], input_names: Sequence[str]):
    """numpy inputs from --inputs values (see the module docstring)."""
    if not specs:
        return None
    if len(specs) == 1 and specs[0].endswith(".npz") and "=" not in specs[0]:
        with np.load(specs[0]) as z:
            data = {k: z[k] for k in z.files}
        unknown = sorted(set(data) - set(input_names))
        if unknown:
            raise KeyError(f"{specs[0]}: array {unknown[0]!r} is not an input of the model "
                           f"(inputs: {', '.join(input_names)})")
        return data
    named = {}
    positional = []
    for s in specs:
        if "=" in s and not os.path.exists(s):
            name, path = s.split("=", 1)
            named[name] = np.load(path)
        else:
            positional.append(np.load(s))
    if named and positional:
        raise ValueError("--inputs: give every input by name (name=path) or every one by position")
    if named:
        return named
    return positional[0] if len(positional) == 1 else tuple(positional)


def deterministic_inputs(model_path: str) -> dict:
    """x[i] = (i % 7) / 7 for every graph input (float, static shape), as
    test/fixtures/ort_run.mjs feeds the fixtures."""
    import onnx  # noqa: PLC0415
    from .backends.onnxruntime import _ONNX_TO_NUMPY  # noqa: PLC0415
    model = onnx.load(model_path, load_external_data=False)
    inits = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        dims = []
        for d in tt.shape.dim:
            if not d.HasField("dim_value"):
                raise ValueError(f"{model_path}: input {vi.name} has a dynamic dimension; "
                                 "give --inputs")
            dims.append(d.dim_value)
        dtype = _ONNX_TO_NUMPY.get(tt.elem_type)
        if dtype is None or not np.issubdtype(dtype, np.floating):
            raise ValueError(f"{model_path}: input {vi.name} is not a float tensor; give --inputs")
        n = int(np.prod(dims)) if dims else 1
        feeds[vi.name] = ((np.arange(n) % 7) / 7).astype(dtype).reshape(dims)
    return feeds


def prepare_run_dir(out: pathlib.Path, backend) -> None:
    """Makes `out` a run directory for the model when it holds none yet."""
    from .capture import COMPILED_MODEL, FRAMEWORK_MODEL, MANIFEST, write_manifest  # noqa: PLC0415
    out.mkdir(parents=True, exist_ok=True)
    if (out / MANIFEST).exists():
        return
    shutil.copyfile(backend.source_model_path(), out / FRAMEWORK_MODEL)
    compiled = backend.compiled_model_path()
    if compiled:
        (out / COMPILED_MODEL).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(compiled, out / COMPILED_MODEL)
    write_manifest(out, graph=bool(compiled), runtime=False, compiled=bool(compiled),
                   backend="onnxruntime", extra={"captured_by": "model_inspector.runner"})


def probe_run(model: str, out, *, inputs=None, probes=("*",), triggers=(), plugins=(),
              keep="stats", fp16=False, level="framework", label="", keep_runs=10,
              runtime="auto", optimization="disabled") -> dict:
    """One probed run through the Inspector on the ONNX Runtime backend;
    returns what --format json prints."""
    from .backends.onnxruntime import OnnxRuntimeBackend  # noqa: PLC0415
    from .inspector import Inspector  # noqa: PLC0415

    out = pathlib.Path(out)
    backend = OnnxRuntimeBackend(model, runtime=runtime, optimization=optimization, level=level)
    try:
        if inputs is None:
            inputs = deterministic_inputs(backend.model_path())
        prepare_run_dir(out, backend)
        insp = Inspector(backend=backend, run_dir=str(out), keep_runs=keep_runs, keep=keep,
                         fp16=fp16, plugins=plugins)
        insp.model = os.path.abspath(model)
        try:
            res = insp.run(inputs, probes=list(probes), triggers=list(triggers), label=label)
        finally:
            insp.store.close()
        return {
            "run_dir": str(out), "store": str(out / "probes" / "probes.db"),
            "run_id": res.run_id, "backend": backend.name, "runtime": backend.runtime,
            "model": os.path.abspath(model), "level": level, "probes": len(res.probes),
            "nodes": len({p.node for p in res.probes.values()}), "status": res.status,
            "stopped_at": res.stopped_at, "first_hit": res.first_hit,
            "elapsed_ns": res.elapsed_ns,
            "outputs": {k: list(np.shape(v)) for k, v in res.outputs.items()},
        }
    finally:
        backend.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m model_inspector.runner",
        description="Runs an ONNX model once on ONNX Runtime with tensor probes and records "
                    "the probed statistics (and tensors) in RUN_DIR/probes.")
    parser.add_argument("--model", required=True, help="the ONNX model (.onnx)")
    parser.add_argument("--out", required=True, help="the run directory (created when missing)")
    parser.add_argument("--inputs", action="append", default=[],
                        help="x.npy (one per model input, in order), name=x.npy, or one .npz "
                             "by input name; default: x[i] = (i %% 7) / 7")
    parser.add_argument("--probes", action="append", default=[],
                        help="node / probe names or globs (repeatable, comma-separated); "
                             "default '*' (every node)")
    parser.add_argument("--triggers", action="append", default=[],
                        help="stop the run at the first tensor that fires: nan, inf, "
                             "range:LO:HI, zero_fraction:F, jump:K, ... (repeatable, "
                             "comma-separated; docs/guides/probes.md)")
    parser.add_argument("--plugins", action="append", default=[],
                        help="registered plugin names (repeatable, comma-separated)")
    parser.add_argument("--keep", choices=("stats", "tensor"), default="stats")
    parser.add_argument("--fp16", action="store_true", help="store kept tensors as float16")
    parser.add_argument("--level", choices=("framework", "compiled"), default="framework",
                        help="probe the model's graph (framework) or ONNX Runtime's optimized "
                             "graph of it (compiled)")
    parser.add_argument("--label", default="")
    parser.add_argument("--keep-runs", type=int, default=10)
    parser.add_argument("--runtime", choices=("auto", "python", "node"), default="auto")
    parser.add_argument("--optimization", choices=("disabled", "basic", "extended", "all"),
                        default="disabled",
                        help="ONNX Runtime's graph optimization of the probed graph")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)

    def split(values):
        return [p.strip() for spec in values for p in spec.split(",") if p.strip()]

    patterns = split(args.probes) or ["*"]
    try:
        if not os.path.isfile(args.model):
            raise FileNotFoundError(f"{args.model}: no such model file")
        from .backends.onnxruntime import OnnxRuntimeBackend  # noqa: F401,PLC0415
        inputs = None
        if args.inputs:
            import onnx  # noqa: PLC0415
            m = onnx.load(args.model, load_external_data=False)
            inits = {t.name for t in m.graph.initializer}
            input_names = [i.name for i in m.graph.input if i.name not in inits]
            inputs = load_inputs(args.inputs, input_names)
        result = probe_run(args.model, args.out, inputs=inputs, probes=patterns,
                           triggers=split(args.triggers), plugins=split(args.plugins),
                           keep=args.keep,
                           fp16=args.fp16, level=args.level, label=args.label,
                           keep_runs=args.keep_runs, runtime=args.runtime,
                           optimization=args.optimization)
    except (FileNotFoundError, KeyError) as e:
        print(f"model_inspector.runner: {e.args[0] if e.args else e}", file=sys.stderr)
        return 3
    except ValueError as e:
        print(f"model_inspector.runner: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - reported, exit code 1
        print(f"model_inspector.runner: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps(result))
    else:
        hit = result["first_hit"]
        stop = (f", stopped at {result['stopped_at']} ({hit['trigger']}, {hit['role']})"
                if result["stopped_at"] else "")
        print(f"run {result['run_id']} in {result['store']}: {result['probes']} tensors from "
              f"{result['nodes']} nodes ({result['backend']}, {result['level']} graph){stop}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
