#!/usr/bin/env python3
"""Golden test of the flat layout (test/golden/layout/README.md).

Usage: layout_golden.py MI_BENCH_LAYOUT GOLDEN_DIR [--update]

Lays out every NAME.graph.json in GOLDEN_DIR (arguments from NAME.args)
and compares the layout file byte for byte with NAME.layout.json; with
--update, writes it instead. Exits 1 on a difference, naming the first
differing field.
"""
import json
import pathlib
import subprocess
import sys
import tempfile


def first_difference(expected, actual, path="$"):
    if type(expected) is not type(actual):
        return f"{path}: {expected!r} != {actual!r}"
    if isinstance(expected, dict):
        for key in sorted(set(expected) | set(actual)):
            if key not in expected or key not in actual:
                return f"{path}.{key}: present on one side only"
            d = first_difference(expected[key], actual[key], f"{path}.{key}")
            if d:
                return d
        return None
    if isinstance(expected, list):
        if len(expected) != len(actual):
            return f"{path}: length {len(expected)} != {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            d = first_difference(e, a, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if expected == actual else f"{path}: {expected!r} != {actual!r}"


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, golden = argv[1], pathlib.Path(argv[2])
    update = "--update" in argv[3:]
    graphs = sorted(golden.glob("*.graph.json"))
    if not graphs:
        print(f"layout_golden: no *.graph.json in {golden}", file=sys.stderr)
        return 2
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for graph in graphs:
            name = graph.name[: -len(".graph.json")]
            args_file = golden / f"{name}.args"
            args = args_file.read_text().split() if args_file.exists() else []
            out = pathlib.Path(tmp) / f"{name}.layout.json"
            run = subprocess.run([binary, str(graph), "--out", str(out), *args],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                print(f"FAIL {name}: exit {run.returncode}: {run.stderr.strip()}")
                failed += 1
                continue
            actual = out.read_bytes()
            expected_path = golden / f"{name}.layout.json"
            if update:
                expected_path.write_bytes(actual)
                print(f"updated {expected_path}")
                continue
            if not expected_path.exists():
                print(f"FAIL {name}: {expected_path} missing (run with --update)")
                failed += 1
                continue
            expected = expected_path.read_bytes()
            if expected != actual:
                diff = first_difference(json.loads(expected), json.loads(actual))
                print(f"FAIL {name}: differs from {expected_path.name}: "
                      f"{diff or 'formatting'}")
                failed += 1
            else:
                print(f"ok   {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
