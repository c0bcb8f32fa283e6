#include "analysis/blocks/block_time.h"

#include <gtest/gtest.h>

namespace mi::analysis {
namespace {

TEST(BlockTimeTest, FusedKernelTimeIsSplitAmongItsFrameworkNodes) {
  StringPool pool;
  Model model(&pool);
  Trace trace(&pool);
  GraphId fw = model.AddGraph(LayerLevel::kFramework, "fw", "m.onnx");
  NodeId a = model.AddNode(fw, "Add", "", "layer0/add");
  NodeId ln = model.AddNode(fw, "LayerNorm", "", "layer1/ln");
  NodeId mm = model.AddNode(fw, "MatMul", "", "layer1/mm");
  GraphId compiled = model.AddGraph(LayerLevel::kCompiled, "c", "o.onnx");
  NodeId fused = model.AddNode(compiled, "SkipLayerNorm", "", "fused");
  model.BuildIndexes();
  Links links;
  links.fused_from.Build(model.node_count(), {{fused, a}, {fused, ln}});
  TrackInfo s;
  s.kind = TrackKind::kDeviceStream;
  TrackId stream = trace.AddTrack(s);
  auto task = [&](NodeId n, int64_t dur, TaskKind kind = TaskKind::kCompute) {
    TaskRow row;
    row.kind = kind;
    row.track = stream;
    row.duration_ns = dur;
    TaskId t = trace.AddTask(row);
    trace.SetTaskNode(t, n);
  };
  task(fused, 11);  // 6 to the first framework node, 5 to the second
  task(mm, 7);
  task(mm, 100, TaskKind::kHostOp);  // not execution time
  std::vector<int64_t> time = AttributedNodeTime(model, trace, links);
  EXPECT_EQ(time[a.value()], 6);
  EXPECT_EQ(time[ln.value()], 5);
  EXPECT_EQ(time[mm.value()], 7);
  EXPECT_EQ(time[fused.value()], 0);

  // Blocks: layer0 = {a}, layer1 = {ln, mm}.
  std::vector<BlockFamily> families(2);
  families[0].instances = {{"layer0", 1, {a}}, {"layer1", 2, {ln, mm}}};
  families[1].instances = {{"alone", 3, {mm}}};  // one instance: dropped
  auto out = TimeBlockFamilies(time, families);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].label, "layer0");
  ASSERT_EQ(out[0].instances.size(), 2u);
  EXPECT_EQ(out[0].instances[0].total_ns, 6);
  EXPECT_EQ(out[0].instances[1].total_ns, 12);
  EXPECT_EQ(out[0].instances[1].group, 2);
  EXPECT_EQ(out[0].total_ns, 18);
  EXPECT_EQ(out[0].mean_ns, 9);
  EXPECT_EQ(out[0].median_ns, 6);
  EXPECT_EQ(out[0].slowest, 1);
  EXPECT_DOUBLE_EQ(out[0].slowest_over_median, 2.0);
}

TEST(BlockTimeTest, FamiliesSortByTotalTimeAndIdleFamiliesHaveNoSlowest) {
  std::vector<int64_t> time = {1, 1, 50, 70, 0, 0};
  std::vector<BlockFamily> families(3);
  families[0].instances = {{"a0", 1, {NodeId(0)}}, {"a1", 2, {NodeId(1)}}};
  families[1].instances = {{"b0", 3, {NodeId(2)}}, {"b1", 4, {NodeId(3)}}};
  families[2].instances = {{"c0", 5, {NodeId(4)}}, {"c1", 6, {NodeId(5)}}};
  auto out = TimeBlockFamilies(time, families);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].label, "b0");
  EXPECT_EQ(out[0].slowest, 1);
  EXPECT_EQ(out[1].label, "a0");
  EXPECT_EQ(out[1].slowest, 0);  // equal: the first
  EXPECT_DOUBLE_EQ(out[1].slowest_over_median, 1.0);
  EXPECT_EQ(out[2].label, "c0");
  EXPECT_EQ(out[2].slowest, -1);
  EXPECT_DOUBLE_EQ(out[2].slowest_over_median, 0.0);
}

}  // namespace
}  // namespace mi::analysis
