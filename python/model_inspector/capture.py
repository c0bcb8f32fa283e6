"""capture(): a run directory recorded around the user's own code.

    with model_inspector.capture("runs/r1"):
        model(x)                                  # PyTorch
    # or
    with model_inspector.capture("runs/r2"):
        sess = InferenceSession("model.onnx")     # ONNX Runtime
        sess.run(None, {"input": x})

does the four steps of `model-inspector start` / `export` for the user and
writes the layout `start` prepares (manifest.json, model.onnx, ort/, torch/)
plus the dumps `export --input-dir` writes (model-inspector-export/), so
that `model-inspector summary runs/r1` reads the run with its framework
graph, its compiled graph linked to it, and its trace.

PyTorch code: torch.nn.Module.__call__ is hooked for the duration; the first
top-level module called (a module called while no other module call is in
progress) and its inputs are recorded. With runtime=True torch.profiler
records the block (torch/trace.json). At the end the module is exported
with torch.onnx.export (opset 13, constant folding, eval mode: BatchNorm
folds into Conv as in the fixtures) to model.onnx and, with graph=True, the
export is compiled by ONNX Runtime at `optimization` into
ort/model.optimized.onnx.

ONNX Runtime code: sessions created inside the block (this package's
model_inspector.backends.onnxruntime.InferenceSession, and the Python
onnxruntime.InferenceSession when that package is installed, patched for
the duration) get their options set: graph=True saves the optimized model
(optimized_model_filepath), runtime=True turns ONNX Runtime's profiler on.
The first session's model file is copied to model.onnx; its profile, ended
when the block ends, becomes ort/onnxruntime_profile.json. Sessions created
before the block are not recorded. torch is hooked only when it is already
imported when the block starts.
"""

from __future__ import annotations

import datetime
import inspect
import json
import os
import pathlib
import shutil
import sys
from typing import Optional

MANIFEST = "manifest.json"
FRAMEWORK_MODEL = "model.onnx"
COMPILED_MODEL = "ort/model.optimized.onnx"
ORT_PROFILE = "ort/onnxruntime_profile.json"
TORCH_TRACE = "torch/trace.json"
EXPORT_DIR = "model-inspector-export"


class CaptureError(RuntimeError):
    """The block ran nothing capture could record, or recording failed."""


def write_manifest(run_dir, *, graph: bool, runtime: bool, compiled: bool,
                   backend: str, extra: Optional[dict] = None) -> pathlib.Path:
    """manifest.json as `model-inspector start` writes it (the reader uses
    files.framework_model / files.compiled_model; the other keys record how
    the run was made)."""
    run_dir = pathlib.Path(run_dir)
    files = {"framework_model": FRAMEWORK_MODEL}
    if compiled:
        files["compiled_model"] = COMPILED_MODEL
    doc = {
        "model_inspector_run": 1,
        "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "backend": backend,
        "enable_graph": bool(graph),
        "enable_runtime": bool(runtime),
        "files": files,
    }
    if extra:
        doc.update(extra)
    path = run_dir / MANIFEST
    tmp = path.with_name(f".{MANIFEST}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


class capture:
    """Context manager recording a run directory around PyTorch or ONNX
    Runtime code (see the module docstring). Attributes after the block:
    run_dir, backend ("pytorch" | "onnxruntime"), framework_model,
    compiled_model, trace, export_dir (None where not written)."""

    def __init__(self, run_dir, graph: bool = True, runtime: bool = True, *,
                 optimization: str = "all", opset: int = 13, export: bool = True,
                 ort_runtime: str = "auto"):
        self.run_dir = pathlib.Path(run_dir).absolute()
        self.graph = graph
        self.runtime = runtime
        self.optimization = optimization
        self.opset = opset
        self.export = export
        self.ort_runtime = ort_runtime
        self.backend: Optional[str] = None
        self.framework_model: Optional[pathlib.Path] = None
        self.compiled_model: Optional[pathlib.Path] = None
        self.trace: Optional[pathlib.Path] = None
        self.export_dir: Optional[pathlib.Path] = None
        self._undo = []
        self._torch = None
        self._profiler = None
        self._top_call: Optional[tuple] = None
        self._depth = 0
        self._sessions = []          # (session, kind) created inside the block
        self._active = False

    # -- entering -----------------------------------------------------------
    def __enter__(self):
        if (self.run_dir / MANIFEST).exists():
            raise FileExistsError(f"{self.run_dir}: already holds a run ({MANIFEST}); "
                                  "choose a new run directory")
        for sub in ("ort", "torch"):
            (self.run_dir / sub).mkdir(parents=True, exist_ok=True)
        self._active = True
        try:
            self._hook_onnxruntime()
            if "torch" in sys.modules:
                self._hook_torch()
        except BaseException:
            self._unhook()
            raise
        return self

    def _hook_torch(self):
        import torch  # noqa: PLC0415 - already imported by the user's code
        self._torch = torch
        original = torch.nn.Module.__call__
        me = self

        def call(module, *args, **kwargs):
            if me._depth == 0 and me._top_call is None and me._active:
                me._top_call = (module, _detached(args, torch), _detached(kwargs, torch))
            me._depth += 1
            try:
                return original(module, *args, **kwargs)
            finally:
                me._depth -= 1

        torch.nn.Module.__call__ = call
        self._undo.append(lambda: setattr(torch.nn.Module, "__call__", original))
        if self.runtime:
            prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                          record_shapes=True)
            prof.__enter__()
            self._profiler = prof

    def _hook_onnxruntime(self):
        from .backends import onnxruntime as mi_ort  # noqa: PLC0415
        me = self

        def on_create(session):
            if not me._active or mi_ort.creating_internal_session():
                return
            me._configure_session_options(session.options, session_count=len(me._sessions))
            me._sessions.append((session, "node", session.model_path))

        mi_ort.InferenceSession._on_create.append(on_create)
        self._undo.append(lambda: mi_ort.InferenceSession._on_create.remove(on_create))

        ort_py = mi_ort.python_onnxruntime()
        if ort_py is None:
            return
        original_init = ort_py.InferenceSession.__init__

        def init(session, path_or_bytes, sess_options=None, providers=None, *args, **kwargs):
            if me._active and not mi_ort.creating_internal_session():
                if sess_options is None:
                    sess_options = ort_py.SessionOptions()
                me._configure_session_options(sess_options, session_count=len(me._sessions))
                model = path_or_bytes if isinstance(path_or_bytes, (bytes, bytearray)) \
                    else os.path.abspath(os.fspath(path_or_bytes))
                me._sessions.append((session, "python", model))
            return original_init(session, path_or_bytes, sess_options, providers, *args, **kwargs)

        ort_py.InferenceSession.__init__ = init
        self._undo.append(lambda: setattr(ort_py.InferenceSession, "__init__", original_init))

    def _configure_session_options(self, options, session_count: int):
        # The first session is the run's; later ones (a second model) run
        # as the user set them up.
        if session_count:
            return
        if self.graph:
            options.optimized_model_filepath = str(self.run_dir / COMPILED_MODEL)
        if self.runtime:
            options.enable_profiling = True
            options.profile_file_prefix = str(self.run_dir / "ort" / "onnxruntime_profile")

    # -- leaving ------------------------------------------------------------
    def _unhook(self):
        while self._undo:
            self._undo.pop()()

    def __exit__(self, exc_type, exc, tb):
        self._active = False
        profiler, self._profiler = self._profiler, None
        try:
            if profiler is not None:
                profiler.__exit__(None, None, None)
        finally:
            self._unhook()
        if self._sessions:
            self._finish_onnxruntime()
        elif self._top_call is not None:
            self._finish_torch(profiler)
        elif exc_type is None:
            raise CaptureError(
                f"{self.run_dir}: nothing to record: no torch.nn.Module was called and no "
                "ONNX Runtime session was created inside the capture block")
        else:
            return False
        write_manifest(self.run_dir, graph=self.graph, runtime=self.runtime,
                       compiled=self.compiled_model is not None, backend=self.backend,
                       extra={"captured_by": "model_inspector.capture"})
        if self.export and exc_type is None:
            from .run import open as open_run  # noqa: PLC0415
            with open_run(str(self.run_dir)) as run:
                self.export_dir = run.export(self.run_dir / EXPORT_DIR)
        return False

    def _finish_torch(self, profiler):
        torch = self._torch
        self.backend = "pytorch"
        module, args, kwargs = self._top_call
        self.framework_model = self.run_dir / FRAMEWORK_MODEL
        export_module(module, args, kwargs, self.framework_model, opset=self.opset)
        if profiler is not None:
            self.trace = self.run_dir / TORCH_TRACE
            profiler.export_chrome_trace(str(self.trace))
        if self.graph:
            from .backends.onnxruntime import compile_model  # noqa: PLC0415
            self.compiled_model = self.run_dir / COMPILED_MODEL
            compile_model(self.framework_model, self.compiled_model, self.optimization,
                          runtime=self.ort_runtime)
        del torch

    def _finish_onnxruntime(self):
        self.backend = "onnxruntime"
        session, kind, model = self._sessions[0]
        self.framework_model = self.run_dir / FRAMEWORK_MODEL
        if isinstance(model, (bytes, bytearray)):
            self.framework_model.write_bytes(model)
        else:
            shutil.copyfile(model, self.framework_model)
        if self.runtime:
            profile = session.end_profiling()
            if profile:
                self.trace = self.run_dir / ORT_PROFILE
                os.replace(profile, self.trace)
        compiled = self.run_dir / COMPILED_MODEL
        if self.graph and compiled.is_file():
            self.compiled_model = compiled


def _detached(value, torch):
    """The recorded call's inputs, detached from autograd and copied, so the
    export sees the values the call saw."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple):
        return tuple(_detached(v, torch) for v in value)
    if isinstance(value, list):
        return [_detached(v, torch) for v in value]
    if isinstance(value, dict):
        return {k: _detached(v, torch) for k, v in value.items()}
    return value


def _input_names(module, args) -> Optional[list]:
    """The forward() parameter names of the positional inputs, as the ONNX
    graph's input names."""
    try:
        params = [p for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return None
    if len(params) < len(args):
        return None
    return [p.name for p in params[:len(args)]]


def export_module(module, args, kwargs, path, *, opset: int = 13) -> pathlib.Path:
    """torch.onnx.export of `module` called with `args` / `kwargs`, as the
    fixtures are exported (opset 13, constant folding, eval mode)."""
    import torch  # noqa: PLC0415
    path = pathlib.Path(path)
    example = tuple(args)
    if kwargs:
        example = example + (dict(kwargs),)
    names = _input_names(module, args)
    with torch.no_grad():
        torch.onnx.export(module, example, str(path), opset_version=opset,
                          do_constant_folding=True,
                          input_names=names if names else None)
    return path
