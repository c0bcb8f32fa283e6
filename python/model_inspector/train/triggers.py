"""Training triggers: conditions on one step's statistics that start the
tensor-level capture (docs/guides/training-monitor.md).

Spec strings (arguments optional, defaults shown):

    loss_spike:3:10   the loss above 3x the mean of the last 10 finite losses
                      (fires from the 2nd step with a positive mean on)
    grad_norm:100     the global gradient norm (before clipping) above 100
    nan               a NaN in the loss, a gradient, an activation or the
                      gradient of a layer's output
    inf               the same for +-Inf
    act_range:1e4     a layer's activation |x| above 1e4 (finite values)
    dead_units:0.3    a layer's dead_fraction (output units whose weight
                      gradient row is all zero) at or above 0.3

A predicate is a callable ``fn(stats) -> bool`` given as the callable (its
``__name__`` names it), as ``(name, fn)`` or as ``{name: fn}``. ``stats``
is the step's dict: ``step, loss, grad_norm, grad_nonfinite, lr, clipped``
and ``layers`` (layer name -> its layer_steps columns, in forward order).

`check(stats)` returns the hits: ``(layer name or None, value, threshold,
detail)``. A trigger that watches layers names the first layer in forward
order that fired (dead_units: the first with the largest dead fraction);
that is where it was seen, not a diagnosis.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Callable, Optional

DEFAULT_SPECS = ("loss_spike", "grad_norm", "nan", "inf", "act_range", "dead_units")

Hit = tuple  # (layer name or None, value, threshold, detail)


class TrainTrigger:
    name = ""
    spec = ""

    def check(self, stats: dict) -> list:
        raise NotImplementedError

    def thresholds(self) -> dict:
        return {}


class LossSpike(TrainTrigger):
    name = "loss_spike"

    def __init__(self, factor: float = 3.0, window: int = 10):
        if not factor > 0:
            raise ValueError(f"loss_spike: expected a factor > 0, found {factor}")
        if window < 1 or window != int(window):
            raise ValueError(f"loss_spike: expected a window of 1 or more steps, found {window}")
        self.factor, self.window = float(factor), int(window)
        self.history: deque = deque(maxlen=self.window)
        self.spec = f"loss_spike:{self.factor:g}:{self.window}"

    def check(self, stats):
        loss = stats.get("loss")
        hits = []
        if loss is not None and len(self.history) >= 1:
            mean = sum(self.history) / len(self.history)
            if mean > 0 and loss > self.factor * mean:
                hits.append((None, loss, self.factor * mean,
                             f"loss {loss:.6g} > {self.factor:g} x mean {mean:.6g} of the "
                             f"last {len(self.history)} steps"))
        if loss is not None:
            self.history.append(loss)
        return hits

    def thresholds(self):
        return {"loss_spike_factor": self.factor, "loss_spike_window": self.window}


class GradNorm(TrainTrigger):
    name = "grad_norm"

    def __init__(self, limit: float = 100.0):
        if not limit > 0:
            raise ValueError(f"grad_norm: expected a limit > 0, found {limit}")
        self.limit = float(limit)
        self.spec = f"grad_norm:{self.limit:g}"

    def check(self, stats):
        norm = stats.get("grad_norm")
        if norm is not None and norm > self.limit:
            return [(None, norm, self.limit,
                     f"global gradient norm {norm:.6g} > {self.limit:g}")]
        return []

    def thresholds(self):
        return {"grad_norm": self.limit}


class NonFinite(TrainTrigger):
    """nan / inf: the loss first, then activations in forward order, then
    gradients of outputs, then parameter gradients."""

    def __init__(self, which: str):
        self.name = self.spec = which
        self.loss_key = "loss_nan" if which == "nan" else "loss_inf"

    def check(self, stats):
        word = "NaN" if self.name == "nan" else "Inf"
        hits = []
        if stats.get(self.loss_key):
            hits.append((None, None, None, f"the loss is {word}"))
        for column, what in (("act", "activation"), ("in", "input"),
                             ("gout", "output gradient"), ("grad", "parameter gradient")):
            for layer, row in stats["layers"].items():
                n = row.get(f"{column}_{self.name}") or 0
                if n:
                    hits.append((layer, float(n), 0.0, f"{n} {word} in the {what} of '{layer}'"))
                    return hits
        return hits


class ActRange(TrainTrigger):
    name = "act_range"

    def __init__(self, limit: float = 1e4):
        if not limit > 0:
            raise ValueError(f"act_range: expected a limit > 0, found {limit}")
        self.limit = float(limit)
        self.spec = f"act_range:{self.limit:g}"

    def check(self, stats):
        for layer, row in stats["layers"].items():
            v = row.get("act_abs_max")
            if v is not None and v > self.limit:
                return [(layer, v, self.limit,
                         f"activation |x| {v:.6g} > {self.limit:g} in '{layer}'")]
        return []

    def thresholds(self):
        return {"act_range": self.limit}


class DeadUnits(TrainTrigger):
    name = "dead_units"

    def __init__(self, fraction: float = 0.3):
        if not 0 < fraction <= 1:
            raise ValueError(f"dead_units: expected a fraction in (0, 1], found {fraction}")
        self.fraction = float(fraction)
        self.spec = f"dead_units:{self.fraction:g}"

    def check(self, stats):
        best, best_layer = None, None
        for layer, row in stats["layers"].items():
            v = row.get("dead_fraction")
            if v is not None and v >= self.fraction and (best is None or v > best):
                best, best_layer = v, layer
        if best is None:
            return []
        return [(best_layer, best, self.fraction,
                 f"{best:.3g} of the output units of '{best_layer}' have an all-zero "
                 f"gradient (>= {self.fraction:g})")]

    def thresholds(self):
        return {"dead": self.fraction}


class Predicate(TrainTrigger):
    def __init__(self, name: str, fn: Callable[[dict], bool]):
        if not name:
            raise ValueError("a predicate trigger needs a name")
        self.name = self.spec = name
        self.fn = fn

    def check(self, stats):
        return [(None, None, None, f"predicate '{self.name}' returned True")] if self.fn(stats) else []


def _number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{what}: expected a number, found '{text}'") from None


def parse(spec) -> TrainTrigger:
    """One trigger from a spec string, a callable, (name, callable) or a
    TrainTrigger."""
    if isinstance(spec, TrainTrigger):
        return spec
    if isinstance(spec, tuple) and len(spec) == 2 and callable(spec[1]):
        return Predicate(str(spec[0]), spec[1])
    if callable(spec):
        name = getattr(spec, "__name__", "") or "predicate"
        return Predicate("predicate" if name == "<lambda>" else name, spec)
    if not isinstance(spec, str):
        raise TypeError(f"trigger: expected a spec string or a callable, found {type(spec).__name__}")
    head, *args = spec.strip().split(":")
    head = head.strip().lower()
    nums = [_number(a, f"trigger '{spec}'") for a in args]
    shapes = {"loss_spike": 2, "grad_norm": 1, "nan": 0, "inf": 0, "act_range": 1, "dead_units": 1}
    if head not in shapes or len(nums) > shapes[head]:
        raise ValueError(
            f"trigger '{spec}': expected loss_spike[:FACTOR[:WINDOW]], grad_norm[:LIMIT], nan, inf, "
            "act_range[:LIMIT], dead_units[:FRACTION], a callable(stats) -> bool or (name, callable)")
    if head == "loss_spike":
        return LossSpike(*nums)
    if head == "grad_norm":
        return GradNorm(*nums)
    if head in ("nan", "inf"):
        return NonFinite(head)
    if head == "act_range":
        return ActRange(*nums)
    return DeadUnits(*nums)


def parse_all(specs) -> list:
    """The triggers of `specs`: None arms the defaults (every kind with its
    default threshold), [] none."""
    if specs is None:
        specs = DEFAULT_SPECS
    if isinstance(specs, (str, TrainTrigger)) or callable(specs):
        specs = [specs]
    if isinstance(specs, dict):
        specs = list(specs.items())
    out = [parse(s) for s in specs]
    names = [t.name for t in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"triggers: each kind once, found {sorted(dup)} more than once")
    return out


def thresholds(triggers: list, vanishing: float = 1e-5, exploding: float = 50.0) -> dict:
    """The meta 'thresholds' object: the defaults, overridden by the armed
    triggers' own values."""
    out = {"vanishing": vanishing, "exploding": exploding, "dead": 0.3, "grad_norm": 100.0,
           "loss_spike_factor": 3.0, "loss_spike_window": 10, "act_range": 1e4}
    for t in triggers:
        out.update(t.thresholds())
    return out
