"""msprobe dumps imported as probe data (model_inspector.import_msprobe).

Expected values come from the dump itself, read with the json module in the
test (test/fixtures/msprobe/pytorch_statistics/dump.json, a real msprobe
statistics dump), and, for tensor dumps the test writes in msprobe's layout,
from numpy over the written arrays.
"""

import json
import math
import os

import numpy as np
import pytest

from conftest import committed, FIXTURES


import model_inspector as mi  # noqa: E402

DUMP = FIXTURES / "msprobe" / "pytorch_statistics"


def tensor_items(name, entry):
    """(probe suffix, item) of an entry's tensors, as the docs name them."""
    out = []

    def flat(items):
        for item in items or []:
            if isinstance(item, list):
                yield from flat(item)
            else:
                yield item

    if name.endswith(".backward"):
        out = [(f"grad_in{k}", i) for k, i in enumerate(flat(entry.get("input")))]
        out += [(f"grad{k}", i) for k, i in enumerate(flat(entry.get("output")))]
        return [(s, i) for s, i in out if isinstance(i, dict) and i.get("type") == "torch.Tensor"]
    args = list(flat(entry.get("input_args")))
    for k, item in enumerate(args):
        out.append((f"in{k}", item))
    for key, item in (entry.get("input_kwargs") or {}).items():
        for sub in flat([item]):
            out.append((f"in.{key}", sub))
    for k, item in enumerate(flat(entry.get("output"))):
        out.append((f"{k}", item))
    return [(s, i) for s, i in out if isinstance(i, dict) and i.get("type") == "torch.Tensor"]


def as_number(v):
    if isinstance(v, bool):
        return float(v)
    return None if v is None else float(v)


def test_statistics_equal_the_files_numbers(tmp_path):
    dump = json.loads(committed(DUMP / "dump.json").read_text())
    assert dump["task"] == "statistics"
    runs = mi.import_msprobe(DUMP, tmp_path)
    assert len(runs) == 1
    store = mi.ProbeStore(tmp_path)
    rows = {r["probe"]: r for r in store.probes(runs[0])}
    expected = 0
    for order, (name, entry) in enumerate(dump["data"].items()):
        for suffix, item in tensor_items(name, entry):
            expected += 1
            row = rows[f"{name}:{suffix}"]
            assert row["node"] == name
            assert row["order"] == order
            stats = row["stats"]
            assert stats["shape"] == item["shape"]
            assert stats["dtype"] == item["dtype"].split(".")[-1]
            assert stats["count"] == math.prod(item["shape"])
            for key, stat in (("Max", "max"), ("Min", "min"), ("Mean", "mean"), ("Norm", "l2")):
                assert stats[stat] == as_number(item[key]), (name, suffix, key)
    assert expected == len(rows) > 30
    run = store.runs()[0]
    assert run["backend"] == "msprobe"
    assert run["model"] == "pytorch"


def test_tensor_dump_keeps_the_tensors(tmp_path):
    """A task "tensor" dump as msprobe lays it out: dump.json entries whose
    items name their file (data_name) in dump_tensor_data/."""
    import torch
    rank = tmp_path / "dump" / "step0" / "rank0"
    (rank / "dump_tensor_data").mkdir(parents=True)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 2)).astype(np.float32)
    y = np.maximum(x, 0)
    np.save(rank / "dump_tensor_data" / "Functional.relu.0.forward.input.0.npy", x)
    torch.save(torch.from_numpy(y), rank / "dump_tensor_data" / "Functional.relu.0.forward.output.0.pt")

    def item(a, data_name):
        return {"type": "torch.Tensor", "dtype": "torch.float32", "shape": list(a.shape),
                "Max": float(a.max()), "Min": float(a.min()), "Mean": float(a.mean()),
                "Norm": float(np.linalg.norm(a)), "requires_grad": False, "data_name": data_name}

    (rank / "dump.json").write_text(json.dumps({
        "task": "tensor", "level": "L1", "framework": "pytorch", "dump_data_dir": None,
        "data": {"Functional.relu.0.forward": {
            "input_args": [item(x, "Functional.relu.0.forward.input.0.npy")],
            "input_kwargs": {"inplace": False},
            "output": [item(y, "Functional.relu.0.forward.output.0.pt")]}}}))
    runs = mi.import_msprobe(tmp_path / "dump", tmp_path / "run")
    store = mi.ProbeStore(tmp_path / "run")
    run = store.runs()[0]
    assert run["label"] == os.path.join("step0", "rank0")
    np.testing.assert_array_equal(store.tensor("Functional.relu.0.forward:in0", runs[0]), x)
    np.testing.assert_array_equal(store.tensor("Functional.relu.0.forward:0", runs[0]), y)
    stats = store.stats("Functional.relu.0.forward:0", runs[0])
    assert stats["max"] == pytest.approx(float(y.max()))
    assert stats["l2"] == pytest.approx(float(np.linalg.norm(y)), rel=1e-6)
    assert stats["zero"] == int((y == 0).sum())


def test_compare_two_dumps_by_statistics(tmp_path):
    """A copy of the dump with one output's Max tripled: msprobe's
    statistics rule (relative error of Max above 0.5) fails that probe, and
    it is the first divergent node in the file's order."""
    dump = json.loads(committed(DUMP / "dump.json").read_text())
    names = list(dump["data"])
    target = None
    for name in names:
        out = dump["data"][name].get("output") or []
        if out and isinstance(out[0], dict) and isinstance(out[0].get("Max"), float) \
                and out[0]["Max"] != 0:
            target = name
            out[0]["Max"] *= 3
            break
    assert target is not None
    other = tmp_path / "other"
    other.mkdir()
    (other / "dump.json").write_text(json.dumps(dump))
    res = mi.compare(DUMP, other)
    assert res["match"] == "name"
    assert not res["pass"]
    assert res["failed"] == 1
    assert res["first_divergent_node"] == target
    failed = res["entries"][res["first_divergent"]]
    assert failed["mode"] == "statistics"
    assert failed["stats"]["max_rel_err"] == pytest.approx(2.0)
    same = mi.compare(DUMP, DUMP)
    assert same["pass"] and same["failed"] == 0 and same["compared"] == len(same["entries"])


def test_missing_dump_names_the_folder(tmp_path):
    with pytest.raises(mi.NotFound, match="no msprobe dump.json"):
        mi.import_msprobe(tmp_path, tmp_path / "run")
