"""What the fault-injection training scripts share: the command line, a
small MLP, the seeded data and the loop under model_inspector.train's
Monitor (or without it: `--plain`, the independent run some expectations
come from).

Every script trains a small real model with Debian's torch on the CPU for
STEPS steps and injects one fault at a known step and layer; it prints one
JSON line: {"fault", "layer", "inject_step", "trigger_step", ...} (what it
did, by construction) and, with --plain, what the plain run observed.
"""

import argparse
import json
import sys

import torch
from torch import nn

STEPS = 24          # steps run (the monitor writes the snapshot K after the anomaly)
INJECT = 12         # the step a fault starts at, when it starts later than 0
WINDOW = 3          # the capture window K
FEATURES = 8
BATCH = 32


def args():
    p = argparse.ArgumentParser()
    p.add_argument("output", help="the snapshot file to write")
    p.add_argument("--plain", action="store_true",
                   help="train without the monitor and print what the run observed")
    return p.parse_args()


def seed():
    torch.manual_seed(0)
    torch.set_num_threads(1)


class MLP(nn.Module):
    """fc1 -> act1 -> fc2 -> act2 -> head: a regression MLP."""

    def __init__(self, width=32):
        super().__init__()
        self.fc1 = nn.Linear(FEATURES, width)
        self.act1 = nn.ReLU()
        self.fc2 = nn.Linear(width, width)
        self.act2 = nn.ReLU()
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        return self.head(self.act2(self.fc2(self.act1(self.fc1(x)))))


class Teacher:
    """The data: x ~ N(0, 1), y a fixed smooth function of x, one seeded
    batch per step (the same batches in the monitored and the plain run)."""

    def __init__(self, features=FEATURES):
        g = torch.Generator().manual_seed(1)
        self.w = torch.randn(features, 1, generator=g) / features ** 0.5
        self.gen = torch.Generator().manual_seed(2)

    def batch(self, batch=BATCH, features=FEATURES):
        x = torch.randn(batch, features, generator=self.gen)
        y = torch.tanh(x @ self.w[:features]) + 0.1 * (x[:, :1] ** 2)
        return x, y


def train(model, optimizer, batch, output, plain, inject=None, observe=None, loss_fn=None,
          triggers=None, steps=STEPS, sample_limit=1 << 16):
    """`steps` steps of forward / MSE / backward / step. `batch(step)` gives
    (x, y); `inject(step)` runs at the start of each step (the fault);
    `observe(step, model, x)` records what the plain run reports. Returns
    the observations. Captured tensors above `sample_limit` elements keep
    a strided sample (the diagnosis reads the per-step statistics)."""
    from model_inspector.train import Monitor  # the package under test
    loss_fn = loss_fn or nn.MSELoss()
    seen = []
    monitor = None
    if not plain:
        monitor = Monitor(model, optimizer, triggers=triggers, capture_window=WINDOW,
                          output=output, command=[sys.argv[0]], sample_limit=sample_limit)
    try:
        for step in range(steps):
            if inject is not None:
                inject(step)
            x, y = batch(step)
            if observe is not None and plain:
                with torch.no_grad():
                    seen.append(observe(step, x))
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    finally:
        if monitor is not None:
            monitor.close()
    return seen


def report(**facts):
    print(json.dumps(facts))
