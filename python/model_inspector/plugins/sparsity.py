"""Example plugin: activation sparsity and outlier ratio.

Per probed tensor (finite elements only; NaN and Inf are counted by the
built-in statistics):

    sparsity       share of the elements that are exactly zero
    near_zero      share with |x| <= eps (default 1e-6): dead or nearly dead
    outlier_ratio  share with |x - mean| > k x std (default k = 6), the mean
                   and std of the same tensor: values far in the tails
    outliers       how many elements that is
    dead_channels  for tensors of rank >= 2: channels (axis 1) that are zero
                   everywhere (a dead ReLU unit), as a count

At the end of a run (on_run_end) it reports for the run as a whole the mean
sparsity over the probes it saw and the probe with the largest outlier ratio.
"""

from __future__ import annotations

import numpy as np

from . import Plugin, register


@register
class SparsityPlugin(Plugin):
    name = "sparsity"

    def __init__(self, k: float = 6.0, eps: float = 1e-6):
        self.k = float(k)
        self.eps = float(eps)
        self._seen: dict[str, dict] = {}

    def process_tensor(self, tensor, node):
        a = np.asarray(tensor)
        if a.dtype.kind not in "fiub" or a.size == 0:
            return None
        x = a.astype(np.float64, copy=False).ravel()
        finite = x[np.isfinite(x)] if a.dtype.kind == "f" else x
        n = finite.size
        if n == 0:
            return None
        mean = finite.mean()
        std = finite.std()
        outliers = int(np.count_nonzero(np.abs(finite - mean) > self.k * std)) if std > 0 else 0
        metrics = {
            "sparsity": float(np.count_nonzero(finite == 0) / n),
            "near_zero": float(np.count_nonzero(np.abs(finite) <= self.eps) / n),
            "outlier_ratio": outliers / n,
            "outliers": outliers,
        }
        if a.ndim >= 2 and a.shape[1] > 0:
            per_channel = np.moveaxis(a, 1, 0).reshape(a.shape[1], -1)
            metrics["dead_channels"] = int(np.count_nonzero(~per_channel.any(axis=1)))
        name = getattr(node, "name", node)
        self._seen[name] = metrics
        return metrics

    def on_run_end(self, results):
        seen, self._seen = self._seen, {}
        if not seen:
            return None
        worst = max(seen, key=lambda p: seen[p]["outlier_ratio"])
        return {"": {
            "mean_sparsity": float(np.mean([m["sparsity"] for m in seen.values()])),
            "max_outlier_ratio": seen[worst]["outlier_ratio"],
            "max_outlier_node": worst,
        }}
