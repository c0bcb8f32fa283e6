"""--memory-limit and MI_MEMORY_LIMIT: an input that would pass the limit
fails with exit code 7 and a message naming the file, the place and the
limit; nothing is written. The inputs are gzip bombs written here (a few
hundred KiB on disk)."""

import gzip
import os
import re
import subprocess

from conftest import BINARY, FIXTURES, committed, run

TINY_EVENT = b'{"ph":"X","name":"k","ts":1,"dur":1,"pid":1,"tid":1},'


def write_trace_bomb(path, events):
    # ~100 MiB of JSON for 2M events; a task costs ~100 bytes of columns
    # (src/trace/trace.h), so 2M events need far more than 32 MiB.
    block = TINY_EVENT * 20000
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(b'{"traceEvents":[')
        for _ in range(events // 20000):
            f.write(block)
        f.write(b"{}]}")


def test_export_stops_at_the_limit_and_writes_nothing(tmp_path):
    bomb = tmp_path / "bomb.json.gz"
    write_trace_bomb(bomb, 2_000_000)
    out = tmp_path / "out"
    proc = run("export", bomb, "--out", out, "--memory-limit", "32M", check=False)
    assert proc.returncode == 7, proc.stderr
    # 32M = 32 MiB: the limit as given, in the unit it was given.
    assert "would exceed the memory limit of 32 MiB" in proc.stderr
    assert "--memory-limit SIZE or MI_MEMORY_LIMIT" in proc.stderr
    assert re.search(re.escape(str(bomb)) + r"@byte \d+: ", proc.stderr), proc.stderr
    assert not out.exists() or not any(out.iterdir())


def test_environment_sets_the_limit_and_the_flag_wins(tmp_path):
    bomb = tmp_path / "bomb.json.gz"
    write_trace_bomb(bomb, 2_000_000)
    env = dict(os.environ, MI_MEMORY_LIMIT="1.5GiB")
    # 1.5 GiB is enough for 2M tasks; --memory-limit overrides it.
    proc = subprocess.run([BINARY, "summary", str(bomb), "--memory-limit", "40MiB"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 7, proc.stderr
    assert "memory limit of 40 MiB" in proc.stderr
    env["MI_MEMORY_LIMIT"] = "40M"
    proc = subprocess.run([BINARY, "summary", str(bomb)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 7, proc.stderr
    assert "memory limit of 40 MiB" in proc.stderr
    assert proc.stdout == ""


def test_open_refuses_a_run_past_the_limit(tmp_path):
    # The server's opener (runs given on the command line, and the pair
    # route) uses the same budget; with no run left to serve, `open` exits
    # with the error instead of serving.
    bomb = tmp_path / "bomb.json.gz"
    write_trace_bomb(bomb, 2_000_000)
    proc = run("open", bomb, "--memory-limit", "32M", "--no-browser", check=False)
    assert proc.returncode == 7, proc.stderr
    assert "would exceed the memory limit of 32 MiB" in proc.stderr


def test_bad_sizes_are_usage_errors(tmp_path):
    model = committed(FIXTURES / "resnet18" / "model.onnx")
    proc = run("summary", model, "--memory-limit", "lots", check=False)
    assert proc.returncode == 2
    assert "512M" in proc.stderr
    env = dict(os.environ, MI_MEMORY_LIMIT="4X")
    proc = subprocess.run([BINARY, "summary", str(model)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 2
    assert "MI_MEMORY_LIMIT" in proc.stderr


def test_a_run_within_the_limit_reads_as_without_it():
    # resnet18 and its ONNX Runtime profile fit in 16 MiB (the 1 MB model,
    # a small trace): the limit changes nothing about the result.
    run_dir = committed(FIXTURES / "resnet18")
    unlimited = run("summary", run_dir, "--format", "json")
    limited = run("--memory-limit", "16M", "summary", run_dir, "--format", "json")
    assert limited.stdout == unlimited.stdout
    assert limited.stdout.startswith("{")
