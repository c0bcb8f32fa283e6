#!/usr/bin/env python3
"""Runs the bad-input corpus: every entry of test/bad_inputs/*/manifest.json
is given to `model-inspector summary`, which must exit with the expected
code, print every expected message fragment on stderr, never crash (signal
or sanitizer report) and write nothing to stdout on failure.

Usage: run_bad_inputs.py MODEL_INSPECTOR_BINARY REPO_ROOT
"""
import json
import pathlib
import subprocess
import sys


def main():
    binary, root = sys.argv[1], pathlib.Path(sys.argv[2])
    manifests = sorted((root / "test" / "bad_inputs").glob("*/manifest.json"))
    if not manifests:
        print("no bad-input manifests found", file=sys.stderr)
        return 1
    failures, count = [], 0
    for manifest in manifests:
        for entry in json.loads(manifest.read_text()):
            count += 1
            path = manifest.parent / entry["file"]
            args = [binary, "summary", "--quiet", str(path)] + entry.get("args", [])
            proc = subprocess.run(args, capture_output=True, text=True,
                                  errors="replace", timeout=60)
            where = f"{manifest.parent.name}/{entry['file']}"
            if proc.returncode != entry["exit_code"]:
                failures.append(f"{where}: exit {proc.returncode}, expected "
                                f"{entry['exit_code']}; stderr: {proc.stderr.strip()[:300]}")
                continue
            for fragment in entry.get("message", []):
                if fragment not in proc.stderr:
                    failures.append(f"{where}: stderr lacks {fragment!r}: "
                                    f"{proc.stderr.strip()[:300]}")
            if "AddressSanitizer" in proc.stderr or "runtime error:" in proc.stderr:
                failures.append(f"{where}: sanitizer report: {proc.stderr[:500]}")
            if entry["exit_code"] != 0 and proc.stdout.strip():
                failures.append(f"{where}: printed output although it failed")
    for f in failures:
        print("FAIL", f)
    print(f"{count - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
