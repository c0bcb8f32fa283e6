#include "analysis/timing/critical_path.h"

#include <gtest/gtest.h>

#include "analysis/timing/timing_results.h"
#include "analysis/timing/timing_test_util.h"
#include "encoders/json_encoder.h"

namespace mi::analysis {
namespace {

using testing::TaskSpec;
using testing::TimingFixture;

std::vector<uint32_t> Ids(const std::vector<TaskId>& ids) {
  std::vector<uint32_t> out;
  for (TaskId t : ids) out.push_back(t.value());
  return out;
}

int64_t Wait(const CriticalPathReport& r, std::string_view kind) {
  for (const auto& w : r.waits_by_kind) {
    if (w.label == kind) return w.ns;
  }
  return 0;
}

TaskSpec Kernel(std::string_view name, int64_t start, int64_t end,
                TaskId launch = TaskId::Invalid()) {
  TaskSpec k;
  k.name = name;
  k.start_ns = start;
  k.duration_ns = end - start;
  k.launch = launch;
  return k;
}

// A device-timed wait on the path (CANN's EVENT_WAIT: kind sync on a
// device stream) is waiting, not work. One stream: launch [0,10), kernel k1
// [20,120), EVENT_WAIT [120,200), kernel k2 [200,260), chained by stream
// order. Path: launch, k1, wait, k2 = 0..260; busy = 10 + 100 + 60 = 170;
// the launch wait 10 (k1 started at 20), the sync 80; no op type and no
// track gets the 80.
TEST(CriticalPathTest, SyncTasksOnThePathAreWaits) {
  TimingFixture t;
  TrackId host = t.HostThread(1);
  TrackId s = t.Stream(0, 2);
  TaskId l1 = t.Launch(host, 0, 10);
  TaskSpec k1 = Kernel("k1", 20, 120, l1);
  k1.op_type = "MatMul";
  t.Add(s, k1);
  TaskSpec wait = Kernel("EVENT_WAIT", 120, 200);
  wait.kind = TaskKind::kSync;
  wait.op_type = "EVENT_WAIT";
  t.Add(s, wait);
  TaskSpec k2 = Kernel("k2", 200, 260);
  k2.op_type = "Add";
  t.Add(s, k2);
  t.Finish();

  CriticalPathReport r =
      ComputeCriticalPath(t.model, t.trace, t.links, TimingScope{});
  ASSERT_EQ(r.tasks.size(), 4u);
  EXPECT_EQ(r.length_ns, 260);
  EXPECT_EQ(r.busy_ns, 170);
  EXPECT_EQ(Wait(r, "sync"), 80);
  EXPECT_EQ(Wait(r, "launch"), 10);
  for (const auto& o : r.by_op_type) EXPECT_NE(o.label, "EVENT_WAIT");
  ASSERT_EQ(r.by_track.size(), 2u);
  EXPECT_EQ(r.by_track[0].track, s);
  EXPECT_EQ(r.by_track[0].ns, 160);
}

TEST(CriticalPathTest, FollowsCrossStreamEventDependency) {
  TimingFixture t;
  TrackId host = t.HostThread(1);
  TrackId s1 = t.Stream(0, 1);
  TrackId s2 = t.Stream(0, 2);
  TaskId l1 = t.Launch(host, 0, 10);
  TaskId l2 = t.Launch(host, 20, 10);
  TaskId l3 = t.Launch(host, 40, 10);
  TaskId l5 = t.Launch(host, 60, 10);
  TaskId k1 = t.Add(s1, Kernel("k1", 100, 300, l1));
  TaskSpec k2_spec = Kernel("k2", 300, 400, l2);
  k2_spec.event_after = 7;
  TaskId k2 = t.Add(s1, k2_spec);
  t.Add(s2, Kernel("k3", 60, 160, l3));
  TaskSpec k4_spec = Kernel("k4", 420, 900, l5);
  k4_spec.event_before = 7;
  TaskId k4 = t.Add(s2, k4_spec);
  t.Finish();

  CriticalPathReport r =
      ComputeCriticalPath(t.model, t.trace, t.links, TimingScope{});
  EXPECT_EQ(Ids(r.tasks), Ids({l1, k1, k2, k4}));
  ASSERT_EQ(r.via.size(), 4u);
  EXPECT_EQ(r.via[1], DependencyKind::kLaunch);
  EXPECT_EQ(r.via[2], DependencyKind::kTrackOrder);
  EXPECT_EQ(r.via[3], DependencyKind::kEvent);
  EXPECT_EQ(r.wait_before_ns, (std::vector<int64_t>{0, 90, 0, 20}));
  EXPECT_EQ(r.start_ns, 0);
  EXPECT_EQ(r.end_ns, 900);
  EXPECT_EQ(r.length_ns, 900);
  EXPECT_EQ(r.wall_ns, 900);
  EXPECT_DOUBLE_EQ(r.share, 1.0);
  EXPECT_EQ(r.busy_ns, 10 + 200 + 100 + 480);
  EXPECT_EQ(Wait(r, "launch"), 90);
  EXPECT_EQ(Wait(r, "event"), 20);
  ASSERT_EQ(r.by_track.size(), 3u);
  EXPECT_EQ(r.by_track[0].track, s2);
  EXPECT_EQ(r.by_track[0].ns, 480);
  EXPECT_EQ(r.by_track[1].track, s1);
  EXPECT_EQ(r.by_track[1].ns, 300);
  EXPECT_EQ(r.by_track[2].track, host);
  EXPECT_EQ(r.by_track[2].ns, 10);
  EXPECT_EQ(r.edges_by_kind[static_cast<size_t>(DependencyKind::kEvent)], 1u);
  EXPECT_EQ(r.broken_edges, 0u);
  (void)l3;
}

TEST(CriticalPathTest, LaunchLatencyBoundStretchRunsThroughTheHost) {
  // Tiny kernels, each launched after the previous one finished: the
  // device waits for the host, so the path is the host thread.
  TimingFixture t;
  TrackId host = t.HostThread(1);
  TrackId s = t.Stream(0, 7);
  TaskId l1 = t.Launch(host, 0, 50);
  TaskId l2 = t.Launch(host, 50, 50);
  TaskId l3 = t.Launch(host, 100, 50);
  t.Add(s, Kernel("a", 60, 70, l1));
  t.Add(s, Kernel("b", 110, 120, l2));
  TaskId k3 = t.Add(s, Kernel("c", 160, 170, l3));
  t.Finish();
  CriticalPathReport r =
      ComputeCriticalPath(t.model, t.trace, t.links, TimingScope{});
  EXPECT_EQ(Ids(r.tasks), Ids({l1, l2, l3, k3}));
  EXPECT_EQ(r.length_ns, 170);
  ASSERT_EQ(r.by_track.size(), 2u);
  EXPECT_EQ(r.by_track[0].track, host);
  EXPECT_EQ(r.by_track[0].ns, 150);
  EXPECT_EQ(r.by_track[1].ns, 10);
  EXPECT_EQ(Wait(r, "launch"), 10);
  ASSERT_EQ(r.by_op_type.size(), 2u);
  EXPECT_EQ(r.by_op_type[0].label, "cudaLaunchKernel");
  EXPECT_EQ(r.by_op_type[0].ns, 150);
}

TEST(CriticalPathTest, DataDependencyAcrossStreams) {
  TimingFixture t;
  TrackId s1 = t.Stream(0, 1);
  TrackId s2 = t.Stream(0, 2);
  NodeId a = t.Node("a", "Conv", {});
  NodeId b = t.Node("b", "Relu", {a});
  NodeId x = t.Node("x", "Gemm", {});
  TaskSpec ta = Kernel("conv", 0, 100);
  ta.node = a;
  TaskId task_a = t.Add(s1, ta);
  TaskSpec tx = Kernel("gemm", 0, 80);
  tx.node = x;
  t.Add(s2, tx);
  TaskSpec tb = Kernel("relu", 150, 200);
  tb.node = b;
  TaskId task_b = t.Add(s2, tb);
  t.Finish();
  CriticalPathReport r =
      ComputeCriticalPath(t.model, t.trace, t.links, TimingScope{});
  EXPECT_EQ(Ids(r.tasks), Ids({task_a, task_b}));
  EXPECT_EQ(r.via[1], DependencyKind::kData);
  EXPECT_EQ(r.nodes, (std::vector<NodeId>{a, b}));
  EXPECT_EQ(Wait(r, "data"), 50);
  ASSERT_EQ(r.by_op_type.size(), 2u);
  EXPECT_EQ(r.by_op_type[0].label, "Conv");
  EXPECT_EQ(r.by_op_type[0].ns, 100);
}

TEST(CriticalPathTest, HostWaitsOnTheDeviceInSynchronize) {
  TimingFixture t;
  TrackId host = t.HostThread(1);
  TrackId s = t.Stream(0, 1);
  TaskId l1 = t.Launch(host, 0, 10);
  TaskId k1 = t.Add(s, Kernel("long", 20, 500, l1));
  TaskSpec sync;
  sync.kind = TaskKind::kRuntime;
  sync.name = "cudaDeviceSynchronize";
  sync.start_ns = 15;
  sync.duration_ns = 490;  // until 505
  TaskId sync_call = t.Add(host, sync);
  TaskId l2 = t.Launch(host, 510, 10);
  TaskId k2 = t.Add(s, Kernel("next", 530, 600, l2));
  t.Finish();
  CriticalPathReport r =
      ComputeCriticalPath(t.model, t.trace, t.links, TimingScope{});
  EXPECT_EQ(Ids(r.tasks), Ids({l1, k1, sync_call, l2, k2}));
  EXPECT_EQ(r.via[2], DependencyKind::kHostWait);
  EXPECT_EQ(r.length_ns, 600);
}

TEST(CriticalPathTest, NestedLaunchReachesBackToItsOp) {
  // A host op [0, 50) makes a launch call [10, 15) for a kernel [20, 100):
  // the path starts with the op, not with the call nested in it.
  TimingFixture t;
  TrackId host = t.HostThread(1);
  TrackId s = t.Stream(0, 1);
  TaskSpec op;
  op.kind = TaskKind::kHostOp;
  op.name = "aten::mm";
  op.duration_ns = 50;
  TaskId mm = t.Add(host, op);
  TaskId launch = t.Launch(host, 10, 5);
  TaskId kernel = t.Add(s, Kernel("gemm", 20, 100, launch));
  t.Finish();
  CriticalPathReport r =
      ComputeCriticalPath(t.model, t.trace, t.links, TimingScope{});
  EXPECT_EQ(Ids(r.tasks), Ids({mm, launch, kernel}));
  EXPECT_EQ(r.via[1], DependencyKind::kNesting);
  EXPECT_EQ(r.via[2], DependencyKind::kLaunch);
  EXPECT_EQ(r.length_ns, 100);
  // [0, 50) is the op's, [50, 100) the kernel's; the call adds nothing.
  EXPECT_EQ(r.busy_ns, 100);
  EXPECT_EQ(r.by_track[0].ns, 50);
  EXPECT_EQ(r.by_track[1].ns, 50);
}

TEST(CriticalPathTest, CalleeEndingPastItsCallerIsStillNested) {
  // Whole-microsecond profilers truncate ts and dur separately: the legacy
  // autograd profiler writes aten::conv2d [3876, 4499) us and the
  // aten::convolution it calls [3877, 4500) us. A thread runs one call
  // stack, so the callee is nested in the op it started in, and the path
  // reaches it through the op: the op's time is the op's, not the callee's.
  TimingFixture t;
  TrackId host = t.HostThread(1);
  auto op = [&](std::string_view name, int64_t start, int64_t end) {
    TaskSpec spec;
    spec.kind = TaskKind::kHostOp;
    spec.name = name;
    spec.start_ns = start;
    spec.duration_ns = end - start;
    return t.Add(host, spec);
  };
  TaskId relu = op("aten::relu_", 0, 10);
  TaskId conv2d = op("aten::conv2d", 20, 643);
  TaskId convolution = op("aten::convolution", 21, 644);
  TaskId bn = op("aten::batch_norm", 655, 665);
  t.Finish();
  CriticalPathReport r =
      ComputeCriticalPath(t.model, t.trace, t.links, TimingScope{});
  EXPECT_EQ(Ids(r.tasks), Ids({relu, conv2d, convolution, bn}));
  ASSERT_EQ(r.via.size(), 4u);
  EXPECT_EQ(r.via[2], DependencyKind::kNesting);
  EXPECT_EQ(r.via[3], DependencyKind::kTrackOrder);  // ended last before it
  EXPECT_EQ(r.length_ns, 665);
  ASSERT_EQ(r.by_op_type.size(), 4u);
  EXPECT_EQ(r.by_op_type[0].label, "aten::conv2d");
  EXPECT_EQ(r.by_op_type[0].ns, 623);
  EXPECT_EQ(r.by_op_type[3].label, "aten::convolution");
  EXPECT_EQ(r.by_op_type[3].ns, 1);
}

TEST(CriticalPathTest, RunScopeAndRawClock) {
  TimingFixture t;
  TrackId host = t.HostThread(1);
  TrackId s = t.Stream(0, 1);
  t.trace.AddRun({t.pool.Intern("run 1"), 1000, 2000});
  TaskId l1 = t.Launch(host, 0, 10);
  t.Add(s, Kernel("a", 20, 100, l1));
  TaskSpec late = Kernel("b", 1000, 1500);
  late.run = 1;
  TaskId b = t.Add(s, late);
  t.trace.mutable_track(s).clock_offset_ns = 100;
  t.Finish();
  TimingScope run1;
  run1.run = 1;
  CriticalPathReport r = ComputeCriticalPath(t.model, t.trace, t.links, run1);
  EXPECT_EQ(Ids(r.tasks), Ids({b}));
  EXPECT_EQ(r.start_ns, 1100);  // calibrated
  run1.clock = Clock::kRaw;
  r = ComputeCriticalPath(t.model, t.trace, t.links, run1);
  EXPECT_EQ(r.start_ns, 1000);
  std::string json =
      encoders::EncodeJson(ToCriticalPathResult(t.model, t.trace, r));
  EXPECT_NE(json.find("\"tasks\":[2]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"clock\":\"raw\",\"run\":1"), std::string::npos);
}

TEST(CriticalPathTest, EmptyScope) {
  TimingFixture t;
  t.Finish();
  CriticalPathReport r =
      ComputeCriticalPath(t.model, t.trace, t.links, TimingScope{});
  EXPECT_TRUE(r.tasks.empty());
  EXPECT_EQ(r.length_ns, 0);
  EXPECT_EQ(r.share, 0);
}

TEST(CriticalPathTest, CycleFromInconsistentEdgesIsBroken) {
  // Two zero-length tasks at one instant on one stream, the second
  // recording an event the first waits on: a cycle the data cannot mean.
  TimingFixture t;
  TrackId s = t.Stream(0, 1);
  TaskSpec a = Kernel("a", 10, 10);
  a.event_before = 4;
  t.Add(s, a);
  TaskSpec b = Kernel("b", 10, 10);
  b.event_after = 4;
  t.Add(s, b);
  t.Finish();
  CriticalPathReport r =
      ComputeCriticalPath(t.model, t.trace, t.links, TimingScope{});
  EXPECT_EQ(r.broken_edges, 1u);
  EXPECT_FALSE(r.tasks.empty());
}

TEST(NodePathsTest, AncestorsAndDescendantsWithTasks) {
  TimingFixture t;
  TrackId s = t.Stream(0, 1);
  NodeId a = t.Node("a", "Conv", {});
  NodeId b = t.Node("b", "Relu", {a});
  NodeId c = t.Node("c", "Sigmoid", {a});
  NodeId d = t.Node("d", "Add", {b, c});
  NodeId e = t.Node("e", "Gemm", {});
  NodeId f = t.Node("f", "Mul", {d});
  std::vector<TaskId> tasks;
  for (NodeId n : {a, b, c, d, e, f}) {
    TaskSpec k = Kernel("k", n.value() * 10, n.value() * 10 + 5);
    k.node = n;
    tasks.push_back(t.Add(s, k));
  }
  t.Finish();
  NodePathsReport r = ComputeNodePaths(t.model, t.trace, t.links, b);
  EXPECT_EQ(r.ancestors, (std::vector<NodeId>{a}));
  EXPECT_EQ(r.descendants, (std::vector<NodeId>{d, f}));
  EXPECT_EQ(Ids(r.node_tasks), Ids({tasks[1]}));
  EXPECT_EQ(Ids(r.ancestor_tasks), Ids({tasks[0]}));
  EXPECT_EQ(Ids(r.descendant_tasks), Ids({tasks[3], tasks[5]}));
  NodePathsReport rd = ComputeNodePaths(t.model, t.trace, t.links, d);
  EXPECT_EQ(rd.ancestors, (std::vector<NodeId>{a, b, c}));
  EXPECT_EQ(rd.descendants, (std::vector<NodeId>{f}));
  std::string json = encoders::EncodeJson(ToNodePathsResult(rd));
  EXPECT_NE(json.find("\"ancestors\":[0,1,2]"), std::string::npos) << json;
}

}  // namespace
}  // namespace mi::analysis
