"""Shared setup of the Inspector tests (test_inspector_torch.py,
test_triggers.py, test_plugins.py): the package as built, the fixture
models as test/fixtures/make_models.py builds them (the same code made the
committed resnet18/ and transformer/ model.onnx), and small models with
injected faults."""

import importlib.util


from conftest import FIXTURES


import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

_spec = importlib.util.spec_from_file_location("make_models", FIXTURES / "make_models.py")
make_models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_models)

RESNET_INPUT = (1, 3, 224, 224)
TRANSFORMER_INPUT = (1, 16, 64)


def resnet18():
    return make_models.build_resnet18_slim()


def transformer():
    return make_models.build_transformer()


def seeded_input(shape, seed=1, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g) * scale


class SqrtInTheMiddle(nn.Module):
    """Linear -> torch.sqrt (a functional op in forward) -> Linear: the sqrt
    of the Linear's negative outputs is NaN, produced by the sqrt."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l1 = nn.Linear(8, 8)
        self.l2 = nn.Linear(8, 4)

    def forward(self, x):
        return self.l2(torch.sqrt(self.l1(x)))


class LogModule(nn.Module):
    def forward(self, x):
        return torch.log(x)


class LogLayer(nn.Module):
    """Linear -> a module whose forward takes the log -> ReLU -> Linear."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = nn.Linear(6, 6)
        self.log = LogModule()
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(6, 3)

    def forward(self, x):
        return self.fc2(self.act(self.log(self.fc1(x))))


class Recurrent(nn.Module):
    def __init__(self, cls, batch_first=True):
        super().__init__()
        torch.manual_seed(0)
        self.rnn = cls(4, 6, batch_first=batch_first)
        self.fc = nn.Linear(6, 2)
        self.batch_first = batch_first

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y)


def onnx_to_fp16(src, dst):
    """The model at `src` in half precision (python3-onnx): float32
    initializers, Constant values and the graph's input, output and
    value_info types become float16. ONNX Runtime then runs it with float16
    tensors between nodes (on CPU, ops without a float16 kernel compute in
    float32 between Casts that ONNX Runtime inserts)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    for init in graph.initializer:
        if init.data_type == TensorProto.FLOAT:
            half = numpy_helper.to_array(init).astype(np.float16)
            init.CopyFrom(numpy_helper.from_array(half, init.name))
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        if value.type.tensor_type.elem_type == TensorProto.FLOAT:
            value.type.tensor_type.elem_type = TensorProto.FLOAT16
    for node in graph.node:
        for attr in node.attribute:
            if node.op_type == "Constant" and attr.t.data_type == TensorProto.FLOAT:
                attr.t.CopyFrom(numpy_helper.from_array(
                    numpy_helper.to_array(attr.t).astype(np.float16)))
    onnx.save(model, str(dst))
