"""The ONNX Runtime capture backend (model_inspector.backends.onnxruntime) on
the real ONNX Runtime of the fixtures (onnxruntime-node 1.30, npm).

Expected values come from outside the backend: numpy re-computations of
node outputs from the model's own initializers read with python3-onnx
(the ResNet-18's first Conv, its Relu and MaxPool; the transformer's first
MatMul + Add), the graph's structure read with python3-onnx (execution
order, producers), and a plain ONNX Runtime session of the unmodified model
for the final outputs (the rewritten graph must not change them).
"""

import os
import pathlib
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper, TensorProto

from conftest import FIXTURES, PACKAGE


from model_inspector.backends import onnxruntime as mi_ort  # noqa: E402
from model_inspector.backends.base import ProbeRequest  # noqa: E402

RESNET = FIXTURES / "resnet18" / "model.onnx"
TRANSFORMER = FIXTURES / "transformer" / "model.onnx"


def fixture_input(shape):
    """The fixtures' deterministic input (test/fixtures/ort_run.mjs)."""
    n = int(np.prod(shape))
    return ((np.arange(n) % 7) / 7).astype(np.float32).reshape(shape)


def collect(backend, x, nodes=None, inputs_of=(), stop_after=None):
    events = []

    def on_tensor(ev):
        events.append(ev)
        return stop_after is None or len(events) < stop_after

    names = [n.name for n in backend.nodes()] if nodes is None else nodes
    out = backend.run(x, ProbeRequest(nodes=frozenset(names), inputs_of=frozenset(inputs_of)),
                      on_tensor)
    return events, out


@pytest.fixture(scope="module")
def resnet():
    b = mi_ort.OnnxRuntimeBackend(RESNET)
    yield b
    b.close()


def initializer(model, name):
    return numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == name))


def test_runtime_is_the_real_onnxruntime_node(resnet):
    # No Python onnxruntime here: the Node runtime, from the fixtures' npm tree.
    assert mi_ort.python_onnxruntime() is None
    assert resnet.name == "onnxruntime-node"
    rt = mi_ort.NodeRuntime.shared()
    assert rt.versions.get("common") == "1.30.0"
    assert pathlib.Path(rt.where).resolve() == (
        FIXTURES / "node_modules" / "onnxruntime-node").resolve()


def test_nodes_in_execution_order(resnet):
    model = onnx.load(RESNET)
    names = [n.name for n in resnet.nodes()]
    # The exporter writes nodes in topological order; the backend keeps it.
    assert names == [n.name for n in model.graph.node]
    produced_at = {}
    for pos, n in enumerate(resnet.nodes()):
        for t in n.inputs:
            assert produced_at.get(t, -1) < pos
        for t in n.outputs:
            produced_at[t] = pos


def test_first_conv_relu_maxpool_equal_numpy(resnet):
    model = onnx.load(RESNET)
    x = fixture_input((1, 3, 224, 224))
    events, out = collect(resnet, x, nodes=["/conv1/Conv", "/relu/Relu", "/maxpool/MaxPool"])
    by_probe = {e.probe: e for e in events}
    assert [e.probe for e in events] == ["/conv1/Conv:0", "/relu/Relu:0", "/maxpool/MaxPool:0"]
    assert [e.order for e in events] == [0, 1, 2]

    # Conv 7x7, stride 2, pads 3 (attributes of /conv1/Conv), weights and
    # bias from the file, in float64.
    w = initializer(model, "onnx::Conv_193").astype(np.float64)
    b = initializer(model, "onnx::Conv_194").astype(np.float64)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (3, 3), (3, 3)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (7, 7), axis=(2, 3))[:, :, ::2, ::2]
    conv = np.einsum("bchwkl,ockl->bohw", win, w) + b[None, :, None, None]
    got = by_probe["/conv1/Conv:0"].tensor
    assert got.shape == (1, 8, 112, 112) and got.dtype == np.float32
    np.testing.assert_allclose(got, conv, rtol=1e-4, atol=1e-4)

    relu = np.maximum(conv, 0)
    np.testing.assert_allclose(by_probe["/relu/Relu:0"].tensor, relu, rtol=1e-4, atol=1e-4)

    # MaxPool 3x3, stride 2, pads 1 (padding never wins: relu >= 0 > -inf).
    rp = np.pad(relu, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    pool = np.lib.stride_tricks.sliding_window_view(rp, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    np.testing.assert_allclose(by_probe["/maxpool/MaxPool:0"].tensor, pool.max(axis=(4, 5)),
                               rtol=1e-4, atol=1e-4)

    # The rewritten graph leaves the model's own output unchanged.
    plain = mi_ort.InferenceSession(str(RESNET), _capture=False)
    so = mi_ort.SessionOptions()
    so.graph_optimization_level = "disabled"
    plain_disabled = mi_ort.InferenceSession(str(RESNET), so, _capture=False)
    (ref,) = plain_disabled.run(["logits"], {"input": x})
    np.testing.assert_array_equal(out["logits"], ref)
    (ref_all,) = plain.run(None, {"input": x})
    np.testing.assert_allclose(out["logits"], ref_all, rtol=1e-4, atol=1e-5)
    plain.close()
    plain_disabled.close()


def test_every_node_probed_once_in_order(resnet):
    x = fixture_input((1, 3, 224, 224))
    events, out = collect(resnet, x)
    model = onnx.load(RESNET)
    expected = [f"{n.name}:{k}" for n in model.graph.node for k in range(len(n.output))]
    assert [e.probe for e in events] == expected
    assert all(e.kind == "output" and e.step is None for e in events)
    assert [e.order for e in events] == sorted(e.order for e in events)
    # The last node's output is the model's output.
    assert events[-1].node == "/fc/Gemm"
    np.testing.assert_array_equal(events[-1].tensor, out["logits"])


def test_inputs_of_a_node(resnet):
    model = onnx.load(RESNET)
    x = fixture_input((1, 3, 224, 224))
    events, _ = collect(resnet, x, nodes=["/relu/Relu"],
                        inputs_of=["/conv1/Conv", "/relu/Relu"])
    by_probe = {e.probe: e for e in events}
    assert [e.probe for e in events] == [
        "/conv1/Conv:in0", "/conv1/Conv:in1", "/conv1/Conv:in2", "/relu/Relu:in0", "/relu/Relu:0"]
    np.testing.assert_array_equal(by_probe["/conv1/Conv:in0"].tensor, x)  # the graph input
    np.testing.assert_array_equal(by_probe["/conv1/Conv:in1"].tensor,
                                  initializer(model, "onnx::Conv_193"))
    relu_in = by_probe["/relu/Relu:in0"].tensor
    np.testing.assert_array_equal(by_probe["/relu/Relu:0"].tensor, np.maximum(relu_in, 0))
    assert by_probe["/relu/Relu:in0"].kind == "input" and by_probe["/relu/Relu:in0"].index == 0


def test_pause_stops_reporting_after_the_hit(resnet):
    x = fixture_input((1, 3, 224, 224))
    events, out = collect(resnet, x, stop_after=3)
    assert [e.probe for e in events] == [
        "/conv1/Conv:0", "/relu/Relu:0", "/maxpool/MaxPool:0"]
    # The model output (from /fc/Gemm, the last node) was not reached.
    assert out == {}


def test_transformer_first_linear_equals_numpy():
    model = onnx.load(TRANSFORMER)
    x = fixture_input((1, 16, 64))
    b = mi_ort.OnnxRuntimeBackend(TRANSFORMER)
    try:
        events, _ = collect(b, x, nodes=["/layers.0/self_attn/q_proj/MatMul",
                                         "/layers.0/self_attn/q_proj/Add"])
    finally:
        b.close()
    w = initializer(model, "onnx::MatMul_235").astype(np.float64)
    bias = initializer(model, "layers.0.self_attn.q_proj.bias").astype(np.float64)
    mm = x.astype(np.float64) @ w
    np.testing.assert_allclose(events[0].tensor, mm, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(events[1].tensor, mm + bias, rtol=1e-4, atol=1e-5)


def test_compiled_level_probes_the_optimized_graph():
    x = fixture_input((1, 3, 224, 224))
    framework = mi_ort.OnnxRuntimeBackend(RESNET)
    compiled = mi_ort.OnnxRuntimeBackend(RESNET, level="compiled")
    try:
        optimized = onnx.load(compiled.compiled_model_path())
        assert [n.name for n in compiled.nodes()] != [n.name for n in framework.nodes()]
        assert sorted(n.name or f"{n.op_type}_{i}" for i, n in enumerate(optimized.graph.node)) \
            == sorted(n.name for n in compiled.nodes())
        # NCHWc convolutions of level "all" are what runs.
        assert any(n.domain == "com.microsoft.nchwc" for n in optimized.graph.node)
        events, out_c = collect(compiled, x)
        assert len({e.node for e in events}) == len(optimized.graph.node)
        _, out_f = collect(framework, x, nodes=[])
        np.testing.assert_allclose(out_c["logits"], out_f["logits"], rtol=1e-3, atol=1e-4)
    finally:
        framework.close()
        compiled.close()


def lstm_model(seq=5, batch=1, inp=3, hidden=4):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((1, 4 * hidden, inp)).astype(np.float32)
    r = rng.standard_normal((1, 4 * hidden, hidden)).astype(np.float32)
    node = helper.make_node("LSTM", ["x", "W", "R"], ["Y", "Y_h"], name="lstm", hidden_size=hidden)
    relu = helper.make_node("Relu", ["Y"], ["out"], name="relu")
    graph = helper.make_graph(
        [node, relu], "lstm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, batch, inp])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_recurrent_op_gives_one_event_per_time_step(tmp_path):
    path = tmp_path / "lstm.onnx"
    onnx.save(lstm_model(), path)
    b = mi_ort.OnnxRuntimeBackend(path)
    try:
        assert [n.recurrent for n in b.nodes()] == [True, False]
        x = np.random.default_rng(1).standard_normal((5, 1, 3)).astype(np.float32)
        events, out = collect(b, x, nodes=["lstm"])
    finally:
        b.close()
    y = [e for e in events if e.probe == "lstm:0"]
    # Y [seq=5, num_directions=1, batch=1, hidden=4]: the whole, then steps 0..4.
    assert [e.step for e in y] == [None, 0, 1, 2, 3, 4]
    whole = y[0].tensor
    assert whole.shape == (5, 1, 1, 4)
    for e in y[1:]:
        np.testing.assert_array_equal(e.tensor, whole[e.step])
    # Y_h is the last step's hidden state (ONNX LSTM definition).
    (yh,) = [e.tensor for e in events if e.probe == "lstm:1"]
    np.testing.assert_array_equal(yh, whole[-1])
    np.testing.assert_array_equal(out["out"], np.maximum(whole, 0))


def test_errors_name_what_is_wrong(resnet):
    x = fixture_input((1, 3, 224, 224))
    with pytest.raises(KeyError, match="no node named '/nope'"):
        collect(resnet, x, nodes=["/nope"])
    with pytest.raises(ValueError, match="takes 1 inputs"):
        resnet.run((x, x), ProbeRequest(nodes=frozenset()), lambda e: True)
    with pytest.raises(FileNotFoundError):
        mi_ort.OnnxRuntimeBackend(FIXTURES / "resnet18" / "missing.onnx")


def test_runtime_found_through_the_environment_variable(tmp_path):
    pkg = (FIXTURES / "node_modules" / "onnxruntime-node").resolve()
    script = pathlib.Path(mi_ort.__file__).with_name("ort_node_runner.mjs")
    env = dict(os.environ, MI_ONNXRUNTIME_NODE=str(pkg), PYTHONPATH=PACKAGE)
    probe = ("import json, model_inspector.backends.onnxruntime as o; "
             "r = o.NodeRuntime(); print(json.dumps(r.where)); r.close()")
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, check=True)
    assert pathlib.Path(out.stdout.strip().strip('"')) == pkg
    # A folder without the package is passed over, and the message of a
    # runner that finds nothing lists every place it looked.
    bad = tmp_path / "empty"
    bad.mkdir()
    proc = subprocess.run(
        ["node", str(script), str(bad)], input=b"\x10\x00\x00\x00" + b'{"op": "hello"} ',
        cwd=tmp_path, capture_output=True, timeout=120)
    hlen = int.from_bytes(proc.stdout[:4], "little")
    reply = proc.stdout[4:4 + hlen].decode()
    assert '"ok":false' in reply and "no onnxruntime-node package there" in reply


def loop_model():
    """Loop, 4 iterations: v += i (v0 = 0) and each iteration's v as a scan
    output. By hand: v after each iteration 0, 1, 3, 6; final v = 6."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["v", "i_f"], ["v_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Identity", ["v_out"], ["scan"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1]),
         helper.make_tensor_value_info("scan", TensorProto.FLOAT, [1])])
    loop = helper.make_node("Loop", ["M", "c", "v0"], ["v_final", "vs"], name="loop", body=body)
    graph = helper.make_graph(
        [loop], "loop",
        [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("v_final", TensorProto.FLOAT, [1]),
         helper.make_tensor_value_info("vs", TensorProto.FLOAT, [None, 1])],
        [numpy_helper.from_array(np.array(4, np.int64), "M"),
         numpy_helper.from_array(np.array(True), "c")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_loop_scan_output_gives_one_event_per_iteration(tmp_path):
    path = tmp_path / "loop.onnx"
    onnx.save(loop_model(), path)
    b = mi_ort.OnnxRuntimeBackend(path)
    try:
        events, out = collect(b, np.zeros(1, np.float32), nodes=["loop"])
    finally:
        b.close()
    # Output 0 is the loop-carried value: no steps. Output 1 is the scan output.
    assert [(e.probe, e.step) for e in events] == [
        ("loop:0", None), ("loop:1", None), ("loop:1", 0), ("loop:1", 1), ("loop:1", 2),
        ("loop:1", 3)]
    assert events[0].tensor.tolist() == [6.0]
    assert [e.tensor.tolist() for e in events[2:]] == [[0.0], [1.0], [3.0], [6.0]]
    assert out["v_final"].tolist() == [6.0]
