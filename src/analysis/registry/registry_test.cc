// The registry's plumbing: every registered analysis is well formed and
// runs with its defaults; parameters are parsed and refused with the
// parameter named; analyses that do not apply are refused; documented
// fields equal the fields the result writes.

#include "analysis/registry/registry.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "analysis/timing/calibration.h"
#include "analysis/timing/timing_test_util.h"
#include "encoders/result_tree.h"

namespace mi::analysis {
namespace {

using testing::TaskSpec;
using testing::TimingFixture;

// Two sources, one device stream and one host thread each, a few tasks.
struct TwoRanks {
  TimingFixture f;
  CalibrationReport calibration;
  AnalysisContext ctx;

  TwoRanks() {
    SourceId r0 = f.Source("rank0.json", 0);
    SourceId r1 = f.Source("rank1.json", 1);
    TrackId s0 = f.Stream(0, 7, r0);
    TrackId s1 = f.Stream(0, 7, r1);
    TrackId h0 = f.HostThread(1, r0);
    f.Add(
        s0,
        {.name = "k_mm", .op_type = "mm", .start_ns = 100, .duration_ns = 50});
    f.Add(s0, {.kind = TaskKind::kDataMovement,
               .name = "Memcpy DtoH",
               .start_ns = 200,
               .duration_ns = 10});
    f.Add(s1,
          {.name = "ncclKernel_AllReduce", .start_ns = 120, .duration_ns = 80});
    f.Add(h0, {.kind = TaskKind::kHostOp,
               .name = "aten::mm",
               .start_ns = 90,
               .duration_ns = 30});
    f.Finish();
    // One row of each CANN profiler table (and a module's reservation),
    // so that their analyses write every field.
    StringPool& strings = f.trace.strings();
    ProfileTables& tables = f.trace.mutable_profile_tables();
    ApiStatisticRow api;
    api.source = r0;
    api.level = strings.Intern("acl");
    api.name = strings.Intern("aclrtSynchronizeStream");
    api.total_ns = 3000;
    api.count = 2;
    tables.api_statistics.push_back(api);
    CacheRateRow cache;
    cache.source = r0;
    cache.task = TaskId(0);
    cache.op_name = strings.Intern("k_mm");
    cache.hit_rate = 0.5;
    tables.cache_rates.push_back(cache);
    OperatorMemoryRow block;
    block.source = r0;
    block.name = strings.Intern("aten::mm");
    block.size_bytes = 1024;
    block.allocation_ns = 100;
    tables.operator_memory.push_back(block);
    StaticOpMemoryRow op;
    op.source = r0;
    op.op_name = strings.Intern("k_mm");
    op.size_bytes = 2048;
    tables.static_op_memory.push_back(op);
    AllocatorSample module;
    module.source = r0;
    module.device = 0;
    module.component = strings.Intern("SLOG");
    module.total_reserved_bytes = 4096;
    module.per_module = true;
    f.trace.AddAllocatorSample(module);
    ctx.model = &f.model;
    ctx.trace = &f.trace;
    ctx.links = &f.links;
    ctx.framework = f.graph;
    ctx.calibration = &calibration;
  }
};

// "a.b[].c" paths of every key the value holds (array items merged).
void KeyPaths(const encoders::ResultValue& v, const std::string& prefix,
              std::set<std::string>* out) {
  using K = encoders::ResultValue::Kind;
  if (v.kind == K::kObject) {
    for (const auto& [k, child] : v.members) {
      std::string path = prefix.empty() ? k : prefix + "." + k;
      out->insert(path);
      KeyPaths(child, path, out);
    }
  } else if (v.kind == K::kArray) {
    for (const auto& item : v.items) KeyPaths(item, prefix + "[]", out);
  }
}

TEST(RegistryTest, DescriptorsAreWellFormedAndDefaultsParse) {
  std::set<std::string_view> ids;
  for (const AnalysisDescriptor* a : BuiltinAnalyses()) {
    SCOPED_TRACE(std::string(a->id));
    EXPECT_TRUE(ids.insert(a->id).second) << "duplicate id";
    EXPECT_EQ(a->id.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"),
              std::string_view::npos);
    EXPECT_FALSE(a->title.empty());
    EXPECT_FALSE(a->summary.empty());
    EXPECT_TRUE(a->run != nullptr);
    EXPECT_TRUE(!a->fields.empty() || !a->reference.empty())
        << "documents neither its fields nor a schema";
    EXPECT_TRUE(ParseParams(*a, {}).ok())
        << ParseParams(*a, {}).status().ToString();
    EXPECT_EQ(FindAnalysis(a->id), a);
  }
  EXPECT_EQ(FindAnalysis("no_such_analysis"), nullptr);
}

TEST(RegistryTest, ParametersAreCheckedAndNamed) {
  const AnalysisDescriptor& idle = *FindAnalysis("idle_overlap");
  auto unknown = ParseParams(idle, {{"gap", "1"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown parameter 'gap'"),
            std::string::npos);
  EXPECT_NE(unknown.status().message().find("gap_threshold_ns"),
            std::string::npos);
  auto not_int = ParseParams(idle, {{"gap_threshold_ns", "1.5"}});
  ASSERT_FALSE(not_int.ok());
  EXPECT_NE(not_int.status().message().find(
                "parameter 'gap_threshold_ns': expected an integer, found "
                "'1.5'"),
            std::string::npos);
  auto negative = ParseParams(idle, {{"gap_threshold_ns", "-1"}});
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find(">= 0"), std::string::npos);
  auto clock = ParseParams(idle, {{"clock", "wall"}});
  ASSERT_FALSE(clock.ok());
  EXPECT_NE(clock.status().message().find("expected one of raw, calibrated"),
            std::string::npos);
  auto ok = ParseParams(idle, {{"gap_threshold_ns", "5"}, {"clock", "raw"}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->Int("gap_threshold_ns"), 5);
  EXPECT_TRUE(ok->Given("gap_threshold_ns"));
  EXPECT_EQ(ok->Int("max_gaps"), 100);  // the default
  EXPECT_FALSE(ok->Given("max_gaps"));
  EXPECT_EQ(ok->String("clock"), "raw");
}

TEST(RegistryTest, RunsByIdAndRefusesWhatDoesNotApply) {
  TwoRanks run;
  auto missing = RunAnalysis(run.ctx, "nope", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("critical_path"),
            std::string::npos);

  auto path = RunAnalysis(run.ctx, "critical_path", {{"clock", "raw"}});
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  EXPECT_EQ((*path)->analysis_id(), "critical_path");

  // The same run without tasks: trace analyses do not apply.
  TimingFixture empty;
  empty.Finish();
  AnalysisContext ctx = run.ctx;
  ctx.trace = &empty.trace;
  auto refused = RunAnalysis(ctx, "critical_path", {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("needs a trace"),
            std::string::npos);
  EXPECT_FALSE(InfoOf(*FindAnalysis("critical_path"), &ctx).applies);
  EXPECT_TRUE(InfoOf(*FindAnalysis("critical_path"), &run.ctx).applies);
}

TEST(RegistryTest, ExportHoldsTheInExportAnalysesInOrder) {
  TwoRanks run;
  AnalysesDocument doc = ExportAnalyses(run.ctx);
  std::vector<std::string_view> expected;
  for (const AnalysisDescriptor* a : BuiltinAnalyses()) {
    if (a->in_export) expected.push_back(a->id);
  }
  std::vector<std::string_view> got;
  for (const auto& s : doc.sections) got.push_back(s->analysis_id());
  EXPECT_EQ(got, expected);
  // The first keys of analyses.json stay those it always had.
  ASSERT_GE(got.size(), 6u);
  EXPECT_EQ(std::vector<std::string_view>(got.begin(), got.begin() + 6),
            (std::vector<std::string_view>{"calibration", "critical_path",
                                           "idle_overlap", "findings",
                                           "sequences", "blocks"}));
}

// Analyses that document their fields write exactly those (on a run where
// every array has items).
TEST(RegistryTest, DocumentedFieldsAreTheWrittenFields) {
  TwoRanks run;
  for (const AnalysisDescriptor* a : BuiltinAnalyses()) {
    if (a->fields.empty()) continue;
    SCOPED_TRACE(std::string(a->id));
    auto result = RunAnalysis(run.ctx, a->id, {});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    std::set<std::string> written;
    KeyPaths(encoders::ToTree(**result), "", &written);
    std::set<std::string> documented;
    for (const FieldDoc& f : a->fields) documented.insert(std::string(f.path));
    EXPECT_EQ(written, documented);
  }
}

TEST(RegistryTest, ReferenceListsEveryAnalysis) {
  std::string md = AnalysesReferenceMarkdown();
  for (const AnalysisDescriptor* a : BuiltinAnalyses()) {
    EXPECT_NE(md.find("\n## " + std::string(a->id) + "\n"), std::string::npos)
        << a->id;
  }
}

}  // namespace
}  // namespace mi::analysis
