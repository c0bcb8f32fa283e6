"""Format knowledge lives in the importers: the CANN profiler output folders
are claimed by the ascend_timeline importer (which files form one source,
in which order, what is left out and why), a CANN timeline is read by its
own importer whatever its file is called, and the "not a recognised
format" error lists every registered importer
(docs/contributing/adding-an-importer.md)."""
import json
import shutil

from conftest import FIXTURES, SAMPLES, committed, run

MSPROF_RUN = FIXTURES / "ascend" / "PROF_000001_20250101120000000_ABCDEFGHIJKLMNOP"
CLUSTER = SAMPLES / "cluster" / "msinsight_pt_text_level1_2rank_2024"
LEVEL0 = SAMPLES / "ascend" / "msinsight_pt_text_level0_rank0"


def inputs(*args, verbose=False):
    """The Inputs table of `summary --format csv`: [(path, format, role)]."""
    proc = run("summary", "--format", "csv", *(["--verbose"] if verbose else []),
               *args)
    lines = proc.stdout.splitlines()
    start = lines.index("# Inputs") + 2
    rows = []
    for line in lines[start:]:
        if not line:
            break
        rows.append(tuple(line.rsplit(",", 2)))
    return rows, proc


def test_unrecognised_format_names_every_registered_format(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("nothing any importer reads\n")
    proc = run("summary", bad, check=False)
    assert proc.returncode == 5, proc.stderr
    assert "not a recognised format; expected " in proc.stderr
    # One description per registered importer (builtin_importers.cc).
    for fmt in ("an ONNX model", "an ONNX model in text form",
                "a GE graph dump as ONNX text", "Chrome trace-event JSON",
                "trace events as CSV", "a CANN timeline",
                "a CANN profiler table", "a GE graph dump (ge_proto_*.txt)",
                "an ATC model JSON"):
        assert fmt in proc.stderr, fmt


def test_a_renamed_torch_npu_timeline_is_still_a_cann_timeline(tmp_path):
    # torch_npu writes trace_view.json; people share it under other names.
    # Its first 4 KiB are Python events, but its ts are decimal strings.
    original = committed(LEVEL0 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")
    renamed = tmp_path / "rank0_timeline.json"
    shutil.copyfile(original, renamed)
    rows, _ = inputs(renamed)
    assert [(fmt, role) for _, fmt, role in rows] == [("ascend_timeline", "trace")]
    by_name = json.loads(run("summary", "--quiet", "--format", "json",
                             original).stdout)
    by_content = json.loads(run("summary", "--quiet", "--format", "json",
                                renamed).stdout)
    assert by_content["dialect"] == "ascend"
    assert by_content["tasks"] == by_name["tasks"] > 0
    assert by_content["op_types"] == by_name["op_types"]


def test_left_out_files_are_listed_with_their_reason():
    rows, proc = inputs(committed(CLUSTER), verbose=True)
    # Per rank: the timeline first, then the tables that join onto it, the
    # communication files (which join onto its collectives) last.
    names = [path[len(str(CLUSTER)) + 1:] for path, _, _ in rows]
    assert names == [
        "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json.gz",
        "rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json.gz",
        "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv",
        "rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        "rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv",
    ] + [f"rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/{name}" for r in (0, 1)
         for name in ("communication.json", "communication_matrix.json",
                      "step_trace_time.csv")]
    assert "run_file_left_out" in proc.stderr
    assert ("2 files left out by ascend_timeline: torch_npu profiler "
            "configuration") in proc.stderr
    assert "(profiler_info_0.json, profiler_info_1.json)" in proc.stderr


def test_a_msprof_run_beside_a_torch_npu_run_is_read(tmp_path):
    # A msprof PROF_* folder of its own next to a torch_npu folder is a run
    # of its own; only the PROF_* tree inside the torch_npu folder repeats
    # that folder's ASCEND_PROFILER_OUTPUT.
    shutil.copytree(committed(MSPROF_RUN), tmp_path / MSPROF_RUN.name)
    torch_npu = tmp_path / "rank0_ascend_pt"
    shutil.copytree(committed(CLUSTER / "rank0_ascend_pt"), torch_npu)
    shutil.copytree(MSPROF_RUN, torch_npu / "PROF_000002_20250101120000000_X")
    rows, proc = inputs(tmp_path, verbose=True)
    names = [path[len(str(tmp_path)) + 1:] for path, _, _ in rows]
    out = MSPROF_RUN.name + "/mindstudio_profiler_output/"
    assert names == [
        out + "msprof_slice_0_20250101120000.json",
        out + "msprof_slice_1_20250101120000.json",
        "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json.gz",
        out + "op_summary_20250101120000.csv",
        "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv",
        "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json",
        "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/communication_matrix.json",
        "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
    ]
    assert "3 files left out by ascend_timeline: msprof's PROF_* tree" in proc.stderr
