#!/usr/bin/env python3
"""Golden SVG tests of `model-inspector render`: renders the bundled fixtures
and compares the SVGs byte for byte with docs/images/ (the pictures the
README and the docs show, so what a person looked at is what is tested).

After an intended change of the layout or the drawing, regenerate them all
with one command, then look at them (and commit them):

    python3 tools/render_golden.py build/src/cli/model-inspector . --update

Usage: render_golden.py MODEL_INSPECTOR_BINARY REPO_ROOT [--update]
"""
import difflib
import pathlib
import subprocess
import sys
import tempfile

# docs/images/<name>: render arguments (paths relative to the repository).
CASES = {
    "resnet18_framework.svg": ["test/fixtures/resnet18/model.onnx"],
    "resnet18_framework_collapsed.svg": ["test/fixtures/resnet18/model.onnx",
                                         "--max-items", "12", "--expand", "layer2",
                                         "--expand", "layer3/layer3.0"],
    "resnet18_ort_all_compiled.svg": ["test/fixtures/resnet18/ort_all", "--level", "compiled"],
    "resnet18_ort_all_fusion.svg": ["test/fixtures/resnet18/ort_all", "--groups", "fusion"],
    "transformer_framework.svg": ["test/fixtures/transformer/model.onnx"],
    "transformer_framework_collapsed.svg": ["test/fixtures/transformer/model.onnx",
                                            "--max-items", "30"],
    "transformer_ort_all_fusion.svg": ["test/fixtures/transformer/ort_all", "--groups", "fusion",
                                       "--max-items", "40"],
}


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, root = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
    update = "--update" in sys.argv[3:]
    images = root / "docs" / "images"
    failures = 0
    with tempfile.TemporaryDirectory(prefix="render_golden_") as tmp:
        for name, args in CASES.items():
            out = pathlib.Path(tmp) / name
            proc = subprocess.run([binary, "render", "--quiet", *args, "--out", str(out)],
                                  capture_output=True, text=True, cwd=root, timeout=300)
            if proc.returncode != 0:
                failures += 1
                print(f"FAIL {name}: render exited {proc.returncode}: {proc.stderr.strip()}")
                continue
            actual = out.read_bytes()
            expected_path = images / name
            if update:
                if not expected_path.exists() or expected_path.read_bytes() != actual:
                    expected_path.write_bytes(actual)
                    print(f"updated docs/images/{name}")
                continue
            expected = expected_path.read_bytes() if expected_path.exists() else b""
            if actual == expected:
                continue
            failures += 1
            print(f"FAIL docs/images/{name} differs from `render {' '.join(args)}`")
            diff = list(difflib.unified_diff(
                expected.decode(errors="replace").splitlines(True),
                actual.decode(errors="replace").splitlines(True),
                "expected", "actual", n=1))
            for line in diff[:12]:
                line = line.rstrip("\n")
                print(line if len(line) <= 160 else line[:160] + " ...")
            if len(diff) > 12:
                print(f"... {len(diff) - 12} more diff lines")
    if not update:
        print(f"{len(CASES) - failures} passed, {failures} failed")
        if failures:
            print("if the change is intended: python3 tools/render_golden.py "
                  f"{binary} {root} --update, then look at the SVGs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
