"""Plugins (python/model_inspector/plugins): the shipped sparsity/outlier
plugin on tensors whose answers are worked out by hand, custom plugins
through the registry, and their metrics in the store and the table."""

import numpy as np
import pytest

from torch_probe_models import seeded_input

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import model_inspector  # noqa: E402
from model_inspector import Inspector, Plugin, plugins  # noqa: E402
from model_inspector.plugins.sparsity import SparsityPlugin  # noqa: E402


class Shift(nn.Module):
    """y = x - 1: lets a test choose the ReLU's input exactly."""

    def forward(self, x):
        return x - 1


def hand_model():
    return nn.Sequential(Shift(), nn.ReLU()).eval()


# 20 values; after x - 1 and ReLU: 1 - 1 = 0 and the non-positive ones give 0.
HAND_INPUT = torch.tensor([[1.0, 0.5, -3.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
                            2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 101.0]])


def test_sparsity_and_outliers_by_hand(tmp_path):
    # ReLU output: [0, 0, 0, 0, 1 x 15, 100]: 4 zeros of 20 -> sparsity 0.2.
    # mean = (15 + 100) / 20 = 5.75; std = sqrt(mean(x^2) - mean^2)
    #      = sqrt((15 + 10000) / 20 - 5.75^2) = sqrt(500.75 - 33.0625) = 21.6261...
    # k = 4: |100 - 5.75| = 94.25 > 86.5 (4 std) -> 1 outlier, ratio 1/20;
    # |0 - 5.75| and |1 - 5.75| are far below.
    std = np.sqrt((15 + 10000) / 20 - 5.75 ** 2)
    assert 4 * std < 94.25
    with Inspector(hand_model(), HAND_INPUT, run_dir=tmp_path,
                   plugins=[SparsityPlugin(k=4)]) as insp:
        res = insp.run(HAND_INPUT, probes=["/1/Relu"])
        m = res["/1/Relu:0"].plugins["sparsity"]
        assert m["sparsity"] == pytest.approx(0.2)
        assert m["near_zero"] == pytest.approx(0.2)
        assert m["outliers"] == 1 and m["outlier_ratio"] == pytest.approx(0.05)
        # One channel (axis 1 of [1, 20]) per element: the 4 zeros are dead.
        assert m["dead_channels"] == 4
        # Run level: one probe seen.
        run_level = res.plugin_metrics["sparsity"]
        assert run_level["mean_sparsity"] == pytest.approx(0.2)
        assert run_level["max_outlier_node"] == "/1/Relu"
        # Stored: per probe and for the run ("").
        rows = insp.store.plugin_metrics(res.run_id)
        by_probe = {r["probe"]: r for r in rows if r["plugin"] == "sparsity"}
        assert by_probe["/1/Relu:0"]["metrics"]["outliers"] == 1
        assert by_probe[""]["metrics"]["mean_sparsity"] == pytest.approx(0.2)
        table = res.table()
        row = table[table.probe == "/1/Relu:0"].iloc[0]
        assert row["sparsity.sparsity"] == pytest.approx(0.2)


def test_sparsity_by_name_on_a_dead_relu_and_on_onnxruntime(tmp_path):
    torch.manual_seed(0)
    lin = nn.Linear(4, 6)
    with torch.no_grad():
        lin.bias[2] = -100.0              # unit 2 is dead for inputs of this size
    model = nn.Sequential(lin, nn.ReLU()).eval()
    x = seeded_input((5, 4))
    with torch.no_grad():
        relu = torch.relu(lin(x)).numpy()
    zeros = float((relu == 0).mean())
    dead = int((~relu.any(axis=0)).sum())
    assert dead >= 1
    for backend in ("torch", "onnxruntime"):
        with Inspector(model, x, backend=backend, run_dir=tmp_path / backend,
                       plugins=["sparsity"]) as insp:
            m = insp.run(x)["/1/Relu:0"].plugins["sparsity"]
            assert m["sparsity"] == pytest.approx(zeros)
            assert m["dead_channels"] == dead


def test_custom_plugin_through_the_registry(tmp_path):
    seen = []

    @plugins.register
    class Peak(Plugin):
        name = "peak_test"

        def __init__(self, scale=1.0):
            self.scale = scale

        def process_tensor(self, tensor, node):
            seen.append(node.name)
            return {"peak": float(np.abs(tensor).max()) * self.scale}

        def on_run_end(self, results):
            return {probe: {"rank": i} for i, probe in enumerate(results.probes)}

    assert "peak_test" in plugins.available() and "sparsity" in plugins.available()
    model = hand_model()
    with Inspector(model, HAND_INPUT, run_dir=tmp_path,
                   plugins=[plugins.create("peak_test", scale=2.0)]) as insp:
        res = insp.run(HAND_INPUT)
        assert seen == ["/0/Sub", "/1/Relu"]
        assert res["/0/Sub:0"].plugins["peak_test"] == {"peak": 200.0, "rank": 0}
        assert res["/1/Relu:0"].plugins["peak_test"]["peak"] == 200.0
    assert model_inspector.Plugin is Plugin
    with pytest.raises(KeyError, match="not registered"):
        plugins.create("no_such_plugin")
    with pytest.raises(TypeError):
        Inspector(model, HAND_INPUT, run_dir=tmp_path, plugins=[object()])
