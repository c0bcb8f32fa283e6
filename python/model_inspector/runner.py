"""`python3 -m model_inspector.runner`: one probed run of an ONNX model into a
run directory's probe store, for callers outside Python (`model-inspector
compare` with models, the UI's re-run).

    python3 -m model_inspector.runner --model M.onnx --out RUN_DIR
        [--inputs x.npy | --inputs a.npy --inputs b.npy | --inputs name=x.npy | --inputs xs.npz]
        [--probes PATTERN]... [--keep stats|tensor] [--fp16]
        [--level framework|compiled] [--label TEXT] [--keep-runs N]
        [--runtime auto|python|node] [--optimization disabled|basic|extended|all]
        [--format text|json]

The model runs on ONNX Runtime (model_inspector.backends.onnxruntime); every
probed tensor's statistics (and, with --keep tensor, the tensor) go into
RUN_DIR/probes (model_inspector.store.ProbeStore) as one run. RUN_DIR is
created when missing; when it holds no run yet (no manifest.json) the model
is copied in as model.onnx (and, with --level compiled, ONNX Runtime's
optimized graph as ort/model.optimized.onnx) with a manifest, so the
directory opens with its graph; an existing run is left as it is.

Probes (default `*`, every node): node names or probe names
(`<node>:<k>` outputs, `<node>:in<k>` inputs), exact or as globs with the
node search's rules (case-insensitive, `/`-separated segments, `*` within a
segment, `**` across segments, a pattern matches a trailing run of whole
segments of a node's name or of its scope's path; a leading `/` anchors).
Several may be given (repeat the option or separate with commas).

Inputs: one .npy per model input in order, `name=path.npy` by input name,
or one .npz keyed by input names. Without --inputs every float input of
static shape gets the fixtures' deterministic input x[i] = (i % 7) / 7
(test/fixtures/ort_run.mjs).

Exit codes: 0 done (also when a probe stopped the run), 2 bad arguments, 3
a model, input or pattern not found, 1 any other failure (message on
stderr). --format json prints one JSON object: run_dir, store, run_id,
backend, runtime, model, level, probes (tensors recorded), nodes (probed),
status, stopped_at, elapsed_ns, outputs ({name: shape}).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import sys
import time
from typing import Optional, Sequence

import numpy as np

_PROBE_SUFFIX = re.compile(r"^(?P<node>.*):(?P<which>in\d+|\d+)$")


def _glob_regex(pattern: str) -> re.Pattern:
    """The node search's glob as a regular expression over a path without
    its leading '/' (see the module docstring)."""
    anchored = pattern.startswith("/")
    body = pattern.lstrip("/")
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if body.startswith("**/", i):
            out.append("(?:[^/]*(?:/[^/]*)*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
    prefix = "^" if anchored else "(?:^|(?<=/))"
    return re.compile(prefix + "".join(out) + "$", re.IGNORECASE)


def _matches(rx: re.Pattern, name: str) -> bool:
    path = name.lstrip("/")
    if rx.search(path):
        return True
    scope = path.rsplit("/", 1)[0] if "/" in path else ""
    return bool(scope) and bool(rx.search(scope))


def select_probes(node_names: Sequence[str], patterns: Sequence[str]):
    """(nodes whose outputs to probe, {node: {k, ...}} or None for all
    outputs, nodes whose inputs to probe, {node: {k}} or None) for the
    patterns; raises KeyError naming a pattern that selects nothing."""
    outputs: dict[str, Optional[set]] = {}
    inputs: dict[str, Optional[set]] = {}
    names = list(node_names)
    exact = set(names)
    for raw in patterns:
        pattern = raw.strip()
        if not pattern:
            continue
        which = None
        m = _PROBE_SUFFIX.match(pattern)
        if m and (m.group("node") in exact or any(ch in m.group("node") for ch in "*?")):
            pattern, which = m.group("node"), m.group("which")
        if pattern in ("*", "**"):
            hits = names
        elif pattern in exact:
            hits = [pattern]
        else:
            rx = _glob_regex(pattern)
            hits = [n for n in names if _matches(rx, n)]
        if not hits:
            raise KeyError(f"probe pattern {raw!r}: no node of the model matches it")
        for n in hits:
            if which is None:
                outputs[n] = None
            elif which.startswith("in"):
                sel = inputs.setdefault(n, set())
                if sel is not None:
                    sel.add(int(which[2:]))
            else:
                sel = outputs.setdefault(n, set())
                if sel is not None:
                    sel.add(int(which))
    return outputs, inputs


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


def probe_run(model: str, out, *, inputs=None, probes=("*",), keep="stats", fp16=False,
              level="framework", label="", keep_runs=10, runtime="auto",
              optimization="disabled", inputs_text="") -> dict:
    """One probed run; returns what --format json prints."""
    from .backends.base import ProbeRequest  # noqa: PLC0415
    from .backends.onnxruntime import OnnxRuntimeBackend  # noqa: PLC0415
    from .store import ProbeStore  # noqa: PLC0415

    out = pathlib.Path(out)
    backend = OnnxRuntimeBackend(model, runtime=runtime, optimization=optimization, level=level)
    try:
        if inputs is None:
            inputs = deterministic_inputs(backend.model_path())
            inputs_text = inputs_text or "deterministic: x[i] = (i % 7) / 7"
        names = [n.name for n in backend.nodes()]
        outputs_sel, inputs_sel = select_probes(names, probes)
        request = ProbeRequest(nodes=frozenset(outputs_sel), inputs_of=frozenset(inputs_sel))
        prepare_run_dir(out, backend)
        with ProbeStore(str(out), keep_runs=keep_runs) as store:
            run_id = store.begin_run(backend.name, model=os.path.abspath(model), level=level,
                                     label=label, inputs=inputs_text)
            count = 0

            def on_tensor(ev):
                nonlocal count
                sel = (outputs_sel if ev.kind == "output" else inputs_sel).get(ev.node, set())
                if sel is not None and ev.index not in sel:
                    return True
                store.add(run_id, ev.probe, ev.tensor, node=ev.node, kind=ev.kind,
                          index=ev.index, step=ev.step, order=ev.order, keep=keep, fp16=fp16)
                count += 1
                return True

            t0 = time.perf_counter_ns()
            try:
                outs = backend.run(inputs, request, on_tensor)
            except BaseException:
                store.end_run(run_id, status="failed", elapsed_ns=time.perf_counter_ns() - t0)
                raise
            elapsed = time.perf_counter_ns() - t0
            store.end_run(run_id, status="complete", elapsed_ns=elapsed)
            return {
                "run_dir": str(out), "store": str(out / "probes" / "probes.db"),
                "run_id": run_id, "backend": backend.name, "runtime": backend.runtime,
                "model": os.path.abspath(model), "level": level, "probes": count,
                "nodes": len(outputs_sel.keys() | inputs_sel.keys()), "status": "complete",
                "stopped_at": None, "elapsed_ns": elapsed,
                "outputs": {k: list(np.shape(v)) for k, v in outs.items()},
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

    patterns = [p for spec in (args.probes or ["*"]) for p in spec.split(",") if p.strip()]
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
        result = probe_run(args.model, args.out, inputs=inputs, probes=patterns, keep=args.keep,
                           fp16=args.fp16, level=args.level, label=args.label,
                           keep_runs=args.keep_runs, runtime=args.runtime,
                           optimization=args.optimization,
                           inputs_text=" ".join(args.inputs))
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
        stop = f", stopped at {result['stopped_at']}" if result["stopped_at"] else ""
        print(f"run {result['run_id']} in {result['store']}: {result['probes']} tensors from "
              f"{result['nodes']} nodes ({result['backend']}, {result['level']} graph){stop}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
