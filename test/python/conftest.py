import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(os.environ.get("MI_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
BINARY = os.environ.get("MODEL_INSPECTOR", str(ROOT / "build" / "src" / "cli" / "model-inspector"))
FIXTURES = ROOT / "test" / "fixtures"
SCHEMAS = ROOT / "docs" / "reference" / "schemas"
# Real public samples copied into the project (origins: samples/SOURCES.md).
SAMPLES = FIXTURES / "samples"


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
