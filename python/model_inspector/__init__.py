"""model_inspector: model-inspector's results in Python.

    import model_inspector as mi
    run = mi.open("runs/r1")                 # a run directory, or files
    run.summary().table("op_types")          # a pandas DataFrame
    run.analyze("critical_path", run=0)      # any registered analysis
    mi.diff("base.midigest.json", run, fail_on="total>+5%")["failed"]

    from model_inspector import Inspector    # tensor values along the graph
    insp = Inspector(model_path="model.onnx")
    res = insp.run(x, probes=["layer1/*/conv*"], triggers=["nan", "inf"])

Results are the JSON each result's C++ type writes (the CLI's
`--format json`), decoded into dicts and lists; see docs/guides/python.md
and docs/guides/probes.md.
"""

import importlib

from . import _core
from .errors import (Error, Internal, InvalidArgument, IoError, MalformedInput,
                     MemoryLimit, NotFound, Unsupported)
from .results import Result, ResultList, to_table
from .run import Run, default_fail_on, detect_format, diff, open, registered_analyses
# capture() and compare() share their modules' names. Importing a submodule
# binds the package attribute to the module, so these two (cheap: standard
# library only) are bound here, eagerly: the function wins and a later
# `from model_inspector.compare import ...` does not rebind it.
from .capture import capture
from .compare import compare

__version__ = _core.version()

# Names whose modules load on first use: the probe and capture machinery
# imports numpy, and torch or onnx only when a backend needs them, so
# `import model_inspector` stays cheap for users who read results only.
_LAZY = {
    "Inspector": ("inspector", "Inspector"),
    "ProbeStore": ("store", "ProbeStore"),
    "tensor_stats": ("store", "tensor_stats"),
    "import_msprobe": ("msprobe", "import_msprobe"),
    "Plugin": ("plugins", "Plugin"),
    "cluster": ("cluster", None),
    "plugins": ("plugins", None),
    "backends": ("backends", None),
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'model_inspector' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = importlib.import_module(f".{module_name}", __name__)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


__all__ = [
    "Error", "Internal", "InvalidArgument", "IoError", "MalformedInput",
    "MemoryLimit", "NotFound", "Result", "ResultList", "Run", "Unsupported", "default_fail_on", "detect_format", "diff",
    "open", "registered_analyses", "to_table", "__version__", "capture", "compare", *_LAZY,
]
