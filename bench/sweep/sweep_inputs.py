#!/usr/bin/python3
"""Peak memory and exit status of `model-inspector summary` (and `check` for
models) on every real sample, every fixture and bad input, and a crafted
set of gzip bombs: each file's exit code, signal (there must be none) and
peak RSS against the memory limit the sweep sets.

    bench/sweep/sweep_inputs.sh [--binary build/src/cli/model-inspector]
        [--limit 2G] [--markdown]

Run by hand, not by ctest: it reads the workspace's shared samples
(MI_SHARED, which bench/shared_dir.sh finds for sweep_inputs.sh). Peak RSS is the child's
ru_maxrss (os.wait4). Exit 1 when a run was killed by a signal or passed
the limit."""

import argparse
import gzip
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
SKIP_SUFFIXES = {".md", ".py", ".sh", ".mjs", ".gitignore"}
MODEL_SUFFIXES = (".onnx", ".om", ".onnxtxt", ".onnxtext", ".prototxt",
                  ".pbtxt", ".txt", ".om.json")


def parse_size(text):
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = t[-1] if t and t[-1] in units else ""
    return int(float(t[:-1] if unit else t) * units[unit])


def shared_dir():
    # Set by sweep_inputs.sh (bench/shared_dir.sh finds the folder).
    env = os.environ.get("MI_SHARED")
    if not env or not (pathlib.Path(env) / "samples").is_dir():
        sys.exit("no shared samples folder: run bench/sweep/sweep_inputs.sh "
                 "or set MI_SHARED")
    return pathlib.Path(env)


def inputs(shared):
    files = []
    for base in (shared / "samples", ROOT / "test" / "fixtures",
                 ROOT / "test" / "bad_inputs"):
        for p in sorted(base.rglob("*")):
            if not p.is_file() or p.suffix in SKIP_SUFFIXES:
                continue
            if "node_modules" in p.parts or p.name in ("package.json",
                                                       "package-lock.json"):
                continue
            files.append(p)
    return files


def run_directories(shared):
    """Run folders read as a whole (a profiler output, a cluster, a run)."""
    dirs = []
    for base in (shared / "samples" / "ascend", shared / "samples" / "cluster",
                 ROOT / "test" / "fixtures"):
        dirs += sorted(p for p in base.iterdir()
                       if p.is_dir() and p.name != "node_modules")
    return dirs


def write_bombs(folder):
    """The three memory cases an attacker used, at their sizes on disk."""
    folder = pathlib.Path(folder)
    bombs = []
    # A CANN op_summary whose quoted field never closes (256 MiB; the
    # attacker's was 4 GB: the 16 MiB field cap stops either).
    p = folder / "op_summary_0.csv.gz"
    with gzip.open(p, "wb", compresslevel=6) as f:
        f.write(b"Op Name,OP Type,Task Type,Task Start Time(us),"
                b"Task Duration(us)\nconv1,Conv2D,AI_CORE,1,\"")
        block = (b"x" * 4095 + b"\n") * 256
        for _ in range(256):
            f.write(block)
    bombs.append(p)
    # ~3 MB: ONNX text that expands to 3 GiB.
    p = folder / "bomb.onnxtxt.gz"
    with gzip.open(p, "wb", compresslevel=6) as f:
        f.write(b"ir_version: 7\ngraph {\n")
        block = b"  doc_string: \"" + b"a" * (1 << 20) + b"\"\n"
        for _ in range(3072):
            f.write(block)
        f.write(b"}\n")
    bombs.append(p)
    # 60M tiny trace events (3.2 GB of JSON, ~10 MB gzipped).
    p = folder / "bomb.json.gz"
    with gzip.open(p, "wb", compresslevel=6) as f:
        f.write(b'{"traceEvents":[')
        block = b'{"ph":"X","name":"k","ts":1,"dur":1,"pid":1,"tid":1},' * 100000
        for _ in range(600):
            f.write(block)
        f.write(b"{}]}")
    bombs.append(p)
    return bombs


def run(binary, args, env):
    start = time.monotonic()
    proc = subprocess.Popen([binary, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env)
    stderr = b""
    # stderr is short (an error, diagnostics): read it, then reap with wait4.
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    signal = -code if code < 0 else 0
    last = stderr.decode(errors="replace").strip().splitlines()
    return {"exit": code if code >= 0 else None, "signal": signal,
            "rss": usage.ru_maxrss * 1024, "wall": wall,
            "message": last[-1][:160] if last and code != 0 else ""}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=str(ROOT / "build/src/cli/model-inspector"))
    ap.add_argument("--limit", default="2G",
                    help="MI_MEMORY_LIMIT for every run (default 2G)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    limit = parse_size(args.limit)
    env = dict(os.environ, MI_MEMORY_LIMIT=args.limit)
    shared = shared_dir()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        targets = [("summary", p) for p in inputs(shared)]
        targets += [("check", p) for _, p in targets
                    if str(p).endswith(MODEL_SUFFIXES)]
        targets += [("summary", p) for p in run_directories(shared)]
        targets += [("summary", p) for p in write_bombs(tmp)]
        for command, path in targets:
            r = run(args.binary, [command, str(path), "-q"], env)
            shown = str(path)
            for base, name in ((str(shared / "samples"), "samples"),
                               (str(ROOT), "."), (tmp, "(crafted)")):
                if shown.startswith(base):
                    shown = name + shown[len(base):]
            size = (sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
                    if path.is_dir() else path.stat().st_size)
            r.update(command=command, path=shown + ("/" if path.is_dir() else ""),
                     size=size)
            rows.append(r)
    bad = [r for r in rows if r["signal"] or r["rss"] >= limit]
    sep = "|" if args.markdown else " "
    print(f"memory limit {args.limit} ({limit} bytes); {len(rows)} runs; "
          f"signals: {sum(1 for r in rows if r['signal'])}; "
          f"peak RSS max {max(r['rss'] for r in rows) / 2**20:.0f} MiB")
    if args.markdown:
        print("\n| command | file | size | exit | signal | peak RSS | wall |")
        print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        cells = [r["command"], r["path"], f"{r['size'] / 1e6:.2f} MB",
                 str(r["exit"]), str(r["signal"] or "-"),
                 f"{r['rss'] / 2**20:.0f} MiB", f"{r['wall']:.2f} s"]
        if args.markdown:
            print("| " + " | ".join(cells) + " |")
        else:
            print("  ".join(cells) + ("  " + r["message"] if r["message"] else ""))
    # Per group: runs, exit codes, signals, the largest peak RSS.
    groups = {}
    for r in rows:
        group = ("crafted" if r["path"].startswith("(crafted)") else
                 "samples" if r["path"].startswith("samples") else
                 "bad inputs" if "/bad_inputs/" in r["path"] else "fixtures")
        if r["path"].endswith("/"):
            group += " (run dirs)"
        groups.setdefault((group, r["command"]), []).append(r)
    print()
    if args.markdown:
        print("| inputs | command | runs | exit codes | signals | largest peak RSS |")
        print("|---|---|---:|---|---:|---:|")
    for (group, command), rs in sorted(groups.items()):
        codes = {}
        for r in rs:
            codes[r["exit"]] = codes.get(r["exit"], 0) + 1
        top = max(rs, key=lambda r: r["rss"])
        cells = [group, command, str(len(rs)),
                 ", ".join(f"{k}: {v}" for k, v in sorted(codes.items(), key=str)),
                 str(sum(1 for r in rs if r["signal"])),
                 f"{top['rss'] / 2**20:.0f} MiB ({pathlib.PurePath(top['path']).name})"]
        print(("| " + " | ".join(cells) + " |") if args.markdown else "  ".join(cells))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
