"""The analysis registry end to end: `analyze --list` and the generated
docs/reference/analyses.md, `analyze ID` in every format, and the HTTP
routes every registered analysis gets (GET /api/runs/{run}/analyses/{id},
/analysis-list), checked against the routes and dumps that existed before
the registry (their JSON must be the same document)."""
import json

import pytest

from conftest import FIXTURES, ROOT, run
from test_server import Server

MULTIRANK = FIXTURES / "multirank"
RESNET = FIXTURES / "resnet18" / "ort_all"


def test_reference_is_generated_from_the_registry():
    generated = run("analyze", "--list", "--format", "markdown").stdout
    assert (ROOT / "docs" / "reference" / "analyses.md").read_text() == generated


def test_list_names_every_analysis_with_its_parameters():
    listed = json.loads(run("analyze", "--list", "--format", "json").stdout)["analyses"]
    ids = [a["id"] for a in listed]
    # analyses.json's sections come first, in its order.
    assert ids[:6] == ["calibration", "critical_path", "idle_overlap", "findings",
                       "sequences", "blocks"]
    assert len(ids) == len(set(ids))
    idle = next(a for a in listed if a["id"] == "idle_overlap")
    assert idle["needs"] == ["trace"] and idle["in_export"] is True
    assert {p["name"]: p["default"] for p in idle["parameters"]} == {
        "iteration": "-1", "clock": "calibrated", "gap_threshold_ns": "100000",
        "max_gaps": "100"}
    text = run("analyze", "--list").stdout
    for i in ids:
        assert f"\n{i} " in text


def test_json_is_the_document_of_the_typed_commands(tmp_path):
    # `analyze critical_path` and `path --critical` (both: calibrated clock,
    # whole trace) print the same result.
    analyzed = json.loads(run("analyze", "critical_path", "-q", MULTIRANK,
                              "--format", "json").stdout)
    assert analyzed == json.loads(run("path", "-q", MULTIRANK, "--critical", "--json").stdout)
    # Each exported section is the analysis with its defaults.
    run("export", "-q", MULTIRANK, "--out", tmp_path)
    exported = json.loads((tmp_path / "analyses.json").read_text())
    for section in ["calibration", "idle_overlap", "findings", "sequences", "blocks"]:
        got = json.loads(run("analyze", section, "-q", MULTIRANK, "--format", "json").stdout)
        assert got == exported[section], section
    # check --json is the validation analysis.
    proc = run("check", "-q", RESNET, "--json", check=False)
    assert json.loads(run("analyze", "validation", "-q", RESNET, "--format",
                          "json").stdout) == json.loads(proc.stdout)


def test_parameters_reach_the_analysis_and_bad_ones_name_themselves():
    small = json.loads(run("analyze", "idle_overlap", "-q", MULTIRANK, "--param",
                           "gap_threshold_ns=15000", "--param", "clock=raw",
                           "--format", "json").stdout)
    assert small["gap_threshold_ns"] == 15000 and small["clock"] == "raw"
    # Gaps of 15 us and more (fixture README: 20, 20, 22 and 15 us).
    assert small["gaps_over_threshold"] == 4
    for bad, words in [("gap=1", "unknown parameter 'gap'"),
                       ("gap_threshold_ns=abc", "parameter 'gap_threshold_ns': expected an integer"),
                       ("clock=wall", "parameter 'clock': expected one of raw, calibrated"),
                       ("max_gaps=-3", "parameter 'max_gaps': expected 0..100000")]:
        proc = run("analyze", "idle_overlap", "-q", MULTIRANK, "--param", bad, check=False)
        assert proc.returncode == 2, bad
        assert words in proc.stderr, (bad, proc.stderr)
    proc = run("analyze", "idle_overlap", "-q", MULTIRANK, "--param", "clock=raw",
               "--param", "clock=raw", check=False)
    assert proc.returncode == 2 and "'clock' is given twice" in proc.stderr
    proc = run("analyze", "no_such_analysis", "-q", MULTIRANK, check=False)
    assert proc.returncode == 3 and "no analysis 'no_such_analysis'" in proc.stderr
    proc = run("analyze", "memory", "-q", MULTIRANK, check=False)
    assert proc.returncode == 2 and "needs a model" in proc.stderr


@pytest.mark.parametrize("fmt", ["text", "csv", "markdown"])
def test_tables_for_people(fmt):
    out = run("analyze", "idle_overlap", "-q", MULTIRANK, "--format", fmt).stdout
    # One table per array of objects, titled by the analysis and the key.
    title = {"text": "Idle time and overlap / streams\n",
             "csv": "# Idle time and overlap / streams\n",
             "markdown": "### Idle time and overlap / streams\n"}[fmt]
    assert title in out
    assert "busy (us)" in out
    # Both ranks' streams, busy 45.0 and 62.0 us (fixture README).
    assert "45.0" in out and "62.0" in out


def test_http_routes_of_the_registry():
    s = Server(MULTIRANK, "--run", RESNET)
    try:
        listed = s.get_json("/api/runs/0/analysis-list")["analyses"]
        applies = {a["id"]: a["applies"] for a in listed}
        assert applies["critical_path"] and not applies["memory"]
        assert s.get_json("/api/runs/1/analysis-list")["analyses"][6]["applies"]
        # The generic route gives the same document as the typed one.
        assert (s.get_json("/api/runs/0/analyses/critical_path?clock=raw")
                == s.get_json("/api/runs/0/critical-path?clock=raw"))
        assert (s.get_json("/api/runs/0/analyses/idle_overlap?gap_threshold_ns=1000&clock=raw")
                == s.get_json("/api/runs/0/idle-overlap?gap_threshold_ns=1000&clock=raw"))
        assert (s.get_json("/api/runs/1/analyses/memory?level=compiled")
                == s.get_json("/api/runs/1/levels/compiled/memory"))
        # /analyses keeps its sections and gains every in_export analysis.
        doc = s.get_json("/api/runs/0/analyses")
        exported = [a["id"] for a in listed if a["in_export"] and a["applies"]]
        assert list(doc) == ["schema"] + exported
        err = s.get_json("/api/runs/0/analyses/idle_overlap?gap_threshold_ns=x", status=400)
        assert "parameter 'gap_threshold_ns'" in err["error"]["message"]
        err = s.get_json("/api/runs/0/analyses/idle_overlap?nope=1", status=400)
        assert "unknown parameter 'nope'" in err["error"]["message"]
        s.get_json("/api/runs/0/analyses/no_such_analysis", status=404)
        err = s.get_json("/api/runs/0/analyses/memory", status=400)
        assert "needs a model" in err["error"]["message"]
    finally:
        assert s.close() == 0
