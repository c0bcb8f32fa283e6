"""Writes the training snapshot (snapshot_schema.sql beside this file;
docs/reference/training-snapshot.md) with Python's sqlite3.

The file is written whole into a temporary file in the output's folder and
renamed over the output, so a reader never sees half a snapshot.
"""

from __future__ import annotations

import datetime
import io
import json
import math
import os
import pathlib
import platform
import socket
import sqlite3
import sys
import time
import warnings

import numpy as np
import torch

FORMAT = "model-inspector/training-snapshot"
VERSION = "1"
SCHEMA = pathlib.Path(__file__).with_name("snapshot_schema.sql")
HISTOGRAM_BINS = 64
#: t-SNE (scikit-learn's exact method) runs for the anomaly step's layers,
#: at most this many, with at most TSNE_MAX_SAMPLES samples: measured here,
#: 0.17 s for 16 samples, 0.9 s for 128 at 1000 iterations (Barnes-Hut
#: took 6-14 s on these sizes); we run 500. PCA runs for every captured
#: step and layer.
TSNE_LAYERS = 6
TSNE_MAX_SAMPLES = 256

LAYER_COLUMNS = (
    "weight_norm", "grad_norm", "update_norm", "update_ratio", "grad_zero_fraction",
    "dead_fraction", "grad_nan", "grad_inf", "act_abs_max", "act_rms", "act_mean", "act_std",
    "act_zero_fraction", "act_nan", "act_inf", "act_dtype", "in_abs_max", "in_rms", "in_nan",
    "in_inf", "gout_norm", "gout_abs_max", "gout_nan", "gout_inf")
_COUNT_COLUMNS = {c for c in LAYER_COLUMNS if c.endswith(("_nan", "_inf"))}


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def _numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        t = t.to(torch.float32)
    return t.numpy()


def _real(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _meta(mon) -> dict:
    import model_inspector.train as train_package
    opt = mon.optimizer
    owners = {}
    for layer in mon.layers:
        for _, p in layer.params:
            owners[id(p)] = layer.name
    groups = []
    for g in opt.param_groups:
        entry = {}
        for key in ("lr", "momentum", "weight_decay", "betas", "eps", "dampening", "nesterov",
                    "alpha", "amsgrad"):
            if key in g:
                v = g[key]
                entry[key] = list(v) if isinstance(v, tuple) else (
                    float(v) if isinstance(v, torch.Tensor) else v)
        layers = []
        for p in g["params"]:
            name = owners.get(id(p))
            if name is not None and name not in layers:
                layers.append(name)
        entry["layers"] = layers
        groups.append(entry)
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
        "command": json.dumps(mon.command),
        "model": type(mon.model).__name__,
        "optimizer": type(opt).__name__,
        "optimizer_config": json.dumps(groups),
        "triggers": json.dumps([t.spec for t in mon.triggers]),
        "thresholds": json.dumps(mon.thresholds),
        "capture_window": str(mon.window),
        "status": mon.status,
        "sample_limit": str(mon.sample_limit),
        # Additive keys (docs/reference/training-snapshot.md).
        "steps_seen": str(len(mon.steps)),
        "capture": "1" if mon.capture_enabled else "0",
        "writer": f"model_inspector.train {getattr(train_package, '__version__', '')}".strip(),
    }
    if mon.anomaly_step is not None:
        meta["anomaly_step"] = str(mon.anomaly_step)
    if mon.captured:
        meta["window_first"] = str(mon.captured[0][0])
        meta["window_last"] = str(mon.captured[-1][0])
    return meta


def _edges(mon) -> set:
    edges = set(mon.edges)
    if not edges:
        ordered = sorted((l for l in mon.layers if l.graph and l.forward_order is not None),
                         key=lambda l: l.forward_order)
        edges = {(a.id, b.id) for a, b in zip(ordered, ordered[1:])}
    return edges


def _histogram(values: np.ndarray):
    v = values.astype(np.float64, copy=False).reshape(-1)
    finite = np.isfinite(v)
    nan = int(np.isnan(v).sum())
    inf = int(v.size - finite.sum() - nan)
    f = v[finite]
    if f.size == 0:
        return None
    lo, hi = float(f.min()), float(f.max())
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    counts, _ = np.histogram(f, bins=HISTOGRAM_BINS, range=(lo, hi))
    return lo, hi, json.dumps([int(c) for c in counts]), nan, inf


def _per_sample(act: np.ndarray):
    """abs_max, rms, nonfinite of each row (batch dimension 0)."""
    x = act.astype(np.float64, copy=False).reshape(act.shape[0], -1)
    finite = np.isfinite(x)
    clean = np.where(finite, x, 0.0)
    n_finite = finite.sum(axis=1)
    abs_max = np.where(n_finite > 0, np.abs(clean).max(axis=1, initial=0.0), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        rms = np.sqrt((clean * clean).sum(axis=1) / n_finite)
    return abs_max, rms, (~finite).sum(axis=1)


def _pca(x: np.ndarray):
    """The rows of x on their first two principal axes (NumPy's SVD of the
    centred rows); None when the SVD fails (non-finite overflow)."""
    with np.errstate(all="ignore"):
        centered = x - x.mean(axis=0, keepdims=True)
        if not np.isfinite(centered).all():
            return None
        try:
            u, s, _ = np.linalg.svd(centered, full_matrices=False)
        except np.linalg.LinAlgError:
            return None
    out = u[:, :2] * s[:2]
    if out.shape[1] < 2:
        out = np.pad(out, ((0, 0), (0, 2 - out.shape[1])))
    return out if np.isfinite(out).all() else None


def _tsne(x: np.ndarray):
    """t-SNE of the rows of x (None without scikit-learn, for 1-D rows, or
    when it fails on degenerate data: a projection never costs the
    snapshot). Rows are divided by the largest |value| first: t-SNE's
    distances overflow on exploded activations, and the embedding does not
    depend on a common scale factor beyond what the perplexity fixes."""
    try:
        from sklearn.manifold import TSNE
    except ImportError:
        return None
    n = x.shape[0]
    if x.shape[1] < 2:  # nothing to embed in 2-D: PCA says it all
        return None
    top = np.abs(x).max()
    if not np.isfinite(top) or top == 0:
        return None
    perplexity = max(1.0, min(30.0, (n - 1) / 3.0))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                y = TSNE(n_components=2, perplexity=perplexity, init="pca", learning_rate="auto",
                         random_state=0, method="exact", n_iter=500).fit_transform(x / top)
    except (ValueError, FloatingPointError, np.linalg.LinAlgError):
        return None
    return y if np.isfinite(y).all() else None


def _rows(mon):
    """Every table's rows, computed before the file is opened."""
    graph = [l for l in mon.layers if l.graph]
    captured_steps = {s for s, _ in mon.captured}
    steps = [(r["step"], _real(r["loss"]), r["loss_nonfinite"], _real(r["grad_norm"]),
              r["grad_nonfinite"], _real(r["lr"]), _real(r["loss_scale"]), r["clipped"],
              r["elapsed_ns"], 1 if r["step"] in captured_steps else 0) for r in mon.steps]
    layer_steps = []
    for step, lid, row in mon.layer_rows:
        values = []
        for c in LAYER_COLUMNS:
            v = row.get(c)
            if c in _COUNT_COLUMNS:
                values.append(int(v or 0))
            elif c == "act_dtype":
                values.append(v)
            else:
                values.append(_real(v))
        layer_steps.append((step, lid, *values))
    tensors, histograms, sample_stats, samples, projections = [], [], [], [], []
    # The layer samples are scored at: the anomaly step's first trigger with
    # a layer, else the last graph layer in forward order.
    score_layer = None
    for s, _, lid, *_ in mon.trigger_rows:
        if s == mon.anomaly_step and lid is not None:
            score_layer = lid
            break
    tsne_budget = TSNE_LAYERS
    for step, cap in mon.captured:
        for (lid, kind, name), (t, stride, shape) in sorted(cap.items(), key=lambda kv: kv[0]):
            a = _numpy(t)
            tensors.append((step, lid, kind, name, str(a.dtype), json.dumps(shape),
                            1 if stride > 1 else 0, stride, _npy(a)))
        acts = {}
        for layer in graph:
            got = cap.get((layer.id, "activation", "0"))
            if got is not None:
                a = _numpy(got[0])
                h = _histogram(a) if a.dtype.kind == "f" else None
                if h:
                    histograms.append((step, layer.id, "activation", *h))
                if got[1] == 1 and a.dtype.kind == "f" and a.ndim >= 1 and a.shape[0] >= 1:
                    acts[layer.id] = a
            grads = [_numpy(v[0]).reshape(-1) for k, v in cap.items()
                     if k[0] == layer.id and k[1] == "grad"]
            if grads:
                h = _histogram(np.concatenate(grads))
                if h:
                    histograms.append((step, layer.id, "grad", *h))
        per_sample = {}
        for lid, a in acts.items():
            abs_max, rms, nonfinite = _per_sample(a)
            per_sample[lid] = (abs_max, rms, nonfinite)
            for i in range(a.shape[0]):
                sample_stats.append((step, i, lid, _real(abs_max[i]), _real(rms[i]),
                                     int(nonfinite[i])))
        lid = score_layer if score_layer in per_sample else None
        if lid is None and per_sample:
            lid = max(per_sample, key=lambda i: (mon.layers[i].forward_order is not None,
                                                 mon.layers[i].forward_order or 0))
        anomalous = None
        if lid is not None:
            abs_max, _, nonfinite = per_sample[lid]
            n = abs_max.shape[0]
            key = [(int(nonfinite[i]), -math.inf if math.isnan(abs_max[i]) else abs_max[i])
                   for i in range(n)]
            anomalous = max(range(n), key=lambda i: key[i])
            samples.append((step, anomalous, "anomalous",
                            float(nonfinite[anomalous]) if nonfinite[anomalous] else _real(abs_max[anomalous])))
            if n > 1:
                order = sorted(range(n), key=lambda i: key[i])
                normal = order[n // 2] if order[n // 2] != anomalous else order[n // 2 - 1]
                samples.append((step, normal, "normal", _real(abs_max[normal])))
        ordered = sorted(acts, key=lambda i: (i != score_layer, mon.layers[i].forward_order or 0))
        for lid in ordered if mon.projections else ():
            a = acts[lid]
            n = a.shape[0]
            if n < 3:
                continue
            x = np.nan_to_num(a.astype(np.float64).reshape(n, -1), nan=0.0, posinf=0.0, neginf=0.0)
            methods = [("pca", _pca(x))]
            if step == mon.anomaly_step and tsne_budget > 0 and 5 <= n <= TSNE_MAX_SAMPLES:
                tsne_budget -= 1
                # Written again at close: computed once.
                cache = mon.__dict__.setdefault("_tsne_cache", {})
                if (step, lid) not in cache:
                    cache[(step, lid)] = _tsne(x)
                y = cache[(step, lid)]
                if y is not None:
                    methods.append(("tsne", y))
            for method, y in methods:
                if y is None:
                    continue
                for i in range(n):
                    projections.append((step, lid, method, i, float(y[i, 0]), float(y[i, 1]),
                                        1 if i == anomalous else 0))
    return steps, layer_steps, tensors, histograms, sample_stats, samples, projections


def write_snapshot(mon) -> str:
    """Writes `mon`'s snapshot to mon.output atomically; returns the path."""
    steps, layer_steps, tensors, histograms, sample_stats, samples, projections = _rows(mon)
    out = mon.output
    folder = os.path.dirname(out) or "."
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{os.path.basename(out)}.tmp-{os.getpid()}-{time.monotonic_ns()}")
    try:
        conn = sqlite3.connect(tmp)
        try:
            conn.executescript(SCHEMA.read_text())
            with conn:
                conn.executemany("INSERT INTO meta VALUES (?, ?)", sorted(_meta(mon).items()))
                conn.executemany(
                    "INSERT INTO layers VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(l.id, l.name, l.type, l.parent, l.forward_order, l.param_count,
                      json.dumps(l.attributes)) for l in mon.layers])
                conn.executemany("INSERT INTO edges VALUES (?, ?)", sorted(_edges(mon)))
                conn.executemany("INSERT INTO steps VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", steps)
                conn.executemany(
                    f"INSERT INTO layer_steps (step, layer, {', '.join(LAYER_COLUMNS)}) VALUES "
                    f"({', '.join('?' * (len(LAYER_COLUMNS) + 2))})", layer_steps)
                conn.executemany(
                    "INSERT INTO triggers (step, trigger, layer, value, threshold, detail) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [(s, n, l, _real(v), _real(t), d) for s, n, l, v, t, d in mon.trigger_rows])
                conn.executemany(
                    "INSERT INTO tensors (step, layer, kind, name, dtype, shape, sampled, "
                    "sample_stride, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", tensors)
                conn.executemany("INSERT INTO histograms VALUES (?, ?, ?, ?, ?, ?, ?, ?)", histograms)
                conn.executemany("INSERT INTO sample_stats VALUES (?, ?, ?, ?, ?, ?)", sample_stats)
                conn.executemany("INSERT INTO samples VALUES (?, ?, ?, ?)", samples)
                conn.executemany("INSERT INTO projections VALUES (?, ?, ?, ?, ?, ?, ?)", projections)
        finally:
            conn.close()
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, out)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return out
