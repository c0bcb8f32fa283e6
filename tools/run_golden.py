#!/usr/bin/env python3
"""Golden tests: each test/golden/<area>/<name>.cmd holds one command line
(arguments after the binary, paths relative to the repository root); its
expected stdout is <name>.out beside it. --update rewrites the .out files.

Usage: run_golden.py MODEL_INSPECTOR_BINARY REPO_ROOT [--update]
"""
import pathlib
import shlex
import subprocess
import sys
import difflib


def main():
    binary, root = sys.argv[1], pathlib.Path(sys.argv[2])
    update = "--update" in sys.argv[3:]
    cases = sorted((root / "test" / "golden").glob("*/*.cmd"))
    if not cases:
        print("no golden tests found", file=sys.stderr)
        return 1
    failures = 0
    for case in cases:
        args = shlex.split(case.read_text().strip())
        proc = subprocess.run([binary] + args, capture_output=True, text=True,
                              cwd=root, timeout=120)
        expected_path = case.with_suffix(".out")
        actual = proc.stdout + (f"[exit {proc.returncode}]\n" if proc.returncode else "")
        if update:
            expected_path.write_text(actual)
            continue
        expected = expected_path.read_text() if expected_path.exists() else ""
        if actual != expected:
            failures += 1
            print(f"FAIL {case.relative_to(root)}")
            sys.stdout.writelines(difflib.unified_diff(
                expected.splitlines(True), actual.splitlines(True),
                "expected", "actual", n=2))
            if proc.stderr:
                print("stderr:", proc.stderr[:1000])
    print(f"{len(cases) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
