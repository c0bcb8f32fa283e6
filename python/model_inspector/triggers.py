"""Triggers: conditions on a probed tensor that pause a run.

A trigger is written as a string or given as a callable:

    "nan"                any NaN
    "inf"                any +Inf or -Inf
    "range:LO:HI"        a value below LO or above HI (infinities included;
                         NaN is not a value: use "nan")
    "fp16_overflow"      a finite value an fp16 cast turns into ±Inf
                         (|x| > 65504): "range:-65504:65504" by another name
    "zero_fraction:F"    a share F (0..1) or more of the elements exactly zero
    "jump:K"             |mean - running mean| > K x running std, the running
                         mean and std taken over this probe's means in the
                         earlier runs of the store (at least 2 earlier runs)
    callable(stats, tensor, node) -> bool
                         a Python predicate: stats is tensor_stats' dict,
                         tensor the numpy array, node the node name

`check` returns a one-line detail when the trigger fires, else None. The
Inspector checks the outputs of every probed node in execution order and
stops at the first hit; it then checks the same trigger on the node's
inputs: when one of them fires too, the node is a "propagator" (the value
came in), otherwise the "producer". "jump" compares a probe with its own
history only: the node it fires on is its producer.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence, Union

FP16_MAX = 65504.0

TriggerSpec = Union[str, Callable[[dict, Any, str], bool], "Trigger"]


class Trigger:
    """One parsed trigger; `name` is the text it was written as."""

    name: str = ""
    uses_history = False   # needs the probe's means of earlier runs
    needs_tensor = False   # calls a predicate with the tensor

    def check(self, stats: dict, tensor: Any = None, node: str = "",
              history: Sequence[float] = ()) -> Optional[str]:
        raise NotImplementedError


class NanTrigger(Trigger):
    name = "nan"

    def check(self, stats, tensor=None, node="", history=()):
        if stats.get("nan", 0):
            return f"{stats['nan']} NaN of {stats['count']} elements"
        return None


class InfTrigger(Trigger):
    name = "inf"

    def check(self, stats, tensor=None, node="", history=()):
        pos, neg = stats.get("pos_inf", 0), stats.get("neg_inf", 0)
        if pos or neg:
            return f"{pos} +Inf and {neg} -Inf of {stats['count']} elements"
        return None


class RangeTrigger(Trigger):
    def __init__(self, lo: float, hi: float, name: Optional[str] = None):
        if not lo <= hi:
            raise ValueError(f"range trigger: expected LO <= HI, found {lo} > {hi}")
        self.lo, self.hi = lo, hi
        self.name = name or f"range:{lo:g}:{hi:g}"

    def check(self, stats, tensor=None, node="", history=()):
        parts = []
        if stats.get("min") is not None and stats["min"] < self.lo:
            parts.append(f"min {stats['min']:g} < {self.lo:g}")
        if stats.get("max") is not None and stats["max"] > self.hi:
            parts.append(f"max {stats['max']:g} > {self.hi:g}")
        if stats.get("neg_inf", 0) and self.lo > -math.inf:
            parts.append(f"{stats['neg_inf']} -Inf")
        if stats.get("pos_inf", 0) and self.hi < math.inf:
            parts.append(f"{stats['pos_inf']} +Inf")
        return ", ".join(parts) if parts else None


class ZeroFractionTrigger(Trigger):
    def __init__(self, fraction: float):
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"zero_fraction trigger: expected F in [0, 1], found {fraction}")
        self.fraction = fraction
        self.name = f"zero_fraction:{fraction:g}"

    def check(self, stats, tensor=None, node="", history=()):
        count = stats.get("count", 0)
        if not count:
            return None
        share = stats.get("zero", 0) / count
        if share >= self.fraction:
            return f"{share:.4g} of the elements are zero (>= {self.fraction:g})"
        return None


class JumpTrigger(Trigger):
    uses_history = True

    def __init__(self, k: float):
        if not k > 0:
            raise ValueError(f"jump trigger: expected K > 0, found {k}")
        self.k = k
        self.name = f"jump:{k:g}"

    def check(self, stats, tensor=None, node="", history=()):
        means = [m for m in history if m is not None and math.isfinite(m)]
        mean = stats.get("mean")
        if len(means) < 2 or mean is None:
            return None
        running = sum(means) / len(means)
        std = math.sqrt(sum((m - running) ** 2 for m in means) / len(means))
        if abs(mean - running) > self.k * std:
            return (f"mean {mean:g} vs running mean {running:g} over {len(means)} runs "
                    f"(std {std:g}, K {self.k:g})")
        return None


class PredicateTrigger(Trigger):
    needs_tensor = True

    def __init__(self, fn: Callable[[dict, Any, str], bool]):
        self.fn = fn
        self.name = getattr(fn, "__name__", "predicate")

    def check(self, stats, tensor=None, node="", history=()):
        return "predicate returned True" if self.fn(stats, tensor, node) else None


def parse(spec: TriggerSpec) -> Trigger:
    """A Trigger from its text, a callable or a Trigger."""
    if isinstance(spec, Trigger):
        return spec
    if callable(spec):
        return PredicateTrigger(spec)
    if not isinstance(spec, str):
        raise TypeError(f"trigger: expected a string or a callable, found {type(spec).__name__}")
    text = spec.strip()
    head, _, rest = text.partition(":")
    head = head.lower()
    try:
        if head == "nan" and not rest:
            return NanTrigger()
        if head == "inf" and not rest:
            return InfTrigger()
        if head == "fp16_overflow" and not rest:
            return RangeTrigger(-FP16_MAX, FP16_MAX, name="fp16_overflow")
        if head == "range":
            lo, sep, hi = rest.partition(":")
            if not sep:
                raise ValueError
            return RangeTrigger(float(lo), float(hi))
        if head == "zero_fraction":
            return ZeroFractionTrigger(float(rest))
        if head == "jump":
            return JumpTrigger(float(rest))
    except ValueError as e:
        if str(e).startswith(("range", "zero", "jump")):
            raise
    raise ValueError(
        f"trigger '{spec}': expected nan, inf, fp16_overflow, range:LO:HI, "
        "zero_fraction:F, jump:K or a callable(stats, tensor, node)")


def parse_all(specs) -> list[Trigger]:
    if specs is None:
        return []
    if isinstance(specs, (str, Trigger)) or callable(specs):
        specs = [specs]
    return [parse(s) for s in specs]
