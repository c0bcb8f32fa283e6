"""End-to-end tests of `render`: the JSON validates against the documented
schema, the binary (docs/reference/layout-binary.md) decodes to the same
content as the JSON, group paths expand and collapse, and errors leave no
file behind."""
import json
import struct
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from conftest import FIXTURES, SCHEMAS, run

RESNET = FIXTURES / "resnet18" / "model.onnx"
RESNET_RUN = FIXTURES / "resnet18" / "ort_all"
TRANSFORMER = FIXTURES / "transformer" / "model.onnx"
TRANSFORMER_RUN = FIXTURES / "transformer" / "ort_all"

CASES = {
    "resnet18": [RESNET],
    "resnet18_collapsed": [RESNET, "--max-items", "20"],
    "resnet18_lr": [RESNET, "--direction", "lr"],
    "resnet18_compiled": [RESNET_RUN, "--level", "compiled"],
    "resnet18_fusion": [RESNET_RUN, "--groups", "fusion"],
    "resnet18_flat": [RESNET, "--groups", "none"],
    "transformer": [TRANSFORMER],
    "transformer_collapsed": [TRANSFORMER, "--max-items", "30"],
    "transformer_fusion": [TRANSFORMER_RUN, "--groups", "fusion"],
}

SECTIONS = ["item_box", "item_kind", "item_ref", "item_model_id", "item_title", "item_subtitle",
            "edge_from", "edge_to", "edge_count", "edge_flags", "edge_label", "edge_point_begin",
            "points", "frames", "group_parent", "group_repeat_of", "group_kind", "group_flags",
            "group_depth", "group_node_count", "group_bounds", "group_label", "group_top_ops",
            "group_top_op_counts", "op_names", "node_item", "node_model_id", "string_offsets",
            "string_data", "frame_profiles", "node_status", "node_time_us", "node_task_count"]
STATUS = ["none", "executed", "fused", "not_executed", "inserted"]
TYPES = {1: "B", 2: "i", 3: "I", 4: "f"}
NONE = 0xFFFFFFFF
EXTENSIONS = {"json": "json", "binary": "bin", "svg": "svg"}


def render(tmp_path, name, args, fmt):
    out = tmp_path / f"{name}.{EXTENSIONS[fmt]}"
    run("render", "--quiet", *args, "--format", fmt, "--out", out)
    return out.read_bytes()


def decode(buf):
    assert buf[:4] == b"MILY"
    header = struct.unpack_from("<3I2f10I", buf, 4)
    version, header_bytes, direction, width, height = header[:5]
    (nodes, items, edges, points, frames, groups, ops, strings, nsec, title) = header[5:]
    assert version == 1 and header_bytes == 64 + 16 * nsec and len(buf) % 4 == 0
    sections = {}
    end = header_bytes
    for k in range(nsec):
        sid, typ, offset, count = struct.unpack_from("<4I", buf, 64 + 16 * k)
        assert offset % 4 == 0 and offset >= end
        code = TYPES[typ]
        if sid <= len(SECTIONS):  # readers skip ids they do not know
            sections[SECTIONS[sid - 1]] = list(struct.unpack_from(f"<{count}{code}", buf, offset))
        end = offset + count * struct.calcsize(code)
    assert end <= len(buf) < end + 4
    offs, data = sections["string_offsets"], bytes(sections["string_data"])
    text = [data[offs[i]:offs[i + 1]].decode() for i in range(strings)]
    assert text[0] == ""
    counts = dict(nodes=nodes, items=items, edges=edges, points=points, frames=frames,
                  groups=groups, ops=ops)
    return dict(direction=direction, width=width, height=height, title=text[title],
                counts=counts, s=sections, text=text)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("render")
    return {name: {fmt: render(d, name, args, fmt) for fmt in ("json", "binary")}
            for name, args in CASES.items()}


@pytest.mark.parametrize("name", CASES)
def test_json_validates_against_schema(outputs, name):
    schema = json.loads((SCHEMAS / "layout.schema.json").read_text())
    doc = json.loads(outputs[name]["json"])
    jsonschema.Draft202012Validator(schema).validate(doc)
    items, groups = doc["items"], doc["groups"]
    for e in doc["edges"]:
        assert e["from"] < len(items) and e["to"] < len(items)
    for f in doc["frames"]:
        assert groups[f]["expanded"] and groups[f]["visible"]
    for i, item in enumerate(items):
        if item["kind"] == "group":
            assert not groups[item["ref"]]["expanded"] and groups[item["ref"]]["visible"]
        else:
            assert doc["nodes"]["item"][item["ref"]] == i
    assert all(i is not None and i < len(items) for i in doc["nodes"]["item"])


@pytest.mark.parametrize("name", CASES)
def test_binary_matches_json(outputs, name):
    doc = json.loads(outputs[name]["json"])
    b = decode(outputs[name]["binary"])
    s, text = b["s"], b["text"]
    assert b["title"] == doc["title"]
    assert b["direction"] == (1 if doc["direction"] == "lr" else 0)
    assert b["width"] == f32(doc["width"]) and b["height"] == f32(doc["height"])
    kinds = ["node", "graph_input", "graph_output", "group"]
    assert b["counts"]["items"] == len(doc["items"])
    for i, item in enumerate(doc["items"]):
        assert kinds[s["item_kind"][i]] == item["kind"]
        assert s["item_ref"][i] == item["ref"]
        assert s["item_model_id"][i] == (NONE if item["model_id"] is None else item["model_id"])
        assert s["item_box"][4 * i:4 * i + 4] == [f32(v) for v in item["box"]]
        assert text[s["item_title"][i]] == item["title"]
        assert text[s["item_subtitle"][i]] == item["subtitle"]
    flat = [f32(v) for frame in doc["frame_profiles"] for v in frame]
    assert s["frame_profiles"] == flat and len(flat) == 32 * len(doc["frames"])
    begin = s["edge_point_begin"]
    assert len(begin) == len(doc["edges"]) + 1 and begin[-1] == b["counts"]["points"]
    for e, edge in enumerate(doc["edges"]):
        assert (s["edge_from"][e], s["edge_to"][e], s["edge_count"][e]) == (
            edge["from"], edge["to"], edge["count"])
        assert bool(s["edge_flags"][e] & 1) == edge["reversed"]
        assert bool(s["edge_flags"][e] & 2) == edge["label_shown"]
        assert text[s["edge_label"][e]] == edge["label"]
        pts = s["points"][2 * begin[e]:2 * begin[e + 1]]
        assert pts == [f32(v) for p in edge["points"] for v in p]
    assert s["frames"] == doc["frames"]
    group_kinds = ["scope", "fusion", "repeat", "chunk"]
    for g, group in enumerate(doc["groups"]):
        assert text[s["group_label"][g]] == group["label"]
        assert s["group_parent"][g] == group["parent"]
        assert s["group_repeat_of"][g] == group["repeat_of"]
        assert group_kinds[s["group_kind"][g]] == group["kind"]
        assert s["group_flags"][g] == group["expanded"] + 2 * group["visible"]
        assert s["group_depth"][g] == group["depth"]
        assert s["group_node_count"][g] == group["node_count"]
        assert s["group_bounds"][4 * g:4 * g + 4] == [f32(v) for v in group["bounds"]]
        tops = [(o, c) for o, c in zip(s["group_top_ops"][3 * g:3 * g + 3],
                                       s["group_top_op_counts"][3 * g:3 * g + 3]) if o >= 0]
        assert tops == [(t["op"], t["count"]) for t in group["top_ops"]]
    assert [text[i] for i in s["op_names"]] == doc["op_names"]
    assert s["node_item"] == doc["nodes"]["item"]
    assert s["node_model_id"] == [NONE if m is None else m for m in doc["nodes"]["model_id"]]
    assert [STATUS[c] for c in s["node_status"]] == doc["nodes"]["status"]
    assert s["node_time_us"] == [-1 if t is None else f32(t) for t in doc["nodes"]["time_us"]]
    assert s["node_task_count"] == doc["nodes"]["task_count"]
    assert len(s["node_status"]) == b["counts"]["nodes"]


def test_run_information_per_node(outputs):
    # A model alone: nothing ran, so no information.
    doc = json.loads(outputs["resnet18"]["json"])
    assert set(doc["nodes"]["status"]) == {"none"}
    assert set(doc["nodes"]["time_us"]) == {None} and set(doc["nodes"]["task_count"]) == {0}
    # A run: compiled nodes executed (with times) or were inserted by ORT.
    doc = json.loads(outputs["resnet18_compiled"]["json"])
    nodes, items = doc["nodes"], doc["items"]
    status = nodes["status"]
    assert {"executed", "inserted"} <= set(status)
    for v, st in enumerate(status):
        kind = items[nodes["item"][v]]["kind"]
        if kind != "node":
            assert (st, nodes["time_us"][v], nodes["task_count"][v]) == ("none", None, 0)
        elif st == "executed":
            assert nodes["time_us"][v] > 0 and nodes["task_count"][v] > 0
        assert (nodes["time_us"][v] is None) == (nodes["task_count"][v] == 0)
    # Framework nodes of a run: fused ones carry their compiled node's time.
    doc = json.loads(outputs["resnet18_fusion"]["json"])
    fused = [v for v, st in enumerate(doc["nodes"]["status"]) if st == "fused"]
    assert fused and all(doc["nodes"]["time_us"][v] > 0 for v in fused)


def test_reveal_shows_a_folded_node(tmp_path):
    out = tmp_path / "r.json"
    run("render", "--quiet", RESNET, "--max-items", "6", "--format", "json", "--out", out)
    doc = json.loads(out.read_text())
    v = next(v for v, m in enumerate(doc["nodes"]["model_id"])
             if doc["items"][doc["nodes"]["item"][v]]["kind"] == "group")
    node = doc["nodes"]["model_id"][v]
    run("render", "--quiet", RESNET, "--max-items", "6", "--reveal", str(node), "--format",
        "json", "--out", out)
    doc = json.loads(out.read_text())
    item = doc["items"][doc["nodes"]["item"][v]]
    assert item["kind"] == "node" and item["model_id"] == node


def test_output_is_deterministic(tmp_path, outputs):
    for fmt in ("json", "binary"):
        again = render(tmp_path, "again", CASES["resnet18_fusion"], fmt)
        assert again == outputs["resnet18_fusion"][fmt]


def test_collapsed_view_aggregates_edges(outputs):
    full = json.loads(outputs["resnet18"]["json"])
    folded = json.loads(outputs["resnet18_collapsed"]["json"])
    assert len(folded["items"]) <= 20 < len(full["items"])
    assert any(i["kind"] == "group" for i in folded["items"])
    assert any(e["count"] > 1 for e in folded["edges"])
    # Every input edge is still drawn, once: inside a collapsed group or
    # as part of a visible edge.
    assert sum(e["count"] for e in folded["edges"]) <= sum(e["count"] for e in full["edges"])


def test_fusion_groups_on_the_framework_level(outputs):
    doc = json.loads(outputs["resnet18_fusion"]["json"])
    fusion = [g for g in doc["groups"] if g["kind"] == "fusion"]
    assert fusion and all(g["node_count"] >= 2 for g in fusion)


def groups_by_path(doc):
    paths = {}
    for g, group in enumerate(doc["groups"]):
        chain, x = [], g
        while x > 0:
            chain.append(doc["groups"][x]["label"])
            x = doc["groups"][x]["parent"]
        paths.setdefault("/".join(reversed(chain)), g)
    return paths


def test_expand_and_collapse_by_path(tmp_path):
    out = tmp_path / "view.json"
    run("render", "--quiet", RESNET, "--max-items", "1", "--expand", "layer1/layer1.0",
        "--collapse", "layer4", "--out", out)
    doc = json.loads(out.read_text())
    paths = groups_by_path(doc)
    groups = doc["groups"]
    assert groups[paths["layer1"]]["expanded"] and groups[paths["layer1/layer1.0"]]["expanded"]
    assert not groups[paths["layer1/layer1.1"]]["expanded"]
    assert not groups[paths["layer4"]]["expanded"] and groups[paths["layer4"]]["visible"]


def test_focus_draws_one_group_at_the_origin(tmp_path):
    whole = json.loads(render(tmp_path, "whole", [RESNET], "json"))
    doc = json.loads(render(tmp_path, "focus", [RESNET, "--focus", "layer2"], "json"))
    schema = json.loads((SCHEMAS / "layout.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    labels = [g["label"] for g in doc["groups"]]
    layer2 = labels.index("layer2")
    assert doc["frames"][0] == layer2
    assert doc["groups"][layer2]["bounds"][:2] == [0, 0]
    assert (doc["width"], doc["height"]) == tuple(doc["groups"][layer2]["bounds"][2:])
    # Every item lies inside the frame; only layer2's nodes are there.
    for item in doc["items"]:
        x, y, w, h = item["box"]
        assert 0 <= x and 0 <= y and x + w <= doc["width"] + 0.01 and y + h <= doc["height"] + 0.01
    assert len(doc["items"]) == doc["groups"][layer2]["node_count"]
    assert len(doc["items"]) < len(whole["items"])
    shown = [i for i in doc["nodes"]["item"] if i is not None]
    assert sorted(shown) == list(range(len(doc["items"])))


def test_svg_draws_frames_collapsed_groups_and_curves(tmp_path):
    out = tmp_path / "view.svg"
    run("render", "--quiet", RESNET, "--max-items", "20", "--expand", "layer2", "--out", out)
    root = ET.parse(out).getroot()
    texts = "".join(root.itertext())
    assert "layer2" in texts and "layer1.0" in texts and "5 nodes" in texts
    assert "same as layer1.0" in texts
    assert "\u00d72" in texts  # aggregated edge
    edges = [e.get("d") for e in root.iter() if e.get("marker-end")]
    assert edges and all(d.startswith("M") and " C" in d for d in edges)
    assert not [e for e in root.iter() if e.tag.endswith("polyline")]


@pytest.mark.parametrize("args,code,message", [
    ([RESNET, "--expand", "layer9"], 3, "no group 'layer9'; groups at the top level: "),
    ([RESNET, "--collapse", "layer1/nope"], 3, "groups at 'layer1': layer1.0, layer1.1"),
    ([RESNET, "--groups", "fusion"], 2, "needs a compiled graph"),
    ([RESNET, "--level", "compiled"], 3, "no compiled graph"),
    ([RESNET, "--format", "png"], 2, "--format"),
    ([RESNET, "--max-items", "-3"], 2, "--max-items"),
])
def test_errors_leave_no_file(tmp_path, args, code, message):
    out = tmp_path / "x.json"
    out.write_text("previous")
    proc = run("render", "--quiet", *args, "--out", out, check=False)
    assert proc.returncode == code, proc.stderr
    assert message in proc.stderr
    assert out.read_text() == "previous"  # untouched, never half-written
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]  # no temp file
