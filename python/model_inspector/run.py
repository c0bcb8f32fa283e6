"""An opened run: `model_inspector.open(...)` and what can be asked of it,
and `model_inspector.diff(base, new)`."""

import json
import os
import pathlib
from collections.abc import Mapping

from . import _core
from .errors import InvalidArgument
from .results import Result, decode


def _paths(paths):
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    return [os.fsdecode(os.fspath(p)) for p in paths]


def _param_text(value):
    # Parameters cross as text, as `analyze --param NAME=VALUE` gives them.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Run:
    """Files or a run directory opened as `model-inspector summary` opens
    them: detected, imported, linked. The C++ session (and its share of the
    memory budget) is held until `close()` or the end of a `with` block."""

    def __init__(self, session, paths):
        self._session_or_none = session
        self._paths = paths

    @property
    def _session(self):
        if self._session_or_none is None:
            raise ValueError("this run was closed")
        return self._session_or_none

    def close(self):
        """Releases the session and the memory it holds."""
        self._session_or_none = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self._session_or_none is None else ", ".join(self.levels) or "no graph"
        return f"<model_inspector.Run {self._paths!r} ({state})>"

    @property
    def paths(self):
        """The paths as given to `open`."""
        return list(self._paths)

    @property
    def inputs(self):
        """The files read: [{"path", "format", "role"}], role "framework",
        "compiled", "trace" or "unplaced"."""
        return self._session.inputs()

    @property
    def levels(self):
        """The graph levels loaded: "framework" and/or "compiled"."""
        return self._session.levels()

    @property
    def diagnostics(self):
        """What the importers and the linker reported: [{"code", "severity",
        "count", "description", "examples"}] (docs/reference/errors.md)."""
        return self._session.diagnostics()

    def summary(self, top=20, run=None, from_ns=None, to_ns=None, clock="raw"):
        """The summary report (summary.json; `summary --format json`): time
        by op type, stream and node, graph counts, runs and whole-trace
        analyses. `run`: one run / iteration by index; `from_ns` / `to_ns`:
        a time range in `clock` ("raw" or "calibrated")."""
        if clock not in ("raw", "calibrated"):
            raise ValueError(f"clock: expected 'raw' or 'calibrated', found {clock!r}")
        return Result.from_json(self._session.summary_json(
            top=top, run=-1 if run is None else run, from_ns=from_ns, to_ns=to_ns,
            calibrated=clock == "calibrated"))

    def analyses(self):
        """The registered analyses (`analyze --list --format json`), each
        with "applies": whether this run has what it needs."""
        return Result.from_json(self._session.analyses_json())["analyses"]

    def analyze(self, id, **params):
        """Runs one registered analysis (`analyze ID --param NAME=VALUE`) and
        returns its result: a `Result` (dict), or a `ResultList` (list) for
        the analyses whose result is an array of rows. InvalidArgument names an unknown or bad
        parameter; NotFound an unknown id."""
        text = {name: _param_text(value) for name, value in params.items()}
        return decode(self._session.run_analysis_json(id, text))

    def node_id(self, level, name):
        """The id of the node named `name` on a level ("#N" for node N)."""
        return self._session.find_node_id(level, name)

    def node(self, level, node):
        """One node's details (op type, attributes, inputs/outputs, scope,
        status, fused_from / fused_into, linked tasks); `node` is its id or
        its name."""
        if isinstance(node, str):
            node = self.node_id(level, node)
        if isinstance(node, bool) or not isinstance(node, int) or node < 0:
            raise InvalidArgument(f"node: expected a node id or name, found {node!r}")
        return Result.from_json(self._session.node_details_json(level, node))

    def probes(self, level="framework"):
        """The run directory's tensor probes on a level's nodes: the latest
        probe run's statistics per node id, the runs kept, trigger hits
        (docs/reference/probe-store.md). Empty when the run has no probe
        store."""
        return Result.from_json(_core.session_probes_json(self._session, level))

    def node_probes(self, level, node, last=10):
        """One node's probes: statistics in the latest probe run, their
        series over the last `last` runs, per-step values of a recurrent
        op, plugin metrics. `node` is its id or its name."""
        if isinstance(node, str):
            node = self.node_id(level, node)
        return Result.from_json(
            _core.session_node_probes_json(self._session, level, node, last))

    def search(self, level, query, mode="auto", limit=100):
        """Nodes of a level matching `query`: {"matches", "total", "mode",
        "read_as"}. Modes: "auto", "text", "glob", "regex", "op", "attr"."""
        return Result.from_json(self._session.search_json(level, query, mode, limit))

    def properties(self, level):
        """What a level's main graph says about itself: file, format,
        producer, opsets, inputs / outputs with types, initializers with
        shapes and sizes, the format's metadata."""
        return Result.from_json(self._session.properties_json(level))

    def tensor_values(self, level, name, limit=100):
        """One initializer of a level's main graph: dtype, shape, its first
        `limit` values, and "stats" (count, nan, min, max, mean over at most
        2**20 elements; "complete" when that is all of them). A binary ONNX
        file only (InvalidArgument otherwise)."""
        return Result.from_json(self._session.tensor_values_json(level, name, limit))

    def export(self, out_dir):
        """Writes graph.json, trace.json, summary.json and analyses.json into
        `out_dir` (created if needed), as `model-inspector export` does.
        Returns the folder as a Path."""
        out = os.fsdecode(os.fspath(out_dir))
        self._session.export_dumps(out)
        return pathlib.Path(out)

    def digest(self, model="", label="", git_commit=""):
        """The run digest of the regression gate (`diff --save-new-digest`;
        docs/reference/schemas/run-digest.schema.json)."""
        return Result.from_json(self._session.digest_json(model, label, git_commit))


def open(paths, framework_model=None, compiled_model=None, keep_going=False,
         memory_limit=0):
    """Opens files or a run directory: `paths` is one path or a list. The
    roles of models are detected by content unless `framework_model` /
    `compiled_model` name them. Error-severity diagnostics fail the open
    unless `keep_going`. `memory_limit`: bytes the load may use (0: the
    process's budget)."""
    given = _paths(paths)
    session = _core.Session.open(
        given,
        framework_model="" if framework_model is None else os.fsdecode(os.fspath(framework_model)),
        compiled_model="" if compiled_model is None else os.fsdecode(os.fspath(compiled_model)),
        keep_going=keep_going, memory_limit=memory_limit)
    return Run(session, given)


def detect_format(path):
    """The format a file would be read as ("onnx", "om", "chrome_trace", ...),
    detected by content as `open` detects it; "" when none recognises it."""
    return _core.detect_format(os.fsdecode(os.fspath(path)))


def registered_analyses():
    """Every registered analysis with its parameters (no run needed;
    "applies" is False)."""
    return Result.from_json(_core.registered_analyses_json())["analyses"]


def default_fail_on():
    """The rules `diff` applies when `fail_on` is None (the CLI's
    `--fail-on` default)."""
    return _core.default_fail_on()


def _digest_side(side, which):
    # A side's digest as JSON text and the name its parse errors give.
    if isinstance(side, Run):
        return side._session.digest_json(), f"the {which} run"
    if isinstance(side, Mapping):
        return json.dumps(side), f"the {which} digest"
    paths = _paths(side)
    return _core.load_digest_json(paths), paths[0] if len(paths) == 1 else f"the {which} run"


def diff(base, new, fail_on=None):
    """What changed from `base` to `new` (`model-inspector diff`): each side
    is a Run, a digest (`Run.digest()`), a digest file, or files / a run
    directory. `fail_on`: the gate's rules ("total>+5%,nodes!=0"; None: the
    CLI's defaults); the report's "failed" says whether one was crossed."""
    base_json, base_name = _digest_side(base, "base")
    new_json, new_name = _digest_side(new, "new")
    return Result.from_json(_core.diff_json(base_json, base_name, new_json, new_name, fail_on))
