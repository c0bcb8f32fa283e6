"""Triggers (python/model_inspector/triggers.py) through the Inspector:
injected faults are caught at the node that produced them, on PyTorch and
on ONNX Runtime (the module's export run by backends/onnxruntime.py).

Expected nodes and counts are worked out in each test from the modules
themselves (which element is negative before a sqrt, which layer's output
first leaves fp16's range), not from the code under test."""

import json
import math

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from conftest import run as run_cli
from torch_probe_models import (RESNET_INPUT, LogLayer, SqrtInTheMiddle, onnx_to_fp16,
                                resnet18, seeded_input)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from model_inspector import Inspector, triggers  # noqa: E402

FP16_MAX = 65504.0
BACKENDS = ["torch", "onnxruntime"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_nan_stops_at_the_producing_functional_op(tmp_path, backend):
    model = SqrtInTheMiddle().eval()
    x = seeded_input((4, 8))
    with torch.no_grad():
        before = model.l1(x)
    negatives = int((before < 0).sum())
    assert 0 < negatives < before.numel()     # the fault: some, not all, NaN
    with Inspector(model, x, backend=backend, run_dir=tmp_path) as insp:
        res = insp.run(x, probes=["*"], triggers=["nan"])
        assert res.triggered and res.status == "stopped"
        hit = res.first_hit
        assert (hit["node"], hit["role"], hit["trigger"]) == ("/Sqrt", "producer", "nan")
        assert hit["detail"].startswith(f"{negatives} NaN of {before.numel()}")
        assert res.stopped_at == "/Sqrt"
        # The run stopped there: the last Linear was not reported.
        assert "/l2/Gemm:0" not in res.probes
        assert res["/Sqrt:0"].stats["nan"] == negatives
        # Paused: the node's output kept whole, in the result and the store.
        out = res["/Sqrt:0"].tensor
        np.testing.assert_array_equal(np.isnan(out), (before < 0).numpy())
        np.testing.assert_array_equal(np.isnan(insp.store.tensor("/Sqrt:0")),
                                      (before < 0).numpy())
        run = insp.store.runs()[-1]
        assert run["status"] == "stopped" and run["stopped_at"] == "/Sqrt"
        (row,) = insp.store.trigger_hits(res.run_id)
        assert (row["trigger"], row["node"], row["role"]) == ("nan", "/Sqrt", "producer")
        # The node's input (the backends report it when triggers are set):
        # kept whole too, clean.
        for kept in (res["/Sqrt:in0"].tensor, insp.store.tensor("/Sqrt:in0")):
            np.testing.assert_allclose(kept, before.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nan_seen_downstream_only_is_a_propagator(tmp_path, backend):
    model = SqrtInTheMiddle().eval()
    x = seeded_input((4, 8))
    with Inspector(model, x, backend=backend, run_dir=tmp_path) as insp:
        # Only the last Linear is probed: its input already holds the NaN.
        res = insp.run(x, probes=["/l2/Gemm"], triggers=["nan"])
        assert (res.first_hit["node"], res.first_hit["role"]) == ("/l2/Gemm", "propagator")


def test_nan_produced_inside_a_module(tmp_path):
    model = LogLayer().eval()
    x = seeded_input((3, 6))
    with torch.no_grad():
        negatives = int((model.fc1(x) < 0).sum())
    assert negatives > 0
    with Inspector(model, x, run_dir=tmp_path) as insp:
        res = insp.run(x, triggers=["inf", "nan"])
        hit = res.first_hit
        # log(x < 0) is NaN (and log(0) would be -Inf): the log module's node.
        assert (hit["node"], hit["role"], hit["trigger"]) == ("/log/Log", "producer", "nan")
        assert res["/log/Log:0"].stats["nan"] == negatives
        assert "/act/Relu:0" not in res.probes


def _overflowing_resnet():
    """ResNet-18 with layer2.0.conv1's weights scaled by 1e5: the first
    tensor outside fp16's range is that conv's output."""
    model = resnet18()
    with torch.no_grad():
        model.layer2[0].conv1.weight.mul_(1e5)
    return model


@pytest.mark.parametrize("backend", BACKENDS)
def test_weights_scaled_to_overflow_fp16(tmp_path, backend):
    model = _overflowing_resnet()
    x = seeded_input(RESNET_INPUT)
    with torch.no_grad():
        stem = model.maxpool(model.relu(model.bn1(model.conv1(x))))
        into = model.layer1(stem)                      # the conv's input
        conv = model.layer2[0].conv1(into)
    assert float(into.abs().max()) < FP16_MAX < float(conv.abs().max())
    with Inspector(model, x, backend=backend, run_dir=tmp_path) as insp:
        res = insp.run(x, triggers=["fp16_overflow"])
        hit = res.first_hit
        # PyTorch sees the conv's own output (before its BatchNorm); ONNX
        # Runtime the export's Conv with that BatchNorm folded in.
        node = "/layer2/layer2.0/conv1" if backend == "torch" else "/layer2/layer2.0/conv1/Conv"
        assert (hit["node"], hit["role"], hit["trigger"]) == (node, "producer", "fp16_overflow")
        assert res[node].stats["abs_max"] > FP16_MAX
        # Every tensor before it fits fp16.
        earlier = [p for p in res.probes.values() if p.node != node and p.kind == "output"]
        assert earlier and all(p.stats["abs_max"] <= FP16_MAX for p in earlier)
        # The same range by its other name.
        again = insp.run(x, triggers=[f"range:{-FP16_MAX}:{FP16_MAX}"])
        assert again.first_hit["node"] == node


def test_weights_scaled_to_overflow_an_fp16_model_on_onnxruntime(tmp_path):
    # The same fault in a model that really runs in half precision: the
    # export converted to float16 (weights included; the scaled conv's
    # largest weight still fits fp16), on ONNX Runtime. The conv's output
    # overflows to +-Inf there, and "inf" fires at it, as producer.
    model = _overflowing_resnet()
    x = seeded_input(RESNET_INPUT)
    fp32, fp16 = tmp_path / "model.onnx", tmp_path / "model_fp16.onnx"
    with torch.no_grad():
        torch.onnx.export(model, (x,), str(fp32), opset_version=13)
    onnx_to_fp16(fp32, fp16)
    conv = "/layer2/layer2.0/conv1/Conv"
    half = onnx.load(str(fp16))
    weight = next(n.input[1] for n in half.graph.node if n.name == conv)
    w = numpy_helper.to_array(next(t for t in half.graph.initializer if t.name == weight))
    assert w.dtype == np.float16 and np.isfinite(w).all()
    with Inspector(model_path=str(fp16), run_dir=tmp_path / "run") as insp:
        res = insp.run(x.numpy().astype(np.float16), triggers=["inf", "nan"])
        hit = res.first_hit
        assert (hit["node"], hit["role"], hit["trigger"]) == (conv, "producer", "inf")
        assert res[conv].stats["dtype"] == "float16"
        assert res[conv].stats["pos_inf"] + res[conv].stats["neg_inf"] > 0
        # Its input, layer1's output, was finite: kept whole on the hit.
        assert np.isfinite(res[f"{conv}:in0"].tensor).all()


def test_zero_fraction_range_and_predicate(tmp_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3), nn.Tanh()).eval()
    x = seeded_input((8, 4))
    with torch.no_grad():
        h = model[0](x)
        zeros = float((torch.relu(h) == 0).float().mean())
        hmax = float(h.max())
    assert 0.2 < zeros < 0.8
    with Inspector(model, x, run_dir=tmp_path) as insp:
        res = insp.run(x, triggers=[f"zero_fraction:{zeros - 0.01}"])
        assert res.first_hit["node"] == "/1/Relu" and res.first_hit["role"] == "producer"
        assert not insp.run(x, triggers=[f"zero_fraction:{zeros + 0.01}"]).triggered
        # range: the first Linear leaves [-hmax/2, hmax/2]; Tanh never leaves [-1, 1].
        res = insp.run(x, triggers=[f"range:{-hmax / 2}:{hmax / 2}"])
        assert res.first_hit["node"] == "/0/Gemm"
        assert not insp.run(x, probes=["/3/Tanh"], triggers=["range:-1:1"]).triggered

        def relu_has_positive(stats, tensor, node):
            return node == "/1/Relu" and bool((tensor > 0).any())

        res = insp.run(x, triggers=[relu_has_positive])
        assert (res.first_hit["trigger"], res.first_hit["node"]) == ("relu_has_positive",
                                                                      "/1/Relu")
        # The predicate also holds on the ReLU's input: the value came in.
        assert res.first_hit["role"] == "propagator"


def test_jump_against_the_running_mean(tmp_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid()).eval()
    runs = [seeded_input((16, 4), seed=s) for s in (1, 2, 3)]
    spike = seeded_input((16, 4), seed=4) * 40
    k = 3.0
    with torch.no_grad():
        means = [float(model[0](r).double().mean()) for r in runs]
        spike_mean = float(model[0](spike).double().mean())
    running = sum(means) / 3
    std = math.sqrt(sum((m - running) ** 2 for m in means) / 3)
    assert abs(spike_mean - running) > k * std     # by hand: the spike jumps
    with Inspector(model, runs[0], run_dir=tmp_path) as insp:
        # No history yet: the first two runs never fire.
        for r in runs:
            assert not insp.run(r, triggers=[f"jump:{k}"]).triggered
        res = insp.run(spike, triggers=[f"jump:{k}"])
        assert (res.first_hit["node"], res.first_hit["role"]) == ("/0/Gemm", "producer")
        assert "over 3 runs" in res.first_hit["detail"]


def test_parse_errors():
    assert triggers.parse("range:-2:3.5").name == "range:-2:3.5"
    assert triggers.parse("NaN").name == "nan"
    for bad in ("nan:1", "range:1", "range:3:1", "zero_fraction:2", "jump:0", "median", 7):
        with pytest.raises((ValueError, TypeError)):
            triggers.parse(bad)


@pytest.mark.parametrize("triggers_set", [(), ("nan",), ("zero_fraction:0.01",)])
def test_input_probes_are_stored_once(tmp_path, triggers_set):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU()).eval()
    x = seeded_input((3, 4))
    with torch.no_grad():
        pre = model[0](x)
    with Inspector(model, x, run_dir=tmp_path) as insp:
        res = insp.run(x, probes=["/1/Relu:in0", "/1/Relu"], triggers=triggers_set)
        rows = [(p["probe"], p["kind"]) for p in insp.store.probes(res.run_id)]
        assert sorted(rows) == [("/1/Relu:0", "output"), ("/1/Relu:in0", "input")]
        assert res["/1/Relu:in0"].stats["min"] == pytest.approx(float(pre.min()))
        # A hit keeps the input whole; otherwise statistics only.
        assert (res["/1/Relu:in0"].tensor is not None) == res.triggered
        assert res.triggered == (triggers_set == ("zero_fraction:0.01",))


def test_a_paused_run_as_the_cli_reads_it(tmp_path):
    # The store the Inspector wrote, read back by `model-inspector probes`.
    model = SqrtInTheMiddle().eval()
    x = seeded_input((4, 8))
    with torch.no_grad():
        negatives = int((model.l1(x) < 0).sum())
    with Inspector(model, x, run_dir=tmp_path, plugins=["sparsity"]) as insp:
        insp.run(x, triggers=["nan"], label="fault")
    out = json.loads(run_cli("probes", tmp_path, "--format", "json").stdout)
    (run,) = out["runs"]
    assert (run["status"], run["stopped_at"], run["label"]) == ("stopped", "/Sqrt", "fault")
    (hit,) = out["trigger_hits"]
    assert (hit["node"], hit["role"], hit["trigger"]) == ("/Sqrt", "producer", "nan")
    probes = {p["probe"]: p for p in out["probes"]}
    assert set(probes) == {"/l1/Gemm:0", "/Sqrt:in0", "/Sqrt:0"}
    assert probes["/Sqrt:0"]["stats"]["nan"] == negatives
    assert probes["/Sqrt:0"]["array"] and probes["/Sqrt:in0"]["array"]   # kept whole
    assert probes["/l1/Gemm:0"]["array"] is None                          # statistics only
    assert {m["probe"] for m in out["plugin_metrics"]} >= {"/l1/Gemm:0", "/Sqrt:0"}
