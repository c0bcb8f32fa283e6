"""The same model probed through PyTorch (forward hooks, backends/torch.py)
and through ONNX Runtime (its ONNX export on onnxruntime-node,
backends/onnxruntime.py) gives the same statistics for the same probes.

The PyTorch modules are rebuilt with test/fixtures/make_models.py (seeded:
the weights are bit-identical to the committed exports, the fixture README
says so and the first test checks it), and the ONNX side is the committed
fixture file, so the two sides share nothing but the weights and the input.

Which probes must be common is read from the ONNX file and the module tree,
not from either backend: every ONNX node of the ResNet-18 (each is a module
or a functional op of its forward), and for the transformer the last ONNX
node in the scope of each leaf module (Linear, LayerNorm, GELU: the tensor
that leaves the module) plus each attention's Softmax and the output.

Tolerances: the two runtimes use different kernels (MLAS vs PyTorch's
CPU kernels), which reorder float32 sums; differences seen are below 3e-6
of the tensor's largest magnitude, the tests allow 1e-4 of it for the
value statistics (min, max, mean, std, l2, abs_max), and a count of exact
zeros may differ by at most 1e-4 of the elements (a value within rounding
of 0 before a ReLU can land on either side). Element counts, shapes,
dtypes and NaN/Inf counts must be equal.
"""

import contextlib
import sys

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from conftest import FIXTURES

if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

import torch  # noqa: E402

import make_models  # noqa: E402
from model_inspector import Inspector  # noqa: E402

VALUE_STATS = ("min", "max", "mean", "std", "l2", "abs_max")


@contextlib.contextmanager
def probe_both(build, shape, onnx_path, tmp_path):
    torch.set_num_threads(1)
    module = build()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    with Inspector(module, x, run_dir=tmp_path / "torch") as it, \
            Inspector(model_path=str(onnx_path), run_dir=tmp_path / "ort") as io:
        assert io.backend.name.startswith("onnxruntime")
        with torch.no_grad():
            rt = it.run(x, probes=["*"])
        ro = io.run(x.numpy(), probes=["*"])
        yield module, rt, ro


def assert_same_stats(probe, a, b):
    assert a["shape"] == b["shape"], probe
    assert a["dtype"] == b["dtype"] == "float32", probe
    for k in ("count", "nan", "pos_inf", "neg_inf"):
        assert a[k] == b[k], (probe, k, a[k], b[k])
    assert abs(a["zero"] - b["zero"]) <= 1e-4 * a["count"], (probe, a["zero"], b["zero"])
    scale = max(abs(b["abs_max"]), 1e-12)
    for k in VALUE_STATS:
        assert abs(a[k] - b[k]) <= 1e-4 * scale, (probe, k, a[k], b[k])


def test_weights_are_the_fixtures():
    module = make_models.build_resnet18_slim()
    model = onnx.load(FIXTURES / "resnet18" / "model.onnx")
    fc_w = next(numpy_helper.to_array(t) for t in model.graph.initializer
                if t.name == "fc.weight")
    np.testing.assert_array_equal(module.fc.weight.detach().numpy(), fc_w)


def test_resnet18_statistics_match(tmp_path):
    onnx_path = FIXTURES / "resnet18" / "model.onnx"
    with probe_both(make_models.build_resnet18_slim, (1, 3, 224, 224), onnx_path,
                    tmp_path) as (_, rt, ro):
        check_resnet18(rt, ro, onnx_path)


def check_resnet18(rt, ro, onnx_path):
    model = onnx.load(onnx_path)
    expected = {f"{n.name}:0" for n in model.graph.node}
    assert len(expected) == 49
    assert set(ro.probes) == expected
    missing = expected - set(rt.probes)
    assert not missing, f"not probed through PyTorch: {sorted(missing)}"
    for p in sorted(expected):
        assert_same_stats(p, rt[p].stats, ro[p].stats)
    # The model output through both.
    np.testing.assert_allclose(rt.outputs["logits"] if "logits" in rt.outputs
                               else next(iter(rt.outputs.values())),
                               ro.outputs["logits"], rtol=1e-4, atol=1e-5)


def leaf_module_outputs(module, model):
    """For each Linear / LayerNorm / GELU module: the last ONNX node (in
    file order) whose name lies in the module's scope (the export names
    nodes '/<module path with / for .>/<Op>'), i.e. the tensor that leaves
    the module."""
    names = [n.name for n in model.graph.node]
    out = {}
    for path, m in module.named_modules():
        if not isinstance(m, (torch.nn.Linear, torch.nn.LayerNorm, torch.nn.GELU)):
            continue
        scope = "/" + path.replace(".", "/") + "/"
        # ModuleList items keep their dot in the export: layers.0, not layers/0.
        scope = scope.replace("/layers/", "/layers.")
        inside = [n for n in names if n.startswith(scope)]
        assert inside, f"no ONNX node in scope {scope}"
        out[path] = f"{inside[-1]}:0"
    return out


def test_transformer_statistics_match(tmp_path):
    onnx_path = FIXTURES / "transformer" / "model.onnx"
    with probe_both(make_models.build_transformer, (1, 16, 64), onnx_path,
                    tmp_path) as (module, rt, ro):
        check_transformer(module, rt, ro, onnx_path)


def check_transformer(module, rt, ro, onnx_path):
    model = onnx.load(onnx_path)
    wanted = set(leaf_module_outputs(module, model).values())
    # 2 layers x (4 attention projections + linear1 + linear2 + 2 norms + GELU)
    assert len(wanted) == 18
    wanted |= {f"{n.name}:0" for n in model.graph.node if n.op_type == "Softmax"}
    assert len(wanted) == 20
    last = model.graph.node[-1].name + ":0"
    wanted.add(last)
    assert wanted <= set(ro.probes)
    missing = wanted - set(rt.probes)
    assert not missing, f"not probed through PyTorch: {sorted(missing)}"
    common = set(rt.probes) & set(ro.probes)
    for p in sorted(common):
        assert_same_stats(p, rt[p].stats, ro[p].stats)
    assert len(common) >= len(wanted)


@pytest.mark.parametrize("name", ["resnet18", "transformer"])
def test_stored_statistics_are_the_runs(tmp_path, name):
    """What the two stores hold for a common probe is what each run returned."""
    build = {"resnet18": make_models.build_resnet18_slim,
             "transformer": make_models.build_transformer}[name]
    shape = {"resnet18": (1, 3, 224, 224), "transformer": (1, 16, 64)}[name]
    with probe_both(build, shape, FIXTURES / name / "model.onnx", tmp_path) as (_, rt, ro):
        probe = sorted(set(rt.probes) & set(ro.probes))[0]
        for res in (rt, ro):
            stored = res.store.stats(probe, run_id=res.run_id)
            for k in ("count", "zero", "nan"):
                assert stored[k] == res[probe].stats[k]
            assert stored["mean"] == pytest.approx(res[probe].stats["mean"])
