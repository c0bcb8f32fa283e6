#!/usr/bin/python3
"""Probe overhead: inference time without probes vs with statistics on every
node, for the ResNet-18 and transformer fixtures, on PyTorch and on ONNX
Runtime, side by side in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/probes/overhead.py [--runs 30] [--threads 1]

For each model and backend, the same input, measured the same way in one
process, interleaved (one unprobed, one of each probed variant, repeat),
median of --runs after 3 warm-up rounds:

  unprobed       the plain run: `module(x)` under torch.no_grad() (PyTorch);
                 the backend's run of the unmodified model, the same session
                 path and transport as the probed run (ONNX Runtime)
  stats          the backend run with every node probed and
                 model_inspector.tensor_stats on every probed tensor (the
                 probe cost itself)
  inspector      Inspector.run(x, probes=["*"]): the same plus the probe
                 store (one SQLite transaction per run)

The ratio is probed / unprobed - 1 (the target of the probes is <= 5% for
`stats` on every node). For ONNX Runtime the time inside ONNX Runtime for
Node (session.run, as the runner measures it) is printed too, so the
graph-output rewriting's own cost (outputs cannot share buffers) is told
apart from moving the tensors to Python. Not a test: figures vary with the
machine's load, which is printed.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "test" / "fixtures"
sys.path.insert(0, str(FIXTURES))


def median_ms(samples):
    return statistics.median(samples) / 1e6


def measure(variants: dict, runs: int, warmup: int = 3) -> dict:
    """Interleaved: each round runs every variant once, so load drift hits
    all alike. Returns {name: [ns, ...]}."""
    for _ in range(warmup):
        for fn in variants.values():
            fn()
    times = {k: [] for k in variants}
    for _ in range(runs):
        for name, fn in variants.items():
            t0 = time.perf_counter_ns()
            fn()
            times[name].append(time.perf_counter_ns() - t0)
    return times


def models():
    import torch
    import make_models
    resnet = make_models.build_resnet18_slim()
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    enc = make_models.build_transformer()
    src = torch.randn(1, 16, 64, generator=torch.Generator().manual_seed(0))
    return [("resnet18", resnet, x, FIXTURES / "resnet18" / "model.onnx"),
            ("transformer", enc, src, FIXTURES / "transformer" / "model.onnx")]


def bench_torch(name, module, x, runs, tmp):
    import torch
    from model_inspector import Inspector, tensor_stats
    from model_inspector.backends.base import ProbeRequest
    from model_inspector.backends.torch import TorchBackend

    backend = TorchBackend(module, x)
    every = ProbeRequest(nodes=frozenset(n.name for n in backend.nodes()))
    counted = []

    def stats_run():
        n = 0

        def on(ev):
            nonlocal n
            tensor_stats(ev.tensor)
            n += 1
            return True
        with torch.no_grad():
            backend.run(x, every, on)
        counted.append(n)

    def plain():
        with torch.no_grad():
            module(x)

    insp = Inspector(module, x, run_dir=os.path.join(tmp, f"torch_{name}"), keep_runs=3)

    def inspector_run():
        with torch.no_grad():
            insp.run(x, probes=["*"])

    times = measure({"unprobed": plain, "stats": stats_run, "inspector": inspector_run}, runs)
    insp.close()
    backend.close()
    return times, counted[-1], None


def bench_ort(name, x, model_path, runs, tmp, runtime):
    from model_inspector import Inspector, tensor_stats
    from model_inspector.backends.base import ProbeRequest
    from model_inspector.backends.onnxruntime import OnnxRuntimeBackend

    x = x.numpy()
    backend = OnnxRuntimeBackend(model_path, runtime=runtime)
    none = ProbeRequest(nodes=frozenset())
    every = ProbeRequest(nodes=frozenset(n.name for n in backend.nodes()))
    inside = {"unprobed": [], "stats": []}
    counted = []

    def plain():
        backend.run(x, none, lambda ev: True)
        inside["unprobed"].append(backend.last_run_ns)

    def stats_run():
        n = 0

        def on(ev):
            nonlocal n
            tensor_stats(ev.tensor)
            n += 1
            return True
        backend.run(x, every, on)
        inside["stats"].append(backend.last_run_ns)
        counted.append(n)

    ib = OnnxRuntimeBackend(model_path, runtime=runtime)
    insp = Inspector(backend=ib, run_dir=os.path.join(tmp, f"ort_{name}"), keep_runs=3)

    def inspector_run():
        insp.run(x, probes=["*"])

    times = measure({"unprobed": plain, "stats": stats_run, "inspector": inspector_run}, runs)
    insp.close()
    backend.close()
    return times, counted[-1], {k: statistics.median(v) / 1e6 for k, v in inside.items() if v}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch intra-op threads (ONNX Runtime sessions use 1)")
    ap.add_argument("--runtime", default="auto", choices=("auto", "python", "node"))
    args = ap.parse_args()

    import torch
    torch.set_num_threads(args.threads)
    import model_inspector
    print(f"torch {torch.__version__}, model_inspector {model_inspector.__version__}, "
          f"{args.runs} runs (median), load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    rows = []
    with tempfile.TemporaryDirectory(prefix="mi_bench_probes_") as tmp:
        for name, module, x, onnx_path in models():
            t, n, _ = bench_torch(name, module, x, args.runs, tmp)
            rows.append((name, "pytorch", n, t, None))
            t, n, inside = bench_ort(name, x, onnx_path, args.runs, tmp, args.runtime)
            rows.append((name, "onnxruntime", n, t, inside))

    print()
    print("| model | backend | probed tensors | unprobed (ms) | stats on every node (ms) | "
          "overhead | + probe store, Inspector.run (ms) | overhead |")
    print("|---|---|---|---|---|---|---|---|")
    for name, backend, n, t, inside in rows:
        base = median_ms(t["unprobed"])
        s = median_ms(t["stats"])
        i = median_ms(t["inspector"])
        print(f"| {name} | {backend} | {n} | {base:.2f} | {s:.2f} | {100 * (s / base - 1):+.1f}% | "
              f"{i:.2f} | {100 * (i / base - 1):+.1f}% |")
    for name, backend, n, t, inside in rows:
        if inside:
            print(f"\n{name}, onnxruntime: inside ONNX Runtime (session.run in the runtime's "
                  f"process) {inside['unprobed']:.2f} ms unprobed, {inside['stats']:.2f} ms with "
                  f"every node a graph output ({100 * (inside['stats'] / inside['unprobed'] - 1):+.1f}%)")
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
