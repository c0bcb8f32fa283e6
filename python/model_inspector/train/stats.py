"""Cheap tensor statistics for the training monitor.

Every statistic is a "moments" record of one tensor:

    [count, nan, inf, zero, sum, sumsq, abs_max, m2]

``sum``, ``sumsq``, ``abs_max`` and ``m2`` (the sum of squared deviations
from the mean) are over the finite elements (``abs_max`` is None when there
is none). Records of several tensors (a layer called twice in a step)
combine by adding the counts and sums, taking the largest ``abs_max`` and
merging ``m2`` by Chan's formula; ``finish`` turns a record into the columns the
snapshot stores (rms, mean, std, zero fraction, ...).

CPU tensors of float16/32/64 go through the C++ kernel
``model_inspector._core.tensor_stats`` (one pass, no GIL; measured faster
than the five torch reductions it replaces, bench/train/overhead.py);
other tensors (GPU, bfloat16) through torch reductions whose results stay
on the device until the end of the step (``Pending``), so a step costs one
device-to-host copy, not one per tensor.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import torch

try:  # the package as built has the C++ kernel; without it, torch does it all
    from .._core import tensor_stats as _kernel
except ImportError:  # pragma: no cover - a source tree without the build
    _kernel = None

_KERNEL_DTYPES = {torch.float32, torch.float64, torch.float16}


def dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).replace("torch.", "")


class Pending:
    """Device-side statistics waiting for the end of the step: `add` keeps a
    7-element tensor, `resolve` copies all of them to the host at once and
    fills the records in place."""

    def __init__(self):
        self.tensors: list[torch.Tensor] = []
        self.records: list[list] = []

    def add(self, values: torch.Tensor, record: list) -> None:
        self.tensors.append(values)
        self.records.append(record)

    def resolve(self) -> None:
        if not self.tensors:
            return
        rows = torch.stack([t.to(torch.float64) for t in self.tensors]).cpu().tolist()
        for record, row in zip(self.records, rows):
            count, nan, inf, zero, total, sumsq, abs_max = row
            finite = count - nan - inf
            m2 = max(0.0, sumsq - total * total / finite) if finite > 0 else 0.0
            record[:] = [int(count), int(nan), int(inf), int(zero), total, sumsq,
                         abs_max if finite > 0 else None, m2]
        self.tensors.clear()
        self.records.clear()


def moments(t: torch.Tensor, pending: Pending) -> Optional[list]:
    """The moments record of `t` (None for a non-floating tensor). A CPU
    tensor's record is complete on return; another's is filled by
    ``pending.resolve()``."""
    if not t.is_floating_point() or t.is_complex() or t.layout != torch.strided:
        return None
    t = t.detach()
    count = t.numel()
    if count == 0:
        return [0, 0, 0, 0, 0.0, 0.0, None, 0.0]
    if _kernel is not None and t.device.type == "cpu" and t.dtype in _KERNEL_DTYPES:
        if not t.is_contiguous():
            t = t.contiguous()
        s = _kernel(t.numpy())
        finite = count - s["nan"] - s["pos_inf"] - s["neg_inf"]
        if finite > 0:
            total = s["mean"] * finite
            sumsq = s["l2"] * s["l2"]
            m2 = s["std"] * s["std"] * finite
        else:
            total = sumsq = m2 = 0.0
        return [count, s["nan"], s["pos_inf"] + s["neg_inf"], s["zero"], total, sumsq,
                s["abs_max"], m2]
    x = t.to(torch.float32) if t.dtype in (torch.float16, torch.bfloat16) else t
    finite = torch.isfinite(x)
    nan = torch.isnan(x).sum()
    nonfinite = count - finite.sum()
    clean = torch.where(finite, x, torch.zeros((), dtype=x.dtype, device=x.device))
    values = torch.stack([
        torch.tensor(float(count), dtype=torch.float64, device=x.device),
        nan.to(torch.float64),
        (nonfinite - nan).to(torch.float64),
        (x == 0).sum().to(torch.float64),
        clean.sum(dtype=torch.float64),
        (clean.to(torch.float64) ** 2).sum(),
        clean.abs().max().to(torch.float64),
    ])
    record = [count, 0, 0, 0, 0.0, 0.0, None, 0.0]
    pending.add(values, record)
    return record


def combine(records: list) -> Optional[list]:
    """One record of several (None entries skipped)."""
    out = None
    for r in records:
        if r is None:
            continue
        if out is None:
            out = list(r)
            continue
        na = out[0] - out[1] - out[2]
        nb = r[0] - r[1] - r[2]
        if na > 0 and nb > 0:
            delta = r[4] / nb - out[4] / na
            out[7] = out[7] + r[7] + delta * delta * na * nb / (na + nb)
        elif nb > 0:
            out[7] = r[7]
        for i in range(6):
            out[i] += r[i]
        if r[6] is not None and (out[6] is None or r[6] > out[6]):
            out[6] = r[6]
    return out


def finish(r: Optional[list]) -> dict:
    """The snapshot's columns of one record: abs_max, rms, mean, std,
    zero_fraction (of all elements), nan, inf, l2 (of the finite
    elements). Values of no finite element are None."""
    if r is None:
        return {}
    count, nan, inf, zero, total, sumsq, abs_max, m2 = r
    finite = count - nan - inf
    out = {"nan": int(nan), "inf": int(inf), "count": int(count),
           "zero_fraction": (zero / count) if count else None,
           "abs_max": abs_max, "rms": None, "mean": None, "std": None, "l2": None}
    if finite > 0:
        mean = total / finite
        out["mean"] = mean
        out["rms"] = math.sqrt(max(sumsq, 0.0) / finite)
        out["std"] = math.sqrt(max(0.0, m2 / finite))
        out["l2"] = math.sqrt(max(sumsq, 0.0))
    return out


def finite_or_none(x: Any) -> Optional[float]:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None
