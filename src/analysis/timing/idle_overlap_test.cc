#include "analysis/timing/idle_overlap.h"

#include <gtest/gtest.h>

#include "analysis/timing/timing_results.h"
#include "analysis/timing/timing_test_util.h"
#include "encoders/json_encoder.h"

namespace mi::analysis {
namespace {

using testing::TaskSpec;
using testing::TimingFixture;

TaskSpec Task(TaskKind kind, int64_t start, int64_t end,
              TaskId launch = TaskId::Invalid()) {
  TaskSpec k;
  k.kind = kind;
  k.name = kind == TaskKind::kDataMovement ? "Memcpy HtoD" : "kernel";
  k.start_ns = start;
  k.duration_ns = end - start;
  k.launch = launch;
  return k;
}

// Stream 1 of device 0 idles for each reason once, and copies on stream 3
// run half under compute; a stream synchronize drains the device.
struct IdleScenario : TimingFixture {
  TrackId host = HostThread(1);
  TrackId s1 = Stream(0, 1);
  TrackId s2 = Stream(0, 2);
  TrackId s3 = Stream(0, 3);
  TaskId k3, k5, k6, k7, l3, k4, c2, sync;

  IdleScenario() {
    TaskId l1 = Launch(host, 0, 10);
    TaskId l2 = Launch(host, 20, 10);
    l3 = Launch(host, 300, 10);
    Add(s1, Task(TaskKind::kCompute, 40, 100, l1));
    Add(s1, Task(TaskKind::kCompute, 100, 150, l2));
    // [150, 320): the launch came at 300 -> waiting on the host.
    k3 = Add(s1, Task(TaskKind::kCompute, 320, 400, l3));
    TaskSpec record = Task(TaskKind::kCompute, 0, 500);
    record.event_after = 9;
    k4 = Add(s2, record);
    // [400, 520): waited on stream 2's event -> other stream.
    TaskSpec wait = Task(TaskKind::kCompute, 520, 600);
    wait.event_before = 9;
    k5 = Add(s1, wait);
    // [600, 650): nothing known -> other.
    k6 = Add(s1, Task(TaskKind::kCompute, 650, 700));
    Add(s3, Task(TaskKind::kDataMovement, 0, 100));         // under k4
    c2 = Add(s3, Task(TaskKind::kDataMovement, 800, 900));  // alone
    TaskSpec sync_call;
    sync_call.kind = TaskKind::kRuntime;
    sync_call.name = "cudaStreamSynchronize";
    sync_call.start_ns = 700;
    sync_call.duration_ns = 300;
    sync = Add(host, sync_call);
    TaskId l4 = Launch(host, 1050, 10);
    // [700, 1100): host blocked, then launched late -> host.
    k7 = Add(s1, Task(TaskKind::kCompute, 1100, 1200, l4));
    Finish();
  }
};

TEST(IdleOverlapTest, IdleBreakdownGapsOverlapAndSync) {
  IdleScenario t;
  IdleOptions options;
  options.gap_threshold_ns = 100;
  IdleOverlapReport r = ComputeIdleOverlap(t.model, t.trace, t.links, options);
  ASSERT_EQ(r.streams.size(), 3u);
  const StreamIdle& s1 = r.streams[0];
  EXPECT_EQ(s1.track, t.s1);
  EXPECT_EQ(s1.tasks, 6u);
  EXPECT_EQ(s1.start_ns, 40);
  EXPECT_EQ(s1.end_ns, 1200);
  EXPECT_EQ(s1.busy_ns, 60 + 50 + 80 + 80 + 50 + 100);
  EXPECT_EQ(s1.idle_host_ns, 170 + 400);
  EXPECT_EQ(s1.idle_other_stream_ns, 120);
  EXPECT_EQ(s1.idle_other_ns, 50);
  EXPECT_EQ(s1.idle_ns, 170 + 400 + 120 + 50);
  EXPECT_EQ(s1.gaps, 4u);

  // Gaps of 100 ns and more, longest first: stream 3's between its copies,
  // then stream 1's.
  EXPECT_EQ(r.gaps_over_threshold, 4u);
  ASSERT_EQ(r.gaps.size(), 4u);
  EXPECT_EQ(r.gaps[0].track, t.s3);
  EXPECT_EQ(r.gaps[0].end_ns - r.gaps[0].start_ns, 700);
  EXPECT_EQ(r.gaps[0].reason, IdleReason::kOther);
  EXPECT_EQ(r.gaps[1].start_ns, 700);
  EXPECT_EQ(r.gaps[1].reason, IdleReason::kHost);
  EXPECT_EQ(r.gaps[1].after, t.k7);
  EXPECT_EQ(r.gaps[2].start_ns, 150);
  EXPECT_EQ(r.gaps[2].end_ns, 320);
  EXPECT_EQ(r.gaps[2].reason, IdleReason::kHost);
  EXPECT_EQ(r.gaps[2].cause, t.l3);
  EXPECT_EQ(r.gaps[3].reason, IdleReason::kOtherStream);
  EXPECT_EQ(r.gaps[3].cause, t.k4);
  EXPECT_EQ(r.gaps[3].after, t.k5);

  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].device, "device 0");
  EXPECT_EQ(r.devices[0].data_movement_ns, 200);
  EXPECT_EQ(r.devices[0].overlap_ns, 100);
  EXPECT_DOUBLE_EQ(r.devices[0].overlap_share, 0.5);
  EXPECT_EQ(r.devices[0].exposed_copies, (std::vector<TaskId>{t.c2}));
  // Compute: s1 and s2 merged = [0, 500), [520, 600), [650, 700) and
  // [1100, 1200).
  EXPECT_EQ(r.devices[0].compute_ns, 730);

  EXPECT_EQ(r.sync_calls, 1u);
  EXPECT_EQ(r.sync_ns, 300);
  ASSERT_EQ(r.sync_waits.size(), 1u);
  EXPECT_EQ(r.sync_waits[0].task, t.sync);
  // [700, 1100) minus the copy at [800, 900).
  EXPECT_EQ(r.sync_waits[0].device_idle_ns, 300);
  EXPECT_EQ(r.sync_waits[0].device_before, t.c2);
  EXPECT_EQ(r.sync_waits[0].device_after, t.k7);

  std::string json = encoders::EncodeJson(ToIdleOverlapResult(t.trace, r));
  EXPECT_NE(
      json.find("\"idle_by_reason_ns\":{\"host\":570,\"other_stream\":120,"
                "\"other\":50}"),
      std::string::npos)
      << json;
}

TEST(IdleOverlapTest, ThresholdAndLimit) {
  IdleScenario t;
  IdleOptions options;
  options.gap_threshold_ns = 150;
  options.max_gaps = 1;
  IdleOverlapReport r = ComputeIdleOverlap(t.model, t.trace, t.links, options);
  EXPECT_EQ(r.gaps_over_threshold, 3u);  // 700, 400 and 170 ns
  ASSERT_EQ(r.gaps.size(), 1u);
  EXPECT_EQ(r.gaps[0].end_ns - r.gaps[0].start_ns, 700);
}

TEST(IdleOverlapTest, NoDeviceNoSyncFigures) {
  TimingFixture t;
  TrackId host = t.HostThread(1);
  TaskSpec op = Task(TaskKind::kCompute, 0, 100);
  t.Add(host, op);
  op.start_ns = 150;
  t.Add(host, op);
  t.Finish();
  IdleOverlapReport r = ComputeIdleOverlap(t.model, t.trace, t.links, {});
  ASSERT_EQ(r.streams.size(), 1u);  // the host thread runs compute
  EXPECT_EQ(r.streams[0].idle_other_ns, 50);
  EXPECT_TRUE(r.devices.empty());
  EXPECT_TRUE(r.sync_waits.empty());
}

}  // namespace
}  // namespace mi::analysis
