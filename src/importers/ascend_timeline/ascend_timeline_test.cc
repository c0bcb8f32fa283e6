#include "importers/ascend_timeline/ascend_timeline_importer.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/ascend_timeline/ascend_output_folder.h"
#include "importers/common/run_files.h"
#include "trace/trace.h"

namespace mi::importers {
namespace {

// Imports `text` into `trace` as the file `path` (its own source unless
// `source` names one).
Status ImportInto(Trace* trace, DiagnosticSink* diagnostics,
                  std::string_view text, std::string path,
                  AscendTimelineStats* stats = nullptr, SourceId source = {}) {
  ImportContext ctx;
  ctx.path = std::move(path);
  ctx.trace = trace;
  ctx.diagnostics = diagnostics;
  ctx.source = source;
  return ImportAscendTimelineFromBuffer(text, ctx, stats);
}

TaskId FindIn(const Trace& trace, std::string_view name, size_t from = 0) {
  for (size_t i = from; i < trace.task_count(); ++i) {
    TaskId t(static_cast<uint32_t>(i));
    if (trace.str(trace.task_name(t)) == name) return t;
  }
  return TaskId::Invalid();
}

// Two CANN profiler output folders (two ranks), each a source: a sliced
// timeline continues only its own source's tracks, and connection_ids are
// looked up only in its own source (rank 1's device task with
// connection_id 7 is not launched by rank 0's Node@launch 7).
constexpr std::string_view kAscendRank0 = R"json([
{"name": "process_name", "pid": 100, "tid": 0, "ph": "M", "args": {"name": "CANN"}},
{"name": "process_name", "pid": 200, "tid": 0, "ph": "M", "args": {"name": "Ascend Hardware"}},
{"name": "thread_name", "pid": 200, "tid": 2, "ph": "M", "args": {"name": "Stream 2"}},
{"name": "Node@launch", "pid": 100, "tid": 5, "ts": "1000.000", "dur": 5, "ph": "X", "args": {"Mode": "launch", "level": "node", "item_id": "Conv1", "connection_id": 7}},
{"name": "Conv1", "pid": 200, "tid": 2, "ts": "1010.000", "dur": 30, "ph": "X", "args": {"Task Type": "AI_CORE", "Physic Stream Id": 2, "Task Id": 1, "connection_id": 7}}
])json";
constexpr std::string_view kAscendRank1 = R"json([
{"name": "process_name", "pid": 100, "tid": 0, "ph": "M", "args": {"name": "CANN"}},
{"name": "process_name", "pid": 200, "tid": 0, "ph": "M", "args": {"name": "Ascend Hardware"}},
{"name": "thread_name", "pid": 200, "tid": 2, "ph": "M", "args": {"name": "Stream 2"}},
{"name": "Node@launch", "pid": 100, "tid": 5, "ts": "1000.000", "dur": 5, "ph": "X", "args": {"Mode": "launch", "level": "node", "item_id": "Other", "connection_id": 9}},
{"name": "Add1", "pid": 200, "tid": 2, "ts": "1012.000", "dur": 20, "ph": "X", "args": {"Task Type": "AI_VECTOR_CORE", "Physic Stream Id": 2, "Task Id": 1, "connection_id": 7}}
])json";
// A later slice of a msprof timeline: no metadata.
constexpr std::string_view kAscendSlice = R"json([
{"name": "Cast1", "pid": 200, "tid": 2, "ts": "1050.000", "dur": 10, "ph": "X", "args": {"Task Type": "AI_CORE", "Physic Stream Id": 2, "Task Id": 2, "connection_id": 11}}
])json";

TEST(AscendTimelineTest, SlicesAndConnectionIdsStayInTheirSource) {
  StringPool strings;
  Trace trace(&strings);
  DiagnosticSink diagnostics;
  SourceId rank0 = trace.FindOrAddSource(strings.Intern("PROF_0"));
  SourceId rank1 = trace.FindOrAddSource(strings.Intern("PROF_1"));
  ASSERT_TRUE(ImportInto(&trace, &diagnostics, kAscendRank0,
                         "PROF_0/out/msprof_slice_0.json", nullptr, rank0)
                  .ok());
  ASSERT_TRUE(ImportInto(&trace, &diagnostics, kAscendRank1,
                         "PROF_1/out/msprof_slice_0.json", nullptr, rank1)
                  .ok());
  TaskId conv = FindIn(trace, "Conv1");
  TaskId add = FindIn(trace, "Add1");
  ASSERT_TRUE(conv.valid() && add.valid());
  EXPECT_EQ(trace.str(trace.task_name(trace.task_launch(conv))), "Node@launch");
  EXPECT_EQ(trace.task_source(trace.task_launch(conv)), rank0);
  EXPECT_FALSE(trace.task_launch(add).valid());
  EXPECT_NE(trace.task_track(conv), trace.task_track(add));
  EXPECT_EQ(trace.str(trace.source(rank1).dialect), "ascend");

  // Rank 0's second slice continues rank 0's Stream 2; the same slice read
  // as a third source does not.
  ASSERT_TRUE(ImportInto(&trace, &diagnostics, kAscendSlice,
                         "PROF_0/out/msprof_slice_1.json", nullptr, rank0)
                  .ok());
  TaskId cast0 = FindIn(trace, "Cast1");
  EXPECT_EQ(trace.task_track(cast0), trace.task_track(conv));
  EXPECT_EQ(trace.source(rank0).files.size(), 2u);
  const size_t before = trace.task_count();
  ASSERT_TRUE(ImportInto(&trace, &diagnostics, kAscendSlice,
                         "elsewhere/msprof_slice_1.json")
                  .ok());
  TaskId cast_other = FindIn(trace, "Cast1", before);
  EXPECT_NE(trace.task_track(cast_other), trace.task_track(conv));
  EXPECT_NE(trace.task_track(cast_other), trace.task_track(add));
  EXPECT_EQ(trace.source_count(), 3u);
}

// The task classes the summary shows (ascend.md §1.2 Task Type values):
// the accelerator the Task Type names, data movement and sync by kind,
// layout conversions by name (GE's trans_TransData_N) first, HCCL groups as
// communication, and the source's op-type table for op types that come
// from the graph.
constexpr std::string_view kClasses = R"json([
{"name": "process_name", "pid": 200, "tid": 0, "ph": "M", "args": {"name": "Ascend Hardware"}},
{"name": "process_name", "pid": 300, "tid": 0, "ph": "M", "args": {"name": "HCCL"}},
{"name": "thread_name", "pid": 300, "tid": 0, "ph": "M", "args": {"name": "Group 1 Communication"}},
{"name": "thread_name", "pid": 300, "tid": 1, "ph": "M", "args": {"name": "Plane 0"}},
{"name": "Conv1", "pid": 200, "tid": 2, "ts": "1000.000", "dur": 30, "ph": "X", "args": {"Task Type": "AI_CORE", "Task Id": 1}},
{"name": "Add1", "pid": 200, "tid": 2, "ts": "1040.000", "dur": 5, "ph": "X", "args": {"Task Type": "MIX_AIV", "Task Id": 2}},
{"name": "Where1", "pid": 200, "tid": 2, "ts": "1050.000", "dur": 5, "ph": "X", "args": {"Task Type": "AI_CPU", "Task Id": 3}},
{"name": "trans_TransData_3", "pid": 200, "tid": 2, "ts": "1060.000", "dur": 5, "ph": "X", "args": {"Task Type": "AI_CORE", "Task Id": 4}},
{"name": "MEMCPY_ASYNC", "pid": 200, "tid": 3, "ts": "1070.000", "dur": 2, "ph": "X", "args": {"Task Type": "MEMCPY_ASYNC", "Task Id": 5}},
{"name": "EVENT_RECORD", "pid": 200, "tid": 3, "ts": "1080.000", "dur": 0, "ph": "X", "args": {"Task Type": "EVENT_RECORD", "Task Id": 6}},
{"name": "Sort1", "pid": 200, "tid": 2, "ts": "1090.000", "dur": 5, "ph": "X", "args": {"Task Type": "DSA_SQE", "Task Id": 7}},
{"name": "hcom_allReduce__1_0_1", "pid": 300, "tid": 0, "ts": "1100.000", "dur": 50, "ph": "X", "args": {"connection_id": 9}},
{"name": "Notify_Wait", "pid": 300, "tid": 1, "ts": "1100.000", "dur": 10, "ph": "X", "args": {"task type": "Notify_Wait"}}
])json";

TEST(AscendTimelineTest, TaskClassesForTheSummary) {
  StringPool strings;
  Trace trace(&strings);
  DiagnosticSink diagnostics;
  AscendTimelineStats stats;
  ASSERT_TRUE(
      ImportInto(&trace, &diagnostics, kClasses, "msprof_0.json", &stats).ok());
  EXPECT_TRUE(stats.ascend);
  EXPECT_EQ(stats.device_tasks, 9u);
  auto cls = [&](std::string_view name) {
    TaskId t = FindIn(trace, name);
    return t.valid() ? std::string(trace.str(trace.task_class(t)))
                     : std::string("(missing)");
  };
  EXPECT_EQ(cls("Conv1"), "ai_core");
  EXPECT_EQ(cls("Add1"), "ai_vector");
  EXPECT_EQ(cls("Where1"), "ai_cpu");
  EXPECT_EQ(cls("trans_TransData_3"), "layout_conversion");
  EXPECT_EQ(cls("MEMCPY_ASYNC"), "data_movement");
  EXPECT_EQ(cls("EVENT_RECORD"), "sync");
  EXPECT_EQ(cls("Sort1"), "dsa");
  EXPECT_EQ(cls("hcom_allReduce__1_0_1"), "communication");
  // A Plane subtask is detail of its collective, not counted again.
  EXPECT_EQ(cls("Notify_Wait"), "other");
  EXPECT_EQ(trace.task_kind(FindIn(trace, "Notify_Wait")), TaskKind::kOther);

  // The op-type table: a task linked to a FormatTransfer node is a layout
  // conversion whatever its own name says.
  TaskId conv = FindIn(trace, "Conv1");
  EXPECT_EQ(TaskClassOf(trace, conv, "FormatTransfer"), "layout_conversion");
  EXPECT_EQ(TaskClassOf(trace, conv, "TransDataRNN"), "layout_conversion");
  EXPECT_EQ(TaskClassOf(trace, conv, "Conv2D"), "ai_core");
}

TEST(AscendTimelineTest, SniffByNameAndContent) {
  auto importer = CreateAscendTimelineImporter();
  EXPECT_EQ(importer->descriptor().name, "ascend_timeline");
  EXPECT_EQ(importer->descriptor().content, ContentKind::kTrace);
  // torch_npu's trace_view.json starts with Kineto-like Python events; its
  // name (also gzipped) and its string ts say what it is.
  const std::string_view python_head =
      R"([{"ph": "X", "name": "aten::empty", "pid": 1, "tid": 1, "ts": "1736405443863674.400", "dur": 162.66, "cat": "cpu_op", "args": {}}, )";
  EXPECT_GE(importer->Sniff(python_head, "out/trace_view.json"), 96);
  EXPECT_GE(importer->Sniff(python_head, "out/trace_view.json.gz"), 96);
  EXPECT_GE(importer->Sniff(python_head, "renamed.json"), 96);
  // A msprof slice without metadata: its args say it.
  EXPECT_GE(importer->Sniff(kAscendSlice, "x.json"), 96);
  EXPECT_GE(importer->Sniff(kAscendRank0, "msprof_slice_0_1.json"), 96);
  // A generic trace with string ts is no torch_npu timeline.
  EXPECT_EQ(
      importer->Sniff(
          R"([{"name": "x", "ph": "X", "pid": 1, "tid": 1, "ts": "1696000000123.456", "dur": "1.5"}])",
          "x.json"),
      0);
  // Kineto, ONNX Runtime and generic traces write numbers: not ours.
  EXPECT_EQ(
      importer->Sniff(
          R"([{"ph": "X", "name": "k", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "cat": "kernel"}])",
          "x.pt.trace.json"),
      0);
  EXPECT_EQ(importer->Sniff(R"({"schemaVersion": 1, "traceEvents": [)",
                            "msprof_tx_1.json"),
            0);
  // Not JSON at all, even when named like a timeline.
  EXPECT_EQ(importer->Sniff("ir_version: 7", "trace_view.json"), 0);
}

// Run directories (ascend.md §1.1, §2.1; torch_npu matches msprof folders
// as ^PROF_\d+_\d+_[0-9a-zA-Z]+): what is read, in which order, as which
// source, and what is left out.
struct Claimed {
  std::vector<std::string> order;    // in_run names, load order
  std::vector<std::string> sources;  // source key per loaded file ("" none)
  std::vector<int32_t> ranks;
  std::vector<std::string> left_out;  // in_run names
};

Claimed Claim(const std::string& root, std::vector<std::string> in_run,
              bool named = false) {
  std::vector<RunFiles::File> files;
  for (const std::string& r : in_run) {
    // in_run starts with the root folder's own name.
    std::string rel = r.substr(r.find('/') + 1);
    files.push_back({named ? r : root + "/" + rel, r});
  }
  RunFiles run(files, named);
  ascend_timeline::ClaimOutputFolders(run);
  Claimed out;
  for (size_t i : run.LoadOrder()) {
    out.order.push_back(run.files()[i].in_run);
    const RunFiles::Source* s = run.source_of(i);
    out.sources.push_back(s ? s->key : "");
    out.ranks.push_back(s ? s->rank : -1);
  }
  for (const RunFiles::LeftOut& l : run.left_out()) {
    for (const std::string& p : l.paths) {
      for (const RunFiles::File& f : run.files()) {
        if (f.path == p) out.left_out.push_back(f.in_run);
      }
    }
  }
  return out;
}

TEST(AscendOutputFolderTest, TorchNpuFolderReadsItsOutputOnce) {
  namespace fs = std::filesystem;
  // A real folder for the rank file; the other files need not exist.
  fs::path root = fs::path(::testing::TempDir()) / "mi_claims" / "run";
  fs::create_directories(root / "rank3_ascend_pt");
  {
    FILE* f = std::fopen(
        (root / "rank3_ascend_pt/profiler_info_3.json").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"rank_id\": 3}", f);
    std::fclose(f);
  }
  Claimed c = Claim(
      root.string(),
      {"run/model.onnx",
       "run/rank3_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json",
       "run/rank3_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
       "run/rank3_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv",
       "run/rank3_ascend_pt/ASCEND_PROFILER_OUTPUT/op_statistic.csv",
       "run/rank3_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
       "run/rank3_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
       "run/rank3_ascend_pt/PROF_000001_20250101_ABC/device_0/data/x.data",
       "run/rank3_ascend_pt/PROF_000001_20250101_ABC/host/data/y.data",
       "run/rank3_ascend_pt/PROF_000001_20250101_ABC/"
       "mindstudio_profiler_output/msprof_20250101.json",
       "run/rank3_ascend_pt/profiler_info_3.json",
       "run/rank3_ascend_pt/profiler_metadata.json"});
  // Unclaimed first, then the metadata (groups) and the timeline, then the
  // tables that join onto it, the communication tables last.
  EXPECT_EQ(
      c.order,
      (std::vector<std::string>{
          "run/model.onnx", "run/rank3_ascend_pt/profiler_metadata.json",
          "run/rank3_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
          "run/rank3_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
          "run/rank3_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv",
          "run/rank3_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json",
          "run/rank3_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"}));
  const std::string folder = (root / "rank3_ascend_pt").string();
  EXPECT_EQ(c.sources, (std::vector<std::string>{"", folder, folder, folder,
                                                 folder, folder, folder}));
  EXPECT_EQ(c.ranks, (std::vector<int32_t>{-1, 3, 3, 3, 3, 3, 3}));
  // op_statistic, 3 PROF_ copies, profiler_info.
  EXPECT_EQ(c.left_out.size(), 5u);
}

TEST(AscendOutputFolderTest, SlicesLoadInSliceOrder) {
  Claimed c = Claim(
      "PROF_000001_1_A",
      {"PROF_000001_1_A/mindstudio_profiler_output/msprof_slice_10_1.json",
       "PROF_000001_1_A/mindstudio_profiler_output/msprof_slice_2_1.json",
       "PROF_000001_1_A/mindstudio_profiler_output/msprof_tx_1.json",
       "PROF_000001_1_A/mindstudio_profiler_output/op_summary_1.csv",
       "PROF_000001_1_A/mindstudio_profiler_output/msprof_slice_0_1.json",
       "PROF_000001_1_A/host/data/a.data"});
  EXPECT_EQ(
      c.order,
      (std::vector<std::string>{
          "PROF_000001_1_A/mindstudio_profiler_output/msprof_slice_0_1.json",
          "PROF_000001_1_A/mindstudio_profiler_output/msprof_slice_2_1.json",
          "PROF_000001_1_A/mindstudio_profiler_output/msprof_slice_10_1.json",
          "PROF_000001_1_A/mindstudio_profiler_output/op_summary_1.csv"}));
  for (const std::string& s : c.sources) EXPECT_EQ(s, "PROF_000001_1_A");
  EXPECT_EQ(c.left_out,
            (std::vector<std::string>{
                "PROF_000001_1_A/mindstudio_profiler_output/msprof_tx_1.json",
                "PROF_000001_1_A/host/data/a.data"}));
}

// A msprof run of its own beside a torch_npu folder is not that folder's
// copy, and a folder of the user's named PROF_... is no msprof run.
TEST(AscendOutputFolderTest, OnlyTheCopyInsideATorchNpuFolderIsLeftOut) {
  Claimed c = Claim(
      "PROF_runs",
      {"PROF_runs/PROF_000002_1_B/mindstudio_profiler_output/msprof_1.json",
       "PROF_runs/model.onnx",
       "PROF_runs/r0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
       "PROF_runs/r0_ascend_pt/PROF_000001_1_A/mindstudio_profiler_output/"
       "msprof_1.json"});
  EXPECT_EQ(c.order, (std::vector<std::string>{
                         "PROF_runs/model.onnx",
                         "PROF_runs/PROF_000002_1_B/mindstudio_profiler_output/"
                         "msprof_1.json",
                         "PROF_runs/r0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
                         "trace_view.json"}));
  EXPECT_EQ(c.sources[1], "PROF_runs/PROF_000002_1_B");
  EXPECT_EQ(c.sources[2], "PROF_runs/r0_ascend_pt");
  EXPECT_EQ(c.left_out,
            (std::vector<std::string>{"PROF_runs/r0_ascend_pt/PROF_000001_1_A/"
                                      "mindstudio_profiler_output/"
                                      "msprof_1.json"}));
}

// A file the user names is read whatever it is, in the folder's source
// when it sits in an output folder; folders without CANN output are left
// alone.
TEST(AscendOutputFolderTest, NamedFilesAndOtherFolders) {
  Claimed named = Claim("", {"p/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"},
                        /*named=*/true);
  EXPECT_EQ(named.order.size(), 1u);
  EXPECT_EQ(named.sources[0], "p");
  EXPECT_TRUE(named.left_out.empty());
  Claimed info = Claim("", {"p/profiler_info_0.json"}, /*named=*/true);
  EXPECT_EQ(info.sources[0], "");
  EXPECT_TRUE(info.left_out.empty());

  Claimed plain = Claim("run", {"run/a.json", "run/profiler_info_0.json"});
  EXPECT_EQ(plain.order.size(), 2u);
  EXPECT_TRUE(plain.left_out.empty());
}

// test/bad_inputs/ascend_timeline: every file fails with its message when
// imported directly (no message: it loads), and sniffs as the manifest
// says.
TEST(AscendTimelineTest, BadInputsFailClearly) {
  const std::filesystem::path dir =
      std::filesystem::path(MI_SOURCE_DIR) / "test/bad_inputs/ascend_timeline";
  std::ifstream manifest_file(dir / "manifest.json");
  ASSERT_TRUE(manifest_file) << "missing " << (dir / "manifest.json");
  nlohmann::json manifest =
      nlohmann::json::parse(manifest_file, nullptr, false);
  ASSERT_TRUE(manifest.is_array());
  auto importer = CreateAscendTimelineImporter();
  for (const nlohmann::json& entry : manifest) {
    const std::string file = entry["file"];
    std::ifstream in(dir / file, std::ios::binary);
    ASSERT_TRUE(in) << file;
    std::string data((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    int score = importer->Sniff(std::string_view(data).substr(0, 4096), file);
    if (entry.contains("sniff")) {
      EXPECT_EQ(score, entry["sniff"]) << file;
    }
    if (entry.contains("sniff_min")) {
      EXPECT_GE(score, entry["sniff_min"]) << file;
    }
    if (entry["exit_code"] == 5) continue;  // the session never reads it
    StringPool strings;
    Trace trace(&strings);
    DiagnosticSink diagnostics;
    Status status = ImportInto(&trace, &diagnostics, data, file);
    if (entry["exit_code"] == 0) {
      EXPECT_TRUE(status.ok()) << file << ": " << status.ToString();
      continue;
    }
    ASSERT_FALSE(status.ok()) << file;
    EXPECT_EQ(status.code(), StatusCode::kMalformedInput) << file;
    // The CLI's fragments minus the file's location prefix.
    for (const std::string fragment : entry["message"]) {
      if (fragment.starts_with(file)) continue;
      EXPECT_NE(status.message().find(fragment), std::string::npos)
          << file << ": " << status.message() << " lacks " << fragment;
    }
  }
}

}  // namespace
}  // namespace mi::importers
