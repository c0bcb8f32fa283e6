import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(os.environ.get("MI_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
BINARY = os.environ.get("MODEL_INSPECTOR", str(ROOT / "build" / "src" / "cli" / "model-inspector"))
FIXTURES = ROOT / "test" / "fixtures"
SCHEMAS = ROOT / "docs" / "reference" / "schemas"
# Real public samples copied into the project (origins: samples/SOURCES.md).
SAMPLES = FIXTURES / "samples"

# The Python package as built (src/python): ctest passes its folder
# (MI_PYTHON_PACKAGE); by hand, ./build's. First on sys.path, and on
# PYTHONPATH for the interpreters the tests start (runner, workers). A
# sanitizer build does not build the package: there the interpreter's own
# (setup.sh's .pth, the normal build's) is imported (test/CMakeLists.txt).
# Without any, the package's tests fail at import.
BUILD_DIR = pathlib.Path(os.environ.get("MI_BUILD_DIR", ROOT / "build"))
PACKAGE = os.environ.get("MI_PYTHON_PACKAGE") or str(BUILD_DIR / "python")
if PACKAGE not in sys.path:
    sys.path.insert(0, PACKAGE)
if PACKAGE not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (PACKAGE, os.environ.get("PYTHONPATH")) if p)


def committed(path):
    """A committed fixture: a missing one fails the test, it never skips."""
    assert path.exists(), f"committed fixture missing: {path} (see test/fixtures/samples/SOURCES.md)"
    return path


def run(*args, check=True):
    proc = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"model-inspector {' '.join(map(str, args))} exited "
                             f"{proc.returncode}: {proc.stderr}")
    return proc


@pytest.fixture
def mi():
    return run
