"""A training snapshot for the UI's training test (e2e_training_test.mjs),
written by the real monitor (model_inspector.train.Monitor) around a real
torch training run with an injected fault, never by hand:

  a small transformer block on CPU (Debian's torch): token embedding ->
  multi-head self-attention (4 heads) -> LayerNorm -> ff1 (Linear) -> ReLU
  -> ff2 (Linear) -> head (Linear) on the mean over the sequence; SGD with
  two parameter groups, ff1 alone in the second. The fault: from step
  FAULT_STEP on, ff1's learning rate x1000, so its weights blow up in that
  step's update and the loss spikes at the next step.

The run is made twice from the same seed: once in plain torch without the
monitor, where this script applies the armed triggers' rules itself
(loss above 3x the mean of the last 10 finite losses, global gradient
norm above 100, a non-finite loss or gradient) to find the step of the
anomaly; once with the monitor writing OUT/snapshot.db. It prints, as
JSON, what the test compares the UI with, read from the snapshot with
python's sqlite3 and numpy (not through model-inspector): the anomaly step
the plain run found and the one the snapshot says, the layers, the
captured steps, every histogram, the attention weights' shape and per-head
maximum, the projection points, the samples, and the per-layer series.

    PYTHONPATH=build/python /usr/bin/python3 web/test/make_training_ui_snapshot.py OUT
"""

import io
import json
import math
import pathlib
import sqlite3
import sys

import numpy as np
import torch
from torch import nn

SEED = 3
STEPS = 40
FAULT_STEP = 25
FAULT_LAYER = "ff1"
LR = 0.01
CAPTURE_WINDOW = 3
TRIGGERS = ["loss_spike:3:10", "grad_norm:100", "nan", "inf"]
VOCAB, SEQ, BATCH, DIM, HEADS, CLASSES = 32, 8, 16, 32, 4, 4


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.attn = nn.MultiheadAttention(DIM, HEADS, batch_first=True)
        self.norm = nn.LayerNorm(DIM)
        self.ff1 = nn.Linear(DIM, 64)
        self.act = nn.ReLU()
        self.ff2 = nn.Linear(64, DIM)
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, x):
        h = self.embed(x)
        a, _ = self.attn(h, h, h)
        h = self.norm(h + a)
        h = self.ff2(self.act(self.ff1(h)))
        return self.head(h.mean(dim=1))


def data():
    """Every batch up front from its own generator (nothing later draws from torch's RNG)."""
    g = torch.Generator().manual_seed(SEED + 100)
    xs = torch.randint(0, VOCAB, (STEPS, BATCH, SEQ), generator=g)
    ys = (xs[:, :, 0] % CLASSES).long()
    return xs, ys


def make():
    torch.manual_seed(SEED)
    model = Block()
    ff1 = list(model.ff1.parameters())
    ids = {id(p) for p in ff1}
    rest = [p for p in model.parameters() if id(p) not in ids]
    opt = torch.optim.Adam([{"params": rest, "lr": LR}, {"params": ff1, "lr": LR}], lr=LR)
    return model, opt


def train(model, opt, xs, ys, after_backward=None):
    """The training loop; returns per step (loss, global grad norm, any non-finite gradient)."""
    out = []
    loss_fn = nn.CrossEntropyLoss()
    for step in range(STEPS):
        if step == FAULT_STEP:
            opt.param_groups[1]["lr"] = LR * 1000
        opt.zero_grad()
        loss = loss_fn(model(xs[step]), ys[step])
        loss.backward()
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        norm = math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads))
        nonfinite = any(not bool(torch.isfinite(g).all()) for g in grads)
        out.append((float(loss), norm, nonfinite))
        opt.step()
    return out


def expected_anomaly(stats):
    """The first step where an armed trigger's rule holds, applied here to the plain run."""
    history = []
    for step, (loss, norm, nonfinite) in enumerate(stats):
        if not math.isfinite(loss) or nonfinite:
            return step, "nan/inf"
        if norm > 100:
            return step, "grad_norm"
        recent = history[-10:]
        if recent:
            mean = sum(recent) / len(recent)
            if mean > 0 and loss > 3 * mean:
                return step, "loss_spike"
        history.append(loss)
    return None, None


def npy(blob):
    return np.load(io.BytesIO(blob), allow_pickle=False)


def read_snapshot(path):
    db = sqlite3.connect(path)
    q = lambda sql, *a: db.execute(sql, a).fetchall()  # noqa: E731
    meta = dict(q("SELECT key, value FROM meta"))
    layers = {name: lid for lid, name in q("SELECT id, name FROM layers")}
    facts = {
        "meta": meta,
        "layers": layers,
        "steps": [s for (s,) in q("SELECT step FROM steps ORDER BY step")],
        "captured_steps": [s for (s,) in q("SELECT step FROM steps WHERE captured = 1 ORDER BY step")],
        "histograms": [
            {"step": s, "layer": l, "kind": k, "lo": lo, "hi": hi, "counts": json.loads(c), "nan": n, "inf": i}
            for s, l, k, lo, hi, c, n, i in q("SELECT step, layer, kind, lo, hi, counts, nan, inf FROM histograms")
        ],
        "attention": [],
        "projections": [
            {"step": s, "layer": l, "method": m, "sample": smp, "x": x, "y": y, "anomalous": bool(a)}
            for s, l, m, smp, x, y, a in q("SELECT step, layer, method, sample, x, y, anomalous FROM projections")
        ],
        "samples": [{"step": s, "sample": smp, "role": r} for s, smp, r in q("SELECT step, sample, role FROM samples")],
        "sample_stats": [
            {"step": s, "sample": smp, "layer": l, "abs_max": a, "rms": r, "nonfinite": n}
            for s, smp, l, a, r, n in q("SELECT step, sample, layer, abs_max, rms, nonfinite FROM sample_stats")
        ],
        "series": {},
    }
    for s, l, shape, sampled, blob in q("SELECT step, layer, shape, sampled, data FROM tensors WHERE kind = 'attention'"):
        w = npy(blob).astype(np.float64)
        if sampled:
            continue
        w = w.reshape(json.loads(shape))
        facts["attention"].append({
            "step": s, "layer": l, "heads": int(w.shape[0]), "queries": int(w.shape[1]), "keys": int(w.shape[2]),
            "head_max": [float(w[h].max()) for h in range(w.shape[0])],
        })
    for lid in layers.values():
        rows = q("SELECT grad_norm, update_ratio, act_rms, dead_fraction FROM layer_steps WHERE layer = ? ORDER BY step", lid)
        facts["series"][str(lid)] = {
            "grad_norm": [r[0] for r in rows], "update_ratio": [r[1] for r in rows],
            "act_rms": [r[2] for r in rows], "dead_fraction": [r[3] for r in rows],
        }
    db.close()
    return facts


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: make_training_ui_snapshot.py OUT_DIR")
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    xs, ys = data()

    # 1. Plain torch: where the anomaly is, by the triggers' rules.
    model, opt = make()
    plain = train(model, opt, xs, ys)
    step, why = expected_anomaly(plain)
    if step is None:
        raise SystemExit(f"the injected fault raised nothing in the plain run: {plain}")

    # 2. The same run under the monitor.
    from model_inspector.train import Monitor

    snapshot = out / "snapshot.db"
    if snapshot.exists():
        snapshot.unlink()
    model, opt = make()
    with Monitor(model, opt, triggers=TRIGGERS, capture_window=CAPTURE_WINDOW, output=str(snapshot)):
        monitored = train(model, opt, xs, ys)
    facts = read_snapshot(str(snapshot))
    facts.update({
        "snapshot": str(snapshot),
        "fault": {"layer": FAULT_LAYER, "step": FAULT_STEP},
        "expected_anomaly_step": step,
        "expected_trigger": why,
        "plain_losses": [s[0] for s in plain],
        "monitored_losses": [s[0] for s in monitored],
    })
    print(json.dumps(facts))


if __name__ == "__main__":
    main()
