#!/usr/bin/env python3
"""Writes the bad training snapshots of this folder (run with Debian's
python3 from anywhere; the files are committed, so run it only to change
them). Each starts as a small valid snapshot made with Python's sqlite3 and
the monitor's schema (python/model_inspector/train/snapshot_schema.sql,
512-byte pages), then one thing is broken; manifest.json says how
`model-inspector summary` must fail on each."""
import os
import pathlib
import sqlite3

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SCHEMA = (ROOT / "python/model_inspector/train/snapshot_schema.sql").read_text()

VALID = """
INSERT INTO meta VALUES ('format', 'model-inspector/training-snapshot'),
  ('version', '1'), ('model', 'Mlp'), ('optimizer', 'SGD'),
  ('status', 'no_anomaly'), ('capture_window', '2');
INSERT INTO layers VALUES (0, '', 'Mlp', NULL, 0, 0, '{}'),
  (1, 'fc1', 'Linear', 0, 1, 12, '{"in_features": 3, "out_features": 3}'),
  (2, 'act', 'ReLU', 0, 2, 0, '{}'),
  (3, 'fc2', 'Linear', 0, 3, 4, '{"in_features": 3, "out_features": 1}');
INSERT INTO edges VALUES (1, 2), (2, 3);
INSERT INTO steps (step, loss, grad_norm, lr) VALUES (0, 1.0, 0.5, 0.1),
  (1, 0.9, 0.4, 0.1);
INSERT INTO layer_steps (step, layer, weight_norm, grad_norm) VALUES
  (0, 1, 2.0, 0.3), (0, 3, 1.0, 0.2), (1, 1, 2.1, 0.25), (1, 3, 1.1, 0.15);
"""

# file -> SQL applied after the valid contents (None: written otherwise).
CASES = {
    "ok.db": "",
    "wrong_format.db": "UPDATE meta SET value = 'someone-else/runs' WHERE key = 'format';",
    "version_2.db": "UPDATE meta SET value = '2' WHERE key = 'version';",
    "no_triggers_table.db": "DROP TABLE triggers;",
    "no_column.db": "ALTER TABLE layer_steps DROP COLUMN grad_norm;",
    "layer_out_of_range.db": "INSERT INTO layer_steps (step, layer) VALUES (1, 9);",
    "edge_out_of_range.db": "INSERT INTO edges VALUES (3, 12);",
    "step_not_in_steps.db": "INSERT INTO layer_steps (step, layer) VALUES (7, 1);",
    "layer_id_gap.db": "DELETE FROM layer_steps WHERE layer = 2; DELETE FROM edges; DELETE FROM layers WHERE id = 2;",
    "bad_meta_json.db": "INSERT INTO meta VALUES ('thresholds', '{\"dead\": 0.3');",
}


def write(path, extra):
    if path.exists():
        path.unlink()
    db = sqlite3.connect(path)
    db.execute("PRAGMA page_size = 512")
    db.executescript(SCHEMA)
    db.executescript(VALID + extra)
    db.commit()
    db.close()


def main():
    for name, extra in CASES.items():
        write(HERE / name, extra)
    good = (HERE / "ok.db").read_bytes()
    # Truncated: the first two pages (the schema lies beyond).
    (HERE / "truncated.db").write_bytes(good[:1024])
    # Corrupt: the schema page's b-tree page type (byte 100) set to 0x01.
    corrupt = bytearray(good)
    corrupt[100] = 0x01
    (HERE / "corrupt.db").write_bytes(bytes(corrupt))
    (HERE / "not_sqlite.db").write_text("step,loss\n0,1.5\n")


if __name__ == "__main__":
    main()
