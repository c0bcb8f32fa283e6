"""model_inspector: model-inspector's results in Python.

    import model_inspector as mi
    run = mi.open("runs/r1")                 # a run directory, or files
    run.summary().table("op_types")          # a pandas DataFrame
    run.analyze("critical_path", run=0)      # any registered analysis
    mi.diff("base.midigest.json", run, fail_on="total>+5%")["failed"]

Results are the JSON each result's C++ type writes (the CLI's
`--format json`), decoded into dicts and lists; see docs/guides/python.md.
"""

from . import _core
from .errors import (Error, Internal, InvalidArgument, IoError, MalformedInput,
                     MemoryLimit, NotFound, Unsupported)
from .results import Result, ResultList, to_table
from .run import Run, default_fail_on, detect_format, diff, open, registered_analyses

__version__ = _core.version()

__all__ = [
    "Error", "Internal", "InvalidArgument", "IoError", "MalformedInput",
    "MemoryLimit", "NotFound", "Result", "ResultList", "Run", "Unsupported", "default_fail_on", "detect_format", "diff",
    "open", "registered_analyses", "to_table", "__version__",
]
