"""Training-monitor overhead: the median training-step time of a small real
model on CPU, unmonitored vs monitored with statistics only vs monitored
with the ring buffer (tensor capture every step), side by side in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/train/overhead.py
    ... --model mlp --steps 60 --rounds 5 --threads 1

Each round builds the model afresh from the same seed and runs every mode
(in a rotated order, so drift in the machine's load hits them alike):
`--warmup` steps, then `--steps` timed steps; a step is forward, backward
and optimizer.step(), timed with perf_counter_ns around the whole step.
The monitor is attached before the warm-up and closed after the timed
steps (closing writes its snapshot: not timed). The figures are the
medians over all timed steps of all rounds. Target (issue 19): statistics
on, under 10% slower.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import torch

from model_inspector.train import Monitor
from model_inspector.train import stats as train_stats


class TinyLM(torch.nn.Module):
    """A small transformer language model: embedding, 2 encoder layers
    (d_model 128, 4 heads, feed-forward 256), a vocabulary head."""

    def __init__(self, vocab=1000, d_model=128, layers=2):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d_model)
        layer = torch.nn.TransformerEncoderLayer(d_model, 4, 256, dropout=0.1, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers)
        self.head = torch.nn.Linear(d_model, vocab)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x)))


def make(kind: str):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    if kind == "transformer":
        model = TinyLM()
        batches = [torch.randint(0, 1000, (16, 32), generator=g) for _ in range(8)]

        def loss_of(x):
            logits = model(x)
            return torch.nn.functional.cross_entropy(logits.reshape(-1, 1000), x.reshape(-1))
    else:
        model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                    torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                    torch.nn.Linear(512, 10))
        batches = [(torch.randn(64, 256, generator=g), torch.randint(0, 10, (64,), generator=g))
                   for _ in range(8)]

        def loss_of(b):
            return torch.nn.functional.cross_entropy(model(b[0]), b[1])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    return model, opt, batches, loss_of


def run_mode(kind, mode, warmup, steps, folder):
    model, opt, batches, loss_of = make(kind)
    mon = None
    if mode != "unmonitored":
        mon = Monitor(model, opt, capture=(mode == "ring buffer"), capture_window=5,
                      output=os.path.join(folder, f"{mode.replace(' ', '_')}.db"))
    times = []
    for i in range(warmup + steps):
        b = batches[i % len(batches)]
        t0 = time.perf_counter_ns()
        loss = loss_of(b)
        opt.zero_grad()
        loss.backward()
        opt.step()
        t1 = time.perf_counter_ns()
        if i >= warmup:
            times.append(t1 - t0)
    if mon is not None:
        mon.close()
        if mon.fired:
            print(f"  note: a trigger fired in mode '{mode}': {mon.fired[0]}", file=sys.stderr)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["transformer", "mlp"], default="transformer")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch intra-op threads (1: steadier on a shared machine)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    modes = ["unmonitored", "statistics only", "ring buffer"]
    times = {m: [] for m in modes}
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        for r in range(args.rounds):
            order = modes[r % 3:] + modes[:r % 3]
            for m in order:
                times[m].extend(run_mode(args.model, m, args.warmup, args.steps, folder))
    base = statistics.median(times["unmonitored"])
    kernel = "C++ tensor_stats" if train_stats._kernel is not None else "torch reductions"
    print(f"model: {args.model}; torch {torch.__version__}, {args.threads} thread(s); "
          f"{args.rounds} rounds x {args.steps} steps per mode; statistics kernel: {kernel}; "
          f"load average at start {load:.1f} on {os.cpu_count()} CPUs")
    print(f"{'mode':<18}{'median step (ms)':>18}{'vs unmonitored':>16}")
    for m in modes:
        med = statistics.median(times[m])
        print(f"{m:<18}{med / 1e6:>18.3f}{med / base:>15.3f}x")


if __name__ == "__main__":
    main()
