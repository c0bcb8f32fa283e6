"""Cross-stream event dependencies from Kineto traces, end to end: the
importer turns a cuda_sync "Stream Wait Event" into event_after (the last
task launched on the recording stream before the cudaEventRecord) and
event_before (the first task launched on the waiting stream after the
cudaStreamWaitEvent); calibration counts an event anchor, the critical path
crosses streams "via" the event, and the synthetic 1M-task generator writes
the same shapes."""
import gzip
import json
import subprocess
import sys

import pytest

from conftest import ROOT, SAMPLES, run


def x(cat, name, pid, tid, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def runtime(name, ts, dur, correlation, cbid):
    return x("cuda_runtime", name, 1, 1, ts, dur, **{"External id": 1, "cbid": cbid,
                                                      "correlation": correlation})


# Stream 20's "consumer" waits for stream 7's "producer" through an event:
# its launch (ts 22) is long done when it starts at 121, right after the
# producer ends at 120. "after_record" is launched after the record and is
# not what the event waits for. Shapes as Kineto writes them with
# enable_cuda_sync_events (CudaSyncActivity::metadataJson).
TWO_STREAMS = {"schemaVersion": 1, "deviceProperties": [{"id": 0}], "traceEvents": [
    x("cpu_op", "aten::copy_", 1, 1, 0, 40, **{"External id": 1}),
    runtime("cudaLaunchKernel", 10, 3, 1, 211),
    runtime("cudaEventRecord", 14, 1, 2, 135),
    runtime("cudaLaunchKernel", 15, 2, 3, 211),
    runtime("cudaStreamWaitEvent", 18, 1, 4, 147),
    runtime("cudaLaunchKernel", 20, 2, 5, 211),
    x("kernel", "producer", 0, 7, 20, 100, device=0, stream=7, correlation=1),
    x("kernel", "after_record", 0, 7, 120, 10, device=0, stream=7, correlation=3),
    x("cuda_sync", "Stream Wait Event", 0, 20, 18, 1, cuda_sync_kind="Stream Wait Event",
      wait_on_stream=7, wait_on_cuda_event_record_corr_id=2, wait_on_cuda_event_id=1, stream=20,
      correlation=4, device=0, context=1),
    x("kernel", "consumer", 0, 20, 121, 50, device=0, stream=20, correlation=5),
    {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
]}


@pytest.fixture
def two_streams(tmp_path):
    path = tmp_path / "two_streams.pt.trace.json"
    path.write_text(json.dumps(TWO_STREAMS))
    return path


def test_event_link_is_exported_and_anchors_calibration(two_streams, tmp_path):
    out = tmp_path / "out"
    run("export", two_streams, "--out", out, "-q")
    tasks = json.loads((out / "trace.json").read_text())["tasks"]
    by_name = {t["kernel_name"]: t for t in tasks}
    assert by_name["producer"]["event_after"] is not None
    assert by_name["consumer"]["event_before"] == by_name["producer"]["event_after"]
    linked = [t["kernel_name"] for t in tasks
              if t["event_before"] is not None or t["event_after"] is not None]
    assert sorted(linked) == ["consumer", "producer"]
    calibration = json.loads((out / "analyses.json").read_text())["calibration"]
    assert calibration["anchors_by_kind"]["event"] == 1


def test_critical_path_crosses_streams_via_the_event(two_streams):
    path = json.loads(run("path", two_streams, "--critical", "--json", "-q").stdout)
    steps = path["steps"]
    names = [s["name"] for s in steps]
    assert names[-1] == "consumer" and names[-2] == "producer", names
    assert steps[-1]["via"] == "event"


def stream_wait_count(path):
    """The Kineto cuda_sync "Stream Wait Event"s of a trace file."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        waits = sum(1 for e in json.load(f)["traceEvents"]
                    if e.get("cat") == "cuda_sync" and e.get("name") == "Stream Wait Event")
    return waits


def test_generator_writes_kineto_stream_waits_that_all_link(tmp_path):
    trace = tmp_path / "gen.json"
    subprocess.run([sys.executable, ROOT / "bench" / "timeline" / "make_timeline_trace.py",
                    "--tasks", "3000", "--out", trace], check=True, capture_output=True)
    events = json.loads(trace.read_text())["traceEvents"]
    waits = [e for e in events if e.get("cat") == "cuda_sync" and e["name"] == "Stream Wait Event"]
    assert waits
    for w in waits:  # the shape Kineto writes; no invented args
        assert set(w["args"]) == {"cuda_sync_kind", "wait_on_stream",
                                  "wait_on_cuda_event_record_corr_id", "wait_on_cuda_event_id",
                                  "stream", "correlation", "device", "context"}
    for e in events:
        if e.get("name") in ("cudaEventRecord", "cudaStreamWaitEvent"):
            assert set(e["args"]) == {"External id", "cbid", "correlation"}
    out = tmp_path / "out"
    run("export", trace, "--out", out, "-q")
    tasks = json.loads((out / "trace.json").read_text())["tasks"]
    waiting = [t for t in tasks if t["event_before"] is not None]
    recording = {t["event_after"] for t in tasks if t["event_after"] is not None}
    # Every wait links its copy, but the first one when its compute stream
    # had no kernel launched yet (nothing to record after).
    assert len(waits) - 1 <= len(waiting) <= len(waits)
    assert all(t["kind"] == "data_movement" for t in waiting)
    assert {t["event_before"] for t in waiting} <= recording


KINETO_SAMPLES = sorted((SAMPLES / "traces" / "kineto").glob("*/*.json.gz"))


def test_kineto_samples_are_committed():
    # test/fixtures/samples/SOURCES.md: 8 modern traces and two of 2021 (the
    # ResNet-50 num_workers 0 / 4 pair).
    assert len(KINETO_SAMPLES) == 10, "test/fixtures/samples/traces/kineto incomplete"


@pytest.mark.parametrize("sample", KINETO_SAMPLES, ids=lambda p: p.name)
def test_real_samples_link_exactly_their_stream_waits(sample, tmp_path):
    # None of the stored samples was recorded with enable_cuda_sync_events:
    # their cudaEventRecord / cudaStreamWaitEvent runtime calls name no
    # stream or event, so no link may be invented.
    waits = stream_wait_count(sample)
    out = tmp_path / "out"
    run("export", sample, "--out", out, "-q")
    tasks = json.loads((out / "trace.json").read_text())["tasks"]
    waiting = sum(1 for t in tasks if t["event_before"] is not None)
    assert waiting <= waits
    if waits == 0:
        assert waiting == 0
