"""Attaching the monitor to an unmodified script (`model-inspector trace`).

`model-inspector trace [--trigger SPEC]... [--window K] [--output F] -- CMD`
starts CMD with a folder holding a sitecustomize.py first on PYTHONPATH and
its settings in the environment variable MI_TRACE_CONFIG (JSON: output,
triggers, window, command, status). That sitecustomize.py runs the one it
hides (Debian's, a virtualenv's), takes MI_TRACE_CONFIG out of the
environment (processes the script starts are not traced) and calls
`install`, which:

- checks the trigger specs (a bad one: the status file says so, exit 2);
- wraps torch.optim.Optimizer.__init__: the first optimizer created gets a
  Monitor, on the model found from its parameters: of the modules alive
  then (gc), those holding parameters the optimizer holds, the outermost
  one holding the most of them;
- at exit writes the status file (JSON): whether a monitor attached, the
  model and optimizer classes, the snapshot's path and status, or why
  there is none ("the script created no torch.optim.Optimizer").
Later optimizers are not monitored (the status lists them).
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import sys
from typing import Optional

_STATE: dict = {}


def _write_status(extra: dict) -> None:
    path = _STATE.get("status_path")
    if not path:
        return
    data = dict(_STATE.get("status", {}))
    data.update(extra)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def fail(config_text: str, message: str, code: int) -> None:
    """Reports an error through the status file and ends the process (the
    script does not run)."""
    try:
        _STATE["status_path"] = json.loads(config_text).get("status")
    except ValueError:
        pass
    _write_status({"attached": False, "error": message, "code": code})
    print(f"model-inspector trace: {message}", file=sys.stderr)
    sys.stderr.flush()
    os._exit(code)


def find_model(optimizer) -> Optional[object]:
    """The module whose parameters `optimizer` holds (see the module
    docstring); None when no module holds any."""
    import torch
    wanted = {id(p) for group in optimizer.param_groups for p in group["params"]}
    # type(), not isinstance(): some objects warn when asked for __class__
    # (torch.distributed.reduce_op).
    modules = [o for o in gc.get_objects() if issubclass(type(o), torch.nn.Module)]
    holding = []
    for m in modules:
        n = sum(1 for p in m.parameters() if id(p) in wanted)
        if n:
            holding.append((m, n))
    inner = set()
    for m, _ in holding:
        for sub in m.modules():
            if sub is not m:
                inner.add(id(sub))
    roots = [(m, n) for m, n in holding if id(m) not in inner]
    if not roots:
        return None
    return max(roots, key=lambda mn: mn[1])[0]


def install(config_text: str) -> None:
    try:
        config = json.loads(config_text)
    except ValueError as e:
        fail(config_text, f"MI_TRACE_CONFIG is not JSON: {e}", 2)
    _STATE["status_path"] = config.get("status")
    _STATE["status"] = {"attached": False, "output": config.get("output"), "ignored_optimizers": []}
    from .triggers import parse_all
    try:
        specs = config.get("triggers") or None
        parse_all(specs)
        window = int(config.get("window", 5))
        if window < 0:
            raise ValueError(f"--window must be >= 0, found {window}")
    except (ValueError, TypeError) as e:
        fail(config_text, str(e), 2)
    try:
        import torch
    except ImportError as e:
        fail(config_text, f"{sys.executable} cannot import torch ({e}): trace monitors PyTorch "
             "training scripts", 3)

    original_init = torch.optim.Optimizer.__init__

    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        _on_optimizer(self, config, specs, window)

    __init__.__wrapped__ = original_init
    torch.optim.Optimizer.__init__ = __init__
    atexit.register(_at_exit)


def _on_optimizer(optimizer, config, specs, window) -> None:
    status = _STATE["status"]
    if "monitor" in _STATE or "error_attaching" in status:
        status["ignored_optimizers"].append(type(optimizer).__name__)
        return
    model = find_model(optimizer)
    if model is None:
        status["ignored_optimizers"].append(type(optimizer).__name__)
        return
    from .monitor import Monitor
    try:
        _STATE["monitor"] = Monitor(model, optimizer, triggers=specs, capture_window=window,
                                    output=config["output"], command=config.get("command"))
    except Exception as e:  # the script goes on unmonitored; the status says why
        status["error_attaching"] = f"{type(e).__name__}: {e}"
        print(f"model-inspector trace: could not attach the monitor: {e}", file=sys.stderr)
        return
    status.update(attached=True, model=type(model).__name__, optimizer=type(optimizer).__name__)
    _write_status({})  # a script killed before exit still tells the CLI it attached


def _at_exit() -> None:
    mon = _STATE.get("monitor")
    status = _STATE["status"]
    if mon is None:
        if "error_attaching" in status:
            _write_status({"error": status["error_attaching"]})
        elif status["ignored_optimizers"]:
            _write_status({"error": "no optimizer the script created holds a module's parameters"})
        else:
            _write_status({"error": "the script created no torch.optim.Optimizer: nothing to monitor"})
        return
    try:
        mon.close()
    except Exception as e:
        _write_status({"error": f"writing the snapshot failed: {type(e).__name__}: {e}"})
        raise
    _write_status({"snapshot_status": mon.status, "anomaly_step": mon.anomaly_step,
                   "steps": len(mon.steps), "triggers_fired": len(mon.trigger_rows)})
