// The timing digest, the timing / concurrency diff and the noise rule: on a
// hand-built trace whose figures are worked out below, and on real profile
// pairs (test/fixtures/diff_timing/README.md).

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/analysis_descriptor.h"
#include "analysis/timing/timing_test_util.h"
#include "diff/diff_internal.h"
#include "diff/timing_stat.h"
#include "model_inspector/diff.h"

namespace mi {
namespace {

using analysis::testing::TaskSpec;
using analysis::testing::TimingFixture;

const std::string kSrc = MI_SOURCE_DIR;
const std::string kFixtures = kSrc + "/test/fixtures/";

const DigestSeries* Find(const std::vector<DigestSeries>& v,
                         const std::string& key) {
  for (const DigestSeries& s : v) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

const TimingDelta* FindDelta(const std::vector<TimingDelta>& v,
                             const std::string& key) {
  for (const TimingDelta& d : v) {
    if (d.key == key) return &d;
  }
  return nullptr;
}

TEST(TimingStat, MedianAndSpreadInterpolated) {
  // Sorted 10, 20, 30, 40: positions q * 3; p25 = 10 + 0.75 * 10 = 17.5,
  // median = 25, p75 = 32.5; spread = 15 (numpy.percentile gives the same).
  TimingStat s = diff::StatOf({40, 10, 30, 20}, 4);
  EXPECT_EQ(s.samples, 4);
  EXPECT_EQ(s.median_ns, 25);
  EXPECT_EQ(s.spread_ns, 15);
  EXPECT_EQ(s.min_ns, 10);
  EXPECT_EQ(s.max_ns, 40);
  // A key absent from a run took 0 there: {7} over 3 runs is 0, 0, 7.
  TimingStat padded = diff::StatOf({7}, 3);
  EXPECT_EQ(padded.median_ns, 0);
  EXPECT_EQ(padded.max_ns, 7);
  // One run: no spread.
  EXPECT_EQ(diff::StatOf({5}, 1).spread_ns, 0);
}

TEST(TimingStat, NoiseIsTheLargestOfFloorFractionAndSpread) {
  DiffOptions o;  // floor 1000 ns, 1 %, 2 x combined spread
  TimingStat a, b;
  a.median_ns = 50'000;
  // Floor: 1 % of 50 us is 500 ns < 1000 ns.
  EXPECT_EQ(diff::NoiseOf(a, b, o), 1000);
  a.median_ns = 10'000'000;  // 1 % = 100 us
  EXPECT_EQ(diff::NoiseOf(a, b, o), 100'000);
  a.spread_ns = 300'000;  // 2 * sqrt(300^2 + 400^2) us = 1000 us
  b.spread_ns = 400'000;
  EXPECT_EQ(diff::NoiseOf(a, b, o), 1'000'000);
}

// Two steps on device 0, streams 7 and 20, launched from one host thread:
//   step 1 (from 0):    launch [0, 10); gemm (MatMul, node mm) on s7
//                       [100, 400); copy on s20 [300, 500)
//   step 2 (from 1000): launch [1000, 1010); gemm on s7 [1100, 1300);
//                       copy on s20 [1300, 1400)
// Step 1: the streams overlap on [300, 400) = 100 ns; wall 0 .. 500 = 500.
// Step 2: no overlap (touching is not overlapping); wall 1000 .. 1400.
struct TwoSteps : TimingFixture {
  NodeId mm;
  TwoSteps() {
    mm = Node("mm", "MatMul", {});
    TrackId host = HostThread(1);
    TrackId s7 = Stream(0, 7);
    TrackId s20 = Stream(0, 20);
    uint32_t r1 = trace.AddRun({pool.Intern("ProfilerStep#1"), 0, 900});
    uint32_t r2 = trace.AddRun({pool.Intern("ProfilerStep#2"), 1000, 1900});
    auto add = [&](TrackId track, TaskKind kind, std::string_view name,
                   int64_t start, int64_t end, uint32_t run, NodeId node) {
      TaskSpec spec;
      spec.kind = kind;
      spec.name = name;
      spec.start_ns = start;
      spec.duration_ns = end - start;
      spec.run = run;
      spec.node = node;
      Add(track, spec);
    };
    add(host, TaskKind::kRuntime, "cudaLaunchKernel", 0, 10, r1, NodeId());
    add(s7, TaskKind::kCompute, "gemm", 100, 400, r1, mm);
    add(s20, TaskKind::kDataMovement, "copy", 300, 500, r1, NodeId());
    add(host, TaskKind::kRuntime, "cudaLaunchKernel", 1000, 1010, r2, NodeId());
    add(s7, TaskKind::kCompute, "gemm", 1100, 1300, r2, mm);
    add(s20, TaskKind::kDataMovement, "copy", 1300, 1400, r2, NodeId());
    Finish();
  }
  RunDigest Digest() {
    analysis::AnalysisContext run;
    run.model = &model;
    run.trace = &trace;
    run.links = &links;
    run.framework = graph;
    RunDigest d;
    DigestLevel level;
    level.level = "framework";
    DigestNode node;
    node.node_id = mm.value();
    node.name = "mm";
    node.op_type = "MatMul";
    level.nodes.push_back(node);
    d.levels.push_back(level);
    diff::DigestTiming(run, &d);
    return d;
  }
};

TEST(DigestTiming, HandBuiltTwoStreamSteps) {
  TwoSteps f;
  RunDigest d = f.Digest();
  // The fixture's empty "whole trace" run holds no task: not a run.
  EXPECT_EQ(d.runs_from, "ProfilerStep");
  ASSERT_EQ(d.run_count, 2);
  EXPECT_EQ(d.total.run_ns, (std::vector<int64_t>{500, 400}));
  EXPECT_EQ(d.total.overlapped_ns, (std::vector<int64_t>{100, 0}));
  EXPECT_EQ(d.total.count, (std::vector<int64_t>{2, 2}));

  const DigestSeries* matmul = Find(d.op_types, "MatMul");
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->run_ns, (std::vector<int64_t>{300, 200}));
  EXPECT_EQ(matmul->overlapped_ns, (std::vector<int64_t>{100, 0}));
  const DigestSeries* copies = Find(d.op_types, "[data movement]");
  ASSERT_NE(copies, nullptr);
  EXPECT_EQ(copies->run_ns, (std::vector<int64_t>{200, 100}));
  EXPECT_EQ(copies->overlapped_ns, (std::vector<int64_t>{100, 0}));

  const DigestSeries* s7 = Find(d.streams, "device 0 \u00b7 stream 7");
  const DigestSeries* s20 = Find(d.streams, "device 0 \u00b7 stream 20");
  ASSERT_NE(s7, nullptr);
  ASSERT_NE(s20, nullptr);
  EXPECT_EQ(s7->run_ns, (std::vector<int64_t>{300, 200}));
  EXPECT_EQ(s7->overlapped_ns, (std::vector<int64_t>{100, 0}));
  EXPECT_EQ(s20->run_ns, (std::vector<int64_t>{200, 100}));
  EXPECT_EQ(s20->count, (std::vector<int64_t>{1, 1}));

  ASSERT_EQ(d.stream_pairs.size(), 1u);
  EXPECT_EQ(d.stream_pairs[0].stream_a, "device 0 \u00b7 stream 20");
  EXPECT_EQ(d.stream_pairs[0].stream_b, "device 0 \u00b7 stream 7");
  EXPECT_EQ(d.stream_pairs[0].overlap_ns, (std::vector<int64_t>{100, 0}));

  // The copy is linked to no node: an unlinked task name.
  ASSERT_EQ(d.unlinked_tasks.size(), 1u);
  EXPECT_EQ(d.unlinked_tasks[0].key, "copy");
  EXPECT_EQ(d.unlinked_tasks[0].run_ns, (std::vector<int64_t>{200, 100}));

  const DigestNode& node = d.levels[0].nodes[0];
  EXPECT_EQ(node.run_ns, (std::vector<int64_t>{300, 200}));
  EXPECT_EQ(node.overlapped_ns, (std::vector<int64_t>{100, 0}));
  EXPECT_EQ(node.streams,
            (std::vector<std::string>{"device 0 \u00b7 stream 7"}));
}

// Seen from the framework level, one fused kernel executed two nodes (mm
// and the relu fused into it): each gets half of its time, so the level's
// node times still add up to the kernels' 300 + 200 ns.
TEST(DigestTiming, AFusedTaskIsSharedByItsNodes) {
  TwoSteps f;
  NodeId relu = f.Node("relu", "Relu", {f.mm});
  std::vector<std::pair<NodeId, TaskId>> items;
  for (uint32_t i = 0; i < f.trace.task_count(); ++i) {
    if (f.trace.task_node(TaskId(i)) == f.mm) {
      items.emplace_back(f.mm, TaskId(i));
      items.emplace_back(relu, TaskId(i));
    }
  }
  f.model.BuildIndexes();
  f.links.mapped_tasks.Build(f.model.node_count(), items);
  analysis::AnalysisContext run;
  run.model = &f.model;
  run.trace = &f.trace;
  run.links = &f.links;
  RunDigest d;
  DigestLevel level;
  level.level = "framework";
  for (NodeId n : {f.mm, relu}) {
    DigestNode node;
    node.node_id = n.value();
    level.nodes.push_back(node);
  }
  d.levels.push_back(level);
  diff::DigestTiming(run, &d);
  for (const DigestNode& node : d.levels[0].nodes) {
    EXPECT_EQ(node.run_ns, (std::vector<int64_t>{150, 100}));
    EXPECT_EQ(node.overlapped_ns, (std::vector<int64_t>{50, 0}));
  }
}

// A CPU-only run (host ops, self time) on two threads: keys name the
// threads by their work, not by the ids the OS gave them, so two runs of a
// model line up.
RunDigest HostDigest(int64_t busy_tid, int64_t idle_tid) {
  TimingFixture f;
  TrackId idle = f.HostThread(idle_tid);
  TrackId busy = f.HostThread(busy_tid);
  auto op = [&](TrackId t, int64_t start, int64_t end) {
    TaskSpec spec;
    spec.kind = TaskKind::kHostOp;
    spec.name = "aten::mm";
    spec.start_ns = start;
    spec.duration_ns = end - start;
    f.Add(t, spec);
  };
  op(busy, 0, 300);
  op(idle, 100, 200);
  f.Finish();
  analysis::AnalysisContext run;
  run.model = &f.model;
  run.trace = &f.trace;
  run.links = &f.links;
  RunDigest d;
  diff::DigestTiming(run, &d);
  return d;
}

TEST(DigestTiming, HostThreadKeysAreStableAcrossRuns) {
  for (const RunDigest& d : {HostDigest(4242, 17), HostDigest(9, 5000)}) {
    EXPECT_EQ(d.runs_from, "whole trace");
    ASSERT_EQ(d.streams.size(), 2u);
    EXPECT_EQ(d.streams[0].key, "host thread #1");
    EXPECT_EQ(d.streams[0].run_ns, (std::vector<int64_t>{300}));
    EXPECT_EQ(d.streams[1].key, "host thread #2");
    EXPECT_EQ(d.streams[1].run_ns, (std::vector<int64_t>{100}));
    // Threads of one process run beside each other: [100, 200).
    EXPECT_EQ(d.streams[0].overlapped_ns, (std::vector<int64_t>{100}));
    ASSERT_EQ(d.stream_pairs.size(), 1u);
    EXPECT_EQ(d.stream_pairs[0].overlap_ns, (std::vector<int64_t>{100}));
    // Wall: 0 .. 300.
    EXPECT_EQ(d.total.run_ns, (std::vector<int64_t>{300}));
  }
}

// Two ranks, one step each: keys carry the rank, the streams of two ranks
// never overlap each other (two devices), and the slower rank's span is
// the step's wall time.
TEST(DigestTiming, RanksPrefixKeysAndTheSlowestRankIsTheWall) {
  TimingFixture f;
  const char* names[] = {"r0", "r1"};
  const int64_t ends[] = {100, 250};
  for (int rank = 0; rank < 2; ++rank) {
    SourceId s = f.Source(names[rank], rank);
    TrackId stream = f.Stream(0, 7, s);
    uint32_t r = f.trace.AddRun({f.pool.Intern("ProfilerStep#1"), 0, 300, s});
    TaskSpec spec;
    spec.name = "gemm";
    spec.start_ns = 0;
    spec.duration_ns = ends[rank];
    spec.run = r;
    f.Add(stream, spec);
  }
  f.Finish();
  analysis::AnalysisContext run;
  run.model = &f.model;
  run.trace = &f.trace;
  run.links = &f.links;
  RunDigest d;
  diff::DigestTiming(run, &d);
  ASSERT_EQ(d.run_count, 1);
  EXPECT_EQ(d.total.run_ns, (std::vector<int64_t>{250}));
  EXPECT_EQ(d.total.overlapped_ns, (std::vector<int64_t>{0}));
  ASSERT_EQ(d.streams.size(), 2u);
  EXPECT_EQ(d.streams[0].key, "rank 0 \u00b7 device 0 \u00b7 stream 7");
  EXPECT_EQ(d.streams[0].run_ns, (std::vector<int64_t>{100}));
  EXPECT_EQ(d.streams[1].key, "rank 1 \u00b7 device 0 \u00b7 stream 7");
  EXPECT_TRUE(d.stream_pairs.empty());
}

// A digest with one series per kind, values per run given.
RunDigest Synthetic(std::vector<int64_t> total, std::vector<int64_t> op,
                    std::vector<int64_t> op_overlap) {
  RunDigest d;
  d.runs_from = "ProfilerStep";
  d.run_count = static_cast<int64_t>(total.size());
  d.total.key = "total";
  d.total.run_ns = total;
  DigestSeries s;
  s.key = "Conv";
  s.run_ns = op;
  s.overlapped_ns = op_overlap;
  d.op_types.push_back(s);
  return d;
}

TEST(DiffTiming, NoiseDecidesTheVerdict) {
  DiffOptions o;
  // Base 100, 102, 98, 101, 99 us: median 100 us, p25 99, p75 101:
  // spread 2 us. New: the same + 3 us: spread 2 us; noise = max(1 us,
  // 1 us, 2 * sqrt(8) us = 5.66 us): +3 us is noise.
  RunDigest base = Synthetic({100'000, 102'000, 98'000, 101'000, 99'000},
                             {1, 1, 1, 1, 1}, {0, 0, 0, 0, 0});
  RunDigest next = Synthetic({103'000, 105'000, 101'000, 104'000, 102'000},
                             {1, 1, 1, 1, 1}, {0, 0, 0, 0, 0});
  DiffReport r;
  diff::DiffTiming(base, next, o, &r);
  ASSERT_TRUE(r.has_timing);
  EXPECT_EQ(r.total.delta_ns, 3000);
  EXPECT_EQ(r.total.base.spread_ns, 2000);
  EXPECT_EQ(r.total.noise_ns, 5657);  // 2 * sqrt(2000^2 + 2000^2)
  EXPECT_EQ(r.total.verdict, "same");
  // +10 us is beyond it.
  RunDigest slow = Synthetic({110'000, 112'000, 108'000, 111'000, 109'000},
                             {1, 1, 1, 1, 1}, {0, 0, 0, 0, 0});
  DiffReport s;
  diff::DiffTiming(base, slow, o, &s);
  EXPECT_EQ(s.total.verdict, "slower");
  EXPECT_DOUBLE_EQ(s.total.delta_pct, 10.0);
}

TEST(DiffTiming, ParallelToSerialWithItsCost) {
  DiffOptions o;
  // Conv: 10 us a run, 6 us of it beside another stream (60 %) -> 0.2 us
  // (2 %): ran in parallel, now serial; 5.8 us of overlap lost.
  RunDigest base =
      Synthetic({50'000, 50'000}, {10'000, 10'000}, {6'000, 6'000});
  RunDigest next = Synthetic({56'000, 56'000}, {10'000, 10'000}, {200, 200});
  DiffReport r;
  diff::DiffTiming(base, next, o, &r);
  ASSERT_EQ(r.overlap.size(), 1u);
  EXPECT_EQ(r.overlap[0].scope, "op");
  EXPECT_EQ(r.overlap[0].key, "Conv");
  EXPECT_EQ(r.overlap[0].verdict, "parallel_to_serial");
  EXPECT_EQ(r.overlap[0].cost_ns, 5800);
  EXPECT_DOUBLE_EQ(r.overlap[0].base_fraction, 0.6);
  EXPECT_DOUBLE_EQ(r.overlap[0].new_fraction, 0.02);
  EXPECT_EQ(r.overlap_lost, 1);
  // The reverse is serial_to_parallel, and loses nothing.
  DiffReport back;
  diff::DiffTiming(next, base, o, &back);
  ASSERT_EQ(back.overlap.size(), 1u);
  EXPECT_EQ(back.overlap[0].verdict, "serial_to_parallel");
  EXPECT_EQ(back.overlap[0].cost_ns, 0);
  EXPECT_EQ(back.overlap_lost, 0);
  // 300 ns less overlap is below the 1 us floor: no change reported.
  RunDigest wobble =
      Synthetic({50'000, 50'000}, {10'000, 10'000}, {5'700, 5'700});
  DiffReport same;
  diff::DiffTiming(base, wobble, o, &same);
  EXPECT_TRUE(same.overlap.empty());
}

TEST(DiffTiming, NoTraceNoTiming) {
  RunDigest a = Synthetic({1}, {1}, {0});
  RunDigest b;
  DiffReport r;
  diff::DiffTiming(a, b, DiffOptions(), &r);
  EXPECT_FALSE(r.has_timing);
}

StatusOr<RunDigest> Load(std::vector<std::string> paths) {
  DiffInputOptions o;
  for (std::string& p : paths) o.paths.push_back(kFixtures + p);
  return LoadDiffInput(o);
}

StatusOr<DiffReport> DiffPair(std::vector<std::string> base,
                              std::vector<std::string> next) {
  StatusOr<RunDigest> b = Load(std::move(base));
  if (!b.ok()) return b.status();
  StatusOr<RunDigest> n = Load(std::move(next));
  if (!n.ok()) return n.status();
  StatusOr<DiffReport> r = DiffRuns(*b, *n, DiffOptions());
  if (!r.ok()) return r.status();
  StatusOr<std::vector<DiffRule>> rules = ParseFailOn(DefaultFailOn());
  if (!rules.ok()) return rules.status();
  ApplyDiffRules(*rules, *r);
  return r;
}

const std::vector<std::string> kResnetAll = {
    "diff_timing/resnet18_b16/model.onnx",
    "diff_timing/resnet18_b16/ort_all/model.optimized.onnx"};

std::vector<std::string> With(std::vector<std::string> v, std::string p) {
  v.push_back(std::move(p));
  return v;
}

// Two real ONNX Runtime profiles of the same model with the same settings:
// their medians differ (the machine was shared), but within the noise.
TEST(DiffTimingReal, SameSettingsTwiceIsNoise) {
  StatusOr<DiffReport> r =
      DiffPair(With(kResnetAll, "diff_timing/all_a/onnxruntime_profile.json"),
               With(kResnetAll, "diff_timing/all_b/onnxruntime_profile.json"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->has_timing);
  EXPECT_EQ(r->base.run_count, 12);
  EXPECT_EQ(r->next.run_count, 12);
  EXPECT_EQ(r->base.runs_from, "model_run");
  // The medians differ by more than the floor: the spread decided.
  EXPECT_GT(std::llabs(r->total.delta_ns),
            static_cast<int64_t>(0.01 * r->total.base.median_ns));
  EXPECT_EQ(r->total.verdict, "same")
      << r->total.delta_ns << " noise " << r->total.noise_ns;
  EXPECT_FALSE(r->failed);
  ASSERT_FALSE(r->rules.empty());
  EXPECT_EQ(r->rules[0].rule.metric, "total");
  EXPECT_FALSE(r->rules[0].crossed) << r->rules[0].message;
  // Both ran the same graph: every node is matched and timed.
  EXPECT_FALSE(r->nodes.empty());
  EXPECT_TRUE(r->unmatched_base_tasks.empty());
  EXPECT_TRUE(r->unmatched_new_tasks.empty());
}

// The same model with ONNX Runtime's graph optimizations disabled: the same
// computation without fused Conv+Add+Relu or the NCHWc layout, slower.
TEST(DiffTimingReal, OptimizationsDisabledIsSlower) {
  StatusOr<DiffReport> r =
      DiffPair(With(kResnetAll, "diff_timing/all_a/onnxruntime_profile.json"),
               {"diff_timing/resnet18_b16/model.onnx",
                "diff_timing/disabled/onnxruntime_profile.json"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->total.verdict, "slower");
  EXPECT_GT(r->total.delta_ns, r->total.noise_ns);
  EXPECT_TRUE(r->failed);
  ASSERT_FALSE(r->rules.empty());
  const RuleOutcome& total = r->rules[0];
  EXPECT_EQ(total.rule.text, "total>+5%");
  EXPECT_TRUE(total.crossed);
  EXPECT_DOUBLE_EQ(total.value, r->total.delta_pct);
  EXPECT_NE(total.message.find("total +"), std::string::npos) << total.message;
  EXPECT_NE(total.message.find("> +5%"), std::string::npos) << total.message;
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

// A real two-stream trace and the same trace with its stream-2 kernel made
// serial (diff_timing/make_overlap_lost.py, which computed expected.json
// from the events).
TEST(DiffTimingReal, OverlapLostIsReportedWithItsCost) {
  nlohmann::json expected =
      ReadJson(kFixtures + "diff_timing/overlap_lost/expected.json");
  const int64_t overlap = expected["base"]["overlap_ns"];
  ASSERT_GT(overlap, 0);
  ASSERT_EQ(expected["new"]["overlap_ns"], 0);
  StatusOr<DiffReport> r =
      DiffPair({"samples/traces/kineto/tracelens/"
                "inference__sglang_decode__sglang_Qwen3-8B_decode.json.gz"},
               {"diff_timing/overlap_lost/sglang_decode_serial.json.gz"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const OverlapChange* pair = nullptr;
  for (const OverlapChange& c : r->overlap) {
    if (c.scope == "streams") pair = &c;
  }
  ASSERT_NE(pair, nullptr);
  EXPECT_EQ(pair->key, "device 9 \u00b7 stream 2 <-> device 9 \u00b7 stream 3");
  EXPECT_EQ(pair->verdict, "parallel_to_serial");
  EXPECT_EQ(pair->base_overlap_ns, overlap);
  EXPECT_EQ(pair->new_overlap_ns, 0);
  EXPECT_EQ(pair->cost_ns, overlap);
  // The pair's busy time is the less busy stream's, stream 2's.
  EXPECT_EQ(pair->base_busy_ns, expected["base"]["stream_2_busy_ns"]);
  EXPECT_GE(r->overlap_lost, 1);
  const TimingDelta* s2 = FindDelta(r->streams, "device 9 \u00b7 stream 2");
  ASSERT_NE(s2, nullptr);
  EXPECT_EQ(s2->base.median_ns, expected["base"]["stream_2_busy_ns"]);
  EXPECT_EQ(s2->next.median_ns, expected["new"]["stream_2_busy_ns"]);
  // overlap-lost>0 is in the default rules, and crossed.
  bool crossed = false;
  for (const RuleOutcome& o : r->rules) {
    if (o.rule.metric == "overlap-lost") {
      crossed = o.crossed;
      EXPECT_EQ(o.value, r->overlap_lost);
    }
  }
  EXPECT_TRUE(crossed);
  EXPECT_TRUE(r->failed);
}

}  // namespace
}  // namespace mi
