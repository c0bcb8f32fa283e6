"""PyTorch capture backend: forward hooks, probes named after the ONNX export.

The module is exported once with ``torch.onnx.export`` (opset 13, constant
folding on, as test/fixtures/make_models.py does) and one calibration
forward on the example input maps every module call and every recognised
functional op to the ONNX node that computes the same tensor:

* A module call's scope is the export's: the module's unqualified name
  (``layer1.0``, ``downsample.0``: the name from ``named_modules`` from its
  last non-numeric atom on) under its caller's scope, with ``_1``, ``_2``...
  for the second, third call within one caller (``relu`` and ``relu_1``).
  The root module's scope is empty.
* A module's output is the tensor that leaves its scope: produced by an
  ONNX node named ``<scope>/...`` and read by a node outside the scope (or
  a graph output); several outputs are matched by shape, then in order.
  So ``layer1.0.conv1`` is ``/layer1/layer1.0/conv1/Conv:0`` and a whole
  block (``layer1.0``) is ``/layer1/layer1.0/relu_1/Relu:0``, the same
  probe as its last ReLU (the same tensor, reported once).
* A module without ONNX nodes of its own (BatchNorm folded into the Conv
  before it, Dropout and Identity at inference) takes the probe of its
  input's producer. Two different tensors mapped to one probe: the later
  keeps the ONNX name (BN's output is what the folded Conv computes) and
  the earlier becomes a PyTorch-only probe named after its module scope
  (``/conv1:0``, the Conv's output before BatchNorm).
* Functional ops called in a module's own ``forward`` (``torch.log``,
  ``x + y``, ``torch.matmul``, ``softmax`` ... see ``_FUNCTIONAL``) are
  seen through a ``TorchFunctionMode``. The k-th call of an op type in a
  scope is the export's ``<scope>/<OpType>_k`` node when the calibration
  forward made exactly as many calls of that type in that scope as the
  export has nodes of that type there, and the shapes agree; otherwise
  (the export fused or folded some: consecutive Transposes, ops on
  parameters only) the ops of that type in that scope are PyTorch-only
  probes named ``<scope>/<torch function>_k`` (lower case, e.g.
  ``/layers.0/self_attn/transpose_2:0``), never a wrong ONNX name. Ops
  inside torch.nn's own leaf modules (``F.conv2d`` in ``Conv2d``) are the
  module's output already and are not reported again.
* Recurrent modules (LSTM, GRU, RNN) are the export's recurrent node
  (``/lstm/LSTM``): output ``:0`` is the sequence output, ``:1`` the last
  hidden state, ``:2`` the last cell state; besides the whole output, every
  time step of ``:0`` is an event with ``step`` = t.

When the export fails (an op without an ONNX symbolic) every probe is a
PyTorch-only probe named after module scopes.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from typing import Any, Optional, Sequence

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

from .base import Backend, GraphNode, ProbeEvent, ProbeRequest

OPSET = 13

# torch function name -> ONNX op type of its export at opset 13 (one node).
_FUNCTIONAL = {
    "add": "Add", "__add__": "Add", "__radd__": "Add", "add_": "Add", "__iadd__": "Add",
    "sub": "Sub", "__sub__": "Sub", "__rsub__": "Sub", "sub_": "Sub", "rsub": "Sub",
    "mul": "Mul", "__mul__": "Mul", "__rmul__": "Mul", "mul_": "Mul",
    "div": "Div", "__truediv__": "Div", "__rtruediv__": "Div", "div_": "Div",
    "true_divide": "Div",
    "pow": "Pow", "__pow__": "Pow",
    "matmul": "MatMul", "__matmul__": "MatMul", "bmm": "MatMul", "mm": "MatMul",
    "log": "Log", "log_": "Log", "sqrt": "Sqrt", "sqrt_": "Sqrt", "exp": "Exp",
    "exp_": "Exp", "abs": "Abs", "neg": "Neg", "__neg__": "Neg",
    "reciprocal": "Reciprocal", "tanh": "Tanh", "sigmoid": "Sigmoid",
    "relu": "Relu", "relu_": "Relu", "softmax": "Softmax", "erf": "Erf",
    "cat": "Concat", "concat": "Concat", "reshape": "Reshape", "view": "Reshape",
    "transpose": "Transpose", "permute": "Transpose", "flatten": "Flatten",
    "mean": "ReduceMean", "sum": "ReduceSum", "max": "ReduceMax", "min": "ReduceMin",
}

_RECURRENT = (torch.nn.LSTM, torch.nn.GRU, torch.nn.RNN)
_RECURRENT_OPS = ("LSTM", "GRU", "RNN")


class _Stop(Exception):
    """Raised from a hook to end the forward where the Inspector paused."""


def _unqualified(qualified: str) -> str:
    # torch.onnx.utils._unqualified_variable_name: from the last
    # non-numeric atom on ("layer2.0.downsample.0" -> "downsample.0").
    atoms = qualified.split(".")
    for i in range(len(atoms) - 1, -1, -1):
        if not atoms[i].isnumeric():
            return ".".join(atoms[i:])
    return qualified


def _tensors(value) -> list:
    """The tensors of a module's output / input, flattened in order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            out.extend(_tensors(v))
        return out
    if isinstance(value, dict):
        out = []
        for v in value.values():
            out.extend(_tensors(v))
        return out
    return []


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """A CPU numpy array of `t` (no copy for a contiguous CPU tensor).
    bfloat16, which numpy lacks, becomes float32."""
    t = t.detach()
    if t.dtype == torch.bfloat16:
        t = t.float()
    if t.device.type != "cpu":
        t = t.cpu()
    if not t.is_contiguous():
        t = t.contiguous()
    return t.numpy()


def _is_torch_leaf(module: torch.nn.Module) -> bool:
    return (type(module).__module__.startswith("torch.nn")
            and next(iter(module.children()), None) is None)


class _Call:
    """One module call or functional op in the calibration forward."""
    __slots__ = ("key", "scope", "module", "op_type", "fn", "in_ids", "out_ids",
                 "out_shapes", "out_refs", "parent")

    def __init__(self, key, scope, module, op_type, fn, parent):
        self.key = key              # scope for modules, "<scope>/#<op>_<k>" for ops
        self.scope = scope
        self.module = module        # module path or None
        self.op_type = op_type      # ONNX op type for ops, module class for modules
        self.fn = fn                # torch function name for ops
        self.in_ids = []
        self.out_ids = []
        self.out_shapes = []
        self.out_refs = []
        self.parent = parent


class _Tracker:
    """Computes the export's scope of each module call and op during a
    forward, and calls back on each (shared by calibration and probed runs)."""

    def __init__(self, backend: "TorchBackend"):
        self.b = backend
        self.stack = [""]           # scope of the calls in progress
        self.leaf_depth = 0         # >0 inside a torch.nn leaf module
        self.counts = {}            # (parent scope, segment) -> calls so far
        self.op_counts = {}         # (scope, op type) -> calls so far

    def enter(self, module):
        segment = self.b._segments[module]
        parent = self.stack[-1]
        if segment == "":
            scope = ""
        else:
            k = self.counts.get((parent, segment), 0)
            self.counts[(parent, segment)] = k + 1
            scope = f"{parent}/{segment}" + (f"_{k}" if k else "")
        self.stack.append(scope)
        if self.b._torch_leaf[module]:
            self.leaf_depth += 1
        return scope

    def leave(self, module):
        if self.b._torch_leaf[module]:
            self.leaf_depth -= 1
        return self.stack.pop()

    def op_key(self, fn_name):
        op = _FUNCTIONAL[fn_name]
        scope = self.stack[-1]
        k = self.op_counts.get((scope, op), 0)
        self.op_counts[(scope, op)] = k + 1
        return scope, op, k


class _OpMode(TorchFunctionMode):
    def __init__(self, on_op):
        super().__init__()
        self.on_op = on_op

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return self.on_op(func, args, kwargs or {})


class TorchBackend(Backend):
    """Probes a torch.nn.Module through hooks; see the module docstring for
    how probes are named. `example_input` is what the module is called
    with (a tensor, or a tuple of positional arguments); it is used for the
    ONNX export and the calibration forward."""

    name = "torch"

    def __init__(self, module: torch.nn.Module, example_input: Any, *,
                 onnx_path: Optional[str] = None, functional: bool = True):
        self.module = module
        self.example = example_input
        self.functional = functional
        self._segments = {}
        self._torch_leaf = {}
        self._paths = {}
        for path, m in module.named_modules():
            self._segments[m] = "" if m is module else _unqualified(path)
            self._torch_leaf[m] = _is_torch_leaf(m)
            self._paths[m] = path
        self._tmp = None
        self._onnx_path = None
        self._export_error = None
        self._onnx_nodes = []
        self._export(onnx_path)
        self._calibrate()

    # ------------------------------------------------------------------
    # ONNX export and calibration
    def _args(self, x):
        return x if isinstance(x, tuple) else (x,)

    def _export(self, onnx_path):
        if onnx_path is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="mi_torch_export_")
            onnx_path = os.path.join(self._tmp.name, "model.onnx")
        try:
            # The exporter's warnings (shape inference, constant folding) are
            # about the export, not the user's model: kept out of the way.
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(self.module, self._args(self.example), onnx_path,
                                  opset_version=OPSET, do_constant_folding=True)
        except Exception as e:  # the export is how names are found, not required
            self._export_error = f"{type(e).__name__}: {e}"
            return
        import onnx
        model = onnx.load(onnx_path)
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception:
            pass
        self._onnx_path = onnx_path
        shapes = {}
        for vi in list(model.graph.value_info) + list(model.graph.output):
            dims = vi.type.tensor_type.shape.dim
            if all(d.HasField("dim_value") for d in dims):
                shapes[vi.name] = tuple(d.dim_value for d in dims)
        self._onnx_shapes = shapes
        self._onnx_nodes = list(model.graph.node)
        self._graph_outputs = [o.name for o in model.graph.output]

    def _calibrate(self):
        calls = []
        by_out = {}
        tracker = _Tracker(self)
        keep = []  # keeps every tensor alive so ids stay unique

        def pre(module, inputs):
            scope = tracker.enter(module)
            c = _Call(scope, scope, self._paths[module], type(module).__name__, None,
                      None)
            c.in_ids = [id(t) for t in _tensors(inputs)]
            keep.append(inputs)
            calls.append(c)
            module._mi_call = c

        def post(module, inputs, output):
            tracker.leave(module)
            c = module._mi_call
            ts = _tensors(output)
            keep.append(output)
            c.out_ids = [id(t) for t in ts]
            c.out_shapes = [tuple(t.shape) for t in ts]
            # Calls finish in order: an in-place op's output id repeats its
            # input's; the latest producer of an id wins.
            for t in ts:
                by_out[id(t)] = c

        def on_op(func, args, kwargs):
            out = func(*args, **kwargs)
            name = getattr(func, "__name__", "")
            if name in _FUNCTIONAL and tracker.leaf_depth == 0:
                scope, op, k = tracker.op_key(name)
                c = _Call(f"{scope}/#{op}_{k}", scope, None, op, name.strip("_"), None)
                c.in_ids = [id(t) for t in _tensors(args)]
                ts = _tensors(out)[:1]
                c.out_ids = [id(t) for t in ts]
                c.out_shapes = [tuple(t.shape) for t in ts]
                keep.append(args)
                keep.append(out)
                calls.append(c)
                for t in ts:
                    by_out[id(t)] = c
            return out

        handles = []
        for m in self._segments:
            handles.append(m.register_forward_pre_hook(pre))
            handles.append(m.register_forward_hook(post))
        try:
            with torch.no_grad():
                if self.functional:
                    with _OpMode(on_op):
                        self.module(*self._args(self.example))
                else:
                    self.module(*self._args(self.example))
        finally:
            for h in handles:
                h.remove()
            for m in self._segments:
                if hasattr(m, "_mi_call"):
                    del m._mi_call
        self._resolve(calls)

    def _resolve(self, calls):
        """Probe names for every call's outputs: self._plan[key] = list of
        (probe node, output index) per output, None for an output not
        reported (the same tensor is reported under that probe already)."""
        nodes = self._onnx_nodes
        node_by_name = {n.name: n for n in nodes}
        order = {n.name: i for i, n in enumerate(nodes)}
        producer = {}
        consumers = {}
        for n in nodes:
            for k, o in enumerate(n.output):
                producer[o] = (n, k)
            for i in n.input:
                consumers.setdefault(i, []).append(n)
        graph_outputs = set(getattr(self, "_graph_outputs", []))

        def in_scope(name, scope):
            return name.startswith(scope + "/")

        def exits(scope):
            out = []
            for n in nodes:
                if not in_scope(n.name, scope):
                    continue
                for o in n.output:
                    users = consumers.get(o, [])
                    if o in graph_outputs or any(not in_scope(u.name, scope) for u in users):
                        out.append((n, list(n.output).index(o), o))
            return out

        # Functional op types whose counts agree with the export's, per scope.
        torch_counts = {}
        for c in calls:
            if c.module is None:
                torch_counts[(c.scope, c.op_type)] = torch_counts.get((c.scope, c.op_type), 0) + 1
        onnx_counts = {}
        for n in nodes:
            scope, _, _ = n.name.rpartition("/")
            onnx_counts[(scope, n.op_type)] = onnx_counts.get((scope, n.op_type), 0) + 1

        assigned = {}  # call key -> [(node, index, recurrent)] per output
        info = {}      # node name -> (op_type, inputs, outputs, module, recurrent)
        by_out = {}
        for c in calls:
            mapped = [None] * len(c.out_ids)
            if c.module is not None:
                mod = self._module_by_path(c.module)
                if isinstance(mod, _RECURRENT) and nodes:
                    rec = [n for n in nodes if in_scope(n.name, c.scope)
                           and n.op_type in _RECURRENT_OPS]
                    if rec:
                        n = rec[-1]
                        for k in range(min(len(mapped), 3)):
                            mapped[k] = (n.name, k)
                elif nodes:
                    ex = exits(c.scope)
                    if ex:
                        free = list(ex)
                        for k, shape in enumerate(c.out_shapes):
                            pick = next((e for e in free
                                         if self._onnx_shapes.get(e[2]) == shape), None)
                            if pick is None and len(free) == 1 and len(c.out_shapes) == 1:
                                pick = free[0]
                            if pick is not None:
                                free.remove(pick)
                                mapped[k] = (pick[0].name, pick[1])
                    elif not any(in_scope(n.name, c.scope) for n in nodes):
                        # No node of its own: folded into its input's producer.
                        src = by_out.get(c.in_ids[0]) if c.in_ids else None
                        if src is not None and len(c.out_ids) == 1:
                            mapped[0] = src
            else:
                k_op = int(c.key.rsplit("_", 1)[1])
                name = f"{c.scope}/{c.op_type}" + (f"_{k_op}" if k_op else "")
                n = node_by_name.get(name)
                agree = torch_counts.get((c.scope, c.op_type)) == onnx_counts.get(
                    (c.scope, c.op_type))
                if (n is not None and n.op_type == c.op_type and agree and c.out_shapes
                        and self._onnx_shapes.get(n.output[0], c.out_shapes[0])
                        == c.out_shapes[0]):
                    mapped[0] = (name, 0)
            assigned[c.key] = mapped
            for k, oid in enumerate(c.out_ids):
                by_out[oid] = mapped[k]

        # A probe that two different tensors map to: the later keeps it.
        last = {}
        for c in calls:
            for k, m in enumerate(assigned[c.key]):
                if m is not None:
                    last[m] = (c.key, c.out_ids[k])
        plan = {}
        self._recurrent = {c.key: self._module_by_path(c.module) for c in calls
                           if c.module is not None
                           and isinstance(self._module_by_path(c.module), _RECURRENT)}
        nodes_out = []
        seen_nodes = set()
        for c in calls:
            outs = []
            for k, m in enumerate(assigned[c.key]):
                if m is not None and last[m][0] != c.key:
                    if last[m][1] == c.out_ids[k]:
                        outs.append(None)      # same tensor, reported later
                        continue
                    m = None                   # an earlier value: PyTorch-only
                if m is None:
                    if c.module is not None:
                        node = c.scope if c.scope else "/"
                    else:
                        k_op = int(c.key.rsplit("_", 1)[1])
                        node = f"{c.scope}/{c.fn}" + (f"_{k_op}" if k_op else "")
                    m = (node, k)
                    op_type = c.op_type
                    module = c.module
                    onnx_node = None
                else:
                    onnx_node = node_by_name[m[0]]
                    op_type = onnx_node.op_type
                    module = c.module
                outs.append(m)
                if m[0] not in seen_nodes:
                    seen_nodes.add(m[0])
                    recurrent = onnx_node is not None and onnx_node.op_type in _RECURRENT_OPS
                    if c.module is not None and isinstance(self._module_by_path(c.module),
                                                           _RECURRENT):
                        recurrent = True
                    nodes_out.append(GraphNode(
                        name=m[0], op_type=op_type,
                        inputs=tuple(onnx_node.input) if onnx_node is not None else (),
                        outputs=tuple(onnx_node.output) if onnx_node is not None
                        else tuple(f"{m[0]}:{i}" for i in range(len(c.out_ids))),
                        module=module, recurrent=recurrent))
            plan[c.key] = outs
        self._plan = plan
        self._nodes = nodes_out

    def _module_by_path(self, path):
        return self.module.get_submodule(path) if path else self.module

    # ------------------------------------------------------------------
    # Backend interface
    def nodes(self) -> Sequence[GraphNode]:
        return list(self._nodes)

    def model_path(self) -> Optional[str]:
        return self._onnx_path

    def export_error(self) -> Optional[str]:
        """Why the ONNX export failed (probes are then PyTorch-only), or None."""
        return self._export_error

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def run(self, inputs: Any, request: ProbeRequest, on_tensor) -> dict[str, Any]:
        tracker = _Tracker(self)
        plan = self._plan
        wanted = request.nodes
        inputs_of = request.inputs_of
        counter = [0]
        grad_hooks = []

        def emit(ev):
            if not on_tensor(ev):
                raise _Stop()

        def report_outputs(key, outs, tensors, order):
            for k, t in enumerate(tensors):
                m = outs[k] if k < len(outs) else None
                if m is None or m[0] not in wanted:
                    continue
                node, index = m
                if k == 0 and key in self._recurrent:
                    self._emit_steps(self._recurrent[key], node, t, order, emit)
                emit(ProbeEvent(probe=f"{node}:{index}", node=node, kind="output",
                                index=index, tensor=to_numpy(t), order=order))
                if request.gradients and t.requires_grad:
                    grad_hooks.append(t.register_hook(self._grad_hook(node, index, order,
                                                                      on_tensor)))

        def report_inputs(outs, tensors, order, inplace):
            if not outs or outs[0] is None or outs[0][0] not in inputs_of:
                return
            node = outs[0][0]
            for k, t in enumerate(tensors):
                a = to_numpy(t)
                if inplace:
                    a = a.copy()   # the op overwrites it
                emit(ProbeEvent(probe=f"{node}:in{k}", node=node, kind="input", index=k,
                                tensor=a, order=order))

        def pre(module, args):
            scope = tracker.enter(module)
            counter[0] += 1
            module._mi_order = counter[0]
            if inputs_of:
                outs = plan.get(scope)
                if outs:
                    report_inputs(outs, _tensors(args), counter[0],
                                  bool(getattr(module, "inplace", False)))

        def post(module, args, output):
            scope = tracker.leave(module)
            outs = plan.get(scope)
            if outs:
                report_outputs(scope, outs, _tensors(output), module._mi_order)

        def on_op(func, args, kwargs):
            name = getattr(func, "__name__", "")
            if name not in _FUNCTIONAL or tracker.leaf_depth != 0:
                return func(*args, **kwargs)
            scope, op, k = tracker.op_key(name)
            key = f"{scope}/#{op}_{k}"
            outs = plan.get(key)
            counter[0] += 1
            order = counter[0]
            if outs and inputs_of:
                report_inputs(outs, _tensors(args), order, name.endswith("_"))
            out = func(*args, **kwargs)
            if outs:
                report_outputs(key, outs, _tensors(out)[:1], order)
            return out

        handles = []
        for m in self._segments:
            handles.append(m.register_forward_pre_hook(pre))
            handles.append(m.register_forward_hook(post))
        outputs = None
        try:
            grad = torch.enable_grad() if request.gradients else torch.no_grad()
            with grad:
                if self.functional:
                    with _OpMode(on_op):
                        outputs = self.module(*self._args(inputs))
                else:
                    outputs = self.module(*self._args(inputs))
                if request.gradients:
                    # Gradients of the probed outputs: the loss is loss_fn's,
                    # or the sum of every output.
                    loss = self.loss_fn(outputs) if self.loss_fn else sum(
                        t.float().sum() for t in _tensors(outputs))
                    loss.backward()
        except _Stop:
            pass
        finally:
            for h in handles + grad_hooks:
                h.remove()
            for m in self._segments:
                if hasattr(m, "_mi_order"):
                    del m._mi_order
        if outputs is None:
            return {}
        tensors = _tensors(outputs)
        names = getattr(self, "_graph_outputs", [])
        if len(names) != len(tensors):
            names = [f"output{i}" for i in range(len(tensors))]
        return {n: to_numpy(t) for n, t in zip(names, tensors)}

    loss_fn = None  # callable(outputs) -> scalar loss for gradients; default: sum

    def _emit_steps(self, module, node, t, order, emit):
        axis = 1 if getattr(module, "batch_first", False) else 0
        if isinstance(t, torch.nn.utils.rnn.PackedSequence):
            return
        for s in range(t.shape[axis]):
            step = t.select(axis, s)
            emit(ProbeEvent(probe=f"{node}:0", node=node, kind="output", index=0,
                            tensor=to_numpy(step), step=s, order=order))

    def _grad_hook(self, node, index, order, on_tensor):
        def hook(g):
            on_tensor(ProbeEvent(probe=f"{node}:grad{index}", node=node, kind="grad",
                                 index=index, tensor=to_numpy(g), order=order))
        return hook
