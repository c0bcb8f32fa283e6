"""Inspector over PyTorch modules (python/model_inspector/inspector.py,
backends/torch.py) on the fixture models, built by make_models.py's own code.

Expected values come from elsewhere than the code under test: probe names
from the committed fixture exports read with python3-onnx, tensors from
calling the modules' submodules directly, statistics from numpy."""


import numpy as np
import onnx
import pytest

from conftest import FIXTURES, committed
from torch_probe_models import (RESNET_INPUT, TRANSFORMER_INPUT, Recurrent, resnet18,
                                seeded_input, transformer)

import torch  # noqa: E402 (after the package path is set)
import torch.nn as nn  # noqa: E402

from model_inspector import Inspector  # noqa: E402


def np_stats(t):
    a = t.detach().numpy().astype(np.float64)
    return {"count": a.size, "min": a.min(), "max": a.max(), "mean": a.mean(),
            "std": a.std(), "zero": int((a == 0).sum()), "shape": list(a.shape)}


def assert_stats(got, want, rel=1e-5):
    assert got["count"] == want["count"]
    assert list(got["shape"]) == want["shape"]
    assert got["zero"] == want["zero"]
    for k in ("min", "max", "mean", "std"):
        assert got[k] == pytest.approx(want[k], rel=rel, abs=1e-6), k


@pytest.fixture(scope="module")
def resnet_run(tmp_path_factory):
    model = resnet18()
    x = seeded_input(RESNET_INPUT)
    insp = Inspector(model, x, run_dir=tmp_path_factory.mktemp("resnet"))
    yield model, x, insp, insp.run(x)
    insp.close()


def test_probe_names_are_the_fixture_exports_node_names(resnet_run):
    model, x, insp, res = resnet_run
    fixture = onnx.load(str(committed(FIXTURES / "resnet18" / "model.onnx")))
    onnx_names = [n.name for n in fixture.graph.node]
    assert len(onnx_names) == 49
    names = [n.name for n in insp.nodes()]
    # Every node of the committed export is a probe, in the export's order.
    assert [n for n in names if n in set(onnx_names)] == onnx_names
    # The others are the 20 Conv2d modules' outputs before their BatchNorm
    # (folded into the export's Conv), named after the module scope.
    convs = [name for name, m in model.named_modules() if isinstance(m, nn.Conv2d)]
    assert len(convs) == 20
    extra = sorted(n for n in names if n not in set(onnx_names))
    want = sorted("/" + "/".join(_scope_segments(c)) for c in convs)
    assert extra == want
    assert set(res.probes) == {f"{n}:0" for n in names}


def _scope_segments(path):
    # One segment per module on the path, each the module's name from its
    # last non-numeric atom on, as torch.onnx names scopes:
    # "layer2.0.downsample.0" -> layer2 / layer2.0 / downsample / downsample.0.
    atoms = path.split(".")
    out = []
    for i in range(len(atoms)):
        prefix = atoms[:i + 1]
        start = max(j for j, a in enumerate(prefix) if not a.isnumeric())
        out.append(".".join(prefix[start:]))
    return out


def test_values_of_bn_folded_convs_and_relus(resnet_run):
    model, x, insp, res = resnet_run
    with torch.no_grad():
        conv = model.conv1(x)
        bn = model.bn1(conv)
        stem = torch.relu(bn)
        pooled = model.maxpool(stem)
        b = model.layer1[0]
        c1 = b.bn1(b.conv1(pooled))
        r1 = torch.relu(c1)
        c2 = b.bn2(b.conv2(r1))
        add = c2 + pooled
        out = torch.relu(add)
    assert_stats(res["/conv1:0"].stats, np_stats(conv))           # before BatchNorm
    assert_stats(res["/conv1/Conv:0"].stats, np_stats(bn))        # the folded Conv
    # ReLU(inplace=True) overwrites the BN output: its statistics were taken
    # before, negative values included.
    assert res["/layer1/layer1.0/conv1/Conv:0"].stats["min"] < 0
    assert_stats(res["/layer1/layer1.0/conv1/Conv:0"].stats, np_stats(c1))
    assert_stats(res["/layer1/layer1.0/relu/Relu:0"].stats, np_stats(r1))
    assert_stats(res["/layer1/layer1.0/Add:0"].stats, np_stats(add))   # x + identity
    # The block's ReLU module runs twice: relu and relu_1.
    assert_stats(res["/layer1/layer1.0/relu_1/Relu:0"].stats, np_stats(out))
    assert_stats(res["/maxpool/MaxPool:0"].stats, np_stats(pooled))
    fc = res["/fc/Gemm:0"]
    with torch.no_grad():
        want = model(x)
    assert_stats(fc.stats, np_stats(want))
    (name, value), = res.outputs.items()
    np.testing.assert_array_equal(value, want.numpy())


def test_execution_order_and_table(resnet_run):
    model, x, insp, res = resnet_run
    orders = [p.order for p in res.probes.values()]
    assert orders == sorted(orders)
    table = res.table()
    assert len(table) == len(res.probes)
    for col in ("probe", "node", "min", "max", "mean", "std", "nan", "pos_inf", "zero"):
        assert col in table.columns


def test_patterns_select_like_node_search(resnet_run):
    model, x, insp, _ = resnet_run
    chosen = insp.select(["layer1/*/conv*"])
    # The scope glob matches each block's conv1/conv2: the Conv nodes
    # (scope /layer1/layer1.k/convN) and the torch-only pre-BN outputs.
    want = set()
    for k in (0, 1):
        for c in ("conv1", "conv2"):
            want |= {f"/layer1/layer1.{k}/{c}", f"/layer1/layer1.{k}/{c}/Conv"}
    assert set(chosen) == want
    assert set(insp.select(["/conv1/Conv"])) == {"/conv1/Conv"}     # anchored
    assert set(insp.select(["conv1/Conv"])) >= {"/conv1/Conv", "/layer1/layer1.0/conv1/Conv"}
    assert set(insp.select(["layer1.0.conv1"])) == {"/layer1/layer1.0/conv1"}  # module path
    assert insp.select(["/fc/Gemm:0"]) == {"/fc/Gemm": {("output", 0)}}
    with pytest.raises(KeyError, match="matches no node"):
        insp.select(["decoder3/add:0"])


def test_store_keeps_the_last_runs_and_tensors(tmp_path):
    model = resnet18()
    x = seeded_input(RESNET_INPUT)
    with Inspector(model, x, run_dir=tmp_path, keep_runs=2) as insp:
        ids = [insp.run(seeded_input(RESNET_INPUT, seed=s), probes=["/fc/Gemm"],
                        label=f"seed {s}").run_id for s in (1, 2, 3)]
        res = insp.run(x, probes=["layer4/layer4.1/relu_1/Relu"], keep="tensor")
        runs = insp.store.runs()
        assert [r["id"] for r in runs][-2:] == [ids[2], res.run_id]
        assert len(runs) == 2
        with torch.no_grad():
            feats = model.layer4(model.layer3(model.layer2(model.layer1(
                model.maxpool(model.relu(model.bn1(model.conv1(x))))))))
        got = res["/layer4/layer4.1/relu_1/Relu:0"]
        np.testing.assert_allclose(got.tensor, feats.numpy(), rtol=1e-6)
        np.testing.assert_allclose(insp.store.tensor("/layer4/layer4.1/relu_1/Relu:0"),
                                   feats.numpy(), rtol=1e-6)
        assert insp.store.stats("/layer4/layer4.1/relu_1/Relu:0")["max"] == pytest.approx(
            float(feats.max()), rel=1e-6)
    assert (tmp_path / "probes" / "probes.db").exists()


def test_transformer_functional_ops(tmp_path):
    model = transformer()
    x = seeded_input(TRANSFORMER_INPUT)
    fixture = onnx.load(str(committed(FIXTURES / "transformer" / "model.onnx")))
    onnx_names = {n.name: n.op_type for n in fixture.graph.node}
    with Inspector(model, x, run_dir=tmp_path) as insp:
        res = insp.run(x)
        names = [n.name for n in insp.nodes()]
        mapped = [n for n in names if n in onnx_names]
        torch_only = [n for n in names if n not in onnx_names]
        # The export merges two of the five transposes per attention block,
        # so the transposes keep PyTorch-only names, never a wrong ONNX one.
        assert sorted(torch_only) == sorted(
            f"/layers.{i}/self_attn/transpose" + (f"_{k}" if k else "")
            for i in (0, 1) for k in range(5))
        assert "/layers.0/self_attn/Softmax" in mapped
        assert "/layers.0/self_attn/MatMul_1" in mapped
        assert "/layers.1/norm2/Add_1" in mapped        # LayerNorm's last node
        layer = model.layers[0]
        with torch.no_grad():
            attn_in = layer.self_attn
            b, s, d = x.shape
            q = attn_in.q_proj(x).reshape(b, s, 4, 16).transpose(1, 2)
            k = attn_in.k_proj(x).reshape(b, s, 4, 16).transpose(1, 2)
            scores = torch.matmul(q, k.transpose(-2, -1)) / 4.0
            soft = torch.softmax(scores, dim=-1)
            n1 = layer.norm1(x + attn_in(x))
        assert_stats(res["/layers.0/self_attn/Softmax:0"].stats, np_stats(soft))
        assert_stats(res["/layers.0/self_attn/Div:0"].stats, np_stats(scores))
        assert_stats(res["/layers.0/norm1/Add_1:0"].stats, np_stats(n1))


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
@pytest.mark.parametrize("batch_first", [True, False])
def test_recurrent_per_step_values(tmp_path, cls, batch_first):
    model = Recurrent(cls, batch_first).eval()
    shape = (2, 5, 4) if batch_first else (5, 2, 4)
    x = seeded_input(shape)
    with Inspector(model, x, run_dir=tmp_path) as insp:
        node = f"/rnn/{cls.__name__.upper()}"
        rec = [n for n in insp.nodes() if n.recurrent]
        assert [n.name for n in rec] == [node]
        res = insp.run(x)
        with torch.no_grad():
            y, h = model.rnn(x)
        out = res[f"{node}:0"]
        assert_stats(out.stats, np_stats(y))
        assert len(out.steps) == 5
        for t, step in enumerate(out.steps):
            assert_stats(step, np_stats(y[:, t] if batch_first else y[t]))
        hn = h[0] if cls is nn.LSTM else h
        assert_stats(res[f"{node}:1"].stats, np_stats(hn))
        if cls is nn.LSTM:
            assert_stats(res[f"{node}:2"].stats, np_stats(h[1]))
        steps = [p for p in insp.store.probes(res.run_id)
                 if p["probe"] == f"{node}:0" and p.get("step") is not None]
        assert sorted(p["step"] for p in steps) == list(range(5))


def test_gradients(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = seeded_input((5, 3))
    with Inspector(model, x, run_dir=tmp_path) as insp:
        res = insp.run(x, probes=["*"], gradients=True)
        # d(sum of outputs)/d(output of the last Linear) is all ones.
        grad = res["/2/Gemm:grad0"].stats
        assert grad["count"] == 10 and grad["min"] == 1.0 and grad["max"] == 1.0
        # Through the last Linear: each row is the column sums of its weight.
        want = model[2].weight.detach().sum(dim=0).repeat(5, 1)
        assert_stats(res["/1/Relu:grad0"].stats, np_stats(want))
    assert all(p.grad is not None for p in model.parameters())


def test_module_in_positional_and_keyword_forms(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
    x = seeded_input((2, 3))
    a = Inspector(model, x, run_dir=tmp_path / "a")
    b = Inspector(module=model, example_input=x, run_dir=tmp_path / "b")
    assert [n.name for n in a.nodes()] == [n.name for n in b.nodes()] == ["/0/Gemm",
                                                                          "/1/Tanh"]
    for insp in (a, b):
        insp.close()
    with pytest.raises(ValueError, match="example_input"):
        Inspector(model)


def test_python_glob_rules_equal_the_node_search_matcher():
    # The Inspector's fallback matcher (for a build without the binding)
    # against the C++ one node search uses, on the cases of
    # src/session/scope_glob_test.cc's kind.
    from model_inspector import _core
    from model_inspector.inspector import _glob_py
    patterns = ["layer1/*/conv*", "encoder/*/conv", "/conv1/Conv", "conv1/Conv", "**/Relu",
                "/**/relu_1/*", "layer?/layer?.0", "*", "**", "/layer1/**", "LAYER1/*",
                "a/**/b", "**/", "", "/", "layers.0/self_attn/*", "*/Add_1"]
    paths = ["/layer1/layer1.0/conv1", "/layer1/layer1.0/conv1/Conv", "/conv1/Conv",
             "/model/encoder/block0/conv", "/layer2/layer2.0/relu_1/Relu", "/a/b",
             "/a/x/y/b", "a/b/c", "/layers.0/self_attn/Softmax", "/layers.0/norm1/Add_1",
             "", "/"]
    for p in patterns:
        for q in paths:
            assert _glob_py(p, q) == _core.scope_glob_match(p, q), (p, q)


def _close(a, b, scale):
    return abs(a - b) <= 1e-4 * scale + 1e-6


@pytest.mark.parametrize("name,build,shape,common", [
    ("resnet18", resnet18, RESNET_INPUT, 49),
    ("transformer", transformer, TRANSFORMER_INPUT, 38),
])
def test_same_probes_as_the_committed_export_on_onnxruntime(tmp_path, name, build, shape,
                                                            common):
    # The PyTorch probes against the committed fixture file run on ONNX
    # Runtime (a separate runtime, the fixture's own export): a probe name
    # means the same tensor on both.
    model = build()
    x = seeded_input(shape)
    fixture = str(committed(FIXTURES / name / "model.onnx"))
    with Inspector(model, x, run_dir=tmp_path / "torch") as pt, \
            Inspector(model_path=fixture, run_dir=tmp_path / "ort") as ort:
        a = pt.run(x)
        b = ort.run(x.numpy())
    shared = [p for p in a.probes if p in b.probes]
    assert len(shared) == common
    for p in shared:
        sa, sb = a[p].stats, b[p].stats
        assert sa["shape"] == sb["shape"] and sa["count"] == sb["count"], p
        scale = max(sb["abs_max"], 1e-3)
        for k in ("min", "max", "mean", "std"):
            assert _close(sa[k], sb[k], scale), (p, k, sa[k], sb[k])


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
def test_recurrent_steps_equal_onnxruntimes(tmp_path, cls):
    model = Recurrent(cls).eval()
    x = seeded_input((2, 5, 4))
    node = f"/rnn/{cls.__name__.upper()}:0"
    with Inspector(model, x, run_dir=tmp_path / "t") as pt, \
            Inspector(model, x, backend="onnxruntime", run_dir=tmp_path / "o") as ort:
        a, b = pt.run(x)[node], ort.run(x)[node]
    assert len(a.steps) == len(b.steps) == 5
    for sa, sb in zip(a.steps, b.steps):
        assert sa["count"] == sb["count"]
        for k in ("min", "max", "mean", "std"):
            assert _close(sa[k], sb[k], 1.0), (k, sa[k], sb[k])


class Spectrum(nn.Module):
    """torch.fft.rfft has no ONNX symbolic at opset 13: the export fails."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return torch.log(torch.fft.rfft(self.proj(x)).abs())


def test_without_an_onnx_export_probes_are_named_after_scopes(tmp_path):
    model = Spectrum().eval()
    x = seeded_input((2, 8))
    with Inspector(model, x, run_dir=tmp_path) as insp:
        assert "fft_rfft" in insp.backend.export_error()
        assert insp.backend.model_path() is None
        # The module, then the functional ops, in lower case; the root's
        # output is the log's tensor, reported once.
        assert [(n.name, n.op_type) for n in insp.nodes()] == [
            ("/proj", "Linear"), ("/abs", "Abs"), ("/log", "Log")]
        res = insp.run(x, triggers=["inf"])
        with torch.no_grad():
            mag = torch.fft.rfft(model.proj(x)).abs()
        assert not res.triggered   # no zero magnitude: log stays finite
        assert_stats(res["/abs:0"].stats, np_stats(mag))
        assert_stats(res["/log:0"].stats, np_stats(torch.log(mag)))


def test_gradients_through_in_place_ops(tmp_path):
    # torchvision's BasicBlock adds in place (`out += identity`) and its ReLU
    # is in place: each probe's gradient is of the tensor as that node made it.
    model = resnet18()
    x = seeded_input(RESNET_INPUT)
    with Inspector(model, x, run_dir=tmp_path) as insp:
        res = insp.run(x, probes=["/layer1/layer1.0/**"], gradients=True, keep="tensor")
        g_relu = res["/layer1/layer1.0/relu_1/Relu:grad0"].tensor
        g_add = res["/layer1/layer1.0/Add:grad0"].tensor
        g_bn2 = res["/layer1/layer1.0/conv2/Conv:grad0"].tensor
        add_out = res["/layer1/layer1.0/Add:0"].tensor
    # Reference: the block's output is layer1.1's input; the gradient of the
    # sum of the logits with respect to it, by autograd on the rest of the net.
    with torch.no_grad():
        block_out = model.layer1[0](model.maxpool(model.relu(model.bn1(model.conv1(x)))))
    feats = block_out.clone().requires_grad_(True)
    rest = model.fc(torch.flatten(model.avgpool(model.layer4(model.layer3(model.layer2(
        model.layer1[1](feats))))), 1))
    (want,) = torch.autograd.grad(rest.sum(), feats)
    np.testing.assert_allclose(g_relu, want.numpy(), rtol=1e-4, atol=1e-6)
    # Through the ReLU: masked where the sum was not positive; through the
    # sum: the same gradient for the BatchNorm's output.
    np.testing.assert_allclose(g_add, g_relu * (add_out > 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(g_bn2, g_add)
    assert not np.array_equal(g_add, g_relu)


def test_fp16_storage_of_kept_tensors(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh()).eval()
    x = seeded_input((2, 3))
    with torch.no_grad():
        want = model(x).numpy()
    with Inspector(model, x, run_dir=tmp_path, keep="tensor", fp16=True) as insp:
        res = insp.run(x, probes=["/1/Tanh"])
        stored = insp.store.tensor("/1/Tanh:0")
        assert stored.dtype == np.float16
        np.testing.assert_array_equal(stored, want.astype(np.float16))
        # The statistics are of the float32 tensor the model made.
        assert res["/1/Tanh:0"].stats["dtype"] == "float32"
        assert res["/1/Tanh:0"].stats["max"] == pytest.approx(float(want.max()), rel=1e-6)


class FoldedAndUntracked(nn.Module):
    """`p + 1.0` is on a parameter only: the export folds it (no node).
    F.linear on a 3-d input is not a tracked op but exports as MatMul + Add.
    So PyTorch sees one Add call where the export has another Add: counting
    alone would give `p + 1.0` the linear's `/Add`."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.p = nn.Parameter(torch.randn(2, 3, 4))
        self.w = nn.Parameter(torch.randn(4, 4))
        self.b = nn.Parameter(torch.randn(4))

    def forward(self, x):
        q = self.p + 1.0
        y = torch.nn.functional.linear(x, self.w, self.b)
        return y * q + x


def test_folded_ops_never_take_another_nodes_name(tmp_path):
    model = FoldedAndUntracked()
    x = seeded_input((2, 3, 4))
    with Inspector(model, x, run_dir=tmp_path) as insp:
        export = onnx.load(insp.backend.model_path())
        assert [(n.name, n.op_type) for n in export.graph.node] == [
            ("/MatMul", "MatMul"), ("/Add", "Add"), ("/Mul", "Mul"), ("/Add_1", "Add")]
        # In execution order; `p + 1.0` PyTorch-only; the sum the root module
        # returns is the graph output's node, reported once.
        assert [n.name for n in insp.nodes()] == ["/add", "/Mul", "/Add_1"]
        res = insp.run(x)
    with torch.no_grad():
        q = model.p + 1.0
        prod = torch.nn.functional.linear(x, model.w, model.b) * q
    assert_stats(res["/add:0"].stats, np_stats(q))
    assert_stats(res["/Mul:0"].stats, np_stats(prod))
    assert_stats(res["/Add_1:0"].stats, np_stats(prod + x))
    assert "/Add:0" not in res


def test_model_path_must_be_onnx(tmp_path):
    with pytest.raises(ValueError, match=r"expected an \.onnx file.*Inspector\(module"):
        Inspector(model_path=str(tmp_path / "model.pt"), run_dir=tmp_path)
    with pytest.raises(ValueError, match="backend 'torch' needs a torch module"):
        Inspector(model_path=str(FIXTURES / "resnet18" / "model.onnx"), backend="torch",
                  run_dir=tmp_path)


def test_runs_are_stored_at_the_backends_level(tmp_path):
    from model_inspector.backends.onnxruntime import OnnxRuntimeBackend
    fixture = committed(FIXTURES / "resnet18" / "model.onnx")
    x = seeded_input(RESNET_INPUT).numpy()
    compiled = OnnxRuntimeBackend(str(fixture), level="compiled")
    with Inspector(backend=compiled, run_dir=tmp_path / "c") as insp:
        insp.run(x, probes=["*"])
        assert insp.store.runs()[-1]["level"] == "compiled"
    with Inspector(model_path=str(fixture), run_dir=tmp_path / "f") as insp:
        insp.run(x, probes=["/fc/Gemm"])
        assert insp.store.runs()[-1]["level"] == "framework"
