"""A graph with a fault still opens: a viewer (`open`, `render`) loads a
model whose node reads a tensor nothing provides and marks the fault on the
graph; `check` lists it; `summary` and `export` keep their strict default
(an error unless --keep-going).

The models are test/bad_inputs/onnx/dangling_input.onnx (node 'reads_ghost'
reads 'ghost_tensor') and cycle.onnx; what is missing is worked out here
from the file with python3-onnx (names no node, graph input or initializer
provides), not taken from model-inspector.
"""

import json

import onnx
import pytest

from conftest import ROOT, committed, run
from test_server import Server

BAD = ROOT / "test" / "bad_inputs" / "onnx"


def missing_inputs(path):
    """(node name, tensor) for every node input nothing in the graph provides."""
    graph = onnx.load(str(path)).graph
    provided = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    for node in graph.node:
        provided.update(node.output)
    return [(node.name, name) for node in graph.node for name in node.input
            if name and name not in provided]


@pytest.fixture
def dangling():
    path = committed(BAD / "dangling_input.onnx")
    assert missing_inputs(path) == [("reads_ghost", "ghost_tensor")]
    return path


@pytest.mark.parametrize("command", ["summary", "export"])
def test_strict_commands_refuse_a_faulty_graph(command, dangling, tmp_path):
    args = [command, "--quiet", dangling]
    if command == "export":
        args += ["--out", tmp_path / "out"]
    proc = run(*args, check=False)
    assert proc.returncode == 4, proc.stderr
    assert "'ghost_tensor' is produced by no node" in proc.stderr
    assert "--keep-going" in proc.stderr
    ok = run(*args, "--keep-going", check=False)
    assert ok.returncode == 0, ok.stderr


def test_check_lists_the_fault(dangling):
    proc = run("check", "--json", dangling, check=False)
    assert proc.returncode == 1
    findings = [f for level in json.loads(proc.stdout)["levels"] for f in level["findings"]]
    dangling_findings = [f for f in findings if f["rule"] == "dangling_input"]
    assert len(dangling_findings) == 1, findings
    assert "ghost_tensor" in dangling_findings[0]["message"]


def test_render_draws_the_missing_input(dangling, tmp_path):
    out = tmp_path / "g.json"
    proc = run("render", "--quiet", dangling, "--out", out, "--format", "json", check=False)
    assert proc.returncode == 0, proc.stderr
    # The fault is still said, on stderr.
    assert "dangling_input" in proc.stderr and "ghost_tensor" in proc.stderr
    layout = json.loads(out.read_text())
    items = layout["items"]
    missing = [i for i in items if i["kind"] == "missing_input"]
    assert [i["title"] for i in missing] == ["ghost_tensor"]
    # One edge from it, into the node that reads it.
    index = items.index(missing[0])
    into = [e for e in layout["edges"] if e["from"] == index]
    assert [items[e["to"]]["title"] for e in into] == ["Add"]
    # The SVG marks it too (red, dashed, with the reason on hover).
    svg = tmp_path / "g.svg"
    run("render", "--quiet", dangling, "--out", svg)
    text = svg.read_text()
    assert text.count('class="missing-input"') == 1
    assert "produced by no node" in text and "ghost_tensor" in text


def test_render_draws_a_cycle(tmp_path):
    path = committed(BAD / "cycle.onnx")
    out = tmp_path / "c.json"
    proc = run("render", "--quiet", path, "--out", out, "--format", "json", check=False)
    assert proc.returncode == 0, proc.stderr
    assert "graph_cycle" in proc.stderr
    layout = json.loads(out.read_text())
    names = {n.name for n in onnx.load(str(path)).graph.node}
    drawn = {i["title"] for i in layout["items"] if i["kind"] == "node"}
    assert len([i for i in layout["items"] if i["kind"] == "node"]) == len(names) and drawn


def test_open_serves_the_faulty_graph_with_the_fault_in_its_data(dangling):
    s = Server(dangling)  # no --keep-going
    try:
        runs = s.get_json("/api/runs")["runs"]
        assert runs[0]["levels"] == ["framework"]
        layout = s.request("/api/runs/0/levels/framework/layout")
        assert layout[0] == 200 and layout[2][:4] == b"MILY"
        from test_server import ITEM_KIND, ITEM_MODEL_ID, sections
        sec = sections(layout[2])
        kinds = sec[ITEM_KIND]
        assert kinds.count(4) == 1, kinds  # one missing-input item
        # The node that reads it: its details mark the input missing.
        node = sec[ITEM_MODEL_ID][kinds.index(0)]
        details = s.get_json(f"/api/runs/0/levels/framework/nodes/{node}")
        assert details["name"] == "reads_ghost"
        by_name = {i["name"]: i for i in details["inputs"]}
        assert by_name["ghost_tensor"].get("missing") is True
        assert "missing" not in by_name["x"]
        assert by_name["x"]["graph_input"] is True
    finally:
        assert s.close() == 0
