"""Names from input files never reach the terminal raw: a crafted trace,
model and file name carrying ESC sequences (OSC 0 retitles the window, CSI
2J clears the screen), CR/LF (fake table rows), a C1 control and a
right-to-left override go through every command and output format of the
real binary. Text, CSV and Markdown show them escaped (\\x1b, \\r\\n,
\\u009b, \\u202e: src/base/strings.h EscapeForTerminal); JSON writes them
with its own \\u escapes, so a JSON reader gets the name back unchanged.
"""
import json

import onnx
import pytest
from onnx import TensorProto, helper

from conftest import run

EVIL = "evil\x1b]0;pwned\x07\x1b[2J\r\nfake | row\u009b\u202e"
SHOWN = "evil\\x1b]0;pwned\\x07\\x1b[2J\\r\\nfake | row\\u009b\\u202e"

# Code points a terminal acts on (strings.h IsTerminalControl).
BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def raw_controls(text):
    """Terminal controls in `text` other than the line ends of the output."""
    return [hex(ord(c)) for c in text
            if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F
            or ord(c) in BIDI or 0xDC80 <= ord(c) <= 0xDCFF]  # undecodable bytes




@pytest.fixture
def evil_trace(tmp_path):
    # The file name carries an OSC sequence too.
    path = tmp_path / "trace\x1b]0;t\x07.json"
    events = [{"name": EVIL, "ph": "X", "ts": i * 20, "dur": 10, "pid": 1, "tid": 1,
               "cat": "kernel", "args": {"op_name": EVIL}} for i in range(3)]
    path.write_text(json.dumps({"traceEvents": events}))
    return path


@pytest.fixture
def evil_model(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info(EVIL, TensorProto.FLOAT, [4])
    node = helper.make_node("Relu", ["x"], [EVIL], name=EVIL)
    # A graph input nothing reads: `check` reports it by name.
    unused = helper.make_tensor_value_info("unused" + EVIL, TensorProto.FLOAT, [4])
    graph = helper.make_graph([node], EVIL, [x, unused], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / "model\x1b[2J.onnx"
    onnx.save(model, str(path))
    return path


def assert_clean(proc, expect_shown=True, markdown=False):
    for stream in (proc.stdout, proc.stderr):
        assert raw_controls(stream) == [], stream
    if expect_shown:
        out = proc.stdout + proc.stderr
        # Markdown also escapes the '|' of the name (its own quoting).
        assert (SHOWN.replace("|", "\\|") if markdown else SHOWN) in out, out
        # The LF of the name did not start a row of its own.
        assert not any(line.startswith("fake | row") for line in out.split("\n"))


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown"])
def test_summary_tables(evil_trace, fmt):
    proc = run("summary", "--quiet", "--format", fmt, evil_trace)
    assert_clean(proc, markdown=fmt == "markdown")
    assert "trace\\x1b]0;t\\x07.json" in proc.stdout


def test_summary_json_uses_json_escapes(evil_trace):
    proc = run("summary", "--quiet", "--format", "json", evil_trace)
    assert raw_controls(proc.stdout) == []
    doc = json.loads(proc.stdout)
    names = {row["op_type"] for row in doc["op_types"]}
    assert EVIL in names


@pytest.mark.parametrize("fmt", ["text", "csv", "markdown"])
def test_analyze(evil_trace, fmt):
    assert_clean(run("analyze", "--quiet", "critical_path", "--format", fmt, evil_trace),
                 markdown=fmt == "markdown")


def test_path_and_diagnose(evil_trace):
    assert_clean(run("path", "--quiet", "--critical", evil_trace))
    assert_clean(run("diagnose", "--quiet", evil_trace), expect_shown=False)


def test_check_names_graph_file_and_values(evil_model):
    proc = run("check", evil_model, check=False)
    assert_clean(proc)
    assert "model\\x1b[2J.onnx" in proc.stdout


def test_path_of_a_node_named_with_escapes(evil_model):
    proc = run("path", "--quiet", "--node", EVIL, evil_model)
    assert_clean(proc)


def test_error_messages(tmp_path):
    bad = tmp_path / "cut\x1b]0;t\x07\u202e.json"
    bad.write_text('{"traceEvents": [{"name": "a\\u001b[2J", "ph": "X", "ts": ')
    proc = run("summary", "--quiet", bad, check=False)
    assert proc.returncode != 0
    assert raw_controls(proc.stderr) == [], proc.stderr
    assert "cut\\x1b]0;t\\x07\\u202e.json" in proc.stderr
    missing = tmp_path / "no\x1b[2Jsuch.onnx"
    proc = run("summary", "--quiet", missing, check=False)
    assert proc.returncode != 0
    assert raw_controls(proc.stderr) == [] and "no\\x1b[2Jsuch.onnx" in proc.stderr


def test_export_writes_json_and_an_escaped_message(evil_model, tmp_path):
    out = tmp_path / "out\x1b[2J"
    proc = run("export", "--quiet", evil_model, "--out", out)
    assert_clean(proc, expect_shown=False)
    assert "out\\x1b[2J/graph.json" in proc.stdout
    graph = json.loads((out / "graph.json").read_text())
    assert graph["nodes"][0]["name"] == EVIL
    assert raw_controls((out / "graph.json").read_text()) == []
