"""A real training snapshot for the training report's test
(training_report_test.mjs), written by model_inspector.train's Monitor from
a real PyTorch training run on the CPU, never by hand:

  OUT/snapshot.db   a small regression network (Linear 8->32 "embed",
                    LayerNorm "norm", Linear 32->32 "fc1", ReLU "act",
                    Linear 32->1 "head") trained with SGD (lr 0.05) on a
                    seeded synthetic task; from step FAULT_STEP on, the
                    param group holding fc1 gets lr x 1000 (the "learning
                    rate too high" fault); triggers loss_spike and
                    grad_norm, capture window 3
  OUT/healthy.db    the same run without the fault

and prints, as JSON, what the test compares the report with, read back
from the snapshot files with Python's sqlite3 (not the C++ reader): the
anomaly step, the captured steps, the layers, the trigger hits, the steps
and their loss.

    PYTHONPATH=build/python /usr/bin/python3 web/test/make_training_snapshot.py OUT
"""

import json
import pathlib
import sqlite3
import sys

import torch
from torch import nn

from model_inspector.train import Monitor

FAULT_STEP = 20
STEPS = 40


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, 32)
        self.norm = nn.LayerNorm(32)
        self.fc1 = nn.Linear(32, 32)
        self.act = nn.ReLU()
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        return self.head(self.act(self.fc1(self.norm(self.embed(x)))))


def train(path, fault):
    torch.manual_seed(0)
    model = Net()
    fc1 = list(model.fc1.parameters())
    others = [p for n, p in model.named_parameters() if not n.startswith("fc1.")]
    opt = torch.optim.SGD([{"params": others}, {"params": fc1}], lr=0.05)
    x = torch.randn(256, 8)
    w = torch.randn(8, 1)
    y = torch.tanh(x @ w)
    with Monitor(model, opt, triggers=["loss_spike", "grad_norm"], capture_window=3,
                 output=str(path), command=["make_training_snapshot.py"]):
        for step in range(STEPS):
            if fault and step == FAULT_STEP:
                opt.param_groups[1]["lr"] *= 1000
            batch = slice((step * 32) % 256, (step * 32) % 256 + 32)
            loss = nn.functional.mse_loss(model(x[batch]), y[batch])
            opt.zero_grad()
            loss.backward()
            opt.step()


def read_back(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    layers = [{"id": i, "name": n, "type": t}
              for i, n, t in db.execute("SELECT id, name, type FROM layers ORDER BY id")]
    steps = [{"step": s, "loss": l, "captured": bool(c)}
             for s, l, c in db.execute("SELECT step, loss, captured FROM steps ORDER BY step")]
    triggers = [{"step": s, "trigger": t, "layer": l}
                for s, t, l in db.execute("SELECT step, trigger, layer FROM triggers ORDER BY id")]
    edges = [list(e) for e in db.execute("SELECT src, dst FROM edges ORDER BY src, dst")]
    db.close()
    return {
        "path": str(path),
        "anomaly_step": int(meta["anomaly_step"]) if "anomaly_step" in meta else None,
        "captured_steps": [s["step"] for s in steps if s["captured"]],
        "layers": layers,
        "steps": steps,
        "triggers": triggers,
        "edges": edges,
    }


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    train(out / "snapshot.db", fault=True)
    train(out / "healthy.db", fault=False)
    json.dump({"fault_step": FAULT_STEP,
               "snapshot": read_back(out / "snapshot.db"),
               "healthy": read_back(out / "healthy.db")}, sys.stdout)


if __name__ == "__main__":
    main()
