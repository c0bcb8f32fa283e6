#!/usr/bin/python3
"""Synthetic models for bench/diff/bench_diff.sh: a residual MLP of N blocks
(MatMul, Add, Relu, MatMul, Add residual: 5 nodes each, weights shared so
the files stay small), the same with every node and tensor renamed, and the
same with one block inserted in the middle.

    make_models.py OUT_DIR BLOCKS
"""
import os
import sys

import onnx
from onnx import TensorProto, helper, numpy_helper
import numpy as np


def build(blocks, prefix="", insert_at=None):
    d = 16
    inits = [numpy_helper.from_array(np.eye(d, dtype=np.float32), "w"),
             numpy_helper.from_array(np.zeros(d, dtype=np.float32), "b")]
    nodes = []
    x = "x"
    k = 0
    for i in range(blocks + (1 if insert_at is not None else 0)):
        name = f"{prefix}block{i}" if insert_at is None or i < insert_at else (
            f"{prefix}extra" if i == insert_at else f"{prefix}block{i - 1}")
        t = lambda s: f"{name}/{s}"
        nodes += [
            helper.make_node("MatMul", [x, "w"], [t("mm1")], name=t("MatMul")),
            helper.make_node("Add", [t("mm1"), "b"], [t("a1")], name=t("Add")),
            helper.make_node("Relu", [t("a1")], [t("r")], name=t("Relu")),
            helper.make_node("MatMul", [t("r"), "w"], [t("mm2")], name=t("MatMul_1")),
            helper.make_node("Add", [t("mm2"), x], [t("out")], name=t("Add_1")),
        ]
        x = t("out")
        k += 1
    nodes.append(helper.make_node("Identity", [x], ["y"], name=f"{prefix}output"))
    g = helper.make_graph(nodes, "mlp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, d])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, d])],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def main():
    out, blocks = sys.argv[1], int(sys.argv[2])
    os.makedirs(out, exist_ok=True)
    onnx.save(build(blocks), os.path.join(out, "base.onnx"))
    onnx.save(build(blocks, prefix="renamed/"), os.path.join(out, "renamed.onnx"))
    onnx.save(build(blocks, insert_at=blocks // 2), os.path.join(out, "inserted.onnx"))


if __name__ == "__main__":
    main()
