"""The training monitor: per-step statistics of a PyTorch training loop, a
ring buffer of tensors, triggers, and the snapshot (docs/guides/
training-monitor.md; format docs/reference/training-snapshot.md).

    mon = Monitor(model, optimizer, output="snapshot.db")
    for x, y in data:
        loss = loss_fn(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
    mon.close()          # or `with Monitor(...):`, or nothing: at exit

Nothing in the model or the loop changes. The monitor sees:
- each module's forward calls (forward hooks; calls with gradients off,
  e.g. evaluation under torch.no_grad(), are not counted), the gradient of
  its output (a hook on the output tensor);
- the loss: each scalar passed to torch.autograd.backward (Tensor.backward
  goes through it) during the step, summed; `mon.step(loss)` sets it;
- the gradients before clipping (torch.nn.utils.clip_grad_norm_ is wrapped:
  when called, the gradients are read there) or else just before
  optimizer.step(), and the parameters before and after the step (the
  instance's step method is wrapped; lr schedulers keep working).
A step ends when optimizer.step() returns.
"""

from __future__ import annotations

import atexit
import inspect
import math
import os
import sys
import time
import types
import weakref
from collections import deque
from typing import Any, Optional

import torch

from . import stats as S
from . import triggers as T

#: Tensors above this many elements are captured as an evenly strided
#: sample (flat indices 0, k, 2k, ..., k = ceil(count / limit)): the probe
#: store's rule (docs/reference/probe-store.md).
SAMPLE_LIMIT = 1 << 20

_ACTIVE: Optional["Monitor"] = None  # at most one monitor attached at a time
_ORIGINALS: dict = {}


def _first_tensor(value: Any) -> Optional[torch.Tensor]:
    """The first tensor of a module's input or output (tuples, lists and
    dicts searched depth first)."""
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (tuple, list)):
        for v in value:
            t = _first_tensor(v)
            if t is not None:
                return t
    elif isinstance(value, dict):
        for v in value.values():
            t = _first_tensor(v)
            if t is not None:
                return t
    return None


def _keep(t: torch.Tensor, limit: int) -> tuple:
    """A detached copy of `t` to capture: (tensor, stride, full shape)."""
    t = t.detach()
    n = t.numel()
    if n > limit:
        stride = -(-n // limit)
        return t.reshape(-1)[::stride].clone(), stride, list(t.shape)
    return t.clone(), 1, list(t.shape)


class _Layer:
    __slots__ = ("id", "name", "module", "type", "parent", "params", "graph", "unit_param",
                 "attributes", "param_count", "forward_order")

    def __init__(self, lid, name, module, parent):
        self.id, self.name, self.module, self.parent = lid, name, module, parent
        self.type = type(module).__name__
        self.params: list = []       # [(name, Parameter)] its own, shared ones once
        self.graph = False           # a node of the graph: a leaf or has own parameters
        self.unit_param = None       # index in params of the weight whose rows are units
        self.attributes: dict = {}
        self.param_count = 0
        self.forward_order: Optional[int] = None


class _StepState:
    """What one step collects until optimizer.step() returns."""

    def __init__(self, capturing: bool):
        self.pending = S.Pending()
        self.act: dict = {}       # layer id -> [moments records]
        self.inp: dict = {}
        self.gout: dict = {}
        self.act_dtype: dict = {}
        self.cache: dict = {}     # (id, version) -> (tensor, record): one reduction per tensor
        self.gout_hooked: dict = {}  # (id, version) -> [layer ids]
        self.losses: list = []
        self.loss_set = None      # a loss given to mon.step(loss)
        self.loss_scale = None
        self.grads = None         # per layer: dict of gradient figures
        self.before = None        # parameter copies before the step
        self.before_norms = None
        self.clipped = False
        self.capturing = capturing
        self.capture: dict = {}   # (layer id, kind, name) -> (tensor, stride, shape)
        self.touched = False      # a forward or backward was seen


class Monitor:
    """Watches a model and its optimizer; see the module docstring.

    triggers: spec strings / callables (model_inspector.train.triggers);
        None arms every kind with its default threshold, [] none.
    capture_window: K, the steps kept at tensor level before and after the
        first trigger's step (a ring buffer of the last K steps).
    output: the snapshot file (written atomically: a temporary file in the
        same folder, then renamed).
    capture: False keeps statistics only (no ring buffer, no tensors).
    sample_limit: tensors above this many elements are captured as a
        strided sample.
    vanishing, exploding: the gradient-health thresholds written into the
        snapshot's meta for the diagnosis.
    projections: compute PCA (and t-SNE when scikit-learn imports) of the
        captured steps' per-sample activations when writing.
    """

    def __init__(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, triggers=None,
                 capture_window: int = 5, output="snapshot.db", capture: bool = True,
                 sample_limit: int = SAMPLE_LIMIT, vanishing: float = 1e-5,
                 exploding: float = 50.0, projections: bool = True, command=None):
        global _ACTIVE
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"Monitor: expected a torch.nn.Module as the model, found {type(model).__name__}")
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError("Monitor: expected a torch.optim.Optimizer, found "
                            f"{type(optimizer).__name__}")
        if int(capture_window) != capture_window or capture_window < 0:
            raise ValueError(f"Monitor: capture_window must be an integer >= 0, found {capture_window}")
        if sample_limit < 1:
            raise ValueError(f"Monitor: sample_limit must be >= 1, found {sample_limit}")
        if _ACTIVE is not None:
            raise RuntimeError("Monitor: another Monitor is attached; close() it first")
        self.model = model
        self.optimizer = optimizer
        self.triggers = T.parse_all(triggers)
        self.window = int(capture_window)
        self.output = os.path.abspath(os.fspath(output))
        self.capture_enabled = bool(capture)
        self.sample_limit = int(sample_limit)
        self.projections = projections
        self.thresholds = T.thresholds(self.triggers, vanishing, exploding)
        self.command = list(command) if command is not None else list(sys.argv)
        self.closed = False

        self.step_index = 0
        self.steps: list = []          # dicts, one per finished step
        self.layer_rows: list = []     # (step, layer id, columns dict)
        self.trigger_rows: list = []   # (step, name, layer id, value, threshold, detail)
        self.anomaly_step: Optional[int] = None
        self.status = "no_anomaly"
        self.ring: deque = deque(maxlen=max(self.window, 1))
        self.captured: list = []       # [(step, capture dict)] the window
        self.after_left = 0
        self.snapshot_written = False
        self.edges: set = set()
        self._order_next = 0
        self._last_done: Optional[int] = None   # the last graph layer whose forward returned
        self._producers: dict = {}
        self._observing = True          # step 0: forward order and edges

        self._discover_layers()
        self._param_list = [p for layer in self.layers for _, p in layer.params]
        self._capturing = self.capture_enabled
        self._state = _StepState(self._capturing)
        self._handles: list = []
        self._attach()
        self._last_end = time.perf_counter_ns()
        _ACTIVE = self
        atexit.register(self._at_exit)

    # -- discovery -------------------------------------------------------
    def _discover_layers(self):
        self.layers: list = []
        by_name: dict = {}
        seen_params: set = set()
        for name, module in self.model.named_modules():
            parent = by_name.get(name.rpartition(".")[0]) if name else None
            layer = _Layer(len(self.layers), name, module, parent.id if parent else None)
            for pname, p in module.named_parameters(recurse=False):
                if id(p) in seen_params:
                    continue
                seen_params.add(id(p))
                layer.params.append((pname, p))
            layer.param_count = sum(p.numel() for _, p in layer.params)
            layer.graph = bool(layer.params) or not any(True for _ in module.children())
            if not isinstance(module, (torch.nn.Embedding, torch.nn.EmbeddingBag)):
                for i, (pname, p) in enumerate(layer.params):
                    if p.dim() >= 2:
                        layer.unit_param = i
                        break
            layer.attributes = self._attributes(module, layer)
            by_name[name] = layer
            self.layers.append(layer)
        self._by_module = {id(layer.module): layer for layer in self.layers}

    @staticmethod
    def _attributes(module, layer) -> dict:
        out = {}
        for key, value in vars(module).items():
            if key.startswith("_") or key == "training":
                continue
            if isinstance(value, (bool, int, float, str)) or (
                    isinstance(value, tuple) and all(isinstance(v, (int, float)) for v in value)):
                if isinstance(value, float) and not math.isfinite(value):
                    value = str(value)
                out[key] = list(value) if isinstance(value, tuple) else value
        if layer.params:
            weight = dict(layer.params).get("weight")
            if weight is None and layer.unit_param is not None:
                weight = layer.params[layer.unit_param][1]
            if weight is None:
                weight = layer.params[0][1]
            with torch.no_grad():
                w = weight.detach()
                if w.dim() >= 2:
                    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(w)
                    out["fan_in"], out["fan_out"] = int(fan_in), int(fan_out)
                if w.numel() > 1 and w.is_floating_point():
                    out["init_std"] = float(w.float().std())
                if w.numel() > 0 and w.is_floating_point():
                    out["init_abs_mean"] = float(w.float().abs().mean())
            out["param_dtype"] = S.dtype_name(weight)
        return out

    # -- attaching -------------------------------------------------------
    def _attach(self):
        for layer in self.layers:
            self._handles.append(layer.module.register_forward_pre_hook(self._pre_hook_for(layer)))
            self._handles.append(layer.module.register_forward_hook(self._hook_for(layer)))
            if isinstance(layer.module, torch.nn.MultiheadAttention):
                self._wrap_attention(layer)
        self._wrap_optimizer()
        _patch_globals()

    def _wrap_optimizer(self):
        opt = self.optimizer
        original = opt.step
        monitor_ref = weakref.ref(self)

        def step(opt_self, *args, **kwargs):
            mon = monitor_ref()
            if mon is None or mon.closed:
                return original(*args, **kwargs)
            mon._collect_grads()
            mon._before_step()
            result = original(*args, **kwargs)
            mon._end_step()
            return result

        if getattr(original, "_with_counter", False):
            step._with_counter = True
        self._step_method = types.MethodType(step, opt)
        self._original_step = original
        opt.step = self._step_method

    def _wrap_attention(self, layer):
        module = layer.module
        original = module.forward
        signature = inspect.signature(original)
        monitor_ref = weakref.ref(self)

        def forward(*args, **kwargs):
            mon = monitor_ref()
            if mon is None or mon.closed or not mon._capturing or not torch.is_grad_enabled():
                return original(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            need = bound.arguments.get("need_weights", True)
            average = bound.arguments.get("average_attn_weights", True)
            bound.arguments["need_weights"] = True
            bound.arguments["average_attn_weights"] = False
            out, weights = original(*bound.args, **bound.kwargs)
            if weights is not None:
                key = (layer.id, "attention", "sample0")
                if key not in mon._state.capture:
                    w = weights.detach()
                    w = w[0] if w.dim() == 4 else w
                    mon._state.capture[key] = _keep(w, mon.sample_limit)
            if not need:
                return out, None
            if average and weights is not None:
                return out, weights.mean(dim=-3)
            return out, weights

        module.forward = forward
        self._handles.append(_AttributeRestore(module, "forward"))

    # -- forward / backward ------------------------------------------------
    def _pre_hook_for(self, layer):
        def pre_hook(module, inputs):
            if not self._observing or self.closed or not torch.is_grad_enabled():
                return None
            if layer.forward_order is None:
                layer.forward_order = self._order_next
                self._order_next += 1
            return None
        return pre_hook

    def _moments(self, t: torch.Tensor):
        st = self._state
        key = (id(t), t._version)
        hit = st.cache.get(key)
        if hit is not None and hit[0] is t:
            return hit[1]
        record = S.moments(t, st.pending)
        st.cache[key] = (t, record)
        return record

    def _hook_for(self, layer):
        lid = layer.id

        def hook(module, inputs, output):
            if self.closed or not torch.is_grad_enabled():
                return None
            st = self._state
            st.touched = True
            out = _first_tensor(output)
            inp = _first_tensor(inputs)
            if out is not None:
                record = self._moments(out)
                if record is not None:
                    st.act.setdefault(lid, []).append(record)
                    st.act_dtype.setdefault(lid, S.dtype_name(out))
                if out.requires_grad and out.is_floating_point():
                    key = (id(out), out._version)
                    layers = st.gout_hooked.get(key)
                    if layers is None:
                        layers = st.gout_hooked[key] = []
                        out.register_hook(self._gout_hook(st, layers))
                    if lid not in layers:
                        layers.append(lid)
            if inp is not None:
                record = self._moments(inp)
                if record is not None:
                    st.inp.setdefault(lid, []).append(record)
            if layer.graph:
                if st.capturing:
                    cap = st.capture
                    if out is not None and (lid, "activation", "0") not in cap:
                        cap[(lid, "activation", "0")] = _keep(out, self.sample_limit)
                    if inp is not None and (lid, "input", "0") not in cap:
                        cap[(lid, "input", "0")] = _keep(inp, self.sample_limit)
                if self._observing:
                    self._observe_edges(lid, inputs, output)
            return None
        return hook

    def _observe_edges(self, lid, inputs, output):
        found = False
        stack = [inputs]
        while stack:
            v = stack.pop()
            if isinstance(v, torch.Tensor):
                src = self._producers.get(id(v))
                if src is not None and src[1] is v and src[0] != lid:
                    self.edges.add((src[0], lid))
                    found = True
            elif isinstance(v, (tuple, list)):
                stack.extend(v)
            elif isinstance(v, dict):
                stack.extend(v.values())
        if not found and self._last_done is not None and self._last_done != lid:
            self.edges.add((self._last_done, lid))
        out = _first_tensor(output)
        if out is not None and id(out) not in self._producers:
            self._producers[id(out)] = (lid, out)
        self._last_done = lid

    def _gout_hook(self, st, layers):
        def on_grad(grad):
            if self.closed or self._state is not st:
                return None
            record = S.moments(grad, st.pending)
            if record is not None:
                for lid in layers:
                    st.gout.setdefault(lid, []).append(record)
                    if st.capturing and self.layers[lid].graph and (lid, "grad_output", "0") not in st.capture:
                        st.capture[(lid, "grad_output", "0")] = _keep(grad, self.sample_limit)
            return None
        return on_grad

    def _on_backward(self, tensors):
        st = self._state
        st.touched = True
        t = tensors
        if isinstance(t, (tuple, list)) and len(t) == 1:
            t = t[0]
        if isinstance(t, torch.Tensor) and t.numel() == 1 and t.is_floating_point():
            scaled = _SCALED.pop(id(t), None)
            value = t.detach().reshape(())
            if scaled is not None and scaled[0] is t:
                st.loss_scale = scaled[1]
                value = value / scaled[1]
            st.losses.append(value)
        # Activations of this forward are no longer needed for de-duplication.
        st.cache.clear()

    def step(self, loss=None):
        """Sets the loss of the step in progress (call before
        optimizer.step()); only needed when the loss never goes through
        Tensor.backward / torch.autograd.backward."""
        if loss is not None:
            self._state.loss_set = loss.detach().reshape(()) if isinstance(loss, torch.Tensor) \
                else torch.tensor(float(loss), dtype=torch.float64)

    # -- the optimizer step --------------------------------------------------
    def _collect_grads(self, clipping: bool = False):
        st = self._state
        if clipping:
            st.clipped = True
        if st.grads is not None:
            return
        st.touched = True
        grads = {}
        for layer in self.layers:
            if not layer.params:
                continue
            records, dead, rows = [], 0, 0
            for i, (pname, p) in enumerate(layer.params):
                g = p.grad
                if g is None:
                    continue
                records.append(S.moments(g, st.pending))
                if st.capturing:
                    st.capture[(layer.id, "grad", pname)] = _keep(g, self.sample_limit)
                if i == layer.unit_param and g.dim() >= 2 and g.shape[0] > 0:
                    # (abs().amax(): measured 8x faster than count_nonzero(dim=1))
                    g2 = g.detach().reshape(g.shape[0], -1)
                    dead_rows = (g2.abs().amax(dim=1) == 0).sum()
                    dead, rows = dead_rows, g.shape[0]
            grads[layer.id] = (records, dead, rows)
        st.grads = grads

    def _before_step(self):
        st = self._state
        params = self._param_list
        with torch.no_grad():
            st.before = torch._foreach_mul([p.detach() for p in params], 1.0) if params else []
            st.before_norms = torch._foreach_norm(st.before) if params else []
        if st.capturing:
            k = 0
            for layer in self.layers:
                for pname, p in layer.params:
                    st.capture[(layer.id, "weight", pname)] = _keep(st.before[k], self.sample_limit)
                    k += 1
        st.lr = max((g.get("lr", 0.0) for g in self.optimizer.param_groups), default=None)

    def _end_step(self, skipped: bool = False):
        st = self._state
        params = self._param_list
        with torch.no_grad():
            if params:
                after = [p.detach() for p in params]
                after_norms = torch._foreach_norm(after)
                if st.before is not None:
                    update_norms = torch._foreach_norm(torch._foreach_sub(after, st.before))
                else:
                    update_norms = [torch.zeros((), device=a.device) for a in after]
                norms = torch.stack([torch.stack([a.to(torch.float64), b.to(torch.float64),
                                                  u.to(torch.float64)])
                                     for a, b, u in zip(after_norms, st.before_norms or after_norms,
                                                        update_norms)]).cpu().tolist()
            else:
                norms = []
            st.pending.resolve()
        self._finish_step(st, norms, skipped)

    def _finish_step(self, st, norms, skipped=False, partial=False):
        """Ends the step: its rows, the triggers, the window. A `partial`
        step (cut short at close) is kept only when a trigger fires on it;
        returns whether it was kept."""
        step = self.step_index
        now = time.perf_counter_ns()
        # The loss: the value given to step(), else the sum of the scalars
        # backward was called on.
        loss = None
        if st.loss_set is not None:
            loss = float(st.loss_set)
        elif st.losses:
            loss = float(torch.stack([v.to(torch.float64).cpu() for v in st.losses]).sum())
        loss_nan = loss is not None and math.isnan(loss)
        loss_inf = loss is not None and math.isinf(loss)
        # Per layer.
        rows: dict = {}
        total_sumsq, grad_nonfinite, any_grad = 0.0, 0, False
        k = 0
        for layer in self.layers:
            lid = layer.id
            row = {}
            if layer.params:
                per = norms[k:k + len(layer.params)]
                k += len(layer.params)
                if per:
                    after_sq = sum(a * a for a, _, _ in per)
                    before_sq = sum(b * b for _, b, _ in per)
                    upd_sq = sum(u * u for _, _, u in per)
                    row["weight_norm"] = S.finite_or_none(math.sqrt(after_sq))
                    row["update_norm"] = S.finite_or_none(math.sqrt(upd_sq))
                    wb = math.sqrt(before_sq)
                    if row["update_norm"] is not None and math.isfinite(wb) and wb > 0:
                        row["update_ratio"] = row["update_norm"] / wb
                g = (st.grads or {}).get(lid)
                if g is not None and g[0]:
                    rec = S.combine(g[0])
                    f = S.finish(rec)
                    any_grad = True
                    row["grad_nan"], row["grad_inf"] = f["nan"], f["inf"]
                    grad_nonfinite += f["nan"] + f["inf"]
                    if f["nan"] == 0 and f["inf"] == 0 and f["l2"] is not None:
                        row["grad_norm"] = S.finite_or_none(f["l2"])
                    total_sumsq += rec[5]
                    row["grad_zero_fraction"] = f["zero_fraction"]
                    if g[2]:
                        row["dead_fraction"] = int(g[1]) / g[2]
            for prefix, recs in (("act", st.act.get(lid)), ("in", st.inp.get(lid)),
                                 ("gout", st.gout.get(lid))):
                if not recs:
                    continue
                f = S.finish(S.combine(recs))
                row[f"{prefix}_nan"], row[f"{prefix}_inf"] = f["nan"], f["inf"]
                row[f"{prefix}_abs_max"] = f["abs_max"]
                if prefix == "act":
                    row.update(act_rms=f["rms"], act_mean=f["mean"], act_std=f["std"],
                               act_zero_fraction=f["zero_fraction"])
                    row["act_dtype"] = st.act_dtype.get(lid)
                elif prefix == "in":
                    row["in_rms"] = f["rms"]
                else:
                    row["gout_norm"] = f["l2"]
            if row:
                rows[lid] = row
        grad_norm = None
        if any_grad and grad_nonfinite == 0:
            grad_norm = S.finite_or_none(math.sqrt(total_sumsq))
        record = {
            "step": step, "loss": loss if loss is not None and math.isfinite(loss) else None,
            "loss_nonfinite": int(loss_nan or loss_inf), "grad_norm": grad_norm,
            "grad_nonfinite": grad_nonfinite, "lr": getattr(st, "lr", None),
            "loss_scale": float(st.loss_scale) if st.loss_scale is not None else None,
            "clipped": int(st.clipped), "elapsed_ns": now - self._last_end, "captured": 0,
        }
        # Triggers see the layers in forward order.
        # (graph layers first: a container's output is its last child's)
        ordered = sorted((lid for lid in rows),
                         key=lambda i: (not self.layers[i].graph,
                                        self.layers[i].forward_order is None,
                                        self.layers[i].forward_order or 0, i))
        stats = dict(record, loss_nan=loss_nan, loss_inf=loss_inf,
                     layers={self.layers[i].name: rows[i] for i in ordered})
        hits_all = []
        for trig in self.triggers:
            try:
                hits = trig.check(stats)
            except Exception as e:
                raise RuntimeError(f"Monitor: trigger '{trig.name}' failed at step {step}: {e}") from e
            for layer_name, value, threshold, detail in hits:
                lid = None
                if layer_name is not None:
                    lid = next(l.id for l in self.layers if l.name == layer_name)
                hits_all.append((step, trig.name, lid, value, threshold, detail))
        fired = bool(hits_all)
        if partial and not fired:
            return False
        self.trigger_rows.extend(hits_all)
        self.steps.append(record)
        for lid, row in rows.items():
            self.layer_rows.append((step, lid, row))
        # The ring buffer and the window.
        if st.capturing:
            if self.anomaly_step is None and not fired:
                if self.window > 0:
                    self.ring.append((step, st.capture))
            elif self.anomaly_step is None:
                self.captured = list(self.ring) + [(step, st.capture)]
                self.ring.clear()
                self.after_left = self.window
            else:
                self.captured.append((step, st.capture))
                self.after_left -= 1
        if fired and self.anomaly_step is None:
            self.anomaly_step = step
            if not st.capturing:
                self.after_left = self.window
        elif self.anomaly_step is not None and step > self.anomaly_step and not st.capturing \
                and self.after_left > 0:
            self.after_left -= 1
        if self._observing:
            self._observing = False
            self._producers.clear()
        self.step_index += 1
        if self.anomaly_step is not None and self.after_left == 0 and not self.snapshot_written \
                and not partial:
            self.status = "complete"
            self._write()
            self.snapshot_written = True
        self._capturing = self.capture_enabled and (self.anomaly_step is None or self.after_left > 0)
        self._state = _StepState(self._capturing)
        self._last_end = time.perf_counter_ns()
        return True

    # -- the end -----------------------------------------------------------
    def _write(self):
        from .snapshot import write_snapshot
        write_snapshot(self)

    def close(self):
        """Detaches and writes the final snapshot: every step seen, the
        window if a trigger fired ("complete", or "ended" when the run ended
        before K steps after it), else "no_anomaly"."""
        global _ACTIVE
        if self.closed:
            return self.output
        st = self._state
        # A step cut short (e.g. the script stopped at a NaN loss before
        # optimizer.step()) is kept when a trigger fires on it.
        if st.touched and (st.losses or st.act or st.loss_set is not None):
            if st.grads is None:
                self._collect_grads()
            st.pending.resolve()
            self._finish_step(st, [], skipped=True, partial=True)
        self.closed = True
        for h in self._handles:
            h.remove()
        self._handles.clear()
        if self.optimizer.__dict__.get("step") is self._step_method:
            self.optimizer.step = self._original_step
        if _ACTIVE is self:
            _ACTIVE = None
        _unpatch_globals()
        atexit.unregister(self._at_exit)
        if self.anomaly_step is None:
            self.status = "no_anomaly"
            self.captured = []
        elif not self.snapshot_written:
            self.status = "ended"
        self._write()
        self.snapshot_written = True
        return self.output

    def _at_exit(self):
        if not self.closed:
            try:
                self.close()
            except Exception as e:  # the interpreter is ending: say why, do not hide it
                print(f"model_inspector.train: writing the snapshot failed: {e}", file=sys.stderr)
                raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- queries -------------------------------------------------------------
    @property
    def fired(self) -> list:
        """The trigger hits so far: [(step, trigger, layer name, value, threshold, detail)]."""
        return [(s, n, self.layers[l].name if l is not None else None, v, t, d)
                for s, n, l, v, t, d in self.trigger_rows]


class _AttributeRestore:
    """A handle removing an instance attribute we set."""

    def __init__(self, obj, name):
        self.obj, self.name = obj, name

    def remove(self):
        self.obj.__dict__.pop(self.name, None)


# -- process-wide patches (active while a monitor is attached) ---------------
_SCALED: dict = {}   # id(scaled loss) -> (tensor, scale) from GradScaler.scale


def _patch_globals():
    if _ORIGINALS:
        return
    autograd_backward = torch.autograd.backward

    def backward(tensors, *args, **kwargs):
        mon = _ACTIVE
        if mon is not None and not mon.closed:
            mon._on_backward(tensors)
        return autograd_backward(tensors, *args, **kwargs)

    backward.__wrapped__ = autograd_backward
    _ORIGINALS["backward"] = autograd_backward
    torch.autograd.backward = backward

    import torch.nn.utils as utils
    import torch.nn.utils.clip_grad as clip_module
    clip = clip_module.clip_grad_norm_

    def clip_grad_norm_(parameters, *args, **kwargs):
        mon = _ACTIVE
        if isinstance(parameters, torch.Tensor):
            parameters = [parameters]
        else:
            parameters = list(parameters)
        if mon is not None and not mon.closed:
            mon._collect_grads(clipping=True)
        return clip(parameters, *args, **kwargs)

    clip_grad_norm_.__wrapped__ = clip
    _ORIGINALS["clip"] = (clip, utils.clip_grad_norm_)
    clip_module.clip_grad_norm_ = clip_grad_norm_
    utils.clip_grad_norm_ = clip_grad_norm_

    scaler_cls = getattr(getattr(torch.cuda, "amp", None), "GradScaler", None)
    if scaler_cls is not None:
        scale = scaler_cls.scale
        scaler_step = scaler_cls.step

        def scale_wrapper(self, outputs):
            out = scale(self, outputs)
            if isinstance(out, torch.Tensor) and getattr(self, "_enabled", False) \
                    and getattr(self, "_scale", None) is not None:
                _SCALED.clear()
                _SCALED[id(out)] = (out, self._scale.detach().reshape(()).clone())
            return out

        def step_wrapper(self, optimizer, *args, **kwargs):
            mon = _ACTIVE
            before = mon.step_index if mon is not None else None
            result = scaler_step(self, optimizer, *args, **kwargs)
            if mon is not None and not mon.closed and optimizer is mon.optimizer \
                    and mon.step_index == before:
                # The scaler skipped optimizer.step() (an inf/NaN gradient):
                # the step still ends here, with no update.
                mon._collect_grads()
                mon._end_step(skipped=True)
            return result

        _ORIGINALS["scaler"] = (scaler_cls, scale, scaler_step)
        scaler_cls.scale = scale_wrapper
        scaler_cls.step = step_wrapper


def _unpatch_globals():
    if not _ORIGINALS:
        return
    torch.autograd.backward = _ORIGINALS.pop("backward")
    import torch.nn.utils as utils
    import torch.nn.utils.clip_grad as clip_module
    clip, utils_clip = _ORIGINALS.pop("clip")
    clip_module.clip_grad_norm_ = clip
    utils.clip_grad_norm_ = utils_clip
    if "scaler" in _ORIGINALS:
        cls, scale, step = _ORIGINALS.pop("scaler")
        cls.scale, cls.step = scale, step
    _SCALED.clear()
