"""The fault-injection matrix of the training diagnosis (issue 19,
docs/design/training-diagnosis.md): small real training runs with Debian's
torch on the CPU (test/python/train_faults/*.py), each with one fault
injected at a known step and layer, under model_inspector.train's Monitor
with its default triggers; the snapshot is read back by the C++ importer
and diagnosed by the registered analysis (model_inspector.train.diagnose).

Where the expectations come from:
- the injected layer, the cause and the step the fault starts at: the
  script's construction (it prints them);
- the trigger's step: by construction (the first step whose statistics the
  fault reaches: the huge lr's first damaged forward is the step after the
  update; the others act in their own step), read back from the snapshot
  with Python's sqlite3, not through the C++ reader; for the float16
  overflow also from an independent run of the same script without the
  monitor that sums the tokens in float32 (`--plain`).

| fault | trigger step found / expected | layer named first | cause ranked first | confidence |
|---|---|---|---|---|
| huge lr (fc2's group lr x1000 from step 12) | 13 / 13 (cause step 12) | fc2 | learning_rate_too_high | 0.95 |
| bad init (fc2 weight x100) | 0 / 0 | fc2 | bad_initialization | 0.905 |
| raw input to embed -> LayerNorm from step 12 | 12 / 12 | embed | input_out_of_range | 0.90 |
| float16 mean-pool overflow from step 12 | 12 / 12 (plain run: 12) | pool | fp16_overflow | 0.95 |
| fc2 bias -100 at step 12 | 12 / 12 | fc2 | dead_relu | 0.90 |
| healthy | none / none | - | - (no cause) | score >= 90 |
"""

import json
import sqlite3
import subprocess
import sys

import jsonschema
import pytest

from conftest import ROOT, SCHEMAS

FAULTS = ROOT / "test" / "python" / "train_faults"
SCHEMA = jsonschema.Draft202012Validator(
    json.loads((SCHEMAS / "training-diagnosis.schema.json").read_text()))

_RUNS = {}


def run_script(name, tmp_path_factory, plain=False):
    """Runs one training script once per session: (snapshot path, facts)."""
    key = (name, plain)
    if key not in _RUNS:
        out = tmp_path_factory.mktemp(name) / "snapshot.db"
        script = FAULTS / f"{name}.py"
        assert script.exists(), f"fault script missing: {script}"
        cmd = [sys.executable, str(script), str(out)] + (["--plain"] if plain else [])
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=FAULTS, timeout=900)
        assert proc.returncode == 0, f"{name}.py failed:\n{proc.stderr}"
        facts = json.loads(proc.stdout.strip().splitlines()[-1])
        _RUNS[key] = (out, facts)
    return _RUNS[key]


def snapshot(path):
    """What the snapshot says, read with sqlite3 (not the C++ reader)."""
    db = sqlite3.connect(path)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        triggers = db.execute("SELECT step, trigger FROM triggers ORDER BY id").fetchall()
        names = dict(db.execute("SELECT id, name FROM layers"))
    finally:
        db.close()
    anomaly = int(meta["anomaly_step"]) if "anomaly_step" in meta else None
    return {"anomaly_step": anomaly, "status": meta.get("status"), "triggers": triggers,
            "names": names}


def diagnose(path):
    from model_inspector import train
    result = train.diagnose(path)
    SCHEMA.validate(json.loads(json.dumps(result)))
    return result


FAULT_SCRIPTS = ["huge_lr", "bad_init", "input_range", "fp16_overflow", "dead_relu"]


@pytest.mark.parametrize("name", FAULT_SCRIPTS)
def test_fault_is_caught_at_its_step_and_named_first(name, tmp_path_factory):
    path, facts = run_script(name, tmp_path_factory)
    snap = snapshot(path)
    # Caught at the right step: the first trigger fired where the fault
    # first shows in the step's statistics.
    assert snap["anomaly_step"] == facts["trigger_step"], snap["triggers"][:5]
    assert snap["triggers"][0][0] == facts["trigger_step"]
    d = diagnose(path)
    assert d["anomaly_step"] == facts["trigger_step"]
    # The diagnosis names the injected layer and the cause first, at the
    # step the fault started.
    assert d["causes"], "no cause found"
    top = d["causes"][0]
    ranked = [(c["cause"], c["layer_name"], c["step"], round(c["confidence"], 2))
              for c in d["causes"]]
    assert top["cause"] == facts["cause"], ranked
    assert top["layer_name"] == facts["layer"], ranked
    assert top["step"] == facts["inject_step"], ranked
    assert snap["names"][top["layer"]] == facts["layer"]
    assert top["confidence"] >= 0.75, ranked
    assert top["evidence"] and all(e["text"] for e in top["evidence"])
    assert top["fix"]["summary"] and top["fix"]["validation"]
    # The chain starts at the injected layer (the producer).
    assert d["chain"][0]["layer_name"] == facts["layer"]
    assert d["chain"][0]["role"] == "producer"
    # The injected layer is among the problem layers (it scored below 70
    # at some step), and the model's health at the anomaly is below the 90
    # a healthy run keeps (test_healthy_run_fires_nothing_and_scores_high).
    assert top["layer"] in d["problem_layers"]
    layer = next(x for x in d["layers"] if x["layer"] == top["layer"])
    assert layer["worst_score"] < 70
    assert d["score"] < 90


def test_fp16_overflow_step_matches_an_independent_plain_run(tmp_path_factory):
    # The same seeded run without the monitor, pool's sum in float32: the
    # first step whose sum passes 65504 is where float16 overflows.
    _, plain = run_script("fp16_overflow", tmp_path_factory, plain=True)
    assert plain["first_over_65504"] == plain["inject_step"]
    path, facts = run_script("fp16_overflow", tmp_path_factory)
    assert snapshot(path)["anomaly_step"] == plain["first_over_65504"]
    d = diagnose(path)
    assert d["causes"][0]["step"] == plain["first_over_65504"]


def test_healthy_run_fires_nothing_and_scores_high(tmp_path_factory):
    path, _ = run_script("healthy", tmp_path_factory)
    snap = snapshot(path)
    assert snap["triggers"] == []
    assert snap["anomaly_step"] is None
    assert snap["status"] == "no_anomaly"
    d = diagnose(path)
    assert d["anomaly_step"] is None
    assert d["causes"] == [] and d["chain"] == []
    assert d["problem_layers"] == []
    assert d["score"] >= 90
    assert min(s["score"] for s in d["steps"]) >= 90
    assert all(not layer["flags"] for layer in d["layers"])
    # The heat map: one row per layer scored, one column per step.
    assert d["heatmap"]["layers"] == [layer["layer"] for layer in d["layers"]]
    assert d["heatmap"]["steps"] == [s["step"] for s in d["steps"]]
    assert len(d["heatmap"]["values"]) == len(d["layers"])
    assert all(len(row) == len(d["steps"]) for row in d["heatmap"]["values"])
