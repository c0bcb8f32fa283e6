#!/usr/bin/python3
"""Regenerates the malformed ONNX files in this folder (Debian python3-onnx).

Each file exercises one failure the ONNX importers must report cleanly;
manifest.json lists the expected exit code and message fragments.
"""
import os

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def small_model(nodes, inputs=("x",), outputs=("y",)):
    graph = helper.make_graph(
        nodes, "bad",
        [helper.make_tensor_value_info(i, TensorProto.FLOAT, [4]) for i in inputs],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, [4]) for o in outputs],
        initializer=[helper.make_tensor("w", TensorProto.FLOAT, [64],
                                        [0.5] * 64, raw=False)])
    model = helper.make_model(graph, producer_name="make_bad_inputs",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


valid = small_model([helper.make_node("Relu", ["x"], ["y"], name="relu")])
write("truncated.onnx", valid[: len(valid) // 2])
write("empty.onnx", b"")
# ir_version 7, then bytes whose tag has wire type 7.
write("invalid_wire_type.onnx", b"\x08\x07\x12\x04test\x3a\x03\x0f\x00\x00")
# ModelProto.graph declaring ~2^63 bytes.
write("huge_length.onnx", b"\x08\x07\x3a" + b"\xff" * 8 + b"\x7f")
# model_version with an 11-byte varint.
write("varint_too_long.onnx", b"\x08\x07\x28" + b"\xff" * 10 + b"\x01")
# Looks like a model (ir_version, producer) but has no graph.
write("no_graph.onnx", b"\x08\x07\x12\x07pytorch\x1a\x061.13.0")
# Sniffs as ONNX (valid ir_version, graph tag) then garbage inside.
write("garbage.onnx", b"\x08\x08\x3a\x10" + bytes(range(0xf0, 0x100)))
write("cycle.onnx", small_model([
    helper.make_node("Relu", ["x"], ["pre"], name="before"),
    helper.make_node("Add", ["pre", "b_out"], ["a_out"], name="cycle_a"),
    helper.make_node("Relu", ["a_out"], ["b_out"], name="cycle_b"),
    helper.make_node("Relu", ["b_out"], ["y"], name="after"),
]))
write("dangling_input.onnx", small_model([
    helper.make_node("Add", ["x", "ghost_tensor"], ["y"], name="reads_ghost"),
]))
# 70 nested If bodies: over the 64-level limit.
leaf = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "leaf",
                         [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
inner = leaf
for level in range(70):
    node = helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=leaf)
    inner = helper.make_graph([node], "level%d" % level, [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
deep = helper.make_model(inner, opset_imports=[helper.make_opsetid("", 13)])
write("deep_nesting.onnx", deep.SerializeToString())
with open(os.path.join(HERE, "syntax_error.onnxtxt"), "w") as f:
    f.write('<ir_version: 8, opset_import: ["" : 13]>\n'
            'agraph (float[4] x) => (float[4] y) {\n'
            '  y = Relu(x\n'
            '}\n')

# Protobuf text of ModelProto with an op type not quoted (line 4, column 14).
with open(os.path.join(HERE, "syntax_error.prototxt"), "w") as f:
    f.write('ir_version: 3\n'
            'graph {\n'
            '  node {\n'
            '    op_type: Relu\n'
            '  }\n'
            '}\n'
            'opset_import {\n'
            '  version: 13\n'
            '}\n')

# ONNX JSON after onnx-mlir style "//" lines, a comma missing before "graph"
# (line 4, column 3).
with open(os.path.join(HERE, "syntax_error.onnx.json"), "w") as f:
    f.write('// RUN: onnx-mlir %s\n'
            '{\n'
            '  "irVersion": "8"\n'
            '  "graph": {"node": [{"opType": "Relu"}]},\n'
            '  "opsetImport": [{"version": "13"}]\n'
            '}\n')

# Number literals libonnx's textual-syntax parser converts with std::stoll /
# std::stof, whose exceptions say only "stoll" / "stof": a dimension past
# int64 (line 2, column 10), an attribute float past float32 (line 4,
# column 33; the same digits in the comment before it are not a literal) and
# a '-' without digits (line 2, column 10).
with open(os.path.join(HERE, "dim_out_of_range.onnxtxt"), "w") as f:
    f.write('<ir_version: 8, opset_import: ["" : 13]>\n'
            'g (float[99999999999999999999] x) => (float[4] y) {\n'
            '  y = Relu(x)\n'
            '}\n')
with open(os.path.join(HERE, "float_out_of_range.onnxtxt"), "w") as f:
    f.write('<ir_version: 8, opset_import: ["" : 13]>\n'
            'g (float[4] x) => (float[4] y) {\n'
            '  # alpha 1e999 would not fit\n'
            '  y = LeakyRelu <alpha: float = 1e999> (x)\n'
            '}\n')
with open(os.path.join(HERE, "dash_without_digits.onnxtxt"), "w") as f:
    f.write('<ir_version: 8, opset_import: ["" : 13]>\n'
            'g (float[-] x) => (float[4] y) {\n'
            '  y = Relu(x)\n'
            '}\n')

# The same dimension in protobuf's JSON mapping (protobuf names the field and
# the value; the value is placed at line 4, column 98) and in protobuf text
# (line 3, column 80).
with open(os.path.join(HERE, "dim_out_of_range.onnx.json"), "w") as f:
    f.write('{\n'
            '  "irVersion": "8",\n'
            '  "graph": {"node": [{"opType": "Relu", "input": ["x"], "output": ["y"]}],\n'
            '   "input": [{"name": "x", "type": {"tensorType": {"elemType": 1, "shape": '
            '{"dim": [{"dimValue": "99999999999999999999"}]}}}}]},\n'
            '  "opsetImport": [{"version": "13"}]\n'
            '}\n')
with open(os.path.join(HERE, "dim_out_of_range.prototxt"), "w") as f:
    f.write('ir_version: 3\n'
            'graph {\n'
            '  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { '
            'dim_value: 99999999999999999999 } } } } }\n'
            '  node { op_type: "Relu" input: "x" output: "y" }\n'
            '}\n'
            'opset_import { version: 13 }\n')
