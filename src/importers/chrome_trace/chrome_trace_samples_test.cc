// Imports every real trace in test/fixtures/samples/traces (Kineto modern
// and 2021, ONNX Runtime, Perfetto's JSON flow examples) and the project's
// own fixtures, through the streaming file path with small chunks.

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/chrome_trace/chrome_trace_importer.h"
#include "io/chunk_reader.h"
#include "trace/trace.h"

namespace mi::importers {
namespace {

namespace fs = std::filesystem;

// Copies of public samples, origins in test/fixtures/samples/SOURCES.md.
const fs::path kSamples =
    fs::path(MI_SOURCE_DIR "/test/fixtures/samples/traces");

struct Loaded {
  StringPool strings;
  Trace trace{&strings};
  DiagnosticSink diagnostics;
  ChromeTraceStats stats;
  Status status;
  uint64_t kind(TaskKind k) const {
    return stats.tasks_by_kind[static_cast<size_t>(k)];
  }
  uint64_t WithCorrelation(TaskKind k) const {
    uint64_t n = 0;
    for (size_t i = 0; i < trace.task_count(); ++i) {
      TaskId t(static_cast<uint32_t>(i));
      n += trace.task_kind(t) == k && trace.task_correlation(t) >= 0;
    }
    return n;
  }
};

std::unique_ptr<Loaded> Load(const fs::path& path) {
  auto loaded = std::make_unique<Loaded>();
  ImportContext ctx;
  ctx.path = path.string();
  ctx.trace = &loaded->trace;
  ctx.diagnostics = &loaded->diagnostics;
  // Small chunks: many events straddle chunk boundaries.
  auto chunks = io::ChunkReader::Open(ctx.path, 64 << 10);
  if (!chunks.ok()) {
    loaded->status = chunks.status();
    return loaded;
  }
  auto reader = CreateChromeTraceReader(ctx, &loaded->stats, 0);
  while (true) {
    auto chunk = (*chunks)->Next();
    if (!chunk.ok()) {
      loaded->status = chunk.status();
      return loaded;
    }
    if (chunk->empty()) break;
    loaded->status = reader->Parse(*chunk);
    if (!loaded->status.ok()) return loaded;
  }
  loaded->status = reader->NotifyEndOfFile();
  return loaded;
}

std::vector<fs::path> Files(const fs::path& dir, std::string_view suffix) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().string().ends_with(suffix)) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void ExpectClean(const Loaded& l, const fs::path& path) {
  ASSERT_TRUE(l.status.ok()) << path << ": " << l.status.ToString();
  EXPECT_EQ(l.diagnostics.CountWithSeverity(Severity::kError), 0u) << path;
  EXPECT_EQ(l.diagnostics.CountWithSeverity(Severity::kDataLoss), 0u) << path;
  EXPECT_EQ(l.stats.tasks, l.trace.task_count());
  for (size_t i = 0; i < l.trace.task_count(); ++i) {
    TaskId t(static_cast<uint32_t>(i));
    ASSERT_LT(l.trace.task_run(t), l.trace.runs().size());
    ASSERT_GE(l.trace.task_duration_ns(t), 0);
  }
}

TEST(ChromeTraceSamplesTest, SamplesFolderExists) {
  ASSERT_TRUE(fs::is_directory(kSamples))
      << kSamples << " is missing: it is committed with the project";
}

TEST(ChromeTraceSamplesTest, KinetoModernTraces) {
  ASSERT_TRUE(fs::is_directory(kSamples / "kineto/tracelens"));
  auto files = Files(kSamples / "kineto/tracelens", ".json.gz");
  ASSERT_EQ(files.size(), 8u);  // SOURCES.md
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    auto l = Load(path);
    ExpectClean(*l, path);
    EXPECT_EQ(l->stats.dialect, "pytorch");
    EXPECT_EQ(TraceDialects(l->trace), "pytorch");
    EXPECT_TRUE(l->stats.object_container);
    EXPECT_GT(l->kind(TaskKind::kCompute), 0u);
    EXPECT_GT(l->WithCorrelation(TaskKind::kCompute), 0u);
    EXPECT_GT(l->kind(TaskKind::kRuntime), 0u);
    EXPECT_GT(l->stats.flow_events, 0u);  // ac2g
    EXPECT_GE(l->trace.runs().size(), 1u);
    const std::string name = path.filename().string();
    if (name.starts_with("h100__") || name.starts_with("mi300__")) {
      EXPECT_TRUE(l->stats.has_base_time);
      EXPECT_EQ(l->stats.base_time_ns, 1751410836000000000);
      EXPECT_GT(l->kind(TaskKind::kHostOp), 0u);
      EXPECT_GT(l->WithCorrelation(TaskKind::kRuntime), 0u);
      EXPECT_GT(l->stats.memory_events, 0u);
    }
    if (name.starts_with("h100__")) {
      // One ProfilerStep#6 window: the prologue plus the step.
      ASSERT_EQ(l->trace.runs().size(), 2u);
      EXPECT_EQ(l->strings.Get(l->trace.runs()[1].name), "ProfilerStep#6");
      EXPECT_GT(l->kind(TaskKind::kOther), 0u);  // python_function
    }
  }
}

TEST(ChromeTraceSamplesTest, Kineto2021TbPluginTraces) {
  auto files = Files(kSamples / "kineto/tb_plugin", ".json.gz");
  // SOURCES.md: ResNet-50 training with DataLoader num_workers 0 and 4.
  ASSERT_EQ(files.size(), 2u);
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    auto l = Load(path);
    ExpectClean(*l, path);
    EXPECT_EQ(l->stats.dialect, "pytorch");
    EXPECT_TRUE(l->stats.has_schema_version);
    EXPECT_TRUE(l->stats.has_device_properties);
    EXPECT_GT(l->kind(TaskKind::kCompute), 8000u);      // Kernel
    EXPECT_GT(l->kind(TaskKind::kDataMovement), 300u);  // Memcpy + Memset
    EXPECT_GT(l->kind(TaskKind::kRuntime), 11000u);     // Runtime
    EXPECT_GT(l->kind(TaskKind::kHostOp), 20000u);      // Operator
    EXPECT_GT(l->WithCorrelation(TaskKind::kCompute), 8000u);
    EXPECT_GT(l->stats.flow_events, 18000u);  // async s/f
    EXPECT_GT(l->stats.memory_events, 10000u);
    // ProfilerStep#N x6 (cat Operator), plus the Trace span's prologue.
    EXPECT_EQ(l->trace.runs().size(), 7u);
  }
}

TEST(ChromeTraceSamplesTest, OnnxRuntimeProfiles) {
  auto files = Files(kSamples / "ort", ".json");
  ASSERT_EQ(files.size(), 2u);  // SOURCES.md
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    auto l = Load(path);
    ExpectClean(*l, path);
    EXPECT_EQ(l->stats.dialect, "onnxruntime");
    EXPECT_FALSE(l->stats.object_container);
    EXPECT_GT(l->kind(TaskKind::kCompute), 70u);
    EXPECT_GT(l->kind(TaskKind::kOverhead), 140u);
    uint64_t with_op_type = 0;
    for (size_t i = 0; i < l->trace.task_count(); ++i) {
      TaskId t(static_cast<uint32_t>(i));
      if (l->trace.task_kind(t) != TaskKind::kCompute) continue;
      EXPECT_NE(l->trace.task_node_name(t), StringPool::kEmpty);
      EXPECT_TRUE(
          l->strings.Get(l->trace.task_category(t)).starts_with("Node/"));
      with_op_type += l->trace.task_op_type(t) != StringPool::kEmpty;
    }
    EXPECT_EQ(with_op_type, l->kind(TaskKind::kCompute));
    // session setup, then the one model_run of these profiles.
    ASSERT_EQ(l->trace.runs().size(), 2u);
    EXPECT_EQ(l->strings.Get(l->trace.runs()[1].name), "model_run #1");
  }
}

TEST(ChromeTraceSamplesTest, PerfettoFlowExamples) {
  auto v1 = Load(kSamples / "perfetto/flow_events_json_v1.json");
  ExpectClean(*v1, "v1");
  EXPECT_EQ(v1->stats.dialect, "chrome");
  EXPECT_EQ(v1->trace.task_count(), 5u);
  EXPECT_EQ(v1->stats.flow_events, 5u);
  auto v2 = Load(kSamples / "perfetto/flow_events_json_v2.json");
  ExpectClean(*v2, "v2");
  EXPECT_EQ(v2->trace.task_count(), 6u);  // 5 X + one B/E pair
  EXPECT_GT(v2->stats.flow_bindings, 0u);
}

TEST(ChromeTraceSamplesTest, ProjectFixtures) {
  // The profiles test/fixtures/generate.sh writes (test/fixtures/README.md):
  // three ORT levels (basic, extended, all) for each of two models, one
  // torch trace.
  const fs::path fixtures = fs::path(MI_SOURCE_DIR "/test/fixtures");
  size_t seen = 0;
  for (const char* model : {"resnet18", "transformer"}) {
    for (const fs::path& path :
         Files(fixtures / model, "onnxruntime_profile.json")) {
      SCOPED_TRACE(path.string());
      auto l = Load(path);
      ExpectClean(*l, path);
      EXPECT_EQ(l->stats.dialect, "onnxruntime");
      EXPECT_GT(l->kind(TaskKind::kCompute), 0u);
      ++seen;
    }
    for (const fs::path& path : Files(fixtures / model, ".pt.trace.json.gz")) {
      SCOPED_TRACE(path.string());
      auto l = Load(path);
      ExpectClean(*l, path);
      EXPECT_EQ(l->stats.dialect, "pytorch");
      ++seen;
    }
  }
  EXPECT_EQ(seen, 7u) << "committed fixtures missing under " << fixtures;
}

// The threaded reader (parser and builder on a thread of their own, as Import()
// runs it) against the single-threaded one, on every real sample, the project's
// fixtures and the bad-input corpus, at several chunk sizes: the same
// status and message, every task column, track, run and diagnostic (code,
// line, column, message, snippet).
struct Imported {
  StringPool strings;
  Trace trace{&strings};
  DiagnosticSink diagnostics;
  ChromeTraceStats stats;
  Status status;
};

std::unique_ptr<Imported> ImportBuffer(const std::string& text,
                                       const fs::path& path, size_t chunk,
                                       bool threaded) {
  auto out = std::make_unique<Imported>();
  ImportContext ctx;
  ctx.path = path.string();
  ctx.trace = &out->trace;
  ctx.diagnostics = &out->diagnostics;
  out->status =
      ImportChromeTraceFromBuffer(text, ctx, &out->stats, chunk, threaded);
  return out;
}

void ExpectSameImport(const Imported& a, const Imported& b) {
  ASSERT_EQ(a.status.code(), b.status.code());
  ASSERT_EQ(a.status.ToString(), b.status.ToString());
  ASSERT_EQ(a.trace.task_count(), b.trace.task_count());
  ASSERT_EQ(a.trace.track_count(), b.trace.track_count());
  ASSERT_EQ(a.trace.runs().size(), b.trace.runs().size());
  ASSERT_EQ(a.stats.repaired_events, b.stats.repaired_events);
  ASSERT_EQ(a.stats.dialect, b.stats.dialect);
  for (size_t i = 0; i < a.trace.task_count(); ++i) {
    TaskId t(static_cast<uint32_t>(i));
    ASSERT_EQ(a.trace.str(a.trace.task_name(t)),
              b.trace.str(b.trace.task_name(t)));
    ASSERT_EQ(a.trace.str(a.trace.task_category(t)),
              b.trace.str(b.trace.task_category(t)));
    ASSERT_EQ(a.trace.str(a.trace.task_shapes(t)),
              b.trace.str(b.trace.task_shapes(t)));
    ASSERT_EQ(a.trace.str(a.trace.task_op_type(t)),
              b.trace.str(b.trace.task_op_type(t)));
    ASSERT_EQ(a.trace.task_kind(t), b.trace.task_kind(t));
    ASSERT_EQ(a.trace.task_track(t), b.trace.task_track(t));
    ASSERT_EQ(a.trace.task_start_ns(t), b.trace.task_start_ns(t));
    ASSERT_EQ(a.trace.task_duration_ns(t), b.trace.task_duration_ns(t));
    ASSERT_EQ(a.trace.task_correlation(t), b.trace.task_correlation(t));
    ASSERT_EQ(a.trace.task_external_id(t), b.trace.task_external_id(t));
    ASSERT_EQ(a.trace.task_bytes(t), b.trace.task_bytes(t));
    ASSERT_EQ(a.trace.task_run(t), b.trace.task_run(t));
    ASSERT_EQ(a.trace.task_parent(t), b.trace.task_parent(t));
    ASSERT_EQ(a.trace.task_launch(t), b.trace.task_launch(t));
  }
  ASSERT_EQ(a.diagnostics.log().size(), b.diagnostics.log().size());
  for (size_t i = 0; i < a.diagnostics.log().size(); ++i) {
    const Diagnostic& x = a.diagnostics.log()[i];
    const Diagnostic& y = b.diagnostics.log()[i];
    EXPECT_EQ(x.code, y.code) << i;
    EXPECT_EQ(x.location.line, y.location.line) << x.message;
    EXPECT_EQ(x.location.column, y.location.column) << x.message;
    EXPECT_EQ(x.message, y.message);
    EXPECT_EQ(x.snippet, y.snippet);
  }
  for (size_t c = 0; c < static_cast<size_t>(DiagnosticCode::kCount); ++c) {
    EXPECT_EQ(a.diagnostics.count(static_cast<DiagnosticCode>(c)),
              b.diagnostics.count(static_cast<DiagnosticCode>(c)));
  }
}

TEST(ChromeTraceSamplesTest, ThreadedReaderGivesWhatOneThreadGives) {
  std::vector<fs::path> files = Files(kSamples, ".json.gz");
  for (const fs::path& p : Files(kSamples, ".json")) files.push_back(p);
  const fs::path fixtures = fs::path(MI_SOURCE_DIR "/test/fixtures");
  for (const char* model : {"resnet18", "transformer"}) {
    for (const fs::path& p :
         Files(fixtures / model, "onnxruntime_profile.json")) {
      files.push_back(p);
    }
  }
  for (const fs::path& p :
       Files(fs::path(MI_SOURCE_DIR "/test/bad_inputs/chrome_trace"), "")) {
    files.push_back(p);
  }
  ASSERT_GT(files.size(), 20u);
  size_t with_diagnostics = 0, failing = 0;
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    auto text = io::ReadDecompressedFile(path.string());
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    for (size_t chunk : {size_t{0}, size_t{997}, size_t{64 << 10}}) {
      SCOPED_TRACE("chunk " + std::to_string(chunk));
      auto one = ImportBuffer(*text, path, chunk, false);
      auto two = ImportBuffer(*text, path, chunk, true);
      ExpectSameImport(*one, *two);
      with_diagnostics += !one->diagnostics.log().empty();
      failing += !one->status.ok();
    }
  }
  // The corpus exercises both: located diagnostics and failed imports.
  EXPECT_GT(with_diagnostics, 0u);
  EXPECT_GT(failing, 0u);
}

}  // namespace
}  // namespace mi::importers
