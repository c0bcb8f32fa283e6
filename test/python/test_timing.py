"""Timing analyses end to end against ground truth: the two-rank Kineto
fixture test/fixtures/timing_truth/ was written by its generator from a
drawn true timeline (launch latencies, skewed GPU clocks, syncs), and
expected.json holds the answers derived from that truth (calibration
interval from the anchors the generator made, critical path as the chain
of binding dependencies checked against networkx's longest path, idle by
cause, sync waits) — never from model-inspector's output. Also: raw vs
calibrated times in trace.json, `--no-calibrate`, `path --critical` /
`--node`, and the ONNX Runtime fixtures' critical path and idle (and the
summary goldens showing them) derived from the profiles themselves."""
import json
import re

import jsonschema
import pytest

from conftest import FIXTURES, ROOT, SCHEMAS, run

TRUTH = FIXTURES / "timing_truth"
EXPECTED = json.loads((TRUTH / "expected.json").read_text())
RANKS = sorted(EXPECTED["ranks"])


def validate(doc):
    schema = json.loads((SCHEMAS / "analyses.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Each rank's trace exported alone: (analyses.json, trace.json)."""
    out = {}
    for rank in RANKS:
        folder = tmp_path_factory.mktemp(f"rank{rank}")
        run("export", TRUTH / EXPECTED["ranks"][rank]["file"], "--out", folder, "-q")
        out[rank] = (json.loads((folder / "analyses.json").read_text()),
                     json.loads((folder / "trace.json").read_text()))
    return out


def device_domain(calibration):
    (device,) = [d for d in calibration["domains"] if d["kind"] == "device"]
    return device


def calibration_error(analyses, rank):
    """Estimate minus the true offset: how far calibrated device times are
    from the true ones."""
    truth = EXPECTED["ranks"][rank]["calibration"]
    return device_domain(analyses["calibration"])["offset_ns"] - truth["true_offset_ns"]


@pytest.mark.parametrize("rank", RANKS)
def test_calibration_brackets_the_true_skew(exported, rank):
    analyses, trace = exported[rank]
    validate(analyses)
    truth = EXPECTED["ranks"][rank]["calibration"]
    cal = analyses["calibration"]
    device = device_domain(cal)
    lower, upper = device["interval"]["lower_ns"], device["interval"]["upper_ns"]
    assert lower <= truth["true_offset_ns"] <= upper
    assert abs(device["offset_ns"] - truth["true_offset_ns"]) <= device["error_bound_ns"]
    # The interval the generator's own anchors allow, exactly, and the
    # estimate the documented rule takes from it.
    assert (lower, upper) == (truth["lower_ns"], truth["upper_ns"])
    assert device["offset_ns"] == truth["estimate_ns"]
    assert device["error_bound_ns"] == truth["error_bound_ns"]
    assert device["binding_lower"]["kind"] == "launch"
    assert device["binding_upper"]["kind"] in ("sync", "sync_copy")
    assert cal["anchors_by_kind"]["launch"] == truth["launch_anchors"]
    assert cal["anchors_by_kind"]["sync"] == truth["sync_anchors"]
    assert cal["anchors_by_kind"]["sync_copy"] == truth["sync_copy_anchors"]
    assert cal["residual_violations"]["count"] == 0 and cal["contradictions"] == 0
    (host,) = [d for d in cal["domains"] if d["kind"] == "host"]
    assert host["reference"] and device["reference_domain"] == cal["domains"].index(host)
    # Raw and calibrated times side by side.
    offset_us = device["offset_ns"] / 1000
    for stream in trace["streams"]:
        expected = offset_us if stream["kind"] == "device_stream" else 0
        assert stream["clock_offset_us"] == pytest.approx(expected)
    kernels = [t for t in trace["tasks"] if t["kind"] == "compute"]
    assert kernels
    for t in kernels:
        assert t["calibrated_start_us"] - t["start_us"] == pytest.approx(offset_us)


@pytest.mark.parametrize("rank", RANKS)
def test_critical_path_matches_the_truth(exported, rank):
    analyses, _ = exported[rank]
    truth = EXPECTED["ranks"][rank]["critical_path"]
    error = calibration_error(analyses, rank)
    path = analyses["critical_path"]
    steps = path["steps"]
    assert [s["name"] for s in steps] == [s["name"] for s in truth["steps"]]
    assert [s["via"] for s in steps] == [s["via"] for s in truth["steps"]]
    # Host times are the reference; device times are off by the estimate's
    # error, within its bound.
    for step, want in zip(steps, truth["steps"]):
        assert step["start_ns"] == want["true_start_ns"] + (error if want["device"] else 0)
    assert path["start_ns"] == truth["start_ns"]
    assert path["length_ns"] == truth["length_ns"]  # host op to host op
    assert path["graph"]["broken_edges"] == 0
    text = run("path", TRUTH / EXPECTED["ranks"][rank]["file"], "--critical", "-q").stdout
    assert (f"Critical path (calibrated clock, whole trace): "
            f"{truth['length_ns'] / 1000:.1f} us") in text


@pytest.mark.parametrize("rank", RANKS)
def test_idle_by_cause_matches_the_truth(exported, rank):
    analyses, _ = exported[rank]
    idle = analyses["idle_overlap"]
    error = calibration_error(analyses, rank)
    streams = {s["name"]: s for s in idle["streams"]}
    for stream, want in EXPECTED["ranks"][rank]["streams"].items():
        got = streams[f"stream {stream} (device 0)"]
        # The cuda_sync records on the streams are the host calls' times,
        # not device work: only kernels and copies count.
        assert got["tasks"] == want["tasks"]
        assert got["busy_ns"] == want["busy_ns"]
        assert got["idle_ns"] == want["idle_ns"]
        assert got["idle_by_reason_ns"] == want["idle_by_reason"]
        assert got["start_ns"] == want["start_ns"] + error


@pytest.mark.parametrize("rank", RANKS)
def test_sync_waits_match_the_truth(exported, rank):
    analyses, trace = exported[rank]
    sync = analyses["idle_overlap"]["sync"]
    error = calibration_error(analyses, rank)
    names = {t["task_id"]: t["kernel_name"] for t in trace["tasks"]}
    want = EXPECTED["ranks"][rank]["sync_waits"]
    assert sync["calls"] == len(want)
    for got, w in zip(sync["waits"], want):
        assert names[got["task"]] == w["name"]
        assert got["duration_ns"] == w["duration_ns"]
        # Host call against device busy time: exact up to the calibration
        # error.
        assert abs(got["device_idle_ns"] - w["device_idle_ns"]) <= abs(error)
        assert names[got["device_before"]] == w["device_before"]
        assert names[got["device_after"]] == w["device_after"]


def test_two_ranks_loaded_together_keep_their_clocks(tmp_path):
    files = [TRUTH / EXPECTED["ranks"][r]["file"] for r in RANKS]
    run("export", *files, "--out", tmp_path, "-q")
    analyses = json.loads((tmp_path / "analyses.json").read_text())
    validate(analyses)
    cal = analyses["calibration"]
    devices = [d for d in cal["domains"] if d["kind"] == "device"]
    assert len(devices) == 2 and len({d["source"] for d in devices}) == 2
    for rank, device in zip(RANKS, devices):
        truth = EXPECTED["ranks"][rank]["calibration"]
        assert device["name"] == f"rank {rank} · device 0"
        assert (device["interval"]["lower_ns"], device["interval"]["upper_ns"]) == (
            truth["lower_ns"], truth["upper_ns"])
    assert len([d for d in cal["domains"] if d["reference"]]) == 2
    assert not cal["time_bases_differ"]
    assert [d["device"] for d in analyses["idle_overlap"]["devices"]] == [
        "rank 0 · device 0", "rank 1 · device 0"]


def test_no_calibrate_keeps_raw_clocks(tmp_path):
    run("export", TRUTH / "rank0.pt.trace.json", "--out", tmp_path, "-q", "--no-calibrate")
    trace = json.loads((tmp_path / "trace.json").read_text())
    assert all(s["clock_offset_us"] == 0 for s in trace["streams"])
    assert all(t["calibrated_start_us"] == t["start_us"] for t in trace["tasks"])
    analyses = json.loads((tmp_path / "analyses.json").read_text())
    validate(analyses)
    assert analyses["calibration"]["computed"] is False


def test_path_on_the_raw_clock():
    # Rank 0's GPU clock lags by 790 us: on the raw clock its kernels run
    # before the host launched them, so the device work ends earlier.
    rank0 = TRUTH / "rank0.pt.trace.json"
    raw = json.loads(run("path", rank0, "--critical", "--json", "--clock", "raw",
                         "-q").stdout)
    assert raw["clock"] == "raw"
    device_steps = [s for s in raw["steps"] if s["kind"] == "compute"]
    truth = {s["name"]: s["true_start_ns"]
             for s in EXPECTED["ranks"]["0"]["critical_path"]["steps"] if s["device"]}
    for s in device_steps:
        if s["name"] in truth:
            assert s["start_ns"] == truth[s["name"]] - 790_000


def ort_truth(folder, run_index=None):
    """Critical path and idle of an ONNX Runtime CPU profile, derived from
    the profile itself. The sequential executor runs every node on one
    thread, one after another: each Node event starts at or after the
    previous one ended. Then thread order chains all of them, the longest
    path is every task from the first start to the last end (share 100%),
    and the thread's idle is its span minus the kernels' time, with no
    launch or other stream to wait for ("other")."""
    events = json.loads((FIXTURES / folder / "onnxruntime_profile.json").read_text())
    nodes = sorted((e for e in events if e.get("cat") == "Node"), key=lambda e: e["ts"])
    if run_index is not None:  # run k = the k-th model_run (run 0 precedes them)
        runs = sorted((e for e in events if e["name"] == "model_run"), key=lambda e: e["ts"])
        r = runs[run_index - 1]
        nodes = [n for n in nodes if r["ts"] <= n["ts"] < r["ts"] + r["dur"]]
    assert len({(e["pid"], e["tid"]) for e in nodes}) == 1
    assert all(b["ts"] >= a["ts"] + a["dur"] for a, b in zip(nodes, nodes[1:]))
    kernels = [n for n in nodes if n["name"].endswith("_kernel_time")]
    length = nodes[-1]["ts"] + nodes[-1]["dur"] - nodes[0]["ts"]
    span = kernels[-1]["ts"] + kernels[-1]["dur"] - kernels[0]["ts"]
    return {"length_us": length, "tasks": len(nodes),
            "idle_us": span - sum(k["dur"] for k in kernels)}


@pytest.mark.parametrize("folder", ["resnet18/ort_all", "resnet18/ort_extended",
                                    "transformer/ort_all", "transformer/ort_extended"])
def test_ort_critical_path_is_every_node(folder, tmp_path):
    truth = ort_truth(folder)
    run("export", FIXTURES / folder, "--out", tmp_path, "-q")
    analyses = json.loads((tmp_path / "analyses.json").read_text())
    path = analyses["critical_path"]
    assert len(path["tasks"]) == truth["tasks"]
    assert path["length_ns"] == path["wall_ns"] == truth["length_us"] * 1000
    (thread,) = analyses["idle_overlap"]["streams"]
    assert thread["idle_ns"] == thread["idle_by_reason_ns"]["other"] == truth["idle_us"] * 1000
    # One run: model_run #2 of ResNet-18 is run 2.
    if folder == "resnet18/ort_all":
        run2 = ort_truth(folder, 2)
        path2 = json.loads(run("path", FIXTURES / folder, "--critical", "--json", "--run", "2",
                               "-q").stdout)
        assert len(path2["tasks"]) == run2["tasks"] == 34
        assert path2["length_ns"] == run2["length_us"] * 1000


# The summary goldens of ONNX Runtime inputs show the critical path and idle
# figures; each is checked against the derivation from the profile.
ORT_GOLDENS = {"resnet18_ort_all": ("resnet18/ort_all", None),
               "ort_profile_alone": ("resnet18/ort_all", None),
               "resnet18_ort_extended_csv": ("resnet18/ort_extended", None),
               "resnet18_run2_json": ("resnet18/ort_all", 2),
               "transformer_ort_extended_markdown": ("transformer/ort_extended", None)}


@pytest.mark.parametrize("golden", sorted(ORT_GOLDENS))
def test_ort_summary_goldens_agree_with_the_profile(golden):
    folder, run_index = ORT_GOLDENS[golden]
    truth = ort_truth(folder, run_index)
    text = (ROOT / "test" / "golden" / "summary" / f"{golden}.out").read_text()
    if golden.endswith("_json"):
        doc = json.loads(text)
        assert doc["critical_path"]["length_us"] == truth["length_us"]
        assert doc["critical_path"]["tasks"] == truth["tasks"]
        assert doc["critical_path"]["share"] == 1
        (stream,) = doc["streams"]
        assert stream["idle"]["total_us"] == stream["idle"]["other_us"] == truth["idle_us"]
        return
    lines = text.splitlines()
    tokens = lambda line: [t for t in re.split(r"[\s,|]+", line) if t]
    at = next(i for i, line in enumerate(lines) if "Critical path" in line)
    row = next(tokens(line) for line in lines[at + 1:] if "%" in line)
    assert row[:4] == [f"{truth['length_us']:.1f}", f"{truth['length_us']:.1f}", "100.0%",
                       str(truth["tasks"])]
    at = next(i for i, line in enumerate(lines) if "Idle time per stream" in line)
    row = next(tokens(line) for line in lines[at + 1:] if line.lstrip("| ").startswith("thread"))
    idle = f"{truth['idle_us']:.1f}"
    assert row[-4:] == [idle, "0.0", "0.0", idle]


def test_path_errors():
    rank0 = TRUTH / "rank0.pt.trace.json"
    assert run("path", rank0, "-q", check=False).returncode == 2
    assert run("path", rank0, "--critical", "--run", "9", "-q",
               check=False).returncode == 2
    model = FIXTURES / "resnet18" / "model.onnx"
    proc = run("path", model, "--critical", "-q", check=False)
    assert proc.returncode == 2 and "no tasks" in proc.stderr
    proc = run("path", model, "--node", "no_such_node", "-q", check=False)
    assert proc.returncode == 3 and "no node named" in proc.stderr


def test_node_paths_on_resnet18():
    run_dir = FIXTURES / "resnet18" / "ort_all"
    node = "/layer4/layer4.1/conv2/Conv"
    paths = json.loads(run("path", run_dir, "--node", node, "--json", "-q").stdout)
    # Downstream of the last conv: its Add, Relu, the pool, flatten, fc.
    assert len(paths["descendants"]) == 5
    assert len(paths["ancestors"]) > 40
    assert paths["node_tasks"] and paths["ancestor_tasks"]
    assert not set(paths["ancestors"]) & set(paths["descendants"])
    text = run("path", run_dir, "--node", node, "-q").stdout
    assert "5 descendants" in text


@pytest.mark.parametrize("inputs", [
    ["resnet18/ort_all"], ["transformer/ort_all"],
    ["resnet18/torch_profile.pt.trace.json.gz"],
    ["ascend/PROF_000001_20250101120000000_ABCDEFGHIJKLMNOP"],
])
def test_real_fixtures_export_valid_analyses(inputs, tmp_path):
    """The real fixtures' analyses validate against the schema and the
    critical path accounts for its time (path time per track sums to the
    time path tasks ran); what the figures should be is checked on the
    ground-truth fixture above."""
    out = tmp_path / "out"
    run("export", *[FIXTURES / i for i in inputs], "--out", out, "-q")
    analyses = json.loads((out / "analyses.json").read_text())
    validate(analyses)
    cp = analyses["critical_path"]
    assert cp["tasks"] and 0 < cp["share"] <= 1
    assert cp["graph"]["broken_edges"] == 0
    assert sum(t["ns"] for t in cp["by_track"]) == cp["busy_ns"]
