#include "analysis/timing/timing_rules.h"

#include <gtest/gtest.h>

#include "analysis/timing/timing_test_util.h"

namespace mi::analysis {
namespace {

using testing::TaskSpec;
using testing::TimingFixture;

constexpr int64_t kUs = 1000;

TaskSpec Task(TaskKind kind, int64_t start_us, int64_t end_us,
              TaskId launch = TaskId::Invalid()) {
  TaskSpec k;
  k.kind = kind;
  k.name = kind == TaskKind::kDataMovement ? "Memcpy HtoD" : "kernel";
  k.start_ns = start_us * kUs;
  k.duration_ns = (end_us - start_us) * kUs;
  k.launch = launch;
  return k;
}

std::vector<Finding> Only(std::vector<Finding> findings, std::string_view id) {
  std::erase_if(findings, [&](const Finding& f) { return f.rule_id != id; });
  return findings;
}

TEST(TimingRulesTest, SpecsAreDataWithDistinctIds) {
  auto specs = TimingRuleSpecs();
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].id, "copy_not_overlapped");
  EXPECT_EQ(specs[1].id, "host_sync_gap");
  EXPECT_EQ(specs[2].id, "false_dependency");
  for (const RuleSpec& s : specs) {
    EXPECT_FALSE(s.title.empty());
    EXPECT_FALSE(s.why.empty());
    EXPECT_FALSE(s.suggestion.empty());
    EXPECT_GT(s.default_threshold, 0);
  }
}

TEST(TimingRulesTest, CopiesThatDidNotOverlapCompute) {
  TimingFixture t;
  TrackId s1 = t.Stream(0, 1);
  TrackId s2 = t.Stream(0, 2);
  t.Add(s1, Task(TaskKind::kCompute, 0, 100));
  t.Add(s2, Task(TaskKind::kDataMovement, 50, 100));  // overlapped
  TaskId alone = t.Add(s2, Task(TaskKind::kDataMovement, 100, 300));
  t.Finish();
  auto findings = Only(EvaluateTimingRules(t.model, t.trace, t.links, {}),
                       "copy_not_overlapped");
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.tasks, (std::vector<TaskId>{alone}));
  EXPECT_EQ(f.time_ns, 200 * kUs);
  EXPECT_NEAR(f.share, 200.0 / 300.0, 1e-9);
  EXPECT_NE(f.message.find("200.0 us of 250.0 us copy time"), std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find("66.7% of the device's busy time"),
            std::string::npos)
      << f.message;
  EXPECT_FALSE(f.suggestion.empty());

  DiagnosisOptions strict;
  strict.thresholds["copy_not_overlapped"] = 0.7;
  EXPECT_TRUE(Only(EvaluateTimingRules(t.model, t.trace, t.links, strict),
                   "copy_not_overlapped")
                  .empty());
  DiagnosisOptions disabled;
  disabled.disabled.push_back("copy_not_overlapped");
  EXPECT_TRUE(Only(EvaluateTimingRules(t.model, t.trace, t.links, disabled),
                   "copy_not_overlapped")
                  .empty());
}

TEST(TimingRulesTest, HostSyncGaps) {
  TimingFixture t;
  TrackId host = t.HostThread(1);
  TrackId s = t.Stream(0, 1);
  TaskId l1 = t.Launch(host, 0, 10 * kUs);
  TaskId k1 = t.Add(s, Task(TaskKind::kCompute, 20, 500, l1));
  TaskSpec sync;
  sync.kind = TaskKind::kRuntime;
  sync.name = "cudaDeviceSynchronize";
  sync.start_ns = 15 * kUs;
  sync.duration_ns = 490 * kUs;  // returns at 505 us
  TaskId call = t.Add(host, sync);
  TaskId l2 = t.Launch(host, 700 * kUs, 10 * kUs);
  TaskId k2 = t.Add(s, Task(TaskKind::kCompute, 720, 800, l2));
  t.Finish();
  // From the call (15 us) until k2 (720 us) the device ran only k1
  // (480 us): 225 us idle.
  auto findings =
      Only(EvaluateTimingRules(t.model, t.trace, t.links, {}), "host_sync_gap");
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.time_ns, 225 * kUs);
  EXPECT_EQ(f.tasks, (std::vector<TaskId>{call, k1, k2}));
  EXPECT_NE(f.message.find("1 host synchronize call left the device idle "
                           "for 225.0 us"),
            std::string::npos)
      << f.message;
  DiagnosisOptions high;
  high.thresholds["host_sync_gap"] = 300;
  EXPECT_TRUE(Only(EvaluateTimingRules(t.model, t.trace, t.links, high),
                   "host_sync_gap")
                  .empty());
}

// Node a (long) and node b (independent of a) both go to stream 1; b is
// launched early but queues behind a while stream 2 idles.
struct FalseDependencyTrace : TimingFixture {
  TrackId host = HostThread(1);
  TrackId s1 = Stream(0, 1);
  TrackId s2 = Stream(0, 2);
  NodeId a, b;
  TaskId ta, tb;

  explicit FalseDependencyTrace(bool b_consumes_a, bool s2_busy) {
    a = Node("a", "Conv", {});
    b = b_consumes_a ? Node("b", "Relu", {a}) : Node("b", "Gemm", {});
    TaskId la = Launch(host, 0, 10 * kUs);
    TaskId lb = Launch(host, 30 * kUs, 10 * kUs);
    TaskSpec ka = Task(TaskKind::kCompute, 20, 1020, la);
    ka.node = a;
    ta = Add(s1, ka);
    TaskSpec kb = Task(TaskKind::kCompute, 1020, 1100, lb);
    kb.node = b;
    tb = Add(s1, kb);
    if (s2_busy) {
      Add(s2, Task(TaskKind::kCompute, 0, 1050));
    } else {
      Add(s2, Task(TaskKind::kCompute, 2000, 2100));
    }
    Finish();
  }
};

TEST(TimingRulesTest, FalseDependency) {
  FalseDependencyTrace t(/*b_consumes_a=*/false, /*s2_busy=*/false);
  auto findings = Only(EvaluateTimingRules(t.model, t.trace, t.links, {}),
                       "false_dependency");
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.tasks, (std::vector<TaskId>{t.tb, t.ta}));
  EXPECT_EQ(f.nodes, (std::vector<NodeId>{t.b, t.a}));
  // Ready when its launch returned (40 us), started at 1020 us.
  EXPECT_EQ(f.time_ns, 980 * kUs);
  EXPECT_NE(f.message.find("waited 980.0 us behind kernel (a, 1000.0 us)"),
            std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find("stream 2 (device 0) was idle for 980.0 us"),
            std::string::npos)
      << f.message;
}

TEST(TimingRulesTest, NoFalseDependencyWhenRelatedOrOtherStreamBusy) {
  FalseDependencyTrace related(/*b_consumes_a=*/true, /*s2_busy=*/false);
  EXPECT_TRUE(
      Only(EvaluateTimingRules(related.model, related.trace, related.links, {}),
           "false_dependency")
          .empty());
  FalseDependencyTrace busy(/*b_consumes_a=*/false, /*s2_busy=*/true);
  EXPECT_TRUE(Only(EvaluateTimingRules(busy.model, busy.trace, busy.links, {}),
                   "false_dependency")
                  .empty());
}

}  // namespace
}  // namespace mi::analysis
