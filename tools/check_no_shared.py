#!/usr/bin/env python3
"""Checks that nothing the build or the tests run reads the workspace's
shared folder beside the repository (`../shared`): the project builds and
its tests pass on a clone of the project alone. Real samples a test needs
are copied into test/fixtures/samples/ with their origin (SOURCES.md).

Allowed: Markdown files (documentation may say where a fixture came from),
and bench/shared_dir.sh, the one place benchmarks find peer tools and large
samples (benchmarks are not tests; it fails clearly when they are absent).

Usage: check_no_shared.py REPO_ROOT
"""
import pathlib
import re
import sys

SCANNED = ["src", "test", "tools", "scripts", "cmake", "bench", "web", ".ci",
           "CMakeLists.txt"]
SKIPPED_DIRS = {"node_modules", "dist", ".git", "__pycache__"}
ALLOWED = {"bench/shared_dir.sh", "tools/check_no_shared.py"}
# A path to the shared folder, however it is spelt: "../shared",
# "/work/shared", pathlib's `ROOT.parent / "shared"`, os.path.join("..",
# "shared").
PATTERNS = [
    re.compile(r"\.\./shared\b"),
    re.compile(r"/work/shared\b"),
    re.compile(r"parents?(\[\d+\])?\s*/\s*[\"']shared[\"']"),
    re.compile(r"[\"']\.\.[\"']\s*,\s*[\"']shared[\"']"),
]


def files(root):
    for name in SCANNED:
        top = root / name
        if top.is_file():
            yield top
            continue
        if not top.is_dir():
            continue
        stack = [top]
        while stack:
            d = stack.pop()
            for p in sorted(d.iterdir()):
                if p.is_symlink():
                    continue
                if p.is_dir():
                    if p.name not in SKIPPED_DIRS and not p.name.startswith("build"):
                        stack.append(p)
                elif p.is_file():
                    yield p


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    problems = []
    scanned = 0
    for path in files(root):
        rel = path.relative_to(root).as_posix()
        if rel in ALLOWED or path.suffix == ".md":
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary fixtures: models, gzipped traces
        scanned += 1
        for lineno, line in enumerate(text.splitlines(), 1):
            if any(p.search(line) for p in PATTERNS):
                problems.append(f"{rel}:{lineno}: refers to the shared folder beside "
                                f"the repository: {line.strip()[:120]}")
    if scanned < 100:
        print(f"check_no_shared: only {scanned} files scanned under {root}; "
              "expected the repository root", file=sys.stderr)
        return 1
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} reference(s) to ../shared: copy what a test needs "
              "into test/fixtures/samples/ (origin in its SOURCES.md); benchmarks "
              "use bench/shared_dir.sh", file=sys.stderr)
        return 1
    print(f"check_no_shared: {scanned} files, no reference to ../shared")
    return 0


if __name__ == "__main__":
    sys.exit(main())
