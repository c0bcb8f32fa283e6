#include "analysis/memory/memory.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "encoders/json_encoder.h"

namespace mi::analysis {
namespace {

// Hand-built graphs whose peak is computed by hand in each test.
struct Graph {
  StringPool pool;
  Model model{&pool};
  Trace trace{&pool};
  Links links;
  GraphId root;

  Graph() { root = model.AddGraph(LayerLevel::kFramework, "g", "g.onnx"); }

  // A float32 tensor; a negative dim is symbolic ("N").
  ValueId Tensor(std::string_view name, std::vector<int64_t> dims,
                 int32_t dtype = 1) {
    ValueId v = model.GetOrAddValue(root, name);
    model.SetValueType(v, dtype);
    std::vector<StringId> names(dims.size(), StringPool::kEmpty);
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0) names[i] = pool.Intern("N");
    }
    model.SetValueShape(v, dims, names);
    return v;
  }
  void Input(ValueId v) {
    model.AddValueFlags(v, kValueGraphInput);
    model.mutable_graph(root).inputs.push_back(v);
  }
  void Output(ValueId v) {
    model.AddValueFlags(v, kValueGraphOutput);
    model.mutable_graph(root).outputs.push_back(v);
  }
  void Weight(ValueId v) { model.AddValueFlags(v, kValueInitializer); }
  NodeId Node(std::string_view op, std::string_view name,
              std::vector<ValueId> inputs, std::vector<ValueId> outputs) {
    NodeId n = model.AddNode(root, op, "", name);
    for (ValueId v : inputs) model.AddNodeInput(n, v);
    for (ValueId v : outputs) model.AddNodeOutput(n, v);
    return n;
  }
  void Finish() {
    model.AssignScopesFromNames(root);
    model.BuildIndexes();
  }
  // One task per node at the given start (µs), linked to it.
  std::vector<TaskId> Execute(const std::vector<std::pair<NodeId, int>>& at) {
    TrackInfo info;
    info.kind = TrackKind::kHostThread;
    TrackId track = trace.AddTrack(info);
    std::vector<std::pair<NodeId, TaskId>> items;
    std::vector<TaskId> tasks;
    for (auto [node, start_us] : at) {
      TaskRow row;
      row.kind = TaskKind::kCompute;
      row.track = track;
      row.start_ns = start_us * 1000;
      row.duration_ns = 1000;
      TaskId t = trace.AddTask(row);
      trace.SetTaskNode(t, node);
      items.push_back({node, t});
      tasks.push_back(t);
    }
    links.mapped_tasks.Build(model.node_count(), items);
    return tasks;
  }
  std::string Name(NodeId n) const {
    return std::string(model.str(model.node_name(n)));
  }
};

TEST(MemoryTest, TensorBytesFromShapeAndDtype) {
  Graph g;
  EXPECT_EQ(TensorBytes(g.model, g.Tensor("f", {2, 3})), 24);
  EXPECT_EQ(TensorBytes(g.model, g.Tensor("h", {2, 3}, 10)), 12);  // fp16
  EXPECT_EQ(TensorBytes(g.model, g.Tensor("s", {})), 4);           // scalar
  EXPECT_EQ(TensorBytes(g.model, g.Tensor("d", {-1, 3})), -1);     // dynamic
  EXPECT_EQ(TensorBytes(g.model, g.Tensor("z", {0, 3})), 0);
  EXPECT_EQ(TensorBytes(g.model, g.Tensor("u", {2}, 0)), -1);  // no dtype
  ValueId no_shape = g.model.GetOrAddValue(g.root, "no_shape");
  g.model.SetValueType(no_shape, 1);
  EXPECT_EQ(TensorBytes(g.model, no_shape), -1);
}

// x(400 B) -> A -> a(4000) -> B -> b(40) -> C -> y(8000, graph output).
// Live: A: x+a = 4400; B: a+b = 4040; C: b+y = 8040 -> peak 8040 at C.
TEST(MemoryTest, ChainPeakIsComputedByHand) {
  Graph g;
  ValueId x = g.Tensor("x", {1, 100});
  ValueId a = g.Tensor("a", {1, 1000});
  ValueId b = g.Tensor("b", {1, 10});
  ValueId y = g.Tensor("y", {1, 2000});
  g.Input(x);
  g.Output(y);
  g.Node("Relu", "A", {x}, {a});
  g.Node("Relu", "B", {a}, {b});
  NodeId c = g.Node("Relu", "C", {b}, {y});
  g.Finish();
  MemoryReport r = AnalyzeMemory(g.model, nullptr, nullptr, g.root, {});
  EXPECT_EQ(r.order, "topological");
  ASSERT_EQ(r.nodes.size(), 3u);
  EXPECT_EQ(r.nodes[0].live_bytes, 4400u);
  EXPECT_EQ(r.nodes[1].live_bytes, 4040u);
  EXPECT_EQ(r.nodes[2].live_bytes, 8040u);
  EXPECT_EQ(r.peak_activation_bytes, 8040u);
  EXPECT_EQ(r.nodes[r.peak_step].node, c);
  ASSERT_EQ(r.peak_tensors.size(), 2u);
  EXPECT_EQ(r.peak_tensors[0].value, y);  // largest first
  EXPECT_EQ(r.peak_tensors[1].value, b);
  EXPECT_EQ(r.graph_input_tensors, 1u);
  EXPECT_EQ(r.graph_input_bytes, 400u);
  EXPECT_EQ(r.nodes[0].output_bytes, 4000u);
  EXPECT_EQ(r.weight_tensors, 0u);
}

// x(40) -> A(+W) -> a(400) -> B -> b(800) ---> D(Concat) -> y(40) -> E -> z[N]
//                     a(400) -> C -> c(1200) -/
// File order A B C D E: A 40+400 = 440; B a+b = 1200; C a+b+c = 2400;
// D b+c+y = 2040; E y = 40 (z has a dynamic dim: excluded and counted).
// Peak 2400 at C with a, b, c alive. W (400 B) counts as a weight only.
struct Diamond : Graph {
  ValueId x, w, a, b, c, y, z;
  NodeId na, nb, nc, nd, ne;
  Diamond() {
    x = Tensor("x", {10});
    w = Tensor("W", {100});
    a = Tensor("a", {100});
    b = Tensor("b", {200});
    c = Tensor("c", {300});
    y = Tensor("y", {10});
    z = Tensor("z", {-1});
    Input(x);
    Weight(w);
    Output(z);
    na = Node("Add", "/stem/A", {x, w}, {a});
    nb = Node("Relu", "/left/B", {a}, {b});
    nc = Node("Relu", "/right/C", {a}, {c});
    nd = Node("Concat", "D", {b, c}, {y});
    ne = Node("Relu", "E", {y}, {z});
    Finish();
  }
};

TEST(MemoryTest, DiamondPeakIsComputedByHand) {
  Diamond g;
  MemoryReport r = AnalyzeMemory(g.model, nullptr, nullptr, g.root, {});
  ASSERT_EQ(r.nodes.size(), 5u);
  std::vector<uint64_t> live;
  for (const NodeFootprint& f : r.nodes) live.push_back(f.live_bytes);
  EXPECT_EQ(live, (std::vector<uint64_t>{440, 1200, 2400, 2040, 40}));
  EXPECT_EQ(r.peak_activation_bytes, 2400u);
  EXPECT_EQ(r.nodes[r.peak_step].node, g.nc);
  EXPECT_EQ(r.peak_tensor_count, 3u);
  EXPECT_EQ(r.peak_tensors[0].value, g.c);
  EXPECT_EQ(r.peak_tensors[1].value, g.b);
  EXPECT_EQ(r.peak_tensors[2].value, g.a);
  EXPECT_EQ(r.weight_tensors, 1u);
  EXPECT_EQ(r.weight_bytes, 400u);
  EXPECT_EQ(r.tensors_unknown_size, 1u);
  ASSERT_EQ(r.unknown_size_examples.size(), 1u);
  EXPECT_EQ(r.unknown_size_examples[0], g.z);
  // Scopes: "left" holds B (1200 live), "right" C (2400).
  ASSERT_EQ(r.scopes.size(), 3u);
  EXPECT_EQ(g.model.str(g.model.scope_path(r.scopes[0].scope)), "/right");
  EXPECT_EQ(r.scopes[0].peak_bytes, 2400u);
  EXPECT_EQ(r.scopes[0].output_bytes, 1200u);
  EXPECT_EQ(r.scopes[1].peak_bytes, 1200u);

  std::string json =
      encoders::EncodeJson(ToMemoryResult(g.model, r, "framework"));
  auto j = nlohmann::json::parse(json);
  EXPECT_EQ(j["peak"]["activation_bytes"], 2400);
  EXPECT_EQ(j["peak"]["total_bytes"], 2800);
  EXPECT_EQ(j["peak"]["node"]["name"], "/right/C");
  EXPECT_EQ(j["activations"]["unknown_size"], 1);
  EXPECT_EQ(j["activations"]["unknown_size_examples"][0]["name"], "z");
  EXPECT_TRUE(j["allocator"].is_null());
}

// The trace ran C before B: order A C B D E. C: a+c = 1600; B: a+b+c = 2400.
TEST(MemoryTest, TraceOrderIsUsedWhenTheLevelRan) {
  Diamond g;
  g.Execute({{g.na, 0}, {g.nc, 10}, {g.nb, 20}, {g.nd, 30}, {g.ne, 40}});
  MemoryReport r = AnalyzeMemory(g.model, &g.trace, &g.links, g.root, {});
  EXPECT_EQ(r.order, "trace");
  ASSERT_EQ(r.nodes.size(), 5u);
  EXPECT_EQ(r.nodes[1].node, g.nc);
  EXPECT_EQ(r.nodes[1].live_bytes, 1600u);
  EXPECT_EQ(r.nodes[1].start_ns, 10000);
  EXPECT_EQ(r.peak_activation_bytes, 2400u);
  EXPECT_EQ(r.nodes[r.peak_step].node, g.nb);
}

// Task starts that contradict the data dependencies (clock skew between
// streams) never put a consumer before its producer.
TEST(MemoryTest, TraceOrderKeepsDependencies) {
  Diamond g;
  g.Execute({{g.nd, 0}, {g.na, 10}, {g.nb, 20}, {g.nc, 30}});  // E: no task
  MemoryReport r = AnalyzeMemory(g.model, &g.trace, &g.links, g.root, {});
  std::vector<NodeId> order;
  for (const NodeFootprint& f : r.nodes) order.push_back(f.node);
  EXPECT_EQ(order, (std::vector<NodeId>{g.na, g.nb, g.nc, g.nd, g.ne}));
  EXPECT_EQ(r.nodes[4].start_ns, -1);
}

TEST(MemoryTest, OnnxRuntimeSizesAreCompared) {
  Diamond g;
  std::vector<TaskId> tasks =
      g.Execute({{g.na, 0}, {g.nb, 10}, {g.nc, 20}, {g.nd, 30}, {g.ne, 40}});
  // A: right; B: ORT says 1000 output bytes (estimate 800); E: unknown
  // estimate (dynamic output).
  g.trace.AddTaskMemory({tasks[0], 40, 400, 400, 1000, 1000});
  g.trace.AddTaskMemory({tasks[1], 400, 0, 1000, 1500, 3000});
  g.trace.AddTaskMemory({tasks[4], 40, 0, 40, 100, 3000});
  MemoryReport r = AnalyzeMemory(g.model, &g.trace, &g.links, g.root, {});
  ASSERT_TRUE(r.has_allocator);
  const AllocatorComparison& a = r.allocator;
  EXPECT_EQ(a.source, "onnxruntime");
  EXPECT_EQ(a.nodes_compared, 2u);
  EXPECT_EQ(a.output_matches, 1u);
  EXPECT_EQ(a.nodes_unknown_estimate, 1u);
  EXPECT_EQ(a.estimated_output_bytes, 1200u);
  EXPECT_EQ(a.reported_output_bytes, 1400u);
  EXPECT_EQ(a.estimated_parameter_bytes, 400u);
  EXPECT_EQ(a.reported_parameter_bytes, 400u);
  EXPECT_EQ(a.estimated_activation_bytes, 440u);
  EXPECT_EQ(a.reported_activation_bytes, 440u);
  ASSERT_EQ(a.largest_mismatches.size(), 1u);
  EXPECT_EQ(a.largest_mismatches[0].node, g.nb);
  EXPECT_EQ(a.reported_peak_bytes, 3000);
  // Live without the graph input x (40 B, read by A only): A 400, B 1200,
  // C 2400. In use after A: 1000 (gap 600); after B: 1500 (gap 300) ->
  // baseline 300, ORT's activation peak 1500 - 300 = 1200.
  EXPECT_EQ(a.estimated_runtime_peak_bytes, 2400u);
  EXPECT_EQ(a.reported_peak_in_use_bytes, 1500);
  EXPECT_EQ(a.reported_baseline_bytes, 300);
  auto j = nlohmann::json::parse(
      encoders::EncodeJson(ToMemoryResult(g.model, r, "framework")));
  EXPECT_EQ(j["allocator"]["estimated_peak_bytes"], 2400);
  EXPECT_DOUBLE_EQ(j["allocator"]["estimate_over_reported"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(j["allocator"]["nodes"]["estimate_over_reported_activations"]
                       .get<double>(),
                   2400.0 / 1200.0);
}

TEST(MemoryTest, AllocatorEventsGivePeaksPerDevice) {
  Diamond g;
  g.trace.AddAllocatorSample({100, 1000, 1000, 2048, 0});
  g.trace.AddAllocatorSample({200, 3000, 4000, 8192, 0});
  g.trace.AddAllocatorSample({300, -3000, 1000, 8192, 0});
  g.trace.AddAllocatorSample({150, 64, -1, -1, -1});  // host, no totals
  g.trace.AddAllocatorSample({160, 64, -1, -1, -1});
  MemoryReport r = AnalyzeMemory(g.model, &g.trace, nullptr, g.root, {});
  ASSERT_TRUE(r.has_allocator);
  EXPECT_EQ(r.allocator.source, "kineto");
  ASSERT_EQ(r.allocator.devices.size(), 2u);
  EXPECT_EQ(r.allocator.devices[0].device, -1);
  EXPECT_EQ(r.allocator.devices[0].peak_allocated_bytes, 128);
  EXPECT_EQ(r.allocator.devices[1].peak_allocated_bytes, 4000);
  EXPECT_EQ(r.allocator.devices[1].peak_reserved_bytes, 8192);
  EXPECT_EQ(r.allocator.devices[1].events, 3u);
  EXPECT_EQ(r.allocator.reported_peak_bytes, 4000);
}

TEST(MemoryTest, AscendComponentsPreferTheFrameworkAllocator) {
  Diamond g;
  StringId pta = g.pool.Intern("PTA"), app = g.pool.Intern("APP");
  g.trace.AddAllocatorSample({100, 0, -1, 9000, 0, app});  // reserved only
  g.trace.AddAllocatorSample({100, 0, 2000, 4096, 0, pta});
  g.trace.AddAllocatorSample({200, 0, 5000, 8192, 0, pta});
  g.trace.AddAllocatorSample({300, 0, 3000, 8192, 0, pta});
  MemoryReport r = AnalyzeMemory(g.model, &g.trace, nullptr, g.root, {});
  EXPECT_EQ(r.allocator.source, "ascend");
  ASSERT_EQ(r.allocator.devices.size(), 2u);
  EXPECT_EQ(r.allocator.devices[0].component, "APP");
  EXPECT_EQ(r.allocator.devices[0].peak_allocated_bytes, -1);
  EXPECT_EQ(r.allocator.devices[1].peak_allocated_bytes, 5000);
  EXPECT_EQ(r.allocator.reported_peak_bytes, 5000);
  auto j = nlohmann::json::parse(
      encoders::EncodeJson(ToMemoryResult(g.model, r, "framework")));
  // Compared with activations + weights: 2400 + 400.
  EXPECT_EQ(j["allocator"]["estimated_peak_bytes"], 2800);
  EXPECT_TRUE(j["allocator"]["devices"][0]["peak_allocated_bytes"].is_null());
}

TEST(MemoryTest, EmptyGraph) {
  Graph g;
  g.Finish();
  MemoryReport r = AnalyzeMemory(g.model, nullptr, nullptr, g.root, {});
  EXPECT_EQ(r.peak_activation_bytes, 0u);
  auto j = nlohmann::json::parse(
      encoders::EncodeJson(ToMemoryResult(g.model, r, "framework")));
  EXPECT_TRUE(j["peak"]["node"].is_null());
}

}  // namespace
}  // namespace mi::analysis
