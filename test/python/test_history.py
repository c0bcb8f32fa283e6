"""The run history from the command line: `history list|show|add|baseline|
trend`, `export --record`, and the errors for stores that are not ours.

The store's own guarantees (a writer killed mid-write, concurrent writers)
are tested in src/history/history_store_test.cc with writer processes."""
import json
import os
import sqlite3
import subprocess

import jsonschema
import pytest

from conftest import BINARY, FIXTURES, SCHEMAS, committed

RESNET = FIXTURES / "resnet18"


HISTORY_SCHEMA = jsonschema.Draft202012Validator(
    json.loads((SCHEMAS / "history.schema.json").read_text()))


def mi_env(*args, env=None, check=True):
    full = dict(os.environ)
    full.pop("MODEL_INSPECTOR_HISTORY", None)
    full.update(env or {})
    proc = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True,
                          timeout=300, env=full)
    if check and proc.returncode != 0:
        raise AssertionError(f"model-inspector {' '.join(map(str, args))} exited "
                             f"{proc.returncode}: {proc.stderr}")
    # Every JSON document the history commands print follows the schema.
    if args[0] == "history" and "--format" in args and "json" in args \
            and proc.returncode == 0:
        HISTORY_SCHEMA.validate(json.loads(proc.stdout))
    return proc


def runs_json(history, *extra):
    out = mi_env("history", "list", "--history", history, "--format", "json", *extra)
    doc = json.loads(out.stdout)
    assert doc["schema"] == "model-inspector/history-runs/1"
    assert doc["history"] == str(history)
    return doc["runs"]


def test_export_record_then_list_and_show(tmp_path):
    history = tmp_path / "h.db"
    model = committed(RESNET / "model.onnx")
    optimized = committed(RESNET / "ort_all" / "model.optimized.onnx")
    profile = committed(RESNET / "ort_all" / "onnxruntime_profile.json")
    out = mi_env("export", model, optimized, profile, "--out", tmp_path / "ex", "--record",
                 "--history", history, "--model-name", "resnet18", "--label", "ci-41",
                 "--commit", "0123456789abcdef")
    assert (tmp_path / "ex" / "graph.json").exists()
    assert f"recorded run 1 (model resnet18) in {history}" in out.stdout
    runs = runs_json(history)
    assert len(runs) == 1
    run = runs[0]
    assert run["id"] == 1
    assert run["model"] == "resnet18"
    assert run["label"] == "ci-41"
    assert run["git_commit"] == "0123456789abcdef"
    assert run["inputs"] == [str(model), str(optimized), str(profile)]
    assert run["tool_version"] == mi_env("--version").stdout.strip()
    assert run["host"] == os.uname().nodename
    # ISO 8601 UTC, to the second.
    assert len(run["created_utc"]) == 20 and run["created_utc"].endswith("Z")

    show = mi_env("history", "show", "1", "--history", history, "--format", "json")
    doc = json.loads(show.stdout)
    assert doc["run"] == run
    assert doc["baselines"] == []
    text = mi_env("history", "show", "1", "--history", history).stdout
    assert "label:         ci-41" in text
    assert "git commit:    0123456789abcdef" in text


def test_add_list_filter_and_limit(tmp_path):
    history = tmp_path / "h.db"
    run_dir = committed(RESNET / "ort_all")
    for model, label in [("a", "one"), ("b", "two"), ("a", "three")]:
        out = mi_env("history", "add", run_dir, "--history", history, "--model", model,
                     "--label", label)
        assert f"(model {model})" in out.stdout
    runs = runs_json(history)
    # Newest first, ids increasing in the order recorded.
    assert [(r["id"], r["model"], r["label"]) for r in runs] == [
        (3, "a", "three"), (2, "b", "two"), (1, "a", "one")]
    assert [r["id"] for r in runs_json(history, "--model", "a")] == [3, 1]
    assert [r["id"] for r in runs_json(history, "--limit", "1")] == [3]
    text = mi_env("history", "list", "--history", history).stdout
    assert "run history" in text and "(3 runs, newest first)" in text
    # An unknown model: the error names the models held.
    bad = mi_env("history", "list", "--history", history, "--model", "zzz", check=False)
    assert bad.returncode == 3
    assert "models: 'a' (2 runs), 'b' (1 run)" in bad.stderr
    assert runs_json(history, "--model", "zzz") == []


def test_add_several_runs_at_once(tmp_path):
    history = tmp_path / "h.db"
    out = mi_env("history", "add", committed(RESNET / "ort_all"),
                 committed(RESNET / "ort_extended"), "--history", history, "--model", "r")
    assert out.stdout.count("recorded run") == 2
    runs = runs_json(history)
    # Each run keeps the files its directory held (its manifest names the
    # framework model one folder up).
    assert [r["id"] for r in runs] == [2, 1]
    assert str(RESNET / "ort_extended" / "onnxruntime_profile.json") in runs[0]["inputs"]
    assert str(RESNET / "ort_all" / "onnxruntime_profile.json") in runs[1]["inputs"]
    assert str(RESNET / "model.onnx") in runs[0]["inputs"]


def test_baselines_set_replace_list_and_errors(tmp_path):
    history = tmp_path / "h.db"
    run_dir = committed(RESNET / "ort_all")
    for label in ("r1", "r2", "r3"):
        mi_env("history", "add", run_dir, "--history", history, "--model", "m",
               "--label", label)
    out = mi_env("history", "baseline", "set", "main", "1", "--history", history)
    assert out.stdout.strip() == f"baseline main = run 1 (model m, label r1) in {history}"
    mi_env("history", "baseline", "set", "main", "latest", "--history", history)
    mi_env("history", "baseline", "set", "old", "2", "--history", history)
    doc = json.loads(mi_env("history", "baseline", "list", "--history", history,
                            "--format", "json").stdout)
    assert doc["schema"] == "model-inspector/history-baselines/1"
    assert [(b["name"], b["run_id"]) for b in doc["baselines"]] == [("main", 3), ("old", 2)]
    # `show` takes a baseline name.
    shown = json.loads(mi_env("history", "show", "main", "--history", history,
                              "--format", "json").stdout)
    assert shown["run"]["id"] == 3 and shown["baselines"] == ["main"]

    bad_run = mi_env("history", "baseline", "set", "main", "9", "--history", history,
                     check=False)
    assert bad_run.returncode == 3
    assert f"{history}: no run 9 in the run history (it holds 3 runs, ids 1 to 3" \
        in bad_run.stderr
    bad_name = mi_env("history", "show", "release", "--history", history, check=False)
    assert bad_name.returncode == 3
    assert "no baseline 'release' (baselines: 'main' (run 3), 'old' (run 2))" \
        in bad_name.stderr
    numeric = mi_env("history", "baseline", "set", "42", "1", "--history", history,
                     check=False)
    assert numeric.returncode == 2
    # Unchanged by the failures.
    doc = json.loads(mi_env("history", "baseline", "list", "--history", history,
                            "--format", "json").stdout)
    assert [(b["name"], b["run_id"]) for b in doc["baselines"]] == [("main", 3), ("old", 2)]


def test_trend_is_oldest_first_per_model(tmp_path):
    history = tmp_path / "h.db"
    run_dir = committed(RESNET / "ort_all")
    for model, label in [("m", "a"), ("n", "x"), ("m", "b"), ("m", "c")]:
        mi_env("history", "add", run_dir, "--history", history, "--model", model,
               "--label", label, "--commit", "c-" + label)
    doc = json.loads(mi_env("history", "trend", "m", "--history", history,
                            "--format", "json").stdout)
    assert doc["schema"] == "model-inspector/history-trend/1"
    assert doc["model"] == "m"
    assert [(p["run_id"], p["label"], p["git_commit"]) for p in doc["points"]] == [
        (1, "a", "c-a"), (3, "b", "c-b"), (4, "c", "c-c")]
    text = mi_env("history", "trend", "m", "--history", history).stdout
    assert "total time of m across 3 runs" in text
    missing = mi_env("history", "trend", "nope", "--history", history, check=False)
    assert missing.returncode == 3
    assert "no run of model 'nope' (models: 'm' (3 runs), 'n' (1 run))" in missing.stderr


def test_default_path_is_created_in_the_data_directory(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "XDG_DATA_HOME": ""}
    mi_env("history", "add", committed(RESNET / "ort_all"), "--model", "m", env=env)
    store = home / ".local" / "share" / "model-inspector" / "history.db"
    assert store.is_file()
    assert len(json.loads(mi_env("history", "list", "--format", "json",
                                 env=env).stdout)["runs"]) == 1
    # XDG_DATA_HOME wins over HOME; MODEL_INSPECTOR_HISTORY over both.
    xdg = tmp_path / "xdg"
    mi_env("history", "add", committed(RESNET / "ort_all"), "--model", "m",
           env={"HOME": str(home), "XDG_DATA_HOME": str(xdg)})
    assert (xdg / "model-inspector" / "history.db").is_file()
    named = tmp_path / "named" / "runs.db"
    mi_env("history", "add", committed(RESNET / "ort_all"), "--model", "m",
           env={"HOME": str(home), "MODEL_INSPECTOR_HISTORY": str(named)})
    assert named.is_file()


def test_missing_foreign_and_newer_stores(tmp_path):
    missing = mi_env("history", "list", "--history", tmp_path / "none.db", check=False)
    assert missing.returncode == 3
    assert f"{tmp_path / 'none.db'}: no run history here" in missing.stderr
    assert not (tmp_path / "none.db").exists()

    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    foreign = mi_env("history", "add", committed(RESNET / "ort_all"), "--history", text,
                     check=False)
    assert foreign.returncode == 4
    assert f"{text}: not a model-inspector run history: not an SQLite 3 database" \
        in foreign.stderr
    assert text.read_text() == "not a database\n"

    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE TASK (id INTEGER)")
    wrong = mi_env("history", "list", "--history", other, check=False)
    assert wrong.returncode == 4
    assert "an SQLite database, but not a model-inspector run history (tables: TASK;" \
        in wrong.stderr

    newer = tmp_path / "newer.db"
    mi_env("history", "add", committed(RESNET / "ort_all"), "--history", newer,
           "--model", "m")
    with sqlite3.connect(newer) as db:
        db.execute("UPDATE history_schema SET value = '2' WHERE key = 'version'")
    refused = mi_env("history", "list", "--history", newer, check=False)
    assert refused.returncode == 5
    assert "run history schema version 2 is newer than this model-inspector reads " \
        "(version 1)" in refused.stderr


def test_record_options_need_record(tmp_path):
    proc = mi_env("export", committed(RESNET / "model.onnx"), "--out", tmp_path / "ex",
                  "--label", "x", check=False)
    assert proc.returncode == 2
    assert "go with --record" in proc.stderr


def test_store_written_by_the_cli_is_wal_and_versioned(tmp_path):
    history = tmp_path / "h.db"
    mi_env("history", "add", committed(RESNET / "ort_all"), "--history", history,
           "--model", "m")
    # Read by Python's own SQLite: the documented schema.
    with sqlite3.connect(history) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert dict(db.execute("SELECT key, value FROM history_schema")) == {
            "format": "model-inspector/history", "version": "1"}
        row = db.execute("SELECT model, digest_encoding, digest_size, length(digest) "
                         "FROM runs").fetchone()
    assert row[0] == "m" and row[1] == "zlib" and row[2] > 0 and row[3] > 0


def digest_file(path, created, total_ns, model="bert", commit=""):
    """A run digest written by hand (docs/reference/schemas/
    run-digest.schema.json): no graph levels, a trace of len(total_ns) runs."""
    runs = len(total_ns)
    doc = {
        "schema": "model-inspector/run-digest/1",
        "meta": {"model": model, "label": path.stem, "inputs": [], "formats": [],
                 "tool_version": "model-inspector 0.1.0", "producers": "",
                 "host": "ci-3", "created_utc": created, "git_commit": commit},
        "levels": [],
        "timing": {"runs_from": "ProfilerStep", "run_count": runs,
                   "total": {"key": "total", "run_ns": total_ns,
                             "overlapped_ns": [0] * runs, "count": [1] * runs},
                   "op_types": [], "streams": [], "unlinked_tasks": [],
                   "stream_pairs": []},
    }
    path.write_text(json.dumps(doc))
    return path


def test_trend_medians_and_spreads_of_digest_files(tmp_path):
    history = tmp_path / "h.db"
    # Recorded newest first: the trend orders by the digests' creation time.
    late = digest_file(tmp_path / "late.midigest.json", "2026-11-03T00:00:00Z",
                       [12_000_000, 9_000_000, 10_500_000, 10_000_000], commit="ccc")
    early = digest_file(tmp_path / "early.midigest.json", "2026-11-01T00:00:00Z",
                        [8_000_000, 8_400_000, 8_200_000], commit="aaa")
    single = digest_file(tmp_path / "single.midigest.json", "2026-11-02T00:00:00Z",
                         [9_000_000], commit="bbb")
    mi_env("history", "add", late, early, single, "--history", history)
    doc = json.loads(mi_env("history", "trend", "bert", "--history", history,
                            "--format", "json").stdout)
    # By hand, quantiles interpolated at q * (n - 1) over the sorted runs:
    # early {8.0, 8.2, 8.4} ms: median 8.2, p25 8.1, p75 8.3 -> spread 0.2 ms;
    # single {9.0}: median 9.0, spread 0;
    # late {9.0, 10.0, 10.5, 12.0}: median (10.0 + 10.5) / 2 = 10.25,
    # p25 at 0.75 = 9.0 + 0.75 * 1.0 = 9.75, p75 at 2.25 = 10.5 + 0.25 * 1.5 =
    # 10.875 -> spread 1.125 ms.
    assert [(p["label"], p["git_commit"], p["total_median_ns"], p["total_spread_ns"])
            for p in doc["points"]] == [
        ("early.midigest", "aaa", 8_200_000, 200_000),
        ("single.midigest", "bbb", 9_000_000, 0),
        ("late.midigest", "ccc", 10_250_000, 1_125_000)]
    assert [p["run_id"] for p in doc["points"]] == [2, 3, 1]
    text = mi_env("history", "trend", "bert", "--history", history).stdout
    # Change against the previous point: 9.0 / 8.2 - 1 = +9.8%; 10.25 / 9.0 - 1
    # = +13.9%.
    lines = [line.split() for line in text.splitlines()[3:]]
    assert [(line[0], line[-3], line[-2], line[-1]) for line in lines] == [
        ("2", "8.200", "0.200", "-"), ("3", "9.000", "0.000", "+9.8%"),
        ("1", "10.250", "1.125", "+13.9%")]
    runs = runs_json(history)
    assert runs[2]["run_count"] == 4 and runs[2]["host"] == "ci-3"


def test_diff_against_a_stored_baseline_and_record(tmp_path):
    history = tmp_path / "h.db"
    base_dir = committed(RESNET / "ort_all")
    new_dir = committed(RESNET / "ort_extended")
    mi_env("history", "add", base_dir, "--history", history, "--model", "resnet18",
           "--label", "base")
    mi_env("history", "baseline", "set", "main", "1", "--history", history)

    # The same run against its stored digest: nothing changed, the gate passes.
    same = mi_env("diff", "--baseline", "main", base_dir, "--history", history,
                  "--format", "json", check=False)
    assert same.returncode == 0, same.stderr
    report = json.loads(same.stdout)
    assert report["failed"] is False
    assert report["base"]["label"] == "base"
    assert report["base"]["model"] == "resnet18"
    # The store's summary and the diff agree on the base total (two
    # computations of median and p75 - p25 over the same runs).
    stored = runs_json(history)[0]
    assert report["timing"]["total"]["base"]["median_ns"] == stored["total_median_ns"]
    assert report["timing"]["total"]["base"]["spread_ns"] == stored["total_spread_ns"]
    assert report["timing"]["total"]["base"]["samples"] == stored["run_count"] == 3
    assert report["timing"]["total"]["delta_ns"] == 0

    # ORT "extended" against the "all" baseline: fusions lost, the gate
    # fails (exit 1); --record keeps the new run whatever the verdict, and
    # says so on stderr (stdout holds the report).
    gated = mi_env("diff", "--baseline", "main", new_dir, "--history", history,
                   "--format", "json", "--record", "--new-label", "pr-7",
                   "--commit", "feed", check=False)
    assert gated.returncode == 1, gated.stderr
    report = json.loads(gated.stdout)
    assert report["failed"] is True
    assert f"recorded run 2 (model resnet18) in {history}" in gated.stderr
    runs = runs_json(history)
    assert [(r["id"], r["label"], r["git_commit"]) for r in runs] == [
        (2, "pr-7", "feed"), (1, "base", "")]
    assert runs[0]["total_median_ns"] == report["timing"]["total"]["new"]["median_ns"]
    # The baseline did not move.
    doc = json.loads(mi_env("history", "baseline", "list", "--history", history,
                            "--format", "json").stdout)
    assert [(b["name"], b["run_id"]) for b in doc["baselines"]] == [("main", 1)]


def test_diff_baseline_errors(tmp_path):
    history = tmp_path / "h.db"
    run_dir = committed(RESNET / "ort_all")
    mi_env("history", "add", run_dir, "--history", history, "--model", "m")
    mi_env("history", "baseline", "set", "main", "1", "--history", history)
    unknown = mi_env("diff", "--baseline", "release", run_dir, "--history", history,
                     check=False)
    assert unknown.returncode == 3
    assert "the base run (baseline release)" in unknown.stderr
    assert "no baseline 'release' (baselines: 'main' (run 1))" in unknown.stderr
    no_store = mi_env("diff", "--baseline", "main", run_dir, "--history",
                      tmp_path / "none.db", check=False)
    assert no_store.returncode == 3
    assert "no run history here" in no_store.stderr
    both = mi_env("diff", "--baseline", "main", "--base-run", run_dir / "manifest.json",
                  "--history", history, run_dir, check=False)
    assert both.returncode == 2
    assert "--baseline and --base-run both give the base run" in both.stderr
    extra = mi_env("diff", "--baseline", "main", run_dir, run_dir, "--history", history,
                   check=False)
    assert extra.returncode == 2
    lone = mi_env("diff", run_dir, run_dir, "--commit", "x", check=False)
    assert lone.returncode == 2
    assert "go with --record" in lone.stderr


def test_schema_rejects_what_the_history_never_writes():
    good = {"schema": "model-inspector/history-baselines/1", "history": "h.db",
            "baselines": [{"name": "main", "run_id": 1, "set_utc": "2026-12-02T06:00:00Z"}]}
    HISTORY_SCHEMA.validate(good)
    for bad in ({**good, "schema": "model-inspector/history-baselines/2"},
                {**good, "extra": 1},
                {**good, "baselines": [{"name": "", "run_id": 1, "set_utc": ""}]},
                {**good, "baselines": [{"name": "main", "run_id": 0, "set_utc": ""}]}):
        with pytest.raises(jsonschema.ValidationError):
            HISTORY_SCHEMA.validate(bad)


def test_show_writes_the_stored_digest(tmp_path):
    history = tmp_path / "h.db"
    run_dir = committed(RESNET / "ort_all")
    saved = tmp_path / "base.midigest.json"
    # The digest `diff` saves and the one the store gives back are the same
    # text.
    mi_env("history", "add", run_dir, "--history", history, "--model", "m",
           "--label", "l")
    out = tmp_path / "back.midigest.json"
    mi_env("history", "show", "1", "--history", history, "--digest-out", out)
    back = json.loads(out.read_text())
    assert back["schema"] == "model-inspector/run-digest/1"
    assert back["meta"]["model"] == "m" and back["meta"]["label"] == "l"
    assert len(back["levels"]) == 2
    assert [len(level["nodes"]) for level in back["levels"]] == [49, 34]
    same = mi_env("diff", out, run_dir, "--save-base-digest", saved, check=False)
    assert same.returncode == 0, same.stderr
    assert json.loads(saved.read_text()) == back


def test_labels_from_users_are_escaped_on_the_terminal(tmp_path):
    history = tmp_path / "h.db"
    label = "\x1b]0;owned\x07\x1b[2Jci"
    mi_env("history", "add", committed(RESNET / "ort_all"), "--history", history,
           "--model", "m\x1b[31m", "--label", label)
    for args in (["history", "list"], ["history", "show", "1"],
                 ["history", "trend", "m\x1b[31m"], ["history", "baseline", "list"]):
        out = mi_env(*args, "--history", history)
        assert "\x1b" not in out.stdout, args
    # JSON keeps the text as it was given (escaped by JSON itself).
    assert runs_json(history)[0]["label"] == label
