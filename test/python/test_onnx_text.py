"""ONNX models in the three text forms (real files from public repositories,
origins in test/fixtures/onnx_text/README.md): model-inspector's op-type
histogram, over the main graph and every nested body, equals python3-onnx's
reading of the same file:

- protobuf text of ModelProto: google.protobuf.text_format.Parse into
  onnx.ModelProto;
- the textual syntax: onnx.parser.parse_model;
- JSON: google.protobuf.json_format.Parse into onnx.ModelProto.

onnx-mlir's lit tests wrap the model in "//" RUN and CHECK lines, which
neither parser takes; onnx-mlir's own reader drops whole-line "//" comments
before parsing, and so does the reference reading here.
"""

import collections
import json

import onnx
import onnx.parser
import pytest
from google.protobuf import json_format, text_format

from conftest import FIXTURES, committed, run

TEXT = FIXTURES / "onnx_text"

CASES = [
    # (file, form)
    ("glow/batchNormPR2304.onnxtxt", "protobuf_text"),
    ("openvino/addmul_abc.prototxt", "protobuf_text"),
    ("openvino/add_abc_initializers.prototxt", "protobuf_text"),
    ("onnx_mlir/layer_normalization_recompose.onnxtext", "syntax"),
    ("onnx_mlir/loop_import_basic.onnxtext", "syntax"),
    ("onnx_mlir/test_abs.json", "json"),
    ("onnx_mlir/com.microsoft.gelu.json", "json"),
    ("onnx_mlir/raw_data.json", "json"),
]


def without_slash_comments(text):
    return "\n".join("" if line.lstrip().startswith("//") else line
                     for line in text.split("\n"))


def reference_model(path, form):
    text = without_slash_comments(path.read_text())
    if form == "protobuf_text":
        return text_format.Parse(text, onnx.ModelProto())
    if form == "json":
        return json_format.Parse(text, onnx.ModelProto())
    return onnx.parser.parse_model(text)


def reference_histogram(graph, counts=None):
    counts = collections.Counter() if counts is None else counts
    for node in graph.node:
        counts[node.op_type] += 1
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                reference_histogram(attr.g, counts)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    reference_histogram(g, counts)
    return counts


def input_formats(path):
    """The format column of `summary`'s Inputs table."""
    lines = run("summary", "--quiet", path).stdout.split("\n")
    start = lines.index("Inputs") + 3
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        rows.append(line.split()[1])
    return rows


def exported(path, tmp_path):
    out = tmp_path / "export"
    run("export", "--quiet", path, "--out", out)
    return json.loads((out / "graph.json").read_text())


@pytest.mark.parametrize("name,form", CASES)
def test_op_types_equal_python_onnx(name, form, tmp_path):
    path = committed(TEXT / name)
    reference = reference_model(path, form)
    expected = reference_histogram(reference.graph)
    assert sum(expected.values()) > 0
    graph = exported(path, tmp_path)
    got = collections.Counter(n["op_type"] for n in graph["nodes"])
    assert got == expected
    main = graph["graphs"][0]
    assert main["name"] == reference.graph.name
    assert [i["name"] for i in main["outputs"]] == [o.name for o in reference.graph.output]


@pytest.mark.parametrize("name,form", CASES)
def test_detected_by_content_under_any_name(name, form, tmp_path):
    # The same bytes named model.txt (no telling extension) still load as
    # ONNX text.
    src = committed(TEXT / name)
    copy = tmp_path / "model.txt"
    copy.write_bytes(src.read_bytes())
    assert input_formats(copy) == ["onnx_text"]


@pytest.mark.parametrize("name,form", [
    ("onnx_mlir/layer_normalization_recompose.onnxtext", "syntax"),
    ("onnx_mlir/test_abs.json", "json"),
])
def test_long_comment_block_is_passed_over(name, form, tmp_path):
    # onnx-mlir's lit tests can open with any number of "//" lines: 20 KiB of
    # them (far past the 4 KiB detection looks at first) before a real
    # model, in a file whose name says nothing.
    src = committed(TEXT / name)
    long = tmp_path / "long_header.txt"
    long.write_text("// a comment line of the lit test's header\n" * 500 + src.read_text())
    expected = reference_histogram(reference_model(src, form).graph)
    assert input_formats(long) == ["onnx_text"]
    graph = exported(long, tmp_path)
    assert collections.Counter(n["op_type"] for n in graph["nodes"]) == expected


def test_ge_onnx_pbtxt_still_reads_as_ge():
    # GE's ge_onnx_*.pbtxt is protobuf text of ModelProto too, with "ge:" op
    # types: it stays with the GE reader.
    dumps = sorted((FIXTURES / "ge").rglob("ge_onnx_*.pbtxt"))
    assert dumps, "no ge_onnx fixture"
    assert input_formats(dumps[0]) == ["ge_onnx_text"]
