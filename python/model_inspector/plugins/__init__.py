"""Plugins: Python code that sees every probed tensor and the end of a run.

    from model_inspector import Plugin

    class Saturation(Plugin):
        name = "saturation"

        def process_tensor(self, tensor, node):
            return {"at_max": float((tensor == tensor.max()).mean())}

    Inspector(module, x, plugins=[Saturation(), "sparsity"])

`process_tensor(tensor, node)` is called with each probed output (and
gradient) as a numpy array and the node it belongs to (a
backends.base.GraphNode: name, op_type, module ...); it returns a dict of
numbers (stored per probe, shown next to the built-in statistics) or None.
`on_run_end(results)` is called once with the RunResult when the run ends
(also when a trigger stopped it); it returns None or a dict whose keys are
probe names of the run (each with a dict of metrics for that probe) or ""
(metrics of the run as a whole). Metrics are stored with the store's
add_plugin_metrics under the plugin's name.

Plugins are found by name through the registry: `register(cls)` (also a
class decorator) and `create(name, **options)`; the shipped plugin
"sparsity" (plugins/sparsity.py) measures activation sparsity and the
outlier ratio.
"""

from __future__ import annotations

import importlib
from typing import Any, Optional


class Plugin:
    """Base class of probe plugins; override either method or both."""

    name: str = ""

    def process_tensor(self, tensor, node) -> Optional[dict]:
        return None

    def on_run_end(self, results) -> Optional[dict]:
        return None


_REGISTRY: dict[str, type] = {}
# Shipped plugins, imported on first use by name.
_BUILTIN = {"sparsity": ("sparsity", "SparsityPlugin")}


def register(cls):
    """Registers a Plugin subclass under its `name` (usable as a decorator)."""
    if not (isinstance(cls, type) and issubclass(cls, Plugin)):
        raise TypeError(f"register: expected a Plugin subclass, found {cls!r}")
    if not cls.name:
        raise ValueError(f"register: {cls.__name__} has no name")
    _REGISTRY[cls.name] = cls
    return cls


def available() -> list[str]:
    return sorted(set(_REGISTRY) | set(_BUILTIN))


def create(name: str, **options: Any) -> Plugin:
    """An instance of the plugin registered (or shipped) as `name`."""
    if name not in _REGISTRY and name in _BUILTIN:
        module, attr = _BUILTIN[name]
        getattr(importlib.import_module(f".{module}", __name__), attr)
    cls = _REGISTRY.get(name)
    if cls is None:
        raise KeyError(f"plugin '{name}': not registered; available: {', '.join(available())}")
    return cls(**options)


def resolve(plugins) -> list[Plugin]:
    """Plugin instances from names, classes and instances."""
    out = []
    for p in plugins or ():
        if isinstance(p, str):
            p = create(p)
        elif isinstance(p, type) and issubclass(p, Plugin):
            p = p()
        if not isinstance(p, Plugin):
            raise TypeError(f"plugins: expected a Plugin, a Plugin class or a name, found {p!r}")
        if not p.name:
            raise ValueError(f"plugin {type(p).__name__} has no name")
        out.append(p)
    return out


__all__ = ["Plugin", "available", "create", "register", "resolve"]
