"""The ONNX Runtime capture backend: an ONNX model on a real ONNX Runtime.

Intermediate tensors are exposed by rewriting the graph (python3-onnx): the
requested node outputs become graph outputs, typed from shape inference (or
the model's own value_info), and the rewritten model runs with graph
optimizations disabled by default, so every node of the file runs as it is
and the probe names are the file's node names (``<node>:<k>``). One session
is kept per set of exposed tensors.

The runtime is the Python ``onnxruntime`` package when it is importable
(``runtime="python"``), else ONNX Runtime for Node (``runtime="node"``): the
npm package ``onnxruntime-node`` driven by a persistent ``node
ort_node_runner.mjs`` subprocess (framed requests over stdin/stdout, tensors
as raw bytes). onnxruntime-node is found through, in order,
``$MI_ONNXRUNTIME_NODE`` (its package folder or a node_modules folder),
Node's resolution from the working directory, and the source tree's
``test/fixtures/node_modules`` recorded when the package was built. ``node``
itself is ``$MI_NODE`` or the first ``node`` on PATH.

Both runtimes behave the same: the same rewritten model, the same options,
the same events. ``InferenceSession`` / ``SessionOptions`` here are a small
onnxruntime-like session over the Node runtime, used by ``capture`` and
usable directly.
"""

from __future__ import annotations

import atexit
import collections
import fcntl
import glob
import json
import mmap
import os
import pathlib
import shutil
import subprocess
import struct
import tempfile
import threading
from typing import Any, Optional, Sequence

import numpy as np

from .base import Backend, GraphNode, OnTensor, ProbeEvent, ProbeRequest

RECURRENT_OPS = ("LSTM", "GRU", "RNN", "Loop", "Scan")

# ONNX TensorProto element types <-> numpy <-> ONNX Runtime for JavaScript.
_ONNX_TO_NUMPY = {
    1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16,
    6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64,
    12: np.uint32, 13: np.uint64,
}
_JS_TO_NUMPY = {
    "float32": np.float32, "float64": np.float64, "float16": np.float16,
    "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
    "int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
    "bool": np.bool_,
}
_NUMPY_TO_JS = {np.dtype(v).str: k for k, v in _JS_TO_NUMPY.items()}

# SessionOptions.graph_optimization_level as onnxruntime's enum values and names.
_LEVEL_NAMES = {0: "disabled", 1: "basic", 2: "extended", 99: "all"}
_LEVEL_ALIASES = {
    "disabled": "disabled", "disable_all": "disabled", "ort_disable_all": "disabled",
    "basic": "basic", "enable_basic": "basic", "ort_enable_basic": "basic",
    "extended": "extended", "enable_extended": "extended", "ort_enable_extended": "extended",
    "all": "all", "enable_all": "all", "ort_enable_all": "all",
}


def optimization_level_name(level) -> str:
    """'disabled' | 'basic' | 'extended' | 'all' for a name, an int or
    onnxruntime's GraphOptimizationLevel."""
    if isinstance(level, str):
        key = level.lower()
    elif hasattr(level, "name") and not isinstance(level, int):
        key = str(level.name).lower()
    else:
        key = None
        if int(level) in _LEVEL_NAMES:
            return _LEVEL_NAMES[int(level)]
    if key in _LEVEL_ALIASES:
        return _LEVEL_ALIASES[key]
    raise ValueError(f"graph optimization level: expected disabled, basic, extended or all, "
                     f"found {level!r}")


# --------------------------------------------------------------------------
# Finding the runtime
# --------------------------------------------------------------------------
def _recorded_source_tree() -> Optional[pathlib.Path]:
    """The source tree this package was built from (written by the build
    into _source_tree.txt beside this package; absent in a wheel)."""
    record = pathlib.Path(__file__).resolve().parent.parent / "_source_tree.txt"
    try:
        text = record.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return pathlib.Path(text) if text else None


def onnxruntime_node_candidates() -> list[str]:
    """Where the Node runner looks for onnxruntime-node, in order ("--cwd"
    stands for Node's own resolution from the working directory)."""
    out = []
    env = os.environ.get("MI_ONNXRUNTIME_NODE")
    if env:
        out.append(env)
    out.append("--cwd")
    src = _recorded_source_tree()
    if src is not None:
        out.append(str(src / "test" / "fixtures" / "node_modules"))
    return out


def node_executable() -> str:
    exe = os.environ.get("MI_NODE") or shutil.which("node")
    if not exe:
        raise RuntimeError("ONNX Runtime for Node: no `node` executable on PATH "
                           "(set MI_NODE to its path)")
    return exe


def python_onnxruntime():
    """The Python onnxruntime module, or None when it is not installed."""
    try:
        import onnxruntime  # noqa: PLC0415
    except ImportError:
        return None
    return onnxruntime


_INTERNAL = threading.local()


class internal_sessions:
    """Marks the sessions the package itself creates (probing, compiling),
    so that `capture` leaves them out of what it records."""

    def __enter__(self):
        _INTERNAL.depth = getattr(_INTERNAL, "depth", 0) + 1

    def __exit__(self, *exc):
        _INTERNAL.depth -= 1


def creating_internal_session() -> bool:
    return getattr(_INTERNAL, "depth", 0) > 0


_F_SETPIPE_SZ = 1031  # Linux fcntl: pipe capacity


def _grow_pipe(fd: int) -> None:
    # Larger pipes mean fewer context switches per tensor; best effort.
    try:
        fcntl.fcntl(fd, _F_SETPIPE_SZ, 1 << 20)
    except OSError:
        pass


class NodeRuntimeError(RuntimeError):
    """A request the Node runner answered with an error, or a runner that died."""


class NodeRuntime:
    """One `node ort_node_runner.mjs` subprocess; requests are serialised."""

    _shared: Optional["NodeRuntime"] = None
    _shared_lock = threading.Lock()

    def __init__(self):
        script = pathlib.Path(__file__).with_name("ort_node_runner.mjs")
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [node_executable(), str(script), *onnxruntime_node_candidates()],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            bufsize=0)
        _grow_pipe(self._proc.stdin.fileno())
        _grow_pipe(self._proc.stdout.fileno())
        self._lock = threading.Lock()
        # Shared-memory files for tensors (see ort_node_runner.mjs): inputs
        # written here, outputs read back through a mapping.
        shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
        self._files = []
        for role in ("in", "out"):
            fd, path = tempfile.mkstemp(prefix=f"mi_ort_{role}_", suffix=".bin", dir=shm)
            self._files.append((fd, path))
        self._out_map = None
        hello, _ = self.request({"op": "hello"})
        self.where = hello.get("where")
        self.versions = hello.get("versions", {})

    @classmethod
    def shared(cls) -> "NodeRuntime":
        """The process-wide runner, started on first use."""
        with cls._shared_lock:
            if cls._shared is None or cls._shared._proc.poll() is not None:
                cls._shared = cls()
                atexit.register(cls._shared.close)
            return cls._shared

    def _stderr_text(self) -> str:
        try:
            self._stderr.seek(0)
            return self._stderr.read().decode("utf-8", "replace")[-4000:]
        except (OSError, ValueError):
            return ""

    def _read_exact(self, n: int, into: Optional[memoryview] = None) -> memoryview:
        buf = memoryview(bytearray(n)) if into is None else into
        got = 0
        raw = self._proc.stdout
        while got < n:
            k = raw.readinto(buf[got:])
            if not k:
                raise NodeRuntimeError(
                    "ONNX Runtime for Node: the runner exited (code "
                    f"{self._proc.poll()}); its stderr:\n{self._stderr_text()}")
            got += k
        return buf

    def request(self, header: dict, arrays: Sequence[tuple[str, np.ndarray]] = (),
                shared: bool = False):
        """Sends one request; returns (reply header, [(name, array)]).
        `shared`: tensors cross through the shared-memory files."""
        specs, payload = [], []
        pos = 0
        with self._lock:
            for name, a in arrays:
                a = np.ascontiguousarray(a)
                if a.dtype.byteorder == ">":
                    a = a.astype(a.dtype.newbyteorder("<"))
                js = _NUMPY_TO_JS.get(a.dtype.str)
                if js is None:
                    raise TypeError(f"input {name}: dtype {a.dtype} is not supported by "
                                    "ONNX Runtime for Node")
                spec = {"name": name, "dtype": js, "dims": list(a.shape), "nbytes": a.nbytes}
                if shared:
                    spec["offset"] = pos
                    if a.nbytes:
                        os.pwrite(self._files[0][0], memoryview(a.reshape(-1)).cast("B"), pos)
                    pos += (a.nbytes + 63) // 64 * 64
                else:
                    payload.append(memoryview(a.reshape(-1)).cast("B"))
                specs.append(spec)
            if specs:
                header = dict(header, tensors=specs)
            if shared:
                header = dict(header, in_file=self._files[0][1], out_file=self._files[1][1])
            return self._exchange(header, payload)

    def _exchange(self, header, payload):
        blob = json.dumps(header).encode("utf-8")
        try:
            out = self._proc.stdin
            out.write(struct.pack("<I", len(blob)))
            out.write(blob)
            for p in payload:
                out.write(p)
        except BrokenPipeError:
            raise NodeRuntimeError(
                "ONNX Runtime for Node: the runner is gone; its stderr:\n"
                + self._stderr_text()) from None
        hlen = struct.unpack("<I", self._read_exact(4))[0]
        reply = json.loads(bytes(self._read_exact(hlen)).decode("utf-8"))
        tensors = []
        specs = reply.get("tensors", [])
        mapped = max((s["offset"] + s["nbytes"] for s in specs if "offset" in s), default=0)
        if mapped and (self._out_map is None or len(self._out_map) < mapped):
            if self._out_map is not None:
                self._out_map.close()
            self._out_map = mmap.mmap(self._files[1][0], mapped, access=mmap.ACCESS_READ)
        for spec in specs:
            dtype = np.dtype(_JS_TO_NUMPY[spec["dtype"]])
            arr = np.empty(spec["dims"], dtype=dtype)
            if not spec["nbytes"]:
                pass
            elif "offset" in spec:
                src = np.frombuffer(self._out_map, np.uint8, spec["nbytes"], spec["offset"])
                arr.reshape(-1).view(np.uint8)[:] = src
            else:
                self._read_exact(spec["nbytes"], memoryview(arr.reshape(-1).view(np.uint8)))
            tensors.append((spec["name"], arr))
        if not reply.get("ok"):
            raise NodeRuntimeError(f"ONNX Runtime for Node: {reply.get('error', 'failed')}")
        return reply, tensors

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._proc.stdin.close()
                self._proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        self._stderr.close()
        if self._out_map is not None:
            self._out_map.close()
            self._out_map = None
        for fd, path in self._files:
            os.close(fd)
            try:
                os.unlink(path)
            except OSError:
                pass
        self._files = []

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


# --------------------------------------------------------------------------
# An onnxruntime-like session on the Node runtime
# --------------------------------------------------------------------------
class SessionOptions:
    """The subset of onnxruntime.SessionOptions the Node session honours."""

    def __init__(self):
        self.graph_optimization_level = "all"
        self.optimized_model_filepath = ""
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile"
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.execution_mode = "sequential"
        self.log_severity_level = 3

    def to_node(self) -> dict:
        opts = {
            "executionProviders": ["cpu"],
            "graphOptimizationLevel": optimization_level_name(self.graph_optimization_level),
            "executionMode": "parallel" if "parallel" in str(self.execution_mode).lower() else "sequential",
            "logSeverityLevel": int(self.log_severity_level),
        }
        if self.optimized_model_filepath:
            opts["optimizedModelFilePath"] = os.fspath(self.optimized_model_filepath)
        if self.enable_profiling:
            opts["enableProfiling"] = True
            opts["profileFilePrefix"] = os.fspath(self.profile_file_prefix)
        if self.intra_op_num_threads:
            opts["intraOpNumThreads"] = int(self.intra_op_num_threads)
        if self.inter_op_num_threads:
            opts["interOpNumThreads"] = int(self.inter_op_num_threads)
        return opts


NodeArg = collections.namedtuple("NodeArg", "name type shape")


class InferenceSession:
    """An ONNX Runtime session on ONNX Runtime for Node, with the calls of
    onnxruntime.InferenceSession that scripts use most: run, get_inputs,
    get_outputs, end_profiling. `capture` records what it runs."""

    # capture() installs a hook here: called with (session) before the
    # session is created, may change session.options.
    _on_create: list = []

    def __init__(self, path_or_bytes, sess_options: Optional[SessionOptions] = None,
                 providers=None, *, _capture: bool = True, **_ignored):
        if isinstance(path_or_bytes, (bytes, bytearray)):
            self._tmp = tempfile.TemporaryDirectory(prefix="mi_ort_session_")
            path = os.path.join(self._tmp.name, "model.onnx")
            with open(path, "wb") as f:
                f.write(path_or_bytes)
        else:
            self._tmp = None
            path = os.path.abspath(os.fspath(path_or_bytes))
        self.model_path = path
        self.options = sess_options if sess_options is not None else SessionOptions()
        if _capture:
            for hook in list(InferenceSession._on_create):
                hook(self)
        self._runtime = NodeRuntime.shared()
        reply, _ = self._runtime.request({"op": "load", "path": path,
                                          "options": self.options.to_node()})
        self._id = reply["session"]
        self._inputs = [NodeArg(i["name"], i.get("dtype"), i.get("dims")) for i in reply["inputs"]]
        self._outputs = [NodeArg(n, None, None) for n in reply["outputNames"]]
        self.last_run_ns = 0
        self._profile_started = _now_ns()
        self._closed = False

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_providers(self):
        return ["CPUExecutionProvider"]

    def run(self, output_names, input_feed, run_options=None):
        """Like onnxruntime: a list of numpy arrays, one per output name
        (every output when `output_names` is None)."""
        names = list(output_names) if output_names else [o.name for o in self._outputs]
        feeds = [(k, _to_numpy(v)) for k, v in input_feed.items()]
        reply, tensors = self._runtime.request(
            {"op": "run", "session": self._id, "fetches": names}, feeds, shared=True)
        self.last_run_ns = int(reply.get("run_ns", 0))
        by_name = dict(tensors)
        return [by_name[n] for n in names]

    def end_profiling(self) -> str:
        """Ends ONNX Runtime's profiling; returns the profile file ("" when
        profiling was off). ONNX Runtime names it <prefix>_<timestamp>.json."""
        if not self.options.enable_profiling:
            return ""
        self._runtime.request({"op": "end_profiling", "session": self._id})
        prefix = os.fspath(self.options.profile_file_prefix)
        found = [p for p in glob.glob(glob.escape(prefix) + "_*.json")
                 if os.path.getmtime(p) * 1e9 >= self._profile_started - 2e9]
        return max(found, key=os.path.getmtime) if found else ""

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self._runtime.request({"op": "release", "session": self._id})
            except NodeRuntimeError:
                pass
            if self._tmp is not None:
                self._tmp.cleanup()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def _now_ns() -> int:
    import time  # noqa: PLC0415
    return time.time_ns()


def _to_numpy(value) -> np.ndarray:
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        value = value.detach().cpu().numpy()
    return np.ascontiguousarray(np.asarray(value))


def compile_model(model_path, out_path, optimization="all", *, runtime="auto", threads=1):
    """Has ONNX Runtime optimize `model_path` at `optimization` and save the
    graph it compiled as `out_path` (SessionOptions.optimized_model_filepath),
    as test/fixtures/ort_run.mjs does. Returns `out_path`."""
    level = optimization_level_name(optimization)
    out_path = os.fspath(out_path)
    ort_py = python_onnxruntime() if runtime in ("auto", "python") else None
    if ort_py is not None:
        so = ort_py.SessionOptions()
        so.graph_optimization_level = getattr(
            ort_py.GraphOptimizationLevel,
            {"disabled": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC",
             "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}[level])
        so.optimized_model_filepath = out_path
        so.intra_op_num_threads = threads
        with internal_sessions():
            ort_py.InferenceSession(os.fspath(model_path), so, providers=["CPUExecutionProvider"])
    else:
        so = SessionOptions()
        so.graph_optimization_level = level
        so.optimized_model_filepath = out_path
        so.intra_op_num_threads = threads
        InferenceSession(os.fspath(model_path), so, _capture=False).close()
    if not os.path.isfile(out_path):
        raise RuntimeError(f"{model_path}: ONNX Runtime wrote no optimized model")
    return out_path


# --------------------------------------------------------------------------
# Graph rewriting
# --------------------------------------------------------------------------
def _topological_order(graph) -> list[int]:
    """Node indices in execution order: the file's order where it is
    already topological (ONNX requires it), else a stable Kahn sort."""
    produced_by = {}
    for i, node in enumerate(graph.node):
        for out in node.output:
            if out:
                produced_by[out] = i
    deps = [set() for _ in graph.node]
    users = [[] for _ in graph.node]
    for i, node in enumerate(graph.node):
        for inp in node.input:
            j = produced_by.get(inp)
            if j is not None and j != i:
                deps[i].add(j)
    for i, d in enumerate(deps):
        for j in d:
            users[j].append(i)
    import heapq  # noqa: PLC0415
    remaining = [len(d) for d in deps]
    ready = [i for i, r in enumerate(remaining) if r == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for u in users[i]:
            remaining[u] -= 1
            if remaining[u] == 0:
                heapq.heappush(ready, u)
    if len(order) != len(graph.node):
        raise ValueError("the graph has a cycle: no execution order")
    return order


def _per_step(node, index: int, tensor: np.ndarray):
    """(axis) along which a recurrent op's output `index` holds one slice
    per time step / iteration, or None."""
    op = node.op_type
    if op in ("LSTM", "GRU", "RNN"):
        # Y: [seq_length, num_directions, batch, hidden] (layout 0) or
        # [batch, seq_length, num_directions, hidden] (layout 1).
        if index != 0 or tensor.ndim < 1:
            return None
        layout = 0
        for a in node.attribute:
            if a.name == "layout":
                layout = a.i
        return 1 if layout == 1 else 0
    if op == "Loop":
        carried = max(len(node.input) - 2, 0)
        return 0 if index >= carried and tensor.ndim >= 1 else None
    if op == "Scan":
        num_scan_inputs = 0
        axes = []
        for a in node.attribute:
            if a.name == "num_scan_inputs":
                num_scan_inputs = a.i
            elif a.name == "scan_output_axes":
                axes = list(a.ints)
        states = len(node.input) - num_scan_inputs
        if index < states or tensor.ndim < 1:
            return None
        k = index - states
        axis = axes[k] if k < len(axes) else 0
        return axis % tensor.ndim
    return None


class OnnxRuntimeBackend(Backend):
    """An ONNX model on ONNX Runtime (the Python package or ONNX Runtime for
    Node), probes exposed as graph outputs.

    `level="compiled"` probes ONNX Runtime's optimized graph instead of the
    file's: the model is first compiled at `compile_optimization` (saved via
    optimizedModelFilePath) and that graph is what runs and what the probe
    names name (compiled node names; match them to the framework graph
    through the run's fusion links)."""

    def __init__(self, model_path, *, runtime: str = "auto", optimization: str = "disabled",
                 level: str = "framework", compile_optimization: str = "all",
                 threads: int = 1, max_sessions: int = 4):
        import onnx  # noqa: PLC0415

        if runtime not in ("auto", "python", "node"):
            raise ValueError(f"runtime: expected auto, python or node, found {runtime!r}")
        if level not in ("framework", "compiled"):
            raise ValueError(f"level: expected framework or compiled, found {level!r}")
        self._source_path = os.path.abspath(os.fspath(model_path))
        if not os.path.isfile(self._source_path):
            raise FileNotFoundError(f"{self._source_path}: no such model file")
        ort_py = python_onnxruntime() if runtime in ("auto", "python") else None
        if runtime == "python" and ort_py is None:
            raise RuntimeError("runtime='python': the onnxruntime package is not importable")
        self._ort_py = ort_py
        self.runtime = "python" if ort_py is not None else "node"
        self.name = "onnxruntime" if ort_py is not None else "onnxruntime-node"
        self.optimization = optimization_level_name(optimization)
        self.level = level
        self._threads = threads
        self._max_sessions = max_sessions
        self._tmp = tempfile.TemporaryDirectory(prefix="mi_ort_probe_")

        self._path = self._source_path
        if level == "compiled":
            self._path = os.path.join(self._tmp.name, "model.optimized.onnx")
            compile_model(self._source_path, self._path, compile_optimization,
                          runtime=self.runtime, threads=threads)

        self._model = onnx.load(self._path)
        graph = self._model.graph
        self._order = _topological_order(graph)
        self._initializers = {t.name for t in graph.initializer}
        self._graph_inputs = [i.name for i in graph.input if i.name not in self._initializers]
        self._graph_outputs = [o.name for o in graph.output]
        self._types = self._tensor_types()
        nodes = []
        self._node_protos = {}
        for pos, i in enumerate(self._order):
            proto = graph.node[i]
            name = proto.name or f"{proto.op_type}_{i}"
            nodes.append(GraphNode(name=name, op_type=proto.op_type,
                                   inputs=tuple(proto.input), outputs=tuple(proto.output),
                                   recurrent=proto.op_type in RECURRENT_OPS))
            self._node_protos[name] = proto
        self._nodes = nodes
        self._position = {n.name: pos for pos, n in enumerate(nodes)}
        self._producer = {}
        for pos, n in enumerate(nodes):
            for out in n.outputs:
                if out:
                    self._producer[out] = pos
        self._sessions: "collections.OrderedDict[frozenset, Any]" = collections.OrderedDict()
        self._initializer_cache: dict[str, np.ndarray] = {}
        self.last_run_ns = 0

    # -- Backend interface --------------------------------------------------
    def nodes(self) -> Sequence[GraphNode]:
        return list(self._nodes)

    def model_path(self) -> Optional[str]:
        return self._path

    def source_model_path(self) -> str:
        return self._source_path

    def input_names(self) -> list[str]:
        return list(self._graph_inputs)

    def run(self, inputs: Any, request: ProbeRequest, on_tensor: OnTensor) -> dict[str, Any]:
        feeds = self._feeds(inputs)
        unknown = sorted((set(request.nodes) | set(request.inputs_of)) - set(self._position))
        if unknown:
            raise KeyError(f"{self._path}: no node named {unknown[0]!r}"
                           + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""))
        exposed = set()
        for name in request.nodes:
            exposed.update(t for t in self._nodes[self._position[name]].outputs if t)
        for name in request.inputs_of:
            exposed.update(t for t in self._nodes[self._position[name]].inputs
                           if t and t in self._producer)
        exposed -= set(self._graph_outputs)
        fetch = list(self._graph_outputs) + sorted(exposed)
        values = self._run(frozenset(exposed), feeds, fetch)

        stopped_at = None
        for pos, node in enumerate(self._nodes):
            if node.name in request.inputs_of:
                for k, t in enumerate(node.inputs):
                    if not t:
                        continue
                    arr = self._value(t, values, feeds)
                    if arr is None:
                        continue
                    if not on_tensor(ProbeEvent(f"{node.name}:in{k}", node.name, "input", k, arr,
                                                None, pos)):
                        stopped_at = pos
                        break
            if stopped_at is None and node.name in request.nodes:
                stopped_at = self._emit_outputs(pos, node, values, on_tensor)
            if stopped_at is not None:
                break
        outputs = {}
        for name in self._graph_outputs:
            producer = self._producer.get(name)
            if stopped_at is None or (producer is not None and producer <= stopped_at) \
                    or name in feeds:
                outputs[name] = values[name] if name in values else feeds.get(name)
        return outputs

    def close(self) -> None:
        for session in self._sessions.values():
            close = getattr(session, "close", None)
            if close:
                close()
        self._sessions.clear()
        self._tmp.cleanup()

    # -- helpers ------------------------------------------------------------
    def _emit_outputs(self, pos, node, values, on_tensor) -> Optional[int]:
        proto = self._node_protos[node.name]
        for k, t in enumerate(node.outputs):
            if not t or t not in values:
                continue
            arr = values[t]
            if not on_tensor(ProbeEvent(f"{node.name}:{k}", node.name, "output", k, arr, None, pos)):
                return pos
            axis = _per_step(proto, k, arr) if node.recurrent else None
            if axis is None:
                continue
            for step in range(arr.shape[axis]):
                part = np.ascontiguousarray(np.take(arr, step, axis=axis))
                if not on_tensor(ProbeEvent(f"{node.name}:{k}", node.name, "output", k, part,
                                            step, pos)):
                    return pos
        return None

    def _value(self, tensor, values, feeds):
        if tensor in values:
            return values[tensor]
        if tensor in feeds:
            return feeds[tensor]
        if tensor in self._initializers:
            if tensor not in self._initializer_cache:
                from onnx import numpy_helper  # noqa: PLC0415
                init = next(t for t in self._model.graph.initializer if t.name == tensor)
                self._initializer_cache[tensor] = numpy_helper.to_array(init)
            return self._initializer_cache[tensor]
        return None

    def _feeds(self, inputs) -> dict[str, np.ndarray]:
        names = self._graph_inputs
        if isinstance(inputs, dict):
            feeds = {k: _to_numpy(v) for k, v in inputs.items()}
        elif isinstance(inputs, (tuple, list)):
            if len(inputs) != len(names):
                raise ValueError(f"{self._path}: the model takes {len(names)} inputs "
                                 f"({', '.join(names)}), {len(inputs)} given")
            feeds = {n: _to_numpy(v) for n, v in zip(names, inputs)}
        else:
            if len(names) != 1:
                raise ValueError(f"{self._path}: the model takes {len(names)} inputs "
                                 f"({', '.join(names)}); pass a tuple or a dict by name")
            feeds = {names[0]: _to_numpy(inputs)}
        missing = [n for n in names if n not in feeds]
        if missing:
            raise ValueError(f"{self._path}: input {missing[0]!r} not given")
        return feeds

    def _tensor_types(self) -> dict[str, Any]:
        """ValueInfo per tensor name: the model's own value_info and outputs,
        completed by ONNX shape inference."""
        import onnx  # noqa: PLC0415
        types = {}
        try:
            inferred = onnx.shape_inference.infer_shapes(self._model)
            graphs = [inferred.graph, self._model.graph]
        except Exception:  # noqa: BLE001 - inference is best effort; the file's own info remains
            graphs = [self._model.graph]
        for g in graphs:
            for vi in list(g.value_info) + list(g.output) + list(g.input):
                if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
                    types.setdefault(vi.name, vi)
        return types

    def _rewritten(self, exposed: frozenset) -> str:
        """Writes the model with `exposed` as extra graph outputs; returns its path."""
        import onnx  # noqa: PLC0415
        if not exposed:
            return self._path
        model = onnx.ModelProto()
        model.CopyFrom(self._model)
        for name in sorted(exposed):
            vi = self._types.get(name)
            out = model.graph.output.add()
            if vi is not None:
                out.CopyFrom(vi)
                # Only the element type: inferred dims may be symbolic or wrong
                # for a dynamic input, and ONNX Runtime checks declared shapes.
                out.type.tensor_type.ClearField("shape")
            else:
                # No type known (an op shape inference does not know): let
                # ONNX Runtime infer it; it accepts a graph output without one.
                out.name = name
        path = os.path.join(self._tmp.name, f"probed_{len(self._sessions)}_{abs(hash(exposed))}.onnx")
        onnx.save(model, path)
        return path

    def _session(self, exposed: frozenset):
        session = self._sessions.get(exposed)
        if session is not None:
            self._sessions.move_to_end(exposed)
            return session
        path = self._rewritten(exposed)
        if self._ort_py is not None:
            so = self._ort_py.SessionOptions()
            so.graph_optimization_level = {
                "disabled": self._ort_py.GraphOptimizationLevel.ORT_DISABLE_ALL,
                "basic": self._ort_py.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                "extended": self._ort_py.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
                "all": self._ort_py.GraphOptimizationLevel.ORT_ENABLE_ALL,
            }[self.optimization]
            so.intra_op_num_threads = self._threads
            so.inter_op_num_threads = 1
            so.log_severity_level = 3
            with internal_sessions():
                session = self._ort_py.InferenceSession(path, so,
                                                        providers=["CPUExecutionProvider"])
        else:
            so = SessionOptions()
            so.graph_optimization_level = self.optimization
            so.intra_op_num_threads = self._threads
            so.inter_op_num_threads = 1
            session = InferenceSession(path, so, _capture=False)
        self._sessions[exposed] = session
        while len(self._sessions) > self._max_sessions:
            _, old = self._sessions.popitem(last=False)
            close = getattr(old, "close", None)
            if close:
                close()
        return session

    def _run(self, exposed: frozenset, feeds: dict, fetch: list[str]) -> dict[str, np.ndarray]:
        session = self._session(exposed)
        arrays = session.run(fetch, feeds)
        self.last_run_ns = getattr(session, "last_run_ns", 0)
        return dict(zip(fetch, arrays))

    def compiled_model_path(self) -> Optional[str]:
        """The optimized graph that runs when level="compiled", else None."""
        return self._path if self.level == "compiled" else None
