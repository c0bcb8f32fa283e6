"""The timing diff of real run pairs against an independent reading of the
two trace files (diff_reference.py: the standard library's gzip and json),
and the gate's exit codes on the real ONNX Runtime pairs and the
overlap-lost pair (test/fixtures/diff_timing/README.md).

Pairs (test/fixtures/samples/SOURCES.md): bert-small on an H100 and on an
MI300X (TraceLens), and the same ResNet-50 training with DataLoader
num_workers 0 and 4 (kineto tb_plugin samples)."""

import json

import pytest

from conftest import FIXTURES, SAMPLES, committed, run
from diff_reference import medians, verdict

KINETO = SAMPLES / "traces" / "kineto"
PAIRS = {
    "bert h100 vs mi300": (
        KINETO / "tracelens" / "h100__gaunernst_bert-small-uncased__1016001.json.gz",
        KINETO / "tracelens" / "mi300__gaunernst_bert-small-uncased__1016001.json.gz",
    ),
    "resnet50 num_workers 0 vs 4": (
        KINETO / "tb_plugin" / "samples__resnet50_num_workers_0__worker0.1623143566756.pt.trace.json.gz",
        KINETO / "tb_plugin" / "samples__resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz",
    ),
}


def diff_json(base, new, *extra):
    proc = run("diff", base, new, "--format", "json", "--fail-on", "", *extra)
    return json.loads(proc.stdout)


def by_key(rows):
    return {r["key"]: r for r in rows}


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_real_pair_totals_equal_an_independent_reading(pair):
    base_path, new_path = (committed(p) for p in PAIRS[pair])
    base = medians(str(base_path))
    new = medians(str(new_path))
    report = diff_json(base_path, new_path)
    assert report["base"]["runs_from"] == "ProfilerStep"
    assert report["base"]["run_count"] == base["steps"]
    assert report["new"]["run_count"] == new["steps"]
    timing = report["timing"]

    total = timing["total"]
    assert total["base"]["spread_ns"] == base["total_stat"]["spread"]
    assert total["new"]["spread_ns"] == new["total_stat"]["spread"]
    assert total["verdict"] == verdict(base["total_stat"], new["total_stat"])
    assert total["base"]["median_ns"] == base["total"]
    assert total["new"]["median_ns"] == new["total"]
    assert total["delta_ns"] == new["total"] - base["total"]

    for kind, stats, section in (("streams", "stream_stats", "streams"),
                                 ("ops", "op_stats", "op_types")):
        rows = by_key(timing[section])
        assert set(rows) == set(base[kind]) | set(new[kind]), section
        for key, row in rows.items():
            assert row["base"]["median_ns"] == base[kind].get(key, 0), (section, key)
            assert row["new"]["median_ns"] == new[kind].get(key, 0), (section, key)
            assert row["delta_ns"] == new[kind].get(key, 0) - base[kind].get(key, 0)
            assert row["verdict"] == verdict(base[stats].get(key), new[stats].get(key)), \
                (section, key)


def test_real_pair_figures_are_what_the_files_say():
    # Checked against what the files plainly show, so that a misreading
    # shared by both readers would fail: six ResNet-50 training steps of
    # 150 to 190 ms on one CUDA stream in each file.
    base_path, new_path = (committed(p) for p in PAIRS["resnet50 num_workers 0 vs 4"])
    base, new = medians(str(base_path)), medians(str(new_path))
    assert base["steps"] == 6 and new["steps"] == 6
    assert list(base["streams"]) == ["device 0 \u00b7 stream 7"]
    assert 150e6 < base["total"] < 190e6
    # With 4 workers the median step is shorter, but two of its six steps
    # still waited for data: the spread is wide and the change within it.
    assert new["total"] < base["total"]
    report = diff_json(base_path, new_path)
    total = report["timing"]["total"]
    assert total["delta_pct"] < -10
    assert total["new"]["spread_ns"] > 5 * total["base"]["spread_ns"]
    assert total["verdict"] == "same"


DT = FIXTURES / "diff_timing"
RESNET_ALL = [DT / "resnet18_b16" / "model.onnx",
              DT / "resnet18_b16" / "ort_all" / "model.optimized.onnx"]


def gate(base_files, new_files, *extra):
    return run("diff", "--base-run", *map(committed, base_files),
               "--new-run", *map(committed, new_files), "--format", "json",
               *extra, check=False)


def test_same_settings_twice_passes_the_default_gate():
    proc = gate(RESNET_ALL + [DT / "all_a" / "onnxruntime_profile.json"],
                RESNET_ALL + [DT / "all_b" / "onnxruntime_profile.json"])
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    total = report["timing"]["total"]
    # The medians differ by more than 5 %, within the runs' spread.
    assert abs(total["delta_pct"]) > 5
    assert total["verdict"] == "same"
    rule = report["rules"][0]
    assert rule["rule"] == "total>+5%"
    assert rule["crossed"] is False
    assert report["failed"] is False


def test_optimizations_disabled_fails_the_default_gate():
    proc = gate(RESNET_ALL + [DT / "all_a" / "onnxruntime_profile.json"],
                [DT / "resnet18_b16" / "model.onnx",
                 DT / "disabled" / "onnxruntime_profile.json"])
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["timing"]["total"]["verdict"] == "slower"
    assert report["failed"] is True
    rule = report["rules"][0]
    assert rule["rule"] == "total>+5%"
    assert rule["crossed"] is True
    assert rule["message"].startswith("total +")


def test_overlap_lost_pair_fails_with_its_cost():
    expected = json.loads((DT / "overlap_lost" / "expected.json").read_text())
    proc = gate([KINETO / "tracelens" / "inference__sglang_decode__sglang_Qwen3-8B_decode.json.gz"],
                [DT / "overlap_lost" / "sglang_decode_serial.json.gz"],
                "--fail-on", "overlap-lost>0")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    pairs = [o for o in report["overlap"] if o["scope"] == "streams"]
    assert len(pairs) == 1
    assert pairs[0]["verdict"] == "parallel_to_serial"
    assert pairs[0]["cost_ns"] == expected["base"]["overlap_ns"]
    assert report["overlap_lost"] >= 1
