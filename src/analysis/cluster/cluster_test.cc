// The cluster reduction and analyses on a hand-built three-rank trace,
// every expected figure worked out by hand in the comments (times in us).
// Summary JSON round trip, merge errors, nccl-tests' factors and the
// msprof-analyze slow-rank test on hand values.

#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "analysis/cluster/cluster_analysis.h"
#include "analysis/cluster/rank_reduce.h"
#include "model_inspector/cluster.h"

namespace mi::analysis {
namespace {

constexpr int64_t kUs = 1000;

// Three ranks, one step ProfilerStep#1 = [0, 1000) us each, one all-reduce
// of 1,000,000 bytes in group "0" (3 ranks) that ends at 600 us on every
// rank. Device work per rank (stream 7 unless said):
//   rank 0: aten::mm [0,200); all-reduce [200,600); on stream 8
//           aten::add [400,450) beside it; aten::mm [600,700).
//   rank 1: aten::mm [0,200); all-reduce [200,600); aten::mm [600,700);
//           aten::mm [800,900), launched by a runtime call at [780,790)
//           after the device went idle at 700 (host-bound 100).
//   rank 2: aten::mm [0,200); vllm::moe [200,350) (the slow one);
//           all-reduce [350,600); aten::mm [600,700); on the host a
//           DataLoader op [0,30).
struct ThreeRanks {
  StringPool pool;
  Model model{&pool};
  Trace trace{&pool};
  Links links;
  SourceId src[3];

  ThreeRanks() {
    for (int r = 0; r < 3; ++r) {
      src[r] = trace.FindOrAddSource(pool.Intern("rank" + std::to_string(r)));
      trace.mutable_source(src[r]).rank = r;
      trace.mutable_source(src[r]).world_size = 3;
      trace.mutable_source(src[r]).base_ns = 1'000'000'000;  // epoch base
      RunInfo run;
      run.name = pool.Intern("ProfilerStep#1");
      run.start_ns = 0;
      run.end_ns = 1000 * kUs;
      run.source = src[r];
      trace.AddRun(run);
    }
    TrackId s0 = Stream(src[0], 7), s0b = Stream(src[0], 8);
    TrackId h0 = Host(src[0]);
    Kernel(s0, "gemm", "aten::mm", 0, 200);
    TaskId c0 =
        Kernel(s0, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)", "", 200, 400);
    Kernel(s0b, "add", "aten::add", 400, 50);
    Kernel(s0, "gemm", "aten::mm", 600, 100);
    TaskId op0 = Task(h0, TaskKind::kHostOp, "c10d::allreduce_", 190, 5);
    trace.SetTaskParent(c0, op0);
    Record(src[0], c0, 200, 600);

    TrackId s1 = Stream(src[1], 7);
    TrackId h1 = Host(src[1]);
    Kernel(s1, "gemm", "aten::mm", 0, 200);
    TaskId c1 =
        Kernel(s1, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)", "", 200, 400);
    Kernel(s1, "gemm", "aten::mm", 600, 100);
    TaskId late = Kernel(s1, "gemm", "aten::mm", 800, 100);
    TaskId launch = Task(h1, TaskKind::kRuntime, "cudaLaunchKernel", 780, 10);
    trace.SetTaskLaunch(late, launch);
    Record(src[1], c1, 200, 600);

    TrackId s2 = Stream(src[2], 7);
    TrackId h2 = Host(src[2]);
    Kernel(s2, "gemm", "aten::mm", 0, 200);
    Kernel(s2, "moe", "vllm::moe", 200, 150);
    TaskId c2 =
        Kernel(s2, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)", "", 350, 250);
    Kernel(s2, "gemm", "aten::mm", 600, 100);
    Task(h2, TaskKind::kHostOp,
         "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 0,
         30);
    Record(src[2], c2, 350, 600);

    // The profiler's own split for rank 0 (an Ascend step_trace row) and a
    // per-transport row naming the link.
    StepTraceRow st;
    st.source = src[0];
    st.step = pool.Intern("1");
    st.computing_ns = 350 * kUs;
    st.communication_ns = 400 * kUs;
    st.overlapped_ns = 50 * kUs;
    trace.mutable_communication().step_trace.push_back(st);
    CommunicationBandwidthRow bw;
    bw.source = src[0];
    bw.op_name = pool.Intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)");
    bw.group = pool.Intern("0");
    bw.transport = pool.Intern("HCCS");
    bw.size_bytes = 2'000'000;
    bw.transit_ns = 300 * kUs;
    trace.mutable_communication().bandwidth.push_back(bw);
  }

  TrackId Stream(SourceId s, int64_t stream) {
    TrackInfo info;
    info.kind = TrackKind::kDeviceStream;
    info.source = s;
    info.device = 0;
    info.stream = stream;
    return trace.AddTrack(info);
  }
  TrackId Host(SourceId s) {
    TrackInfo info;
    info.kind = TrackKind::kHostThread;
    info.source = s;
    return trace.AddTrack(info);
  }
  TaskId Task(TrackId track, TaskKind kind, std::string_view name,
              int64_t start_us, int64_t dur_us, std::string_view op = "") {
    TaskRow row;
    row.kind = kind;
    row.name = pool.Intern(name);
    row.op_type = pool.Intern(op);
    row.track = track;
    row.start_ns = start_us * kUs;
    row.duration_ns = dur_us * kUs;
    row.run = static_cast<uint32_t>(trace.track(track).source.value());
    return trace.AddTask(row);
  }
  TaskId Kernel(TrackId track, std::string_view name, std::string_view op,
                int64_t start_us, int64_t dur_us) {
    return Task(track, TaskKind::kCompute, name, start_us, dur_us, op);
  }
  void Record(SourceId s, TaskId task, int64_t start_us, int64_t end_us) {
    CollectiveRecord r;
    r.source = s;
    r.task = task;
    r.name = trace.task_name(task);
    r.type = CollectiveType::kAllReduce;
    r.group = pool.Intern("0");
    r.group_size = 3;
    r.start_ns = start_us * kUs;
    r.end_ns = end_us * kUs;
    r.bytes = 1'000'000;
    r.dtype = pool.Intern("BFloat16");
    trace.mutable_communication().collectives.push_back(r);
  }

  ClusterSummary Summary() {
    ClusterSummary out;
    for (SourceId s : RankSources(trace)) {
      out.ranks.push_back(ReduceRank(model, trace, links, s));
    }
    return out;
  }
};

TEST(ClusterReduce, StepFiguresPerRank) {
  ThreeRanks t;
  ClusterSummary s = t.Summary();
  ASSERT_EQ(s.ranks.size(), 3u);
  // Rank 0: compute = [0,200) U [400,450) U [600,700) = 350; communication
  // [200,600) = 400, of which [400,450) overlapped (50): exposed 350;
  // busy = [0,700) so idle = 1000 - 700 = 300.
  const ClusterRankStep& r0 = s.ranks[0].steps.at(0);
  EXPECT_EQ(r0.step, 1);
  EXPECT_EQ(r0.start_ns, 1'000'000'000);  // raw 0 + the source's base
  EXPECT_EQ(r0.wall_ns, 1000 * kUs);
  EXPECT_EQ(r0.compute_ns, 350 * kUs);
  EXPECT_EQ(r0.communication_ns, 400 * kUs);
  EXPECT_EQ(r0.overlapped_communication_ns, 50 * kUs);
  EXPECT_EQ(r0.exposed_communication_ns, 350 * kUs);
  EXPECT_EQ(r0.idle_ns, 300 * kUs);
  EXPECT_EQ(r0.host_bound_ns, 0);
  ASSERT_TRUE(r0.has_step_trace);
  EXPECT_EQ(r0.step_trace.overlapped_ns, 50 * kUs);
  // Rank 1: compute 200 + 100 + 100 = 400; the gap [700,800) ends with a
  // kernel whose launch began at 780 >= 700: host-bound 100; idle = 1000 -
  // ([0,700) + [800,900)) = 200.
  const ClusterRankStep& r1 = s.ranks[1].steps.at(0);
  EXPECT_EQ(r1.compute_ns, 400 * kUs);
  EXPECT_EQ(r1.host_bound_ns, 100 * kUs);
  EXPECT_EQ(r1.idle_ns, 200 * kUs);
  // Rank 2: compute 200 + 150 + 100 = 450, communication 250, DataLoader 30.
  const ClusterRankStep& r2 = s.ranks[2].steps.at(0);
  EXPECT_EQ(r2.compute_ns, 450 * kUs);
  EXPECT_EQ(r2.communication_ns, 250 * kUs);
  EXPECT_EQ(r2.data_loading_ns, 30 * kUs);
  // Op types of rank 2, longest first: aten::mm 300 (2 kernels), vllm::moe
  // 150.
  ASSERT_EQ(r2.op_types.size(), 2u);
  EXPECT_EQ(r2.op_types[0].op_type, "aten::mm");
  EXPECT_EQ(r2.op_types[0].time_ns, 300 * kUs);
  EXPECT_EQ(r2.op_types[0].count, 2);
  EXPECT_EQ(r2.op_types[1].op_type, "vllm::moe");
  // The collective of rank 0: its step, epoch times, the host op.
  ASSERT_EQ(s.ranks[0].collectives.size(), 1u);
  const ClusterRankCollective& c = s.ranks[0].collectives[0];
  EXPECT_EQ(c.type, "allreduce");
  EXPECT_EQ(c.step, 1);
  EXPECT_EQ(c.start_ns, 1'000'000'000 + 200 * kUs);
  EXPECT_EQ(c.overlapped_ns, 50 * kUs);
  EXPECT_EQ(c.issued_by, "c10d::allreduce_");
}

TEST(ClusterAnalyze, SkewWaitBandwidthSlowRank) {
  ThreeRanks t;
  ClusterReport rep = AnalyzeClusterSummary(t.Summary(), {});
  EXPECT_EQ(rep.world_size, 3);
  EXPECT_EQ(rep.world_size_from, "world_size");
  EXPECT_TRUE(rep.missing_ranks.empty());
  ASSERT_EQ(rep.collectives.size(), 1u);
  const ClusterCollective& c = rep.collectives[0];
  EXPECT_EQ(c.matched_by, "group_sequence");
  // Arrivals 200, 200, 350: rank 2 last by 150; waits 150, 150, 0; the
  // transfer is the last rank's op, 600 - 350 = 250; all end at 600.
  EXPECT_EQ(c.last_rank, 2);
  EXPECT_EQ(c.arrival_skew_ns, 150 * kUs);
  EXPECT_EQ(c.end_spread_ns, 0);
  EXPECT_EQ(c.transfer_ns, 250 * kUs);
  ASSERT_EQ(c.ranks.size(), 3u);
  EXPECT_EQ(c.ranks[0].wait_ns, 150 * kUs);
  EXPECT_EQ(c.ranks[1].wait_ns, 150 * kUs);
  EXPECT_EQ(c.ranks[2].wait_ns, 0);
  EXPECT_EQ(c.wait_ns, 300 * kUs);
  // Exposed: rank 0 400 - 50 = 350, rank 1 400, rank 2 250: 1000.
  EXPECT_EQ(c.exposed_ns, 1000 * kUs);
  // algbw = 1e6 B / 250e3 ns = 4 GB/s; all-reduce over n = 3: busbw factor
  // 2(n-1)/n = 4/3, busbw 5.333 GB/s; link HCCS (rank 0's transport row),
  // chip unknown: msprof's V2_1_0 figure 18 GB/s, efficiency 0.2963.
  EXPECT_DOUBLE_EQ(c.algbw_gbps, 4.0);
  EXPECT_DOUBLE_EQ(c.busbw_factor, 4.0 / 3.0);
  EXPECT_NEAR(c.busbw_gbps, 5.3333333, 1e-6);
  EXPECT_EQ(c.link_type, "HCCS");
  EXPECT_DOUBLE_EQ(c.peak_gbps, 18.0);
  EXPECT_NEAR(c.efficiency, 5.3333333 / 18.0, 1e-6);
  // Overlap per rank (HTA's: both / communication): rank 0 50 / 400;
  // step_trace's Overlapped / Communication = 50 / 400 too.
  EXPECT_DOUBLE_EQ(rep.overlap[0].overlap_share, 0.125);
  EXPECT_DOUBLE_EQ(rep.overlap[0].step_trace_overlap_share, 0.125);
  EXPECT_LT(rep.overlap[1].step_trace_overlap_share, 0);
  // Step: compute 350, 400, 450: mean 400, (max - mean)/mean = 0.125,
  // (max - min)/mean = 0.25; the most compute on rank 2.
  ASSERT_EQ(rep.steps.size(), 1u);
  EXPECT_EQ(rep.steps[0].slowest_rank, 2);
  EXPECT_DOUBLE_EQ(rep.steps[0].compute_max_over_mean, 0.125);
  EXPECT_DOUBLE_EQ(rep.steps[0].compute_spread_over_mean, 0.25);
  // Slow rank 2: last at 1 of 1, 150 late, the others waited 300. Reason
  // compute: 450 against the median of ranks 0 and 1 (350, 400: 375) =
  // +75; of the op types only vllm::moe is above the others' median
  // (150 against 0); data loading +30 (above the 10 us floor).
  ASSERT_EQ(rep.slow_ranks.size(), 1u);
  const ClusterSlowRank& s = rep.slow_ranks[0];
  EXPECT_EQ(s.rank, 2);
  EXPECT_EQ(s.last_arrivals, 1);
  EXPECT_EQ(s.mean_lateness_ns, 150 * kUs);
  EXPECT_EQ(s.others_wait_ns, 300 * kUs);
  ASSERT_EQ(s.reasons.size(), 2u);
  EXPECT_EQ(s.reasons[0].kind, "compute");
  EXPECT_EQ(s.reasons[0].excess_ns, 75 * kUs);
  ASSERT_EQ(s.reasons[0].op_types.size(), 1u);
  EXPECT_EQ(s.reasons[0].op_types[0].op_type, "vllm::moe");
  EXPECT_EQ(s.reasons[0].op_types[0].excess_ns, 150 * kUs);
  EXPECT_EQ(s.reasons[1].kind, "data_loading");
  EXPECT_EQ(s.reasons[1].excess_ns, 30 * kUs);
  // Critical path of the step: rank 2's 350 us before arriving, then the
  // 250 us transfer.
  ASSERT_EQ(rep.critical_path.size(), 1u);
  ASSERT_EQ(rep.critical_path[0].links.size(), 1u);
  EXPECT_EQ(rep.critical_path[0].links[0].last_rank, 2);
  EXPECT_EQ(rep.critical_path[0].links[0].compute_before_ns, 350 * kUs);
  EXPECT_EQ(rep.critical_path[0].total_ns, 600 * kUs);
  bool slow_finding = false;
  for (const ClusterFinding& f : rep.findings) {
    if (f.rule_id == "cluster_slow_rank") {
      slow_finding = true;
      EXPECT_EQ(f.ranks, std::vector<int32_t>{2});
      EXPECT_NE(f.message.find("vllm::moe"), std::string::npos) << f.message;
    }
  }
  EXPECT_TRUE(slow_finding);
}

TEST(ClusterAnalyze, MissingRanksFromTheWorldSize) {
  ThreeRanks t;
  ClusterSummary s = t.Summary();
  for (auto& r : s.ranks) r.world_size = 5;
  ClusterReport rep = AnalyzeClusterSummary(s, {});
  EXPECT_EQ(rep.missing_ranks, (std::vector<int32_t>{3, 4}));
}

TEST(ClusterReduce, CollectivesFromHcomTasksWithoutRecords) {
  // No importer records: the hcom_* op tasks stand for them; group and
  // sequence from the name hcom_<op>__<G>_<k>_<m>.
  StringPool pool;
  Model model{&pool};
  Trace trace{&pool};
  Links links;
  SourceId s = trace.FindOrAddSource(pool.Intern("rank0_ascend_pt"));
  TrackInfo info;
  info.kind = TrackKind::kDeviceStream;
  info.source = s;
  TrackId track = trace.AddTrack(info);
  for (int k = 0; k < 2; ++k) {
    TaskRow row;
    row.kind = TaskKind::kCompute;
    row.name = pool.Intern("hcom_allReduce__538_" + std::to_string(k) + "_1");
    row.category = pool.Intern("communication");
    row.track = track;
    row.start_ns = k * 100;
    row.duration_ns = 50;
    trace.AddTask(row);
  }
  ClusterRankSummary r = ReduceRank(model, trace, links, s);
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_EQ(r.collectives[1].group, "538");
  EXPECT_EQ(r.collectives[1].sequence, 1);
  EXPECT_EQ(r.collectives[1].type, "allreduce");
  ASSERT_EQ(r.steps.size(), 1u);  // the whole trace: no step marked
  EXPECT_EQ(r.steps[0].label, "whole trace");
  EXPECT_EQ(r.steps[0].communication_ns, 100);
}

TEST(ClusterAnalyze, BusBandwidthFactors) {
  // nccl-tests doc/PERFORMANCE.md, n = 8.
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("allreduce", 8), 14.0 / 8.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("allgather", 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("reducescatter", 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("alltoall", 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("broadcast", 8), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("send", 2), 1.0);
  EXPECT_LT(BusBandwidthFactor("unknown", 8), 0);
}

TEST(ClusterAnalyze, DurationOutliersAsMsprofAnalyze) {
  // n = 5: sorted 100, 400, 410, 420, 430; Q = (400 - 100) / (430 - 100)
  // = 0.909 > 0.823 (99.5 % for n = 5): the fastest (index 2) is flagged.
  EXPECT_EQ(DurationOutliers({410, 420, 100, 430, 400}),
            std::vector<size_t>{2});
  // Q = (300 - 100) / (430 - 100) = 0.606: not flagged.
  EXPECT_TRUE(DurationOutliers({410, 420, 100, 430, 300}).empty());
  // At most three distinct values: no test (msprof-analyze's guard).
  EXPECT_TRUE(DurationOutliers({100, 400, 400, 430}).empty());
  EXPECT_TRUE(DurationOutliers({100, 400}).empty());
}

TEST(ClusterSummaryFiles, RoundTripAndMerge) {
  ThreeRanks t;
  ClusterSummary s = t.Summary();
  const std::string json = ClusterSummaryJson(s);
  const std::string path =
      (std::filesystem::temp_directory_path() / "mi_cluster_summary_test.json")
          .string();
  {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fwrite(json.data(), 1, json.size(), f);
    std::fclose(f);
  }
  EXPECT_TRUE(IsClusterSummaryFile(path));
  auto back = ReadClusterSummary(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ClusterSummaryJson(*back), json);
  // Merging the same ranks again names the rank both hold.
  ClusterSummary again = *back;
  Status dup = MergeClusterSummaries(*back, std::move(again));
  EXPECT_FALSE(dup.ok());
  EXPECT_NE(dup.ToString().find("rank 0 is in two inputs"), std::string::npos)
      << dup.ToString();
  // A merge is associative: (r0 + r1) + r2 = r0 + (r1 + r2).
  auto one = [&](int r) {
    ClusterSummary x;
    x.ranks.push_back(s.ranks[r]);
    return x;
  };
  ClusterSummary a = one(0), b = one(1), c = one(2), d = one(1), e = one(2),
                 f = one(0);
  ASSERT_TRUE(MergeClusterSummaries(a, std::move(b)).ok());
  ASSERT_TRUE(MergeClusterSummaries(a, std::move(c)).ok());
  ASSERT_TRUE(MergeClusterSummaries(d, std::move(e)).ok());
  ASSERT_TRUE(MergeClusterSummaries(f, std::move(d)).ok());
  EXPECT_EQ(ClusterSummaryJson(a), ClusterSummaryJson(f));
  EXPECT_EQ(ClusterSummaryJson(a), json);
  // Not a summary: a clear error.
  {
    FILE* g = std::fopen(path.c_str(), "w");
    std::fputs(
        "{\"schema\": \"model-inspector/cluster-summary/1\", "
        "\"ranks\": [{\"rank\": \"x\"}]}",
        g);
    std::fclose(g);
  }
  auto bad = ReadClusterSummary(path);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("ranks[0]"), std::string::npos)
      << bad.status().ToString();
  std::filesystem::remove(path);
}

TEST(ClusterLinkPeaks, BuiltinTableHasItsOrigins) {
  std::vector<LinkPeak> peaks = BuiltinLinkPeaks();
  ASSERT_GE(peaks.size(), 10u);
  for (const LinkPeak& p : peaks) {
    EXPECT_GT(p.peak_gbps, 0) << p.link_type;
    EXPECT_FALSE(p.origin.empty()) << p.link_type;
  }
  auto bad = ParseLinkPeaks("{\"link_peaks\": [{\"link_type\": \"X\"}]}",
                            "peaks.json");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("peaks.json: link_peaks[0]"),
            std::string::npos);
}

}  // namespace
}  // namespace mi::analysis
