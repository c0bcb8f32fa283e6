#!/usr/bin/env python3
"""Writes the seed corpus of training_snapshot_fuzzer (run with Debian's
python3; the files are committed, so run it only to change them). Small
training snapshots (512-byte pages) made with Python's sqlite3 and the
monitor's schema (python/model_inspector/train/snapshot_schema.sql): one
with every table the importer reads filled (meta JSON values, a module
tree with containers, edges through a container and one backwards,
NULL metrics, trigger hits), a minimal one (one layer, no steps), and the
first 2 KiB of the full one."""
import pathlib
import sqlite3

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SCHEMA = (ROOT / "python/model_inspector/train/snapshot_schema.sql").read_text()

FULL = """
INSERT INTO meta VALUES ('format', 'model-inspector/training-snapshot'),
  ('version', '1'), ('model', 'Tiny'), ('optimizer', 'Adam'), ('torch', '1.13.1'),
  ('optimizer_config', '[{"lr": 0.001, "betas": [0.9, 0.999], "layers": ["enc.0", "head"]}]'),
  ('triggers', '["loss_spike:3:10", "grad_norm:100", "nan"]'),
  ('thresholds', '{"vanishing": 1e-5, "exploding": 50, "dead": 0.3, "grad_norm": 100, "loss_spike_factor": 3, "loss_spike_window": 10, "act_range": 10000}'),
  ('capture_window', '1'), ('anomaly_step', '2'), ('window_first', '1'),
  ('window_last', '3'), ('status', 'complete');
INSERT INTO layers VALUES (0, '', 'Tiny', NULL, 0, 0, '{}'),
  (1, 'enc', 'Sequential', 0, 1, 0, '{}'),
  (2, 'enc.0', 'Linear', 1, 2, 12, '{"in_features": 3, "out_features": 3, "init_std": 0.57}'),
  (3, 'enc.1', 'ReLU', 1, 3, 0, '{}'),
  (4, 'head', 'Linear', 0, 4, 4, '{"in_features": 3, "out_features": 1}'),
  (5, 'spare', 'LayerNorm', 0, NULL, 6, '{"normalized_shape": [3], "eps": 1e-05}');
INSERT INTO edges VALUES (2, 3), (1, 4), (4, 2);
INSERT INTO steps VALUES (0, 1.0, 0, 0.5, 0, 0.001, NULL, 0, 1000, 0),
  (1, 0.9, 0, 0.4, 0, 0.001, NULL, 0, 1100, 1),
  (2, NULL, 1, NULL, 12, 0.001, 65536.0, 1, 1200, 1),
  (3, 0.8, 0, 0.3, 0, 0.001, NULL, NULL, 1300, 1);
INSERT INTO layer_steps (step, layer, weight_norm, grad_norm, update_ratio,
  dead_fraction, grad_nan, act_abs_max, act_dtype) VALUES
  (0, 2, 2.0, 0.3, 0.001, 0.0, 0, 3.0, 'float32'),
  (1, 2, 2.0, 0.2, 0.001, 0.1, 0, 3.5, 'float32'),
  (2, 2, 2.0, NULL, NULL, 0.5, 4, NULL, 'float16'),
  (2, 4, 1.0, 0.1, 0.002, NULL, 0, 2.0, 'float32');
INSERT INTO triggers VALUES (1, 2, 'nan', NULL, NULL, NULL, 'loss is nan'),
  (2, 2, 'nan', 2, 4.0, 0.0, 'gradients');
"""

MINIMAL = """
INSERT INTO meta VALUES ('format', 'model-inspector/training-snapshot'),
  ('version', '1');
INSERT INTO layers VALUES (0, '', 'Linear', NULL, 0, 6, '{}');
"""


def write(path, sql):
    if path.exists():
        path.unlink()
    db = sqlite3.connect(path)
    db.execute("PRAGMA page_size = 512")
    db.executescript(SCHEMA)
    db.executescript(sql)
    db.commit()
    db.close()


def main():
    write(HERE / "full.db", FULL)
    write(HERE / "minimal.db", MINIMAL)
    (HERE / "first_pages.db").write_bytes((HERE / "full.db").read_bytes()[:2048])


if __name__ == "__main__":
    main()
