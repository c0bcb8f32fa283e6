#!/usr/bin/python3
"""The probe kernels against NumPy doing the same work, side by side in one
run: `model_inspector.tensor_stats` (one pass: count, NaN/±Inf/zero counts,
min, max, mean, std, l2, abs_max over the finite values) and
`model_inspector.compare.compare_tensors` (cosine, max/mean abs error,
RMSE, max/mean relative error, msprobe's 1/1000 error ratio) on float32
tensors, median of --runs.

    PYTHONPATH=build/python /usr/bin/python3 bench/probes/kernels_vs_numpy.py [--runs 15]

The NumPy side is the straightforward vectorised code an engineer would
write for the same figures (each reduction a NumPy call over the whole
array, finite values masked once); its results are checked against ours so
both sides do the same work. Not a test: figures vary with the load, which
is printed.
"""

import argparse
import os
import statistics
import time

import numpy as np

import model_inspector as mi
from model_inspector.compare import compare_tensors


def numpy_stats(x):
    finite = np.isfinite(x)
    f = x[finite] if not finite.all() else x
    f64 = f.astype(np.float64)
    return {
        "count": x.size, "nan": int(np.isnan(x).sum()),
        "pos_inf": int(np.isposinf(x).sum()), "neg_inf": int(np.isneginf(x).sum()),
        "zero": int((x == 0).sum()), "min": float(f.min()), "max": float(f.max()),
        "mean": float(f64.mean()), "std": float(f64.std()),
        "l2": float(np.sqrt(np.dot(f64, f64))), "abs_max": float(np.abs(f).max()),
    }


def numpy_compare(a, b):
    a64 = a.astype(np.float64)
    b64 = b.astype(np.float64)
    diff = np.abs(a64 - b64)
    denom = np.abs(a64)
    rel = np.divide(diff, denom, out=np.zeros_like(diff), where=denom > 0)
    return {
        "cosine": float(np.dot(a64, b64) / (np.linalg.norm(a64) * np.linalg.norm(b64))),
        "max_abs_err": float(diff.max()), "mean_abs_err": float(diff.mean()),
        "rmse": float(np.sqrt(np.mean(diff * diff))),
        "max_rel_err": float(rel.max()), "mean_rel_err": float(rel.mean()),
        "one_thousandth_ratio": float((rel <= 0.001).mean()),
    }


def median_ms(fn, runs):
    fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples) / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"numpy {np.__version__}, model_inspector {mi.__version__}, median of {args.runs}, "
          f"load average {os.getloadavg()[0]:.1f}\n")
    print("| work | elements | ours (ms) | numpy (ms) | numpy / ours |")
    print("|---|---|---|---|---|")
    for n in (1 << 16, 1 << 20, 1 << 24):
        x = rng.standard_normal(n, dtype=np.float32)
        ours = mi.tensor_stats(x)
        ref = numpy_stats(x)
        for k in ("nan", "pos_inf", "neg_inf", "zero", "min", "max"):
            assert ours[k] == ref[k], (k, ours[k], ref[k])
        for k in ("mean", "std", "l2"):
            assert abs(ours[k] - ref[k]) <= 1e-6 * max(1.0, abs(ref[k])), (k, ours[k], ref[k])
        t_ours = median_ms(lambda: mi.tensor_stats(x), args.runs)
        t_np = median_ms(lambda: numpy_stats(x), args.runs)
        print(f"| tensor statistics | {n:,} | {t_ours:.3f} | {t_np:.3f} | {t_np / t_ours:.1f}x |")
    for n in (1 << 16, 1 << 20, 1 << 24):
        a = rng.standard_normal(n, dtype=np.float32)
        b = a + rng.standard_normal(n, dtype=np.float32) * np.float32(1e-4)
        ours = compare_tensors(a, b)
        ref = numpy_compare(a, b)
        for k in ("cosine", "max_abs_err", "rmse", "mean_abs_err"):
            assert abs(ours[k] - ref[k]) <= 1e-6 * max(1e-12, abs(ref[k])) + 1e-12, (k, ours[k], ref[k])
        t_ours = median_ms(lambda: compare_tensors(a, b), args.runs)
        t_np = median_ms(lambda: numpy_compare(a, b), args.runs)
        print(f"| compare two tensors | {n:,} | {t_ours:.3f} | {t_np:.3f} | {t_np / t_ours:.1f}x |")
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
