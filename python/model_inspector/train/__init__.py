"""model_inspector.train: a training monitor for PyTorch loops.

    from model_inspector.train import Monitor
    mon = Monitor(model, optimizer, triggers=["loss_spike", "nan"],
                  capture_window=5, output="snapshot.db")
    ...                     # the training loop, unchanged
    mon.close()             # or use `with Monitor(...):`; at exit otherwise

Per-step statistics always; on the first trigger, the tensors of the K
steps before (a ring buffer) and the K steps after go into one SQLite file
(docs/guides/training-monitor.md, docs/reference/training-snapshot.md).
`model-inspector trace -- python train.py` attaches it to an unmodified
script (model_inspector.train.attach).
"""

import importlib

from .monitor import SAMPLE_LIMIT, Monitor
from .triggers import DEFAULT_SPECS, parse as parse_trigger, parse_all as parse_triggers

__all__ = ["Monitor", "SAMPLE_LIMIT", "DEFAULT_SPECS", "parse_trigger", "parse_triggers",
           "diagnose"]


def __getattr__(name):
    # diagnose() (model_inspector/train/diagnose.py) loads on first use.
    if name == "diagnose":
        value = importlib.import_module(".diagnose", __name__).diagnose
        globals()[name] = value
        return value
    raise AttributeError(f"module 'model_inspector.train' has no attribute {name!r}")
