"""Models whose attributes crash libonnx's shape inference (Debian libonnx
1.12: a Conv with strides [0,0] and a MaxPool with strides [0,0] die with
SIGFPE, a model-local function that calls itself with SIGSEGV) open through
the real CLI and server: a warning names the node, the attribute and its
value, the shapes the file declares are kept, and inference still types the
rest of the graph.

The models are built here with python3-onnx. Expected shapes come from the
ONNX operator definitions: Relu's output has its input's shape, so 'y'
(Relu of 'c', declared [1,4,6,6] in value_info) is [1,4,6,6] and 'z' (Relu
of the input x) is [1,3,8,8].
"""
import json

import onnx
import pytest
from onnx import TensorProto, helper

from conftest import FIXTURES, run
from test_server import Server

RUN_DIR = FIXTURES / "resnet18" / "ort_all"


def crafted(kind):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    inits, functions = [], []
    opsets = [helper.make_opsetid("", 13)]
    if kind == "conv_strides_0":
        inits.append(helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3], [0.0] * 108))
        bad = helper.make_node("Conv", ["x", "w"], ["c"], name="bad", strides=[0, 0])
    elif kind == "maxpool_kernel_0":
        bad = helper.make_node("MaxPool", ["x"], ["c"], name="bad", kernel_shape=[0, 0])
    else:  # a function whose body calls the function again
        opsets.append(helper.make_opsetid("local", 1))
        functions.append(helper.make_function(
            "local", "Again", ["a"], ["b"],
            [helper.make_node("Again", ["a"], ["b"], domain="local", name="again")],
            opsets))
        bad = helper.make_node("Again", ["x"], ["c"], domain="local", name="bad")
    nodes = [bad,
             helper.make_node("Relu", ["c"], ["y"], name="after"),
             helper.make_node("Relu", ["x"], ["z"], name="other")]
    graph = helper.make_graph(
        nodes, "crafted", [x],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        initializer=inits,
        value_info=[helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, 4, 6, 6])])
    model = helper.make_model(graph, opset_imports=opsets, functions=functions)
    model.ir_version = 8
    return model


EXPECTED_WARNING = {
    "conv_strides_0": "leaves out node 'bad' (Conv): attribute strides[0] is 0; "
                      "expected an integer >= 1",
    "maxpool_kernel_0": "leaves out node 'bad' (MaxPool): attribute kernel_shape[0] is 0; "
                        "expected an integer >= 1",
    "recursive_function": "leaves out node 'again' (Again): calls function 'local:Again', "
                          "which is already being called (recursion)",
}


@pytest.fixture(params=sorted(EXPECTED_WARNING))
def model_path(request, tmp_path):
    path = tmp_path / f"{request.param}.onnx"
    onnx.save(crafted(request.param), str(path))
    # The file declares what the test expects it to declare.
    declared = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
                for v in onnx.load(str(path)).graph.value_info}
    assert declared == {"c": [1, 4, 6, 6]}
    return request.param, path


def edge_shapes(graph_json):
    shapes = {}
    for node in graph_json["nodes"]:
        for edge in node["inputs"] + node["outputs"]:
            shapes[edge["name"]] = edge["shape"]
    return shapes


def test_opens_with_a_warning_and_the_declared_shapes(model_path, tmp_path):
    kind, path = model_path
    proc = run("export", "-v", path, "--out", tmp_path / "out")
    assert "shape_inference_failed" in proc.stderr
    assert EXPECTED_WARNING[kind] in proc.stderr, proc.stderr
    assert "the shapes that depend on it are as the file declares them" in proc.stderr
    shapes = edge_shapes(json.loads((tmp_path / "out" / "graph.json").read_text()))
    assert shapes["c"] == [1, 4, 6, 6]
    assert shapes["y"] == [1, 4, 6, 6]
    assert shapes["z"] == [1, 3, 8, 8]


def test_server_keeps_serving_its_other_runs(model_path):
    _, path = model_path
    s = Server(RUN_DIR, "--run", path)
    try:
        runs = s.get_json("/api/runs")["runs"]
        assert [r["name"] for r in runs] == ["ort_all", path.name]
        assert "error" not in runs[1]
        assert s.get_json("/api/runs/0/summary")["tasks"] > 0
        code, _, body = s.request("/api/runs/1/levels/framework/layout")
        assert code == 200 and body[:4] == b"MILY"
    finally:
        assert s.close() == 0
