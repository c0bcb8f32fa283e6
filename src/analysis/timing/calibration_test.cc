#include "analysis/timing/calibration.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "analysis/timing/timing_test_util.h"

namespace mi::analysis {
namespace {

using testing::TaskSpec;
using testing::TimingFixture;

// Kernels launched from one host thread; each device's clock is behind
// (negative skew) or ahead of the host by a known amount. One kernel per
// device starts exactly when its launch starts (a tight anchor), the
// others 5 us later, as launch latency makes them.
struct SkewedTrace : TimingFixture {
  TrackId host = HostThread(1);
  TrackId d0s1 = Stream(0, 1);
  TrackId d0s2 = Stream(0, 2);
  TrackId d1s1 = Stream(1, 1);

  void Kernels(TrackId stream, int64_t skew, int64_t first_launch) {
    for (int i = 0; i < 4; ++i) {
      int64_t launch_start = first_launch + i * 100'000;
      TaskId launch = Launch(host, launch_start, 4'000);
      TaskSpec k;
      k.start_ns = launch_start + (i == 2 ? 0 : 5'000) + skew;
      k.duration_ns = 50'000;
      k.launch = launch;
      Add(stream, k);
    }
  }
};

TEST(CalibrationTest, RecoversKnownOffsetsExactly) {
  SkewedTrace t;
  t.Kernels(t.d0s1, -30'000, 0);
  t.Kernels(t.d0s2, -30'000, 10'000);
  t.Kernels(t.d1s1, -12'345, 20'000);
  t.Finish();
  CalibrationReport r = Calibrate(t.model, t.trace, t.links, {});
  ASSERT_EQ(r.domains.size(), 3u);  // host, device 0, device 1
  EXPECT_TRUE(r.domains[0].reference);
  EXPECT_EQ(r.domains[0].offset_ns, 0);
  EXPECT_EQ(r.domains[1].name, "device 0");
  // Launches only: the interval is [30 us, open); its lower end is the
  // smallest correction and nothing bounds it from above.
  EXPECT_EQ(r.domains[1].lower_ns, 30'000);
  EXPECT_FALSE(r.domains[1].upper_ns.has_value());
  EXPECT_FALSE(r.domains[1].error_bound_ns.has_value());
  EXPECT_EQ(r.domains[1].offset_ns, 30'000);
  EXPECT_EQ(r.domains[1].anchors, 8u);
  EXPECT_EQ(r.domains[2].offset_ns, 12'345);
  EXPECT_EQ(r.domains[2].anchors, 4u);
  EXPECT_EQ(r.anchors, 12u);
  EXPECT_EQ(r.anchors_by_kind[0], 12u);
  EXPECT_EQ(r.violations_before, 12u);
  EXPECT_EQ(r.worst_violation_before_ns, 30'000);
  EXPECT_EQ(r.residual_violations, 0u);
  EXPECT_TRUE(r.converged);
  // The binding anchor is the tight one: the third kernel of stream 1.
  ASSERT_TRUE(r.domains[1].binding_lower.has_value());
  EXPECT_EQ(r.domains[1].binding_lower->kind, AnchorKind::kLaunch);
  EXPECT_EQ(t.trace.task_start_ns(r.domains[1].binding_lower->to) -
                t.trace.task_start_ns(r.domains[1].binding_lower->from),
            -30'000);
  EXPECT_FALSE(r.domains[1].binding_upper.has_value());
  ApplyCalibration(r, &t.trace);
  EXPECT_EQ(t.trace.track(t.d0s2).clock_offset_ns, 30'000);
  EXPECT_EQ(t.trace.track(t.d1s1).clock_offset_ns, 12'345);
  EXPECT_EQ(t.trace.track(t.host).clock_offset_ns, 0);
  // After calibration no kernel starts before its launch.
  for (uint32_t i = 0; i < t.trace.task_count(); ++i) {
    TaskId k(i);
    if (!t.trace.task_launch(k).valid()) continue;
    EXPECT_GE(t.trace.task_calibrated_start_ns(k),
              t.trace.task_calibrated_start_ns(t.trace.task_launch(k)));
  }
}

TEST(CalibrationTest, ClockAheadNeedsNoCorrection) {
  // The device appears later than the host: no anchor is violated, and
  // the smallest correction is none.
  SkewedTrace t;
  t.Kernels(t.d0s1, +7'000, 0);
  t.Finish();
  CalibrationReport r = Calibrate(t.model, t.trace, t.links, {});
  // The tight kernel says offset >= -7 us: the interval holds 0, and the
  // raw clocks stay as they are.
  EXPECT_EQ(r.domains[1].lower_ns, -7'000);
  EXPECT_EQ(r.domains[1].offset_ns, 0);
  EXPECT_EQ(r.violations_before, 0u);
  EXPECT_EQ(r.residual_violations, 0u);
}

TEST(CalibrationTest, PerStreamDomains) {
  SkewedTrace t;
  t.Kernels(t.d0s1, -30'000, 0);
  t.Kernels(t.d0s2, -8'000, 10'000);
  t.Finish();
  CalibrationOptions options;
  options.per_stream = true;
  CalibrationReport r = Calibrate(t.model, t.trace, t.links, options);
  ASSERT_EQ(r.domains.size(), 4u);  // host + one per stream
  EXPECT_EQ(r.track_offset_ns[t.d0s1.value()], 30'000);
  EXPECT_EQ(r.track_offset_ns[t.d0s2.value()], 8'000);
  EXPECT_EQ(r.track_offset_ns[t.d1s1.value()], 0);  // no anchors
  EXPECT_EQ(r.residual_violations, 0u);
  // Per device, the two streams share one offset: the larger one.
  CalibrationReport shared = Calibrate(t.model, t.trace, t.links, {});
  EXPECT_EQ(shared.track_offset_ns[t.d0s2.value()], 30'000);
}

TEST(CalibrationTest, UnnumberedDevicesOfTwoProcessesAreTwoClocks) {
  // One source, one host thread; two processes (pid 200, pid 300) each
  // hold a device stream whose device the trace does not number (-1).
  // Their clocks lag the host by 30 us and 8 us. Keyed by process they are
  // two clock domains with those offsets; keyed by device index alone they
  // would be one clock with the larger offset for both (as in
  // PerStreamDomains), putting pid 300's kernels 22 us late.
  SkewedTrace t;
  TrackId a = t.Stream(-1, 7);
  TrackId b = t.Stream(-1, 7);
  t.trace.mutable_track(a).pid = 200;
  t.trace.mutable_track(b).pid = 300;
  t.Kernels(a, -30'000, 0);
  t.Kernels(b, -8'000, 10'000);
  t.Finish();
  EXPECT_NE(DeviceKeyOf(t.trace.track(a)), DeviceKeyOf(t.trace.track(b)));
  // A device index and a pid of the same number are never one key.
  TrackInfo numbered = t.trace.track(a);
  numbered.device = 200;
  EXPECT_NE(DeviceKeyOf(numbered), DeviceKeyOf(t.trace.track(a)));
  CalibrationReport r = Calibrate(t.model, t.trace, t.links, {});
  ASSERT_EQ(r.domains.size(), 5u);  // host, devices 0 and 1, the two pids
  EXPECT_EQ(r.domains[3].name, "device (unknown, pid 200)");
  EXPECT_EQ(r.domains[4].name, "device (unknown, pid 300)");
  EXPECT_EQ(r.track_offset_ns[a.value()], 30'000);
  EXPECT_EQ(r.track_offset_ns[b.value()], 8'000);
  EXPECT_EQ(r.residual_violations, 0u);
}

TEST(CalibrationTest, EventAnchorsCarryOffsetsAcrossDevices) {
  // Device 1 has no launches; it waits on an event recorded on device 0.
  // Its true wait starts exactly when the record ends.
  SkewedTrace t;
  t.Kernels(t.d0s1, -30'000, 0);  // device 0 recovered from launches
  TaskSpec record;
  record.start_ns = 500'000 - 30'000;
  record.duration_ns = 10'000;
  record.event_after = 3;
  t.Add(t.d0s1, record);
  TaskSpec wait;
  wait.start_ns = 510'000 - 50'000;  // device 1 is 50 us behind
  wait.duration_ns = 10'000;
  wait.event_before = 3;
  t.Add(t.d1s1, wait);
  t.Finish();
  CalibrationReport r = Calibrate(t.model, t.trace, t.links, {});
  EXPECT_EQ(r.anchors_by_kind[1], 1u);
  EXPECT_EQ(r.track_offset_ns[t.d0s1.value()], 30'000);
  EXPECT_EQ(r.track_offset_ns[t.d1s1.value()], 50'000);
  EXPECT_EQ(r.residual_violations, 0u);
}

TEST(CalibrationTest, ReportsResidualsWhenAnchorsContradict) {
  SkewedTrace t;
  // Same device: stream 2 waits on an event of stream 1 but starts 7 us
  // before the record ends. One clock: no offset can fix it.
  TaskSpec record;
  record.start_ns = 0;
  record.duration_ns = 20'000;
  record.event_after = 1;
  t.Add(t.d0s1, record);
  TaskSpec wait;
  wait.start_ns = 13'000;
  wait.duration_ns = 5'000;
  wait.event_before = 1;
  t.Add(t.d0s2, wait);
  t.Finish();
  CalibrationReport r = Calibrate(t.model, t.trace, t.links, {});
  EXPECT_EQ(r.domains[1].offset_ns, 0);
  EXPECT_EQ(r.residual_violations, 1u);
  EXPECT_EQ(r.worst_residual_ns, 7'000);
  EXPECT_EQ(r.worst_residual_to.value(), 1u);
}

TEST(CalibrationTest, ContradictingAnchorsAreReported) {
  // Device 1 must move later by at least 500 ns (a kernel before its
  // launch) and earlier by at least 500 ns (a host node consuming a device
  // copy before the copy ended): its interval [500, -500] is empty.
  SkewedTrace t;
  TaskId launch = t.Launch(t.host, 2'000, 100);
  TaskSpec kernel;
  kernel.start_ns = 1'500;
  kernel.duration_ns = 100;
  kernel.launch = launch;
  t.Add(t.d1s1, kernel);
  NodeId copy_node = t.Node("copy", "MemcpyToHost", {});
  NodeId consumer = t.Node("use", "Relu", {copy_node});
  TaskSpec copy;
  copy.kind = TaskKind::kDataMovement;
  copy.start_ns = 800;
  copy.duration_ns = 200;  // ends at 1000
  copy.node = copy_node;
  t.Add(t.d1s1, copy);
  TaskSpec use;
  use.start_ns = 500;
  use.duration_ns = 100;
  use.node = consumer;
  t.Add(t.host, use);
  t.Finish();
  CalibrationReport r = Calibrate(t.model, t.trace, t.links, {});
  EXPECT_EQ(r.anchors_by_kind[2], 1u);
  ASSERT_EQ(r.domains.size(), 3u);  // host, device 0 (no tasks), device 1
  EXPECT_EQ(r.unanchored, 0u);      // device 0 ran nothing
  const ClockDomainOffset& d1 = r.domains[2];
  EXPECT_EQ(d1.name, "device 1");
  EXPECT_EQ(d1.lower_ns, 500);
  EXPECT_EQ(d1.upper_ns, -500);
  EXPECT_TRUE(d1.contradiction);
  EXPECT_EQ(r.contradictions, 1u);
  EXPECT_FALSE(d1.error_bound_ns.has_value());
  // The middle of the gap: each anchor is violated by 500 ns.
  EXPECT_EQ(d1.offset_ns, 0);
  EXPECT_EQ(r.residual_violations, 2u);
  EXPECT_EQ(r.worst_residual_ns, 500);
}

TEST(CalibrationTest, SynchronizeBoundsTheOffsetFromAbove) {
  // One device whose clock lags the host by 40 us: the true offset is
  // +40 us (raw device time = true time - 40 us). Launch latencies are 5, 9
  // and 12 us; a cudaDeviceSynchronize that began after the last launch
  // returned returns 3 us after the last kernel ends. By hand:
  //   lower = max(launch start - raw kernel start)
  //         = 40 us - min latency = 40 - 5 = 35 us;
  //   upper = min(sync end - raw end of the last kernel)
  //         = 40 us + slack = 40 + 3 = 43 us;
  //   estimate = (35 + 43) / 2 = 39 us, bound = (43 - 35) / 2 = 4 us,
  //   and the true 40 us lies within 39 +- 4.
  TimingFixture t;
  TrackId host = t.HostThread(1);
  TrackId s = t.Stream(0, 7);
  constexpr int64_t kTrue = 40'000;
  const int64_t launch_at[3] = {0, 20'000, 40'000};
  const int64_t latency[3] = {9'000, 5'000, 12'000};
  TaskId last;
  for (int i = 0; i < 3; ++i) {
    TaskId l = t.Launch(host, launch_at[i], 4'000);
    TaskSpec k;
    k.start_ns = launch_at[i] + latency[i] - kTrue;
    k.duration_ns = 10'000;
    k.launch = l;
    last = t.Add(s, k);
  }
  // The last kernel ends at true 40 + 12 + 10 = 62 us; the call returns at
  // 65 us.
  TaskSpec sync;
  sync.kind = TaskKind::kRuntime;
  sync.name = "cudaDeviceSynchronize";
  sync.start_ns = 45'000;
  sync.duration_ns = 20'000;
  TaskId call = t.Add(host, sync);
  t.Finish();
  CalibrationReport r = Calibrate(t.model, t.trace, t.links, {});
  EXPECT_EQ(r.anchors_by_kind[static_cast<size_t>(AnchorKind::kSync)], 1u);
  const ClockDomainOffset& d = r.domains[1];
  EXPECT_EQ(d.lower_ns, 35'000);
  EXPECT_EQ(d.upper_ns, 43'000);
  EXPECT_EQ(d.offset_ns, 39'000);
  EXPECT_EQ(d.error_bound_ns, 4'000);
  EXPECT_LE(std::abs(d.offset_ns - kTrue), *d.error_bound_ns);
  ASSERT_TRUE(d.binding_upper.has_value());
  EXPECT_EQ(d.binding_upper->kind, AnchorKind::kSync);
  EXPECT_EQ(d.binding_upper->from, last);
  EXPECT_EQ(d.binding_upper->to, call);
  EXPECT_EQ(r.residual_violations, 0u);
  EXPECT_TRUE(r.notes.empty());
}

TEST(CalibrationTest, UncertainSynchronizeGivesNoUpperBound) {
  // A cudaStreamSynchronize that names no stream may have waited for any
  // stream, or for one with no work: it bounds nothing. The same for a
  // cudaDeviceSynchronize in a process with two devices (it waits for the
  // current device only).
  TimingFixture t;
  TrackId host = t.HostThread(1);
  TrackId d0 = t.Stream(0, 7);
  TrackId d1 = t.Stream(1, 7);
  TaskId l0 = t.Launch(host, 0, 1'000);
  TaskSpec k;
  k.start_ns = 2'000;
  k.duration_ns = 10'000;
  k.launch = l0;
  t.Add(d0, k);
  TaskId l1 = t.Launch(host, 1'000, 1'000);
  k.launch = l1;
  t.Add(d1, k);
  for (std::string_view name :
       {"cudaStreamSynchronize", "cudaDeviceSynchronize"}) {
    TaskSpec sync;
    sync.kind = TaskKind::kRuntime;
    sync.name = name;
    sync.start_ns = name == "cudaStreamSynchronize" ? 3'000 : 20'000;
    sync.duration_ns = 1'000;  // returns before either kernel ends
    t.Add(host, sync);
  }
  t.Finish();
  CalibrationReport r = Calibrate(t.model, t.trace, t.links, {});
  EXPECT_EQ(r.anchors_by_kind[static_cast<size_t>(AnchorKind::kSync)], 0u);
  EXPECT_FALSE(r.domains[1].upper_ns.has_value());
  EXPECT_EQ(r.domains[1].offset_ns, 0);
}

TEST(CalibrationTest, SynchronousCopyEndsInsideItsCall) {
  // cudaMemcpy device-to-host returns only after the copy ended; the same
  // call from pageable memory to the device may return earlier, and an
  // async copy returns at once: only the first bounds the offset. The
  // device clock is 10 us ahead (true offset -10 us).
  TimingFixture t;
  TrackId host = t.HostThread(1);
  TrackId s = t.Stream(0, 7);
  auto copy = [&](std::string_view call_name, std::string_view copy_name,
                  int64_t at, int64_t call_ns, int64_t true_start,
                  int64_t true_end) {
    TaskId call = t.Launch(host, at, call_ns, -1, call_name);
    TaskSpec c;
    c.kind = TaskKind::kDataMovement;
    c.name = copy_name;
    c.start_ns = true_start + 10'000;
    c.duration_ns = true_end - true_start;
    c.launch = call;
    t.Add(s, c);
  };
  // Lower: -10 us - latency (6 us) = -16 us. Upper: -10 us + 2 us slack.
  copy("cudaMemcpy", "Memcpy DtoH (Device -> Pageable)", 0, 30'000, 6'000,
       28'000);
  // Would say upper <= -10 us - 20 us if taken (ends 20 us after return).
  copy("cudaMemcpy", "Memcpy HtoD (Pageable -> Device)", 40'000, 5'000, 47'000,
       65'000);
  copy("cudaMemcpyAsync", "Memcpy DtoH (Device -> Pinned)", 70'000, 5'000,
       80'000, 90'000);
  t.Finish();
  CalibrationReport r = Calibrate(t.model, t.trace, t.links, {});
  EXPECT_EQ(r.anchors_by_kind[static_cast<size_t>(AnchorKind::kSyncCopy)], 1u);
  const ClockDomainOffset& d = r.domains[1];
  EXPECT_EQ(d.lower_ns, -16'000);
  EXPECT_EQ(d.upper_ns, -8'000);
  EXPECT_EQ(d.offset_ns, -12'000);
  EXPECT_EQ(d.error_bound_ns, 4'000);
  EXPECT_EQ(d.binding_upper->kind, AnchorKind::kSyncCopy);
}

TEST(CalibrationTest, UnanchoredDomainsAndTimeBases) {
  // An ONNX Runtime profile (times from its session start) and a Kineto
  // trace (Unix epoch) loaded together: each host clock is the reference
  // of its own group, and nothing joins them. A device whose kernels have
  // no known launch cannot be related to any host clock.
  TimingFixture t;
  SourceId ort = t.Source("ort_profile.json", -1, TimeBase::kSessionStart);
  SourceId kineto = t.Source("/runs/rank3.pt.trace.json", 3);
  TrackId ort_thread = t.HostThread(1, ort);
  TrackId host = t.HostThread(1, kineto);
  TrackId d0 = t.Stream(0, 7, kineto);
  TrackId d1 = t.Stream(1, 7, kineto);
  TaskSpec node;
  node.duration_ns = 100;
  t.Add(ort_thread, node);
  TaskId l = t.Launch(host, 0, 1'000);
  TaskSpec k;
  k.start_ns = 2'000;
  k.duration_ns = 10'000;
  k.launch = l;
  t.Add(d0, k);
  k.launch = TaskId::Invalid();
  t.Add(d1, k);
  t.Finish();
  CalibrationReport r = Calibrate(t.model, t.trace, t.links, {});
  ASSERT_EQ(r.domains.size(), 4u);
  EXPECT_EQ(r.domains[0].name, "ort_profile.json · host");
  EXPECT_TRUE(r.domains[0].reference);
  EXPECT_EQ(r.domains[1].name, "rank 3 · host");
  EXPECT_TRUE(r.domains[1].reference);
  EXPECT_EQ(r.domains[2].name, "rank 3 · device 0");
  EXPECT_TRUE(r.domains[2].anchored);
  EXPECT_EQ(r.domains[2].reference_domain, 1);
  EXPECT_EQ(r.domains[3].name, "rank 3 · device 1");
  EXPECT_FALSE(r.domains[3].anchored);
  EXPECT_EQ(r.domains[3].reference_domain, -1);
  EXPECT_EQ(r.domains[3].offset_ns, 0);
  EXPECT_EQ(r.unanchored, 1u);
  EXPECT_TRUE(r.time_bases_differ);
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_NE(r.notes[0].find("rank 3 · device 1: no anchor"), std::string::npos);
  EXPECT_NE(r.notes[1].find("ort_profile.json · host from its session "
                            "start, rank 3 · host from the Unix epoch"),
            std::string::npos)
      << r.notes[1];
  (void)d1;
}

}  // namespace
}  // namespace mi::analysis
