"""The interface between the Inspector and a capture backend.

Probe names are one namespace across backends: ``<node name>:<output index>``
where the node name is the ONNX node name the model has (or, for a PyTorch
module, the name its ``torch.onnx.export`` gives the node: module scopes
joined by '/', e.g. ``/layer1/layer1.0/conv1/Conv:0``). So a probe on a
PyTorch model and on its ONNX export is the same probe. Input tensors of a
node are ``<node name>:in<k>``; gradients (PyTorch backward hooks) are
``<node name>:grad<k>``. Recurrent ops give one event per time step
(``step`` = 0, 1, ...) besides the whole output (``step`` = None).
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, Callable, Optional, Sequence


@dataclasses.dataclass(frozen=True)
class GraphNode:
    """A node the backend can probe, in execution (topological) order."""
    name: str                       # ONNX-style node name, e.g. "/layer1/layer1.0/conv1/Conv"
    op_type: str                    # ONNX op type ("Conv"), or the module class for torch-only nodes
    inputs: tuple[str, ...]         # tensor names it reads (ONNX tensor names; "" for absent optionals)
    outputs: tuple[str, ...]        # tensor names it writes, output index = position
    module: Optional[str] = None    # PyTorch module path ("layer1.0.conv1") where known
    recurrent: bool = False         # LSTM / GRU / RNN / Loop / Scan: per-time-step events too


@dataclasses.dataclass(frozen=True)
class ProbeRequest:
    """What the Inspector wants from one run."""
    nodes: frozenset[str]           # node names whose outputs to report
    inputs_of: frozenset[str] = frozenset()   # node names whose inputs to report too
    gradients: bool = False         # torch only: backward hooks (needs a loss; see Backend.run)


@dataclasses.dataclass
class ProbeEvent:
    """One tensor seen during a run, handed to the Inspector as it appears."""
    probe: str                      # "<node>:<k>", "<node>:in<k>" or "<node>:grad<k>"
    node: str
    kind: str                       # "output" | "input" | "grad"
    index: int                      # output / input / gradient index
    tensor: Any                     # a numpy array (CPU, contiguous); torch tensors are converted by the backend
    step: Optional[int] = None      # time step of a recurrent op's output, else None
    order: int = 0                  # position of the node in execution order


# The callback returns False to stop the run at this tensor ("pause on NaN"):
# the backend stops producing events and returns what it has.
OnTensor = Callable[[ProbeEvent], bool]


class Backend(abc.ABC):
    """Runs a model and reports the probed tensors in execution order."""

    name: str = ""                  # "torch", "onnxruntime", "onnxruntime-node"

    @abc.abstractmethod
    def nodes(self) -> Sequence[GraphNode]:
        """Every probe-able node, in execution order."""

    @abc.abstractmethod
    def run(self, inputs: Any, request: ProbeRequest, on_tensor: OnTensor) -> dict[str, Any]:
        """Runs the model once on `inputs` (a numpy array, a tuple of them,
        or a dict by input name; torch tensors for the torch backend) and
        calls `on_tensor` for every requested tensor in execution order.
        Returns the model outputs by name (numpy arrays); when `on_tensor`
        returned False the run stopped there and the outputs are those
        produced so far."""

    def model_path(self) -> Optional[str]:
        """The ONNX file this backend runs (or exported), when there is one."""
        return None

    def close(self) -> None:
        """Releases the runtime (subprocesses, sessions)."""
