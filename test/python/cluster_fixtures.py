"""Generated multi-rank NCCL clusters for the tests
(test/fixtures/cluster_nccl/README.md says how they are made and what a
correct diagnosis of each says).

    from cluster_fixtures import nccl_cluster
    folder, truth = nccl_cluster("--overlap-kernels", "3")

Clusters are generated once per set of arguments into the build folder
(`<build>/test/cluster_nccl/<key>`, beside the binary under test; the
system's temporary folder when the binary lives elsewhere) and reused while
the generator, the source trace and the arguments are unchanged. Nothing
generated is checked in.
"""
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from conftest import BINARY, FIXTURES, committed

GENERATOR = FIXTURES / "cluster_nccl" / "make_nccl_cluster.py"
SOURCE = FIXTURES / "samples" / "traces" / "kineto" / "tracelens" / "b200__eager_trace.json.gz"


def _cache_root():
    build = pathlib.Path(BINARY).resolve().parents[2]
    if (build / "CMakeCache.txt").exists():
        return build / "test" / "cluster_nccl"
    return pathlib.Path(tempfile.gettempdir()) / "mi_test_cluster_nccl"


def nccl_cluster(*args):
    """(folder of rank-<r>.pt.trace.json.gz, the truth dict) for `args`."""
    committed(GENERATOR)
    committed(SOURCE)
    h = hashlib.sha256()
    h.update(GENERATOR.read_bytes())
    h.update(SOURCE.read_bytes())
    h.update(json.dumps(args).encode())
    key = h.hexdigest()[:16]
    root = _cache_root()
    folder = root / key / "ranks"
    truth = root / key / "truth.json"
    if not truth.exists():
        tmp = root / (key + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        subprocess.run([sys.executable, str(GENERATOR), str(tmp / "ranks"), "--truth",
                        str(tmp / "truth.json"), *args], check=True, capture_output=True, timeout=600)
        shutil.rmtree(root / key, ignore_errors=True)
        os.replace(tmp, root / key)
    return folder, json.loads(truth.read_text())


def in_child(script, *args):
    """Runs `python3 script args...` and returns the JSON it prints, its
    numbers as exact decimals. Tests read the large rank files in a child:
    a pytest process grown by them would pass its size on to every
    process it starts later (Linux counts the forking process's resident
    set in the child's ru_maxrss), which peak-memory tests measure."""
    proc = subprocess.run([sys.executable, str(script), *map(str, args)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    from decimal import Decimal
    return json.loads(proc.stdout, parse_float=Decimal)

