"""`model-inspector diff`, `digest` and `report` end to end on real fixtures
(docs/design/diff.md "Reports", docs/reference/cli.md).

Expected numbers come from outside the code under test:
- test/fixtures/expected_diff.json (derived by python3-onnx,
  test/fixtures/derive_expected_diff.py): resnet18 with one BasicBlock
  added has 5 added nodes; ORT "all" gains 15 fusion groups over "basic"
  for resnet18 (so "basic" loses those 15 against "all"), and the
  framework -> compiled diff of ort_all gains the same 15;
- test/fixtures/diff_timing/overlap_lost/expected.json (written by
  make_overlap_lost.py from the real SGLang trace's events): the moved
  kernel's 5688 ns of overlap with the other stream are gone.
Exit codes: 0 no rule crossed, 1 a rule crossed, 2 usage, 3 not found, 4
malformed input, 5 unsupported (Chromium missing for --pdf).
"""
import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET

import jsonschema

from conftest import BINARY, FIXTURES, SAMPLES, SCHEMAS, committed, run

RESNET = committed(FIXTURES / "resnet18")
BLOCK = committed(FIXTURES / "resnet18_block" / "model.onnx")
EXPECTED = json.loads(committed(FIXTURES / "expected_diff.json").read_text())
SGLANG = committed(SAMPLES / "traces" / "kineto" / "tracelens" /
                   "inference__sglang_decode__sglang_Qwen3-8B_decode.json.gz")
SERIAL = committed(FIXTURES / "diff_timing" / "overlap_lost" / "sglang_decode_serial.json.gz")
OVERLAP_EXPECTED = json.loads(
    committed(FIXTURES / "diff_timing" / "overlap_lost" / "expected.json").read_text())
DIFF_SCHEMA = jsonschema.Draft202012Validator(
    json.loads((SCHEMAS / "diff.schema.json").read_text()))
JUNIT_XSD = committed(FIXTURES / "junit" / "junit.xsd")


def diff_json(*args, expect_rc):
    proc = run("diff", *args, "--format", "json", check=False)
    assert proc.returncode == expect_rc, proc.stderr
    doc = json.loads(proc.stdout)
    DIFF_SCHEMA.validate(doc)
    return doc


def level(doc, name):
    return next(l for l in doc["structure"] if l["level"] == name)


def xmllint(path):
    assert shutil.which("xmllint"), "xmllint missing: install libxml2-utils (scripts/setup.sh)"
    return subprocess.run(["xmllint", "--noout", "--schema", str(JUNIT_XSD), str(path)],
                          capture_output=True, text=True)


def test_usage_errors_exit_2():
    for args in (["diff", str(BLOCK)],
                 ["diff", str(BLOCK), str(BLOCK), str(BLOCK)],
                 ["diff", "--format", "pdf", str(BLOCK), str(BLOCK)],
                 ["diff", "--fail-on", "total>>5%", str(BLOCK), str(BLOCK)],
                 ["report", str(BLOCK)]):
        proc = run(*args, check=False)
        assert proc.returncode == 2, (args, proc.stderr)
    # A rule typo names the flag and the place.
    proc = run("diff", "--fail-on", "total>+5%,nodez!=0", str(BLOCK), str(BLOCK), check=False)
    assert proc.returncode == 2
    assert "--fail-on" in proc.stderr and "nodez" in proc.stderr


def test_input_errors_keep_their_codes(tmp_path):
    proc = run("diff", tmp_path / "missing", BLOCK, check=False)
    assert proc.returncode == 3, proc.stderr
    assert "the base run" in proc.stderr
    broken = tmp_path / "broken.midigest.json"
    broken.write_text('{"schema": "model-inspector/run-digest/1", "meta": 7}')
    proc = run("diff", BLOCK, broken, check=False)
    assert proc.returncode == 4, proc.stderr
    assert "the new run" in proc.stderr


def test_block_added_crosses_a_count_rule():
    # 5 nodes added (expected_diff.json): added>4 is crossed, added>5 not.
    want = EXPECTED["block_added"]
    doc = diff_json("--fail-on", "added>4", RESNET / "model.onnx", BLOCK, expect_rc=1)
    fw = level(doc, "framework")
    assert (fw["base_nodes"], fw["new_nodes"], fw["added"]) == (
        want["base_nodes"], want["new_nodes"], len(want["added"]))
    assert sorted(c["new_name"] for c in fw["changes"] if c["kind"] == "added") == sorted(want["added"])
    assert doc["failed"] is True
    assert [(r["rule"], r["crossed"], r["value"]) for r in doc["rules"]] == [("added>4", True, 5)]
    doc = diff_json("--fail-on", "added>5", RESNET / "model.onnx", BLOCK, expect_rc=0)
    assert doc["failed"] is False
    # No rules at all: never fails.
    doc = diff_json("--fail-on", "", RESNET / "model.onnx", BLOCK, expect_rc=0)
    assert doc["rules"] == []
    # Graphs only: no timing.
    assert doc["timing"] is None


def test_fusions_lost_fail_the_default_gate(tmp_path):
    gained = EXPECTED["basic_vs_all"]["resnet18"]["gained"]
    base, new = RESNET / "ort_all", RESNET / "ort_basic"
    doc = diff_json(base, new, expect_rc=1)
    compiled = level(doc, "compiled")
    assert compiled["fusions_lost"] == len(gained) == 15
    lost = sorted(sorted(f["base_group"]) for f in compiled["fusions"] if f["kind"] == "lost")
    assert lost == sorted(sorted(g) for g in gained)
    crossed = [r for r in doc["rules"] if r["crossed"]]
    assert [r["rule"] for r in crossed] == ["fusions-lost>0"]
    assert crossed[0]["value"] == 15

    # JUnit: valid against the common schema, the crossed rule a failure
    # holding its message; the verdict on stderr for the CI log.
    out = tmp_path / "diff.xml"
    proc = run("diff", base, new, "--format", "junit", "--out", out, check=False)
    assert proc.returncode == 1
    assert "FAILED: 1 of 3 rules crossed" in proc.stderr
    assert "fusions-lost 15 > 0" in proc.stderr
    lint = xmllint(out)
    assert lint.returncode == 0, lint.stderr
    suite = ET.parse(out).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "0")
    failures = {c.get("name"): c.find("failure") for c in suite.iter("testcase")}
    assert failures["fusions-lost>0"] is not None
    assert "fusions-lost 15 > 0" in failures["fusions-lost>0"].get("message")
    assert failures["total>+5%"] is None and failures["overlap-lost>0"] is None

    # Markdown for the pull request.
    proc = run("diff", base, new, "--format", "md", check=False)
    assert proc.returncode == 1
    assert proc.stdout.startswith(
        "## :x: model-inspector diff of resnet18: FAILED: 1 of 3 rules crossed\n")
    assert "| fusions-lost&gt;0 | crossed | 15 |" in proc.stdout
    # The other way the gate passes (fusions gained, nothing lost).
    assert run("diff", new, base, check=False).returncode == 0


def test_overlap_lost_is_reported_with_its_cost():
    doc = diff_json(SGLANG, SERIAL, expect_rc=1)
    lost = OVERLAP_EXPECTED["base"]["overlap_ns"] - OVERLAP_EXPECTED["new"]["overlap_ns"]
    pairs = [o for o in doc["overlap"] if o["scope"] == "streams"]
    assert len(pairs) == 1
    assert pairs[0]["verdict"] == "parallel_to_serial"
    assert pairs[0]["base_overlap_ns"] == OVERLAP_EXPECTED["base"]["overlap_ns"]
    assert pairs[0]["new_overlap_ns"] == OVERLAP_EXPECTED["new"]["overlap_ns"]
    assert pairs[0]["cost_ns"] == lost == 5688
    assert [r["rule"] for r in doc["rules"] if r["crossed"]] == ["overlap-lost>0"]


def test_levels_within_one_run():
    doc = diff_json("--levels", "--fail-on", "", RESNET / "ort_all", expect_rc=0)
    assert [l["level"] for l in doc["structure"]] == ["framework->compiled"]
    want = EXPECTED["basic_vs_all"]["resnet18"]["framework_to_compiled_all"]["gained"]
    assert doc["structure"][0]["fusions_gained"] == len(want)


def strip_run_facts(doc):
    """What differs between a diff of runs and of their digests: where the
    inputs came from, when the digest was made, and session node ids."""
    text = json.dumps(doc)
    doc = json.loads(text)
    for side in ("base", "new"):
        for key in ("inputs", "created_utc"):
            doc[side].pop(key)
    def drop_ids(x):
        if isinstance(x, dict):
            return {k: drop_ids(v) for k, v in x.items() if not k.endswith("_id")}
        if isinstance(x, list):
            return [drop_ids(v) for v in x]
        return x
    return drop_ids(doc)


def test_digests_stand_in_for_runs(tmp_path):
    base, new = RESNET / "ort_all", RESNET / "ort_basic"
    a, b = tmp_path / "a.midigest.json", tmp_path / "b.midigest.json"
    run("digest", base, "--out", a, "--label", "base")
    run("digest", new, "--out", b, "--label", "new")
    from_runs = diff_json(base, new, "--base-label", "base", "--new-label", "new",
                          "--save-base-digest", tmp_path / "sa.json",
                          "--save-new-digest", tmp_path / "sb.json", expect_rc=1)
    from_digests = diff_json(a, b, expect_rc=1)
    assert strip_run_facts(from_runs) == strip_run_facts(from_digests)
    # --save-*-digest writes the digest `digest` writes (but the time made).
    for saved, written in ((tmp_path / "sa.json", a), (tmp_path / "sb.json", b)):
        s, w = json.loads(saved.read_text()), json.loads(written.read_text())
        s["meta"].pop("created_utc"), w["meta"].pop("created_utc")
        assert s == w


def test_out_is_replaced_atomically(tmp_path):
    out = tmp_path / "report.md"
    out.write_text("old")
    proc = run("diff", RESNET / "model.onnx", BLOCK, "--format", "md", "--out", out,
               "--fail-on", "", check=False)
    assert proc.returncode == 0
    assert out.read_text().startswith("## :white_check_mark:")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]
    # A directory that does not exist: an I/O error naming the file.
    proc = run("diff", RESNET / "model.onnx", BLOCK, "--out", tmp_path / "no" / "r.md",
               check=False)
    assert proc.returncode == 6, proc.stderr
    assert "r.md" in proc.stderr


def test_html_reports_are_self_contained(tmp_path):
    out = tmp_path / "diff.html"
    assert run("diff", RESNET / "ort_all", RESNET / "ort_basic", "--format", "html",
               "--out", out, check=False).returncode == 1
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html and "src=" not in html and "href=" not in html
    assert "Changed subgraphs" in html
    # The compiled level's drawing marks the 15 lost fused nodes removed
    # (plus the ORT reorder nodes and the unfused nodes of ort_basic).
    assert html.count('<g class="node removed">') >= 15
    single = tmp_path / "run.html"
    run("report", RESNET / "ort_all", "--out", single)
    text = single.read_text()
    assert "<script" not in text and "Time per op type" in text
    assert text.count('<svg ') == 3  # the op-type chart and both levels


def test_pdf_through_chromium(tmp_path):
    pdf = tmp_path / "run.pdf"
    run("report", RESNET / "ort_all", "--pdf", pdf)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-"), data[:16]
    assert b"%%EOF" in data[-1024:]


def test_pdf_without_chromium_says_how_to_get_it(tmp_path):
    env = dict(os.environ, MI_CHROMIUM=str(tmp_path / "no-chromium"))
    proc = subprocess.run([BINARY,
                           "report", str(RESNET / "ort_all"), "--pdf", str(tmp_path / "r.pdf")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 5, proc.stderr
    assert "apt-get install chromium" in proc.stderr
    assert not (tmp_path / "r.pdf").exists()
