"""Inspector: run a model with probes, triggers and plugins (docs/guides/probes.md).

    from model_inspector import Inspector
    insp = Inspector(model_path="model.onnx")          # ONNX Runtime backend
    insp = Inspector(torch_module, example_input)      # PyTorch hooks
    res = insp.run(x, probes=["layer1/*/conv*"], triggers=["nan", "inf"])
    res["/layer1/layer1.0/conv1/Conv:0"].stats

Every run is a run of the probe store (`<run_dir>/probes/`, the last
`keep_runs` kept), so `model-inspector summary RUN_DIR` and the UI show the
statistics on the graph.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import time
from typing import Any, Optional, Sequence

import numpy as np

from . import plugins as _plugins
from . import triggers as _triggers
from .backends.base import Backend, GraphNode, ProbeEvent, ProbeRequest
from .store import ProbeStore, tensor_stats

try:  # the C++ matcher of node search; the same rules in Python otherwise
    from ._core import scope_glob_match as _scope_glob_match
except ImportError:  # pragma: no cover - depends on the build
    _scope_glob_match = None


def _glob_py(pattern: str, path: str) -> bool:
    """src/session/scope_glob.cc's matcher: a trailing run of whole '/'
    segments of `path` (all of it when `pattern` starts with '/'),
    case-insensitive; '?' one character but '/', '*' a run within a
    segment, '**' a run across segments, '**/' also no segment."""
    anchored = pattern.startswith("/")
    if anchored:
        pattern = pattern[1:]
    if path.startswith("/"):
        path = path[1:]
    path_l = path.lower()
    tokens = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            if i + 1 < len(pattern) and pattern[i + 1] == "*":
                while i + 1 < len(pattern) and pattern[i + 1] == "*":
                    i += 1
                if i + 1 < len(pattern) and pattern[i + 1] == "/":
                    i += 1
                    tokens.append(("D", ""))
                else:
                    tokens.append(("S", ""))
            else:
                tokens.append(("*", ""))
        elif c == "?":
            tokens.append(("?", ""))
        else:
            tokens.append(("c", c.lower()))
        i += 1
    n = len(path)
    nxt = [False] * (n + 1)
    nxt[n] = True
    for kind, ch in reversed(tokens):
        cur = [False] * (n + 1)
        if kind == "c":
            for j in range(n):
                cur[j] = path_l[j] == ch and nxt[j + 1]
        elif kind == "?":
            for j in range(n):
                cur[j] = path[j] != "/" and nxt[j + 1]
        elif kind == "*":
            cur[n] = nxt[n]
            for j in range(n - 1, -1, -1):
                cur[j] = nxt[j] or (path[j] != "/" and cur[j + 1])
        elif kind == "D":
            later = False
            cur[n] = nxt[n]
            for j in range(n - 1, -1, -1):
                later = later or (path[j] == "/" and nxt[j + 1])
                cur[j] = nxt[j] or later
        else:
            cur[n] = nxt[n]
            for j in range(n - 1, -1, -1):
                cur[j] = nxt[j] or cur[j + 1]
        nxt = cur
    if anchored:
        return nxt[0]
    return any(nxt[j] and (j == 0 or path[j - 1] == "/") for j in range(n + 1))


def scope_glob_match(pattern: str, path: str) -> bool:
    if _scope_glob_match is not None:
        return bool(_scope_glob_match(pattern, path))
    return _glob_py(pattern, path)


def _split_probe(pattern: str):
    """'node:0' -> ('node', ('output', 0)); 'node:in1' -> input 1;
    'node:grad0' -> gradient 0; 'node' -> ('node', None)."""
    head, sep, tail = pattern.rpartition(":")
    if sep and head:
        for kind, prefix in (("input", "in"), ("grad", "grad"), ("output", "")):
            if tail.startswith(prefix) and tail[len(prefix):].isdigit():
                return head, (kind, int(tail[len(prefix):]))
    return pattern, None


def node_matches(pattern: str, node: GraphNode) -> bool:
    """Node search's glob rule: on the node's name, or its scope (the name
    without its last segment); also the PyTorch module path, exactly."""
    if pattern == "*" or pattern == node.name:
        return True
    if scope_glob_match(pattern, node.name):
        return True
    scope = node.name.rpartition("/")[0]
    if scope and scope_glob_match(pattern, scope):
        return True
    return node.module is not None and pattern == node.module


@dataclasses.dataclass
class ProbeResult:
    """One probed tensor of a run."""
    probe: str
    node: str
    kind: str = "output"
    index: int = 0
    stats: dict = dataclasses.field(default_factory=dict)
    tensor: Optional[np.ndarray] = None      # when kept (keep="tensor", or a trigger hit)
    steps: list = dataclasses.field(default_factory=list)   # per-time-step stats
    plugins: dict = dataclasses.field(default_factory=dict)  # plugin name -> metrics
    order: int = 0


@dataclasses.dataclass
class RunResult:
    """What Inspector.run returns: the probes of one run by probe name."""
    run_id: int
    store: ProbeStore
    probes: dict                      # probe name -> ProbeResult, in execution order
    outputs: dict                     # model outputs by name (numpy); partial when stopped
    status: str = "complete"          # "complete" | "stopped"
    stopped_at: Optional[str] = None  # node the run stopped at
    hits: list = dataclasses.field(default_factory=list)
    plugin_metrics: dict = dataclasses.field(default_factory=dict)  # plugin -> run-level
    elapsed_ns: int = 0

    @property
    def triggered(self) -> bool:
        return bool(self.hits)

    @property
    def first_hit(self) -> Optional[dict]:
        """{trigger, probe, node, role ("producer" | "propagator"), detail}."""
        return self.hits[0] if self.hits else None

    def __getitem__(self, key: str) -> ProbeResult:
        if key in self.probes:
            return self.probes[key]
        if f"{key}:0" in self.probes:   # a node name: its first output
            return self.probes[f"{key}:0"]
        raise KeyError(f"probe '{key}': not in this run ({len(self.probes)} probes)")

    def __contains__(self, key: str) -> bool:
        return key in self.probes or f"{key}:0" in self.probes

    def __iter__(self):
        return iter(self.probes)

    def __len__(self):
        return len(self.probes)

    def table(self):
        """One row per probe: probe, node, kind, index, order, the
        statistics and `<plugin>.<metric>` columns (a pandas DataFrame)."""
        import pandas as pd
        rows = []
        for p in self.probes.values():
            row = {"probe": p.probe, "node": p.node, "kind": p.kind, "index": p.index,
                   "order": p.order, "steps": len(p.steps)}
            for k, v in p.stats.items():
                row[k] = v if not isinstance(v, list) else tuple(v)
            for plugin, metrics in p.plugins.items():
                for k, v in metrics.items():
                    row[f"{plugin}.{k}"] = v
            rows.append(row)
        return pd.DataFrame(rows)


def _describe_inputs(x) -> str:
    def one(a):
        shape = getattr(a, "shape", None)
        dtype = getattr(a, "dtype", None)
        return f"{type(a).__name__}{list(shape) if shape is not None else ''} {dtype}"
    if isinstance(x, dict):
        return ", ".join(f"{k}: {one(v)}" for k, v in x.items())
    if isinstance(x, (tuple, list)):
        return ", ".join(one(v) for v in x)
    return one(x)


class Inspector:
    """Runs a model with probes. `model_path` (*.onnx) runs on ONNX Runtime
    (backends.onnxruntime); `module` (a torch.nn.Module, also the first
    positional argument) with `example_input` runs through PyTorch hooks
    (backends.torch), or on ONNX Runtime as its ONNX export with
    backend="onnxruntime". `backend` may also be a Backend instance.

    run_dir: where the probe store lives (default ./mi_runs/<model stem>);
    keep_runs: runs kept there (older ones deleted); keep: "stats" or
    "tensor" (full tensors, sampled above the store's limit); fp16: store
    kept tensors as float16; plugins: Plugin instances, classes or names."""

    def __init__(self, model_path=None, module=None, example_input=None, *,
                 backend="auto", run_dir=None, keep_runs: int = 10, keep: str = "stats",
                 fp16: bool = False, plugins=()):
        if model_path is not None and not isinstance(model_path, (str, os.PathLike)):
            # Inspector(torch_module, example_input)
            if example_input is None:
                example_input = module
            module, model_path = model_path, None
        if keep not in ("stats", "tensor"):
            raise ValueError(f"keep: expected 'stats' or 'tensor', found {keep!r}")
        self.keep = keep
        self.fp16 = fp16
        self.plugins = _plugins.resolve(plugins)
        self._torch_backend = None
        self.backend = self._make_backend(model_path, module, example_input, backend)
        if model_path is not None:
            stem = pathlib.Path(model_path).stem
            self.model = str(model_path)
        else:
            stem = type(module).__name__ if module is not None else self.backend.name
            self.model = stem
        self.run_dir = str(run_dir) if run_dir is not None else os.path.join("mi_runs", stem)
        os.makedirs(self.run_dir, exist_ok=True)
        self.store = ProbeStore(self.run_dir, keep_runs=keep_runs)
        self._nodes = list(self.backend.nodes())
        self._node_by_name = {n.name: n for n in self._nodes}
        # tensor name -> (producer node, output index), for the inputs of a
        # node when the backend does not report them.
        self._producer = {}
        for n in self._nodes:
            for k, t in enumerate(n.outputs):
                self._producer[t] = (n.name, k)

    def _make_backend(self, model_path, module, example_input, backend) -> Backend:
        if isinstance(backend, Backend):
            return backend
        if backend not in ("auto", "torch", "onnxruntime"):
            raise ValueError(f"backend: expected auto, torch, onnxruntime or a Backend, "
                             f"found {backend!r}")
        if model_path is not None:
            if backend == "torch":
                raise ValueError("backend 'torch' needs a torch module, not a model file")
            from .backends.onnxruntime import OnnxRuntimeBackend
            return OnnxRuntimeBackend(str(model_path))
        if module is None:
            raise ValueError("Inspector: expected model_path or a torch module")
        if example_input is None:
            raise ValueError("Inspector(module, example_input): example_input is needed "
                             "to export the module and name its probes")
        from .backends.torch import TorchBackend
        tb = TorchBackend(module, example_input)
        if backend == "onnxruntime":
            if tb.model_path() is None:
                raise ValueError(f"backend 'onnxruntime': the ONNX export of the module "
                                 f"failed: {tb.export_error()}")
            self._torch_backend = tb  # owns the exported file
            from .backends.onnxruntime import OnnxRuntimeBackend
            return OnnxRuntimeBackend(tb.model_path())
        return tb

    # ------------------------------------------------------------------
    def nodes(self) -> list[GraphNode]:
        """Every probe-able node, in execution order."""
        return list(self._nodes)

    def select(self, probes=("*",)) -> dict[str, Optional[set]]:
        """Node name -> the probes asked of it (None: all its outputs) for
        the patterns (node names, probe names, globs)."""
        if isinstance(probes, str):
            probes = [probes]
        chosen: dict[str, Optional[set]] = {}
        for pattern in probes:
            node_pat, which = _split_probe(pattern)
            hit = False
            for n in self._nodes:
                if node_matches(node_pat, n):
                    hit = True
                    if which is None:
                        chosen[n.name] = None
                    elif n.name not in chosen or chosen[n.name] is not None:
                        chosen.setdefault(n.name, set()).add(which)
            if not hit:
                raise KeyError(f"probe '{pattern}': matches no node of the model "
                               f"({len(self._nodes)} nodes; try '*' or Inspector.nodes())")
        return chosen

    def run(self, inputs, probes=("*",), triggers=(), keep: Optional[str] = None,
            label: str = "", gradients: bool = False) -> RunResult:
        """Runs the model once on `inputs` with the probes and triggers."""
        keep = keep or self.keep
        if keep not in ("stats", "tensor"):
            raise ValueError(f"keep: expected 'stats' or 'tensor', found {keep!r}")
        trig = _triggers.parse_all(triggers)
        chosen = self.select(probes)
        wants_grad = gradients or any(
            w is not None and any(k == "grad" for k, _ in w) for w in chosen.values())
        request = ProbeRequest(
            nodes=frozenset(chosen),
            inputs_of=frozenset(chosen) if trig or any(
                w is not None and any(k == "input" for k, _ in w) for w in chosen.values())
            else frozenset(),
            gradients=wants_grad)
        if self.backend.name != "torch":
            inputs = _as_numpy(inputs)
        store = self.store
        run_id = store.begin_run(self.backend.name, model=self.model, level="framework",
                                 label=label, inputs=_describe_inputs(inputs))
        results: dict[str, ProbeResult] = {}
        pending: dict[str, list] = {}       # node -> its input events, until its outputs
        hits: list = []
        history: dict[str, list] = {}
        plugins = self.plugins

        def asked(ev: ProbeEvent) -> bool:
            which = chosen.get(ev.node, ())
            if which is None:
                return ev.kind in ("output", "grad")
            return (ev.kind, ev.index) in which

        def history_of(probe):
            if probe not in history:
                try:
                    history[probe] = list(store.series(probe, stat="mean", last=10))
                except Exception:
                    history[probe] = []
            return history[probe]

        def fire(trigger, stats, tensor, node, probe):
            hist = history_of(probe) if trigger.uses_history else ()
            return trigger.check(stats, tensor, node, hist)

        def on_tensor(ev: ProbeEvent) -> bool:
            if ev.kind == "input":
                pending.setdefault(ev.node, []).append(ev)
                if asked(ev):
                    self._record(run_id, ev, tensor_stats(ev.tensor), keep, results)
                return True
            if not asked(ev):
                return True
            stats = tensor_stats(ev.tensor)
            if ev.step is not None:
                store.add_stats(run_id, ev.probe, stats, node=ev.node, kind=ev.kind,
                                index=ev.index, step=ev.step, order=ev.order)
                pr = results.get(ev.probe)
                if pr is None:
                    pr = results[ev.probe] = ProbeResult(ev.probe, ev.node, ev.kind,
                                                         ev.index, order=ev.order)
                pr.steps.append(stats)
                return True
            for t in trig if ev.kind == "output" else ():
                detail = fire(t, stats, ev.tensor, ev.node, ev.probe)
                if detail is None:
                    continue
                role = self._role(t, ev, pending.get(ev.node, ()), results, fire)
                hits.append({"trigger": t.name, "probe": ev.probe, "node": ev.node,
                             "role": role, "detail": detail, "order": ev.order})
                store.add_trigger_hit(run_id, t.name, ev.probe, ev.node, role,
                                      detail=detail, order=ev.order)
                # Pause: keep the node's inputs and outputs whole.
                for iev in pending.get(ev.node, ()):
                    self._record(run_id, iev, None, "tensor", results)
                self._record(run_id, ev, None, "tensor", results)
                self._plugins(run_id, ev, results)
                return False
            pending.pop(ev.node, None)
            self._record(run_id, ev, stats, keep, results)
            self._plugins(run_id, ev, results)
            return True

        start = time.perf_counter_ns()
        status = "complete"
        try:
            outputs = self.backend.run(inputs, request, on_tensor)
        except BaseException:
            store.end_run(run_id, status="stopped", stopped_at=None,
                          elapsed_ns=time.perf_counter_ns() - start)
            raise
        elapsed = time.perf_counter_ns() - start
        stopped_at = None
        if hits:
            status, stopped_at = "stopped", hits[0]["node"]
        result = RunResult(run_id=run_id, store=store, probes=results, outputs=outputs,
                           status=status, stopped_at=stopped_at, hits=hits,
                           elapsed_ns=elapsed)
        for p in plugins:
            metrics = p.on_run_end(result)
            for probe, m in (metrics or {}).items():
                if not isinstance(m, dict):
                    raise TypeError(f"plugin '{p.name}': on_run_end must return "
                                    f"{{probe or '': dict}}, found {probe!r}: {m!r}")
                store.add_plugin_metrics(run_id, probe, p.name, m)
                if probe == "":
                    result.plugin_metrics[p.name] = m
                elif probe in results:
                    results[probe].plugins.setdefault(p.name, {}).update(m)
        store.end_run(run_id, status=status, stopped_at=stopped_at, elapsed_ns=elapsed)
        return result

    def _record(self, run_id, ev, stats, keep, results):
        """Stores one whole tensor (stats, or the array with keep='tensor')."""
        if keep == "tensor":
            stats = self.store.add(run_id, ev.probe, ev.tensor, node=ev.node, kind=ev.kind,
                                   index=ev.index, order=ev.order, keep="tensor",
                                   fp16=self.fp16)
        else:
            self.store.add_stats(run_id, ev.probe, stats, node=ev.node, kind=ev.kind,
                                 index=ev.index, order=ev.order)
        pr = results.get(ev.probe)
        if pr is None:
            pr = results[ev.probe] = ProbeResult(ev.probe, ev.node, ev.kind, ev.index,
                                                 order=ev.order)
        pr.stats = stats
        if keep == "tensor":
            # A copy: the framework may reuse or overwrite the buffer (in-place ops).
            pr.tensor = np.array(ev.tensor, copy=True)

    def _plugins(self, run_id, ev, results):
        if not self.plugins:
            return
        node = self._node_by_name.get(ev.node, ev.node)
        for p in self.plugins:
            metrics = p.process_tensor(ev.tensor, node)
            if metrics:
                self.store.add_plugin_metrics(run_id, ev.probe, p.name, metrics)
                results[ev.probe].plugins[p.name] = metrics

    def _role(self, trigger, ev, input_events, results, fire) -> str:
        """'propagator' when an input of the node fires the same trigger
        (the value came in), else 'producer'. Inputs are the backend's
        input events of the node, or else the probed outputs of this run
        that feed it."""
        if isinstance(trigger, _triggers.JumpTrigger):
            return "producer"
        for iev in input_events:
            if iev.kind != "input":
                continue
            if fire(trigger, tensor_stats(iev.tensor), iev.tensor, ev.node, iev.probe):
                return "propagator"
        if input_events:
            return "producer"
        node = self._node_by_name.get(ev.node)
        for t in node.inputs if node is not None else ():
            src = self._producer.get(t)
            pr = results.get(f"{src[0]}:{src[1]}") if src else None
            if pr is None or (trigger.needs_tensor and pr.tensor is None):
                continue
            if pr.stats and fire(trigger, pr.stats, pr.tensor, ev.node,
                                                    pr.probe):
                return "propagator"
        return "producer"

    def close(self):
        self.store.close()
        self.backend.close()
        if self._torch_backend is not None:
            self._torch_backend.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _as_numpy(x):
    """torch tensors -> numpy for a runtime that takes arrays."""
    def one(a):
        if hasattr(a, "detach") and hasattr(a, "numpy"):
            return a.detach().cpu().numpy()
        return a
    if isinstance(x, dict):
        return {k: one(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(one(v) for v in x)
    return one(x)
