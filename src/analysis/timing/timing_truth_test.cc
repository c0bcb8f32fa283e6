// Two processes (ranks) profiled together, each a host thread and one
// device with two streams, built from a known true timeline: every figure
// below is computed by hand from it in the comments, not taken from the
// code under test. Both ranks number their correlation ids 1..5 and call
// their GPU "device 0"; their device clocks are skewed by different known
// amounts; launch latencies vary (8 to 90 us).
//
// All times in us (x 1000 = ns). Rank 0 (true times):
//   L1 cudaLaunchKernel [10, 15) corr 1 -> k1 stream 7  [20, 120)  lat 10
//   L2 cudaLaunchKernel [20, 25) corr 2 -> k2 stream 20 [31, 61)   lat 11
//   L3 cudaLaunchKernel [30, 35) corr 3 -> k3 stream 7  [120, 170) lat 90
//   S1 cudaDeviceSynchronize [40, 175) corr 4 (returns 5 us after k3)
//   L4 cudaLaunchKernel [180, 185) corr 5 -> k4 stream 20 [192, 242) lat 12
//   device clock lags the host by 790 us: raw = true - 790, so the true
//   offset (calibrated = raw + offset) is +790 us.
// Rank 1 (true times, its own host clock):
//   L1 cudaLaunchKernel [0, 6)   corr 1 -> k1 stream 7  [8, 58)    lat 8
//   L2 cudaLaunchKernel [10, 16) corr 2 -> k2 stream 7  [58, 98)   lat 48
//   L3 cudaLaunchKernel [20, 26) corr 3 -> k3 stream 20 [35, 115)  lat 15
//   S2 cudaStreamSynchronize [30, 101) corr 4 on stream 7 (Kineto's
//      cuda_sync "Stream Sync" record names it); stream 20's k3 runs on
//      past its return
//   L5 cudaMemcpy [110, 140) corr 5 -> copy DtoH stream 7 [125, 133)
//   device clock leads by 120 us: raw = true + 120, true offset -120 us.

#include <gtest/gtest.h>

#include <cstdlib>

#include "analysis/timing/calibration.h"
#include "analysis/timing/critical_path.h"
#include "analysis/timing/dependency_graph.h"
#include "analysis/timing/idle_overlap.h"
#include "analysis/timing/timing_results.h"
#include "analysis/timing/timing_test_util.h"

namespace mi::analysis {
namespace {

using testing::TaskSpec;
using testing::TimingFixture;

constexpr int64_t kUs = 1000;

struct TwoRanks : TimingFixture {
  SourceId rank0 = Source("/runs/rank0/trace.json", 0);
  SourceId rank1 = Source("/runs/rank1/trace.json", 1);
  TrackId host0 = HostThread(11, rank0);
  TrackId r0s7 = Stream(0, 7, rank0);
  TrackId r0s20 = Stream(0, 20, rank0);
  TrackId host1 = HostThread(11, rank1);
  TrackId r1s7 = Stream(0, 7, rank1);
  TrackId r1s20 = Stream(0, 20, rank1);
  static constexpr int64_t kTrue0 = 790 * kUs;
  static constexpr int64_t kTrue1 = -120 * kUs;
  TaskId L1, L2, L3, S1, L4, k1, k2, k3, k4;          // rank 0
  TaskId M1, M2, M3, S2, M5, j1, j2, j3, copy, sync;  // rank 1

  // A kernel at true [start, end) us on a device whose true offset is
  // `offset`: written at raw = true - offset.
  TaskId Kernel(TrackId stream, std::string_view name, int64_t start,
                int64_t end, int64_t correlation, int64_t offset, uint32_t run,
                TaskKind kind = TaskKind::kCompute) {
    TaskSpec k;
    k.kind = kind;
    k.name = name;
    k.start_ns = start * kUs - offset;
    k.duration_ns = (end - start) * kUs;
    k.correlation = correlation;
    k.run = run;
    return Add(stream, k);
  }
  TaskId Call(TrackId thread, std::string_view name, int64_t start, int64_t end,
              int64_t correlation, uint32_t run) {
    TaskSpec c;
    c.kind = TaskKind::kRuntime;
    c.name = name;
    c.start_ns = start * kUs;
    c.duration_ns = (end - start) * kUs;
    c.correlation = correlation;
    c.run = run;
    return Add(thread, c);
  }

  TwoRanks() {
    trace.AddRun({pool.Intern("rank 1"), 0, 0});  // run 1; run 0 = rank 0
    L1 = Call(host0, "cudaLaunchKernel", 10, 15, 1, 0);
    L2 = Call(host0, "cudaLaunchKernel", 20, 25, 2, 0);
    L3 = Call(host0, "cudaLaunchKernel", 30, 35, 3, 0);
    S1 = Call(host0, "cudaDeviceSynchronize", 40, 175, 4, 0);
    L4 = Call(host0, "cudaLaunchKernel", 180, 185, 5, 0);
    k1 = Kernel(r0s7, "k1", 20, 120, 1, kTrue0, 0);
    k2 = Kernel(r0s20, "k2", 31, 61, 2, kTrue0, 0);
    k3 = Kernel(r0s7, "k3", 120, 170, 3, kTrue0, 0);
    k4 = Kernel(r0s20, "k4", 192, 242, 5, kTrue0, 0);

    M1 = Call(host1, "cudaLaunchKernel", 0, 6, 1, 1);
    M2 = Call(host1, "cudaLaunchKernel", 10, 16, 2, 1);
    M3 = Call(host1, "cudaLaunchKernel", 20, 26, 3, 1);
    S2 = Call(host1, "cudaStreamSynchronize", 30, 101, 4, 1);
    M5 = Call(host1, "cudaMemcpy", 110, 140, 5, 1);
    j1 = Kernel(r1s7, "j1", 8, 58, 1, kTrue1, 1);
    j2 = Kernel(r1s7, "j2", 58, 98, 2, kTrue1, 1);
    j3 = Kernel(r1s20, "j3", 35, 115, 3, kTrue1, 1);
    copy = Kernel(r1s7, "Memcpy DtoH (Device -> Pageable)", 125, 133, 5, kTrue1,
                  1, TaskKind::kDataMovement);
    // CUPTI's record of the stream synchronize: on the stream it waited
    // for, timed as the host call (host clock, not the device's).
    TaskSpec record;
    record.kind = TaskKind::kSync;
    record.name = "Stream Sync";
    record.category = "cuda_sync";
    record.start_ns = 30 * kUs;
    record.duration_ns = 71 * kUs;
    record.correlation = 4;
    record.run = 1;
    sync = Add(r1s7, record);
    Finish();
  }
};

TEST(TimingTruthTest, CalibrationPerSourceAndDevice) {
  TwoRanks t;
  CalibrationReport r = Calibrate(t.model, t.trace, t.links, {});
  // Four domains: each rank's host clock (a reference) and its own
  // device 0; never one "device 0" for both ranks.
  ASSERT_EQ(r.domains.size(), 4u);
  EXPECT_EQ(r.domains[0].name, "rank 0 · host");
  EXPECT_EQ(r.domains[1].name, "rank 0 · device 0");
  EXPECT_EQ(r.domains[2].name, "rank 1 · host");
  EXPECT_EQ(r.domains[3].name, "rank 1 · device 0");
  EXPECT_TRUE(r.domains[0].reference && r.domains[2].reference);
  EXPECT_EQ(r.domains[1].reference_domain, 0);
  EXPECT_EQ(r.domains[3].reference_domain, 2);
  EXPECT_EQ(r.domains[1].tracks, (std::vector<TrackId>{t.r0s7, t.r0s20}));
  EXPECT_EQ(r.domains[3].tracks, (std::vector<TrackId>{t.r1s7, t.r1s20}));

  // Rank 0, offset x: launches say x >= L.start - raw k.start
  //   = 790 - latency; the smallest latency (k1: 10 us) gives x >= 780.
  // S1 is a device synchronize in a process with one device: it waited for
  // both streams. The last task launched on stream 7 before S1 began is k3
  // (raw end 170 - 790), on stream 20 it is k2 (raw end 61 - 790):
  //   x <= 175 - (170 - 790) = 795 and x <= 175 - (61 - 790) = 904.
  // [780, 795]: estimate 787.5 us, bound 7.5 us; true 790 is inside.
  const ClockDomainOffset& d0 = r.domains[1];
  EXPECT_EQ(d0.lower_ns, 780 * kUs);
  EXPECT_EQ(d0.upper_ns, 795 * kUs);
  EXPECT_EQ(d0.offset_ns, 787'500);
  EXPECT_EQ(d0.error_bound_ns, 7'500);
  EXPECT_LE(*d0.lower_ns, TwoRanks::kTrue0);
  EXPECT_GE(*d0.upper_ns, TwoRanks::kTrue0);
  EXPECT_LE(std::abs(d0.offset_ns - TwoRanks::kTrue0), *d0.error_bound_ns);
  EXPECT_EQ(d0.binding_lower->from, t.L1);
  EXPECT_EQ(d0.binding_lower->to, t.k1);
  EXPECT_EQ(d0.binding_upper->kind, AnchorKind::kSync);
  EXPECT_EQ(d0.binding_upper->from, t.k3);
  EXPECT_EQ(d0.binding_upper->to, t.S1);

  // Rank 1: x >= -120 - latency; the smallest latency (j1: 8 us) gives
  // x >= -128. S2 waited for stream 7 only (the Stream Sync record names
  // it): the last task launched there before it began is j2,
  //   x <= 101 - (98 + 120) = -117.
  // (Had it been taken to wait for stream 20 too, j3 would say
  // x <= 101 - (115 + 120) = -134, below the lower bound: a contradiction.)
  // The cudaMemcpy device-to-host ends inside its call:
  //   x <= 140 - (133 + 120) = -113.
  // [-128, -117]: estimate -122.5 us, bound 5.5 us; true -120 is inside.
  const ClockDomainOffset& d1 = r.domains[3];
  EXPECT_EQ(d1.lower_ns, -128 * kUs);
  EXPECT_EQ(d1.upper_ns, -117 * kUs);
  EXPECT_EQ(d1.offset_ns, -122'500);
  EXPECT_EQ(d1.error_bound_ns, 5'500);
  EXPECT_LE(*d1.lower_ns, TwoRanks::kTrue1);
  EXPECT_GE(*d1.upper_ns, TwoRanks::kTrue1);
  EXPECT_LE(std::abs(d1.offset_ns - TwoRanks::kTrue1), *d1.error_bound_ns);
  EXPECT_EQ(d1.binding_lower->to, t.j1);
  EXPECT_EQ(d1.binding_upper->from, t.j2);
  EXPECT_EQ(d1.binding_upper->to, t.S2);
  EXPECT_FALSE(d1.contradiction);

  // Anchors: 4 + 4 launches (the copy's included; the Stream Sync record
  // is the host call's, not a device task), 2 syncs of rank 0 (one per
  // stream), 1 of rank 1, and the synchronous copy.
  EXPECT_EQ(r.anchors_by_kind[static_cast<size_t>(AnchorKind::kLaunch)], 8u);
  EXPECT_EQ(r.anchors_by_kind[static_cast<size_t>(AnchorKind::kSync)], 3u);
  EXPECT_EQ(r.anchors_by_kind[static_cast<size_t>(AnchorKind::kSyncCopy)], 1u);
  EXPECT_EQ(r.residual_violations, 0u);
  EXPECT_EQ(r.contradictions, 0u);
  EXPECT_FALSE(r.time_bases_differ);  // both from the Unix epoch
  ASSERT_EQ(r.notes.size(), 1u);      // two references, no anchor between
  EXPECT_NE(r.notes[0].find("2 host clocks are not joined"), std::string::npos);

  // Raw and calibrated side by side.
  ApplyCalibration(r, &t.trace);
  EXPECT_EQ(t.trace.task_start_ns(t.k1), 20 * kUs - 790 * kUs);
  EXPECT_EQ(t.trace.task_calibrated_start_ns(t.k1), 17'500);
  EXPECT_EQ(t.trace.task_calibrated_start_ns(t.j1), 5'500);
  EXPECT_EQ(t.trace.task_calibrated_start_ns(t.L1), 10 * kUs);
}

// After calibration the device times are true - 2.5 us on both ranks:
// rank 0 k1 [17.5, 117.5), k2 [28.5, 58.5), k3 [117.5, 167.5),
// k4 [189.5, 239.5); rank 1 j1 [5.5, 55.5), j2 [55.5, 95.5),
// j3 [32.5, 112.5), copy [122.5, 130.5).
struct CalibratedTwoRanks : TwoRanks {
  CalibratedTwoRanks() {
    ApplyCalibration(Calibrate(model, trace, links, {}), &trace);
  }
};

int64_t Wait(const CriticalPathReport& r, std::string_view kind) {
  for (const auto& w : r.waits_by_kind) {
    if (w.label == kind) return w.ns;
  }
  return 0;
}

TEST(TimingTruthTest, CriticalPathOfEachRank) {
  CalibratedTwoRanks t;
  // Rank 0 (run 0): every task reaches back to L1 (10 us); k4 ends last
  // (239.5). Walking back along the dependency released last: k4 <- L4
  // (launch, released 185; k2's stream order only 58.5) <- S1 (thread
  // order, 175) <- k3 (host wait, 167.5; L3 only 35) <- k1 (stream order,
  // 117.5; its launch L3 35) <- L1 (launch, 15).
  TimingScope run0;
  run0.run = 0;
  CriticalPathReport p0 = ComputeCriticalPath(t.model, t.trace, t.links, run0);
  EXPECT_EQ(p0.tasks,
            (std::vector<TaskId>{t.L1, t.k1, t.k3, t.S1, t.L4, t.k4}));
  EXPECT_EQ(p0.via, (std::vector<DependencyKind>{
                        DependencyKind::kTrackOrder, DependencyKind::kLaunch,
                        DependencyKind::kTrackOrder, DependencyKind::kHostWait,
                        DependencyKind::kTrackOrder, DependencyKind::kLaunch}));
  EXPECT_EQ(p0.start_ns, 10 * kUs);
  EXPECT_EQ(p0.length_ns, 229'500);  // 239.5 - 10
  // Waits: k1 at 17.5 after L1 ended at 15 (2.5, launch); L4 at 180 after
  // S1 returned at 175 (5, thread order); k4 at 189.5 after L4 ended at
  // 185 (4.5, launch). Busy: 5 + 100 + 50 + 7.5 (S1 past k3) + 5 + 50.
  EXPECT_EQ(p0.wait_before_ns,
            (std::vector<int64_t>{0, 2'500, 0, 0, 5'000, 4'500}));
  EXPECT_EQ(Wait(p0, "launch"), 7'000);
  EXPECT_EQ(Wait(p0, "track_order"), 5'000);
  EXPECT_EQ(p0.busy_ns, 217'500);
  EXPECT_EQ(p0.broken_edges, 0u);

  // Rank 1 (run 1): L5 ends last (140) and reaches back to M1 (0): L5 <-
  // S2 (thread order, 101) <- j2 (host wait: the last stream-7 task ending
  // inside S2, 95.5) <- j1 (stream order, 55.5; M2 only 16) <- M1 (launch,
  // min(6, 5.5) = 5.5).
  TimingScope run1;
  run1.run = 1;
  CriticalPathReport p1 = ComputeCriticalPath(t.model, t.trace, t.links, run1);
  EXPECT_EQ(p1.tasks, (std::vector<TaskId>{t.M1, t.j1, t.j2, t.S2, t.M5}));
  EXPECT_EQ(p1.via[3], DependencyKind::kHostWait);
  EXPECT_EQ(p1.length_ns, 140 * kUs);
  // Busy: 6 + 49.5 + 40 + 5.5 + 30; the 9 us from S2's return to M5.
  EXPECT_EQ(p1.busy_ns, 131 * kUs);
  EXPECT_EQ(Wait(p1, "track_order"), 9 * kUs);

  // Correlation ids collide across the ranks: each launch edge stays in
  // its own rank (rank 1's j1 is launched by M1, never by rank 0's L1).
  DependencyGraph g = BuildDependencyGraph(t.model, t.trace, t.links, {});
  auto preds = [&](TaskId task) {
    std::vector<TaskId> out;
    uint32_t v = g.vertex_of_task[task.value()];
    for (uint32_t e = g.pred_begin[v]; e < g.pred_begin[v + 1]; ++e) {
      if (g.pred_kind[e] == DependencyKind::kLaunch) {
        out.push_back(g.tasks[g.pred[e]]);
      }
    }
    return out;
  };
  EXPECT_EQ(preds(t.j1), (std::vector<TaskId>{t.M1}));
  EXPECT_EQ(preds(t.k1), (std::vector<TaskId>{t.L1}));
  EXPECT_EQ(preds(t.copy), (std::vector<TaskId>{t.M5}));
  // The Stream Sync record is the host call's, not device work.
  EXPECT_EQ(g.vertex_of_task[t.sync.value()], DependencyGraph::kNoVertex);
  EXPECT_EQ(g.edge_counts[static_cast<size_t>(DependencyKind::kHostWait)], 2u);
}

TEST(TimingTruthTest, IdleOverlapAndSyncsPerSource) {
  CalibratedTwoRanks t;
  IdleOptions options;
  options.gap_threshold_ns = 1;
  IdleOverlapReport r = ComputeIdleOverlap(t.model, t.trace, t.links, options);
  // Per stream (idle by cause):
  //  rank 0 stream 7: k1 then k3 back to back: no idle;
  //  rank 0 stream 20: idle [58.5, 189.5) = 131 us, k4's launch L4 was
  //    released at 185, inside the gap: waiting on the host;
  //  rank 1 stream 7: idle [95.5, 122.5) = 27 us, the copy's call M5
  //    released it at min(140, 122.5) = 122.5: host;
  //  rank 1 stream 20: one task.
  ASSERT_EQ(r.streams.size(), 4u);
  EXPECT_EQ(r.streams[0].track, t.r0s7);
  EXPECT_EQ(r.streams[0].idle_ns, 0);
  EXPECT_EQ(r.streams[1].track, t.r0s20);
  EXPECT_EQ(r.streams[1].idle_ns, 131 * kUs);
  EXPECT_EQ(r.streams[1].idle_host_ns, 131 * kUs);
  EXPECT_EQ(r.streams[2].track, t.r1s7);
  EXPECT_EQ(r.streams[2].tasks, 3u);  // the Stream Sync record is not work
  EXPECT_EQ(r.streams[2].idle_ns, 27 * kUs);
  EXPECT_EQ(r.streams[2].idle_host_ns, 27 * kUs);
  // The result names each stream as the summary's stream rows do: the
  // rank first, then the device (no dialect: "device 0") and the stream.
  IdleOverlapResult named = ToIdleOverlapResult(t.trace, r);
  EXPECT_EQ(named.streams[0].name, "rank 0 · device 0 · stream 7");
  EXPECT_EQ(named.streams[2].name, "rank 1 · device 0 · stream 7");
  EXPECT_EQ(r.streams[3].idle_ns, 0);

  // Copy / compute overlap per (rank, device): two "device 0"s.
  //  rank 0: compute [17.5, 167.5) u [28.5, 58.5) u [189.5, 239.5) = 200;
  //  rank 1: compute [5.5, 112.5) = 107, the copy (8 us) ran alone.
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].device, "rank 0 · device 0");
  EXPECT_EQ(r.devices[0].compute_ns, 200 * kUs);
  EXPECT_EQ(r.devices[0].data_movement_ns, 0);
  EXPECT_EQ(r.devices[1].device, "rank 1 · device 0");
  EXPECT_EQ(r.devices[1].compute_ns, 107 * kUs);
  EXPECT_EQ(r.devices[1].data_movement_ns, 8 * kUs);
  EXPECT_EQ(r.devices[1].overlap_ns, 0);
  EXPECT_EQ(r.devices[1].exposed_copies, (std::vector<TaskId>{t.copy}));

  // Syncs, against the devices of their own rank only:
  //  S1 [40, 175): rank 0's device busy [17.5, 167.5), resumes at 189.5:
  //    idle = (189.5 - 40) - (167.5 - 40) = 22 us;
  //  S2 [30, 101) waited for rank 1's stream 7: busy [5.5, 95.5), resumes
  //    at 122.5: idle = (122.5 - 30) - (95.5 - 30) = 27 us (stream 20's j3
  //    was busy meanwhile but S2 did not wait for it).
  EXPECT_EQ(r.sync_calls, 2u);
  EXPECT_EQ(r.sync_ns, (135 + 71) * kUs);
  EXPECT_EQ(r.sync_device_idle_ns, (22 + 27) * kUs);
  ASSERT_EQ(r.sync_waits.size(), 2u);
  EXPECT_EQ(r.sync_waits[0].task, t.S2);
  EXPECT_EQ(r.sync_waits[0].device_idle_ns, 27 * kUs);
  EXPECT_EQ(r.sync_waits[0].device_before, t.j2);
  EXPECT_EQ(r.sync_waits[0].device_after, t.copy);
  EXPECT_EQ(r.sync_waits[1].task, t.S1);
  EXPECT_EQ(r.sync_waits[1].device_idle_ns, 22 * kUs);
  EXPECT_EQ(r.sync_waits[1].device_before, t.k3);
  EXPECT_EQ(r.sync_waits[1].device_after, t.k4);
}

TEST(TimingTruthTest, TracksWithoutSourceAreOneSource) {
  // Old callers name no source: their tracks are one unnamed source (or
  // the trace's default one), with the names they always had.
  TimingFixture t;
  TrackId host = t.HostThread(1);
  TrackId s = t.Stream(0, 7);
  TaskId l = t.Launch(host, 0, 1'000, 5);
  TaskSpec k;
  k.start_ns = 500;
  k.duration_ns = 1'000;
  k.correlation = 5;
  TaskId kernel = t.Add(s, k);
  t.Finish();
  LaunchIndex launches(t.trace);
  EXPECT_EQ(launches.LaunchOf(kernel), l);
  CalibrationReport r = Calibrate(t.model, t.trace, t.links, {});
  ASSERT_EQ(r.domains.size(), 2u);
  EXPECT_EQ(r.domains[0].name, "host");
  EXPECT_EQ(r.domains[1].name, "device 0");
  EXPECT_TRUE(r.notes.empty());
}

}  // namespace
}  // namespace mi::analysis
