#include "analysis/timing/calibration.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(t.trace.task_start_ns(r.domains[1].binding_to) -
                t.trace.task_start_ns(r.domains[1].binding_from),
            -30'000);
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
  EXPECT_EQ(r.domains[1].offset_ns, 0);
  EXPECT_FALSE(r.domains[1].binding_from.valid());
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

TEST(CalibrationTest, ContradictingDomainsDoNotConverge) {
  // Device 1 must move later by 500 ns (a kernel before its launch) and
  // earlier by 500 ns (a host node consuming a device copy before the copy
  // ended): no offset satisfies both.
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
  EXPECT_FALSE(r.converged);
  EXPECT_GE(r.residual_violations, 1u);
  EXPECT_GE(r.worst_residual_ns, 500);
}

}  // namespace
}  // namespace mi::analysis
