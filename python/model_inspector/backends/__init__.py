"""Capture backends: run a model and hand each probed tensor to the Inspector.

A backend runs one model on one runtime (`torch`: forward/backward hooks on
a PyTorch module; `onnxruntime`: an ONNX model with its intermediate tensors
exposed as graph outputs, on the `onnxruntime` Python package when it is
importable, else on ONNX Runtime for Node). See base.py for the interface.
"""

from .base import Backend, GraphNode, ProbeEvent, ProbeRequest

__all__ = ["Backend", "GraphNode", "ProbeEvent", "ProbeRequest"]
