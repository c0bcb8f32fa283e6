#include "linker/linker.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "linker/fusion_matcher.h"
#include "linker/host_op_alignment.h"
#include "linker/shape_completion.h"

namespace mi::linker {
namespace {

// Small builder: nodes as (op, name, inputs, outputs).
class GraphBuilder {
 public:
  GraphBuilder(Model* model, LayerLevel level, const char* file)
      : model_(model), graph_(model->AddGraph(level, "g", file)) {}
  NodeId Node(std::string_view op, std::string_view name,
              std::vector<std::string> inputs,
              std::vector<std::string> outputs) {
    NodeId n = model_->AddNode(graph_, op, "", name);
    for (const auto& i : inputs) {
      // An empty name is an omitted optional input.
      model_->AddNodeInput(
          n, i.empty() ? ValueId::Invalid() : model_->GetOrAddValue(graph_, i));
    }
    for (const auto& o : outputs) {
      model_->AddNodeOutput(n, model_->GetOrAddValue(graph_, o));
    }
    return n;
  }
  void Initializer(std::string_view name) {
    model_->AddValueFlags(model_->GetOrAddValue(graph_, name),
                          kValueInitializer);
  }
  void Input(std::string_view name) {
    model_->AddValueFlags(model_->GetOrAddValue(graph_, name),
                          kValueGraphInput);
  }
  GraphId graph() const { return graph_; }

 private:
  Model* model_;
  GraphId graph_;
};

std::vector<std::string> Names(const Model& m, std::span<const NodeId> ids) {
  std::vector<std::string> out;
  for (NodeId id : ids) out.emplace_back(m.str(m.node_name(id)));
  std::sort(out.begin(), out.end());
  return out;
}

struct TestRun {
  StringPool pool;
  Model model{&pool};
  Trace trace{&pool};
  DiagnosticSink diagnostics;
};

TEST(LinkerTest, FusedConvKeepsConvNameAndAbsorbsRelu) {
  TestRun r;
  GraphBuilder fw(&r.model, LayerLevel::kFramework, "m.onnx");
  fw.Input("x");
  fw.Initializer("w");
  NodeId conv = fw.Node("Conv", "/conv1/Conv", {"x", "w"}, {"c"});
  NodeId relu = fw.Node("Relu", "/relu/Relu", {"c"}, {"r"});
  GraphBuilder cg(&r.model, LayerLevel::kCompiled, "opt.onnx");
  cg.Input("x");
  cg.Initializer("w");
  NodeId fused = cg.Node("FusedConv", "/conv1/Conv", {"x", "w"}, {"r"});
  r.model.BuildIndexes();
  TrackInfo thread;
  thread.kind = TrackKind::kHostThread;
  TaskRow row;
  row.kind = TaskKind::kCompute;
  row.track = r.trace.AddTrack(thread);
  row.duration_ns = 1000;
  row.node_name = r.pool.Intern("/conv1/Conv");
  TaskId task = r.trace.AddTask(row);
  row.node_name = r.pool.Intern("not_in_graph");
  r.trace.AddTask(row);

  Links links =
      Link(r.model, &r.trace, {fw.graph(), cg.graph()}, &r.diagnostics);
  EXPECT_EQ(Names(r.model, links.fused_from.Get(fused)),
            (std::vector<std::string>{"/conv1/Conv", "/relu/Relu"}));
  EXPECT_EQ(links.match_kind[fused.value()], MatchKind::kSameName);
  EXPECT_EQ(r.trace.task_node(task), fused);
  EXPECT_EQ(links.status[conv.value()], NodeStatus::kExecuted);
  EXPECT_EQ(links.status[relu.value()], NodeStatus::kFused);
  EXPECT_EQ(links.mapped_tasks.Get(relu).size(), 1u);  // sees its kernel
  EXPECT_EQ(links.linked_tasks, 1u);
  EXPECT_EQ(links.unlinked_tasks, 1u);
  EXPECT_EQ(r.diagnostics.count(DiagnosticCode::kTaskNodeNameUnknown), 1u);
}

TEST(LinkerTest, RenamedTensorsFormClustersSharedByAnchorsAndDataFlow) {
  TestRun r;
  GraphBuilder fw(&r.model, LayerLevel::kFramework, "m.onnx");
  fw.Input("x");
  NodeId a = fw.Node("Conv", "A", {"x"}, {"t1"});
  NodeId b = fw.Node("Relu", "B", {"t1"}, {"t2"});
  NodeId c = fw.Node("Conv", "C", {"t2"}, {"t3"});
  NodeId d = fw.Node("Add", "D", {"t3", "t2"}, {"t4"});
  GraphBuilder cg(&r.model, LayerLevel::kCompiled, "opt.onnx");
  cg.Input("x");
  // NCHWc style: nodes named after the tensor they compute, blocked-layout
  // tensors renamed, a ReorderOutput restoring the framework tensor.
  NodeId n1 = cg.Node("Conv", "t2_nchwc", {"x"}, {"reorder_token_1"});
  NodeId n2 =
      cg.Node("Conv", "t3_nchwc", {"reorder_token_1", "reorder_token_1"},
              {"reorder_token_2"});
  NodeId n3 = cg.Node("ReorderOutput", "ReorderOutput_token_9",
                      {"reorder_token_2"}, {"t4"});
  r.model.BuildIndexes();
  FusionMatch match = MatchCompiledToFramework(r.model, fw.graph(), cg.graph());
  std::vector<std::pair<NodeId, NodeId>> pairs = match.fused_from;
  auto covered = [&](NodeId n) {
    std::vector<std::string> out;
    for (auto [cn, fn] : pairs) {
      if (cn == n) out.emplace_back(r.model.str(r.model.node_name(fn)));
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(covered(n1), (std::vector<std::string>{"A", "B"}));
  // The second Conv absorbs the Add that reads the first one's output.
  EXPECT_EQ(covered(n2), (std::vector<std::string>{"C", "D"}));
  EXPECT_TRUE(covered(n3).empty());
  EXPECT_EQ(match.kinds[2], MatchKind::kInserted);
  EXPECT_EQ(match.unexplained, 0u);
  (void)a, (void)b, (void)c, (void)d;
}

TEST(LinkerTest, ConstantsAreFoldedAndUnknownNodesAreUnexplained) {
  TestRun r;
  GraphBuilder fw(&r.model, LayerLevel::kFramework, "m.onnx");
  fw.Input("x");
  NodeId constant = fw.Node("Constant", "shape_const", {}, {"shape"});
  fw.Node("Reshape", "R", {"x", "shape"}, {"y"});
  GraphBuilder cg(&r.model, LayerLevel::kCompiled, "opt.onnx");
  cg.Input("x");
  cg.Initializer("shape");
  cg.Node("Reshape", "R", {"x", "shape"}, {"y"});
  cg.Node("MysteryOp", "mystery", {"y"}, {"z"});
  r.model.BuildIndexes();
  FusionMatch match = MatchCompiledToFramework(r.model, fw.graph(), cg.graph());
  ASSERT_EQ(match.folded.size(), 1u);
  EXPECT_EQ(match.folded[0], constant);
  EXPECT_EQ(match.unexplained, 1u);
  EXPECT_EQ(match.kinds[1], MatchKind::kUnexplained);
}

TEST(LinkerTest, StripsOrtRenamingsToFindAnchors) {
  TestRun r;
  GraphBuilder fw(&r.model, LayerLevel::kFramework, "m.onnx");
  fw.Input("x");
  fw.Initializer("w");
  fw.Initializer("b");
  fw.Node("MatMul", "/fc/MatMul", {"x", "w"}, {"m"});
  fw.Node("Add", "/fc/Add", {"m", "b"}, {"y"});
  GraphBuilder cg(&r.model, LayerLevel::kCompiled, "opt.onnx");
  cg.Input("x");
  cg.Initializer("w");
  cg.Initializer("b");
  NodeId gemm =
      cg.Node("Gemm", "/fc/MatMul/MatMulAddFusion", {"x", "w", "b"}, {"y"});
  r.model.BuildIndexes();
  Links links =
      Link(r.model, &r.trace, {fw.graph(), cg.graph()}, &r.diagnostics);
  EXPECT_EQ(Names(r.model, links.fused_from.Get(gemm)),
            (std::vector<std::string>{"/fc/Add", "/fc/MatMul"}));
  EXPECT_EQ(links.match_kind[gemm.value()], MatchKind::kDerivedName);
}

}  // namespace
}  // namespace mi::linker

namespace mi::linker {
namespace {

TEST(ShapeCompletionTest, FillsFromFrameworkNamesThenFromRuntimeShapes) {
  StringPool pool;
  Model model(&pool);
  Trace trace(&pool);
  GraphBuilder fw(&model, LayerLevel::kFramework, "m.onnx");
  fw.Node("Relu", "R", {"x"}, {"y"});
  ValueId fy = model.FindValue(fw.graph(), "y");
  model.SetValueType(fy, 1);
  std::vector<int64_t> dims = {1, 8};
  std::vector<StringId> names(2, StringPool::kEmpty);
  model.SetValueShape(fy, dims, names);
  GraphBuilder cg(&model, LayerLevel::kCompiled, "opt.onnx");
  NodeId n = cg.Node("FusedThing", "F", {"x", "", "w"}, {"renamed"});
  NodeId m = cg.Node("Other", "G", {"renamed"}, {"y"});
  model.BuildIndexes();
  TrackInfo track;
  TaskRow row;
  row.kind = TaskKind::kCompute;
  row.track = trace.AddTrack(track);
  row.shapes = pool.Intern(R"([{"float":[1,8]},{"int64":[2]}])");
  row.output_shapes = pool.Intern(R"([{"float16":[1,16]}])");
  TaskId t = trace.AddTask(row);
  trace.SetTaskNode(t, n);
  ShapeCompletion done = CompleteShapes(&model, trace, fw.graph(), cg.graph());
  ValueId cy = model.node_outputs(m)[0];
  EXPECT_EQ(model.value_dtype(cy), 1);
  ASSERT_EQ(model.value_dims(cy).size(), 2u);
  ValueId renamed = model.node_outputs(n)[0];
  EXPECT_EQ(model.value_dtype(renamed), 10);
  EXPECT_EQ(model.value_dims(renamed)[1], 16);
  ValueId w = model.node_inputs(n)[2];
  EXPECT_EQ(model.value_dtype(w), 7);
  EXPECT_EQ(done.from_framework, 1u);
  EXPECT_EQ(done.from_trace, 3u);  // x, w, renamed
  EXPECT_EQ(OrtTypeNameToDataType("no-such-type"), 0);
}

}  // namespace
}  // namespace mi::linker

namespace mi::linker {
namespace {

TEST(HostOpAlignmentTest, AlignsOutermostAtenOpsWithExportedNodesInOrder) {
  StringPool pool;
  Model model(&pool);
  Trace trace(&pool);
  GraphBuilder fw(&model, LayerLevel::kFramework, "m.onnx");
  NodeId conv = fw.Node("Conv", "/conv1/Conv", {"x"}, {"c"});
  fw.Node("Constant", "/Constant", {}, {"k"});
  NodeId relu = fw.Node("Relu", "/relu/Relu", {"c"}, {"r"});
  NodeId add = fw.Node("Add", "/Add", {"r", "k"}, {"y"});
  model.BuildIndexes();
  TrackInfo thread;
  thread.kind = TrackKind::kHostThread;
  TrackId track = trace.AddTrack(thread);
  auto host = [&](std::string_view name, int64_t start, int64_t dur) {
    TaskRow row;
    row.kind = TaskKind::kHostOp;
    row.track = track;
    row.name = pool.Intern(name);
    row.start_ns = start;
    row.duration_ns = dur;
    return trace.AddTask(row);
  };
  TaskId conv2d = host("aten::conv2d", 0, 100);
  TaskId inner = host("aten::convolution", 10, 80);  // nested: not aligned
  TaskId bn = host("aten::batch_norm", 110, 10);     // folded by export
  TaskId relu_op = host("aten::relu_", 130, 10);
  TaskId add_op = host("aten::add", 150, 10);
  std::vector<std::pair<NodeId, TaskId>> pairs;
  EXPECT_EQ(AlignHostOpsToGraph(model, &trace, fw.graph(), &pairs), 3u);
  EXPECT_EQ(trace.task_node(conv2d), conv);
  EXPECT_EQ(trace.task_node(inner), conv);  // work inside the aligned op
  EXPECT_FALSE(trace.task_node(bn).valid());
  EXPECT_EQ(trace.task_node(relu_op), relu);
  EXPECT_EQ(trace.task_node(add_op), add);
  EXPECT_EQ(OnnxOpTypesForAtenOp("aten::linear"),
            (std::vector<std::string_view>{"Gemm", "MatMul"}));
  EXPECT_TRUE(OnnxOpTypesForAtenOp("conv2d").empty());
}

}  // namespace
}  // namespace mi::linker

namespace mi::linker {
namespace {

// Two ranks of one job, each a source: both number their correlation and
// External ids from 1, so rank 1's kernel with correlation 10 / External
// id 2 is launched by rank 1's aten::conv2d, never by rank 0's aten::mm.
struct TwoRanks {
  StringPool pool;
  Model model{&pool};
  Trace trace{&pool};
  DiagnosticSink diagnostics;
  TaskId kernel[2];          // External id 2 on the kernel itself
  TaskId kernel_by_corr[2];  // no External id: found by correlation
  TaskId host[2];

  TwoRanks() {
    const char* ops[2] = {"aten::mm", "aten::conv2d"};
    for (int rank = 0; rank < 2; ++rank) {
      SourceId source = trace.FindOrAddSource(
          pool.Intern("rank" + std::to_string(rank) + ".json"));
      trace.mutable_source(source).rank = rank;
      TrackInfo thread;
      thread.kind = TrackKind::kHostThread;
      thread.source = source;
      TrackInfo stream;
      stream.kind = TrackKind::kDeviceStream;
      stream.source = source;
      stream.device = 0;
      stream.stream = 7;
      TrackId host_track = trace.AddTrack(thread);
      TrackId device_track = trace.AddTrack(stream);
      uint32_t run =
          trace.AddRun({pool.Intern("ProfilerStep#1"), 0, 100, source});
      TaskRow row;
      row.track = host_track;
      row.run = run;
      row.kind = TaskKind::kHostOp;
      row.name = pool.Intern(ops[rank]);
      row.external_id = 2;
      host[rank] = trace.AddTask(row);
      row.kind = TaskKind::kRuntime;
      row.name = pool.Intern("cudaLaunchKernel");
      row.correlation = 10;
      trace.AddTask(row);
      row.external_id = 3;  // a runtime call of no host op in either rank
      row.correlation = 11;
      trace.AddTask(row);
      row.track = device_track;
      row.kind = TaskKind::kCompute;
      row.run = 0;
      row.name = pool.Intern(std::string("k_") + ops[rank]);
      row.correlation = 10;
      row.external_id = 2;
      kernel[rank] = trace.AddTask(row);
      row.external_id = -1;
      kernel_by_corr[rank] = trace.AddTask(row);
    }
  }
};

TEST(LinkerSourcesTest, LaunchIdsAreMatchedWithinTheirSource) {
  TwoRanks r;
  Link(r.model, &r.trace, {}, &r.diagnostics);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(r.trace.task_parent(r.kernel[rank]), r.host[rank]) << rank;
    EXPECT_EQ(r.trace.task_parent(r.kernel_by_corr[rank]), r.host[rank])
        << rank;
    EXPECT_EQ(r.trace.task_run(r.kernel[rank]), r.trace.task_run(r.host[rank]));
  }
  EXPECT_EQ(r.pool.Get(r.trace.task_op_type(r.kernel[1])), "aten::conv2d");
  EXPECT_EQ(r.pool.Get(r.trace.task_op_type(r.kernel_by_corr[1])),
            "aten::conv2d");
  EXPECT_EQ(r.pool.Get(r.trace.task_op_type(r.kernel[0])), "aten::mm");
  EXPECT_EQ(r.trace.task_run(r.kernel[1]), 1u);  // rank 1's step, not 0's
}

// Names repeated within a graph: a task naming one is linked by its op
// type when that decides, else left unlinked with its reason; a declared
// original op naming one is not guessed.
TEST(LinkerSourcesTest, RepeatedNodeNamesAreNeverResolvedToTheFirst) {
  TestRun r;
  GraphBuilder fw(&r.model, LayerLevel::kFramework, "m.onnx");
  NodeId conv = fw.Node("Conv", "block", {"x"}, {"c"});
  NodeId relu = fw.Node("Relu", "block", {"c"}, {"r"});
  r.model.BuildIndexes();
  TrackInfo thread;
  thread.kind = TrackKind::kHostThread;
  TaskRow row;
  row.kind = TaskKind::kCompute;
  row.track = r.trace.AddTrack(thread);
  row.node_name = r.pool.Intern("block");
  row.op_type = r.pool.Intern("Relu");
  TaskId by_type = r.trace.AddTask(row);
  row.op_type = StringPool::kEmpty;
  TaskId untyped = r.trace.AddTask(row);
  row.op_type = r.pool.Intern("Gemm");
  TaskId other_type = r.trace.AddTask(row);

  Links links = Link(r.model, &r.trace, {fw.graph(), {}}, &r.diagnostics);
  EXPECT_EQ(r.trace.task_node(by_type), relu);
  EXPECT_FALSE(r.trace.task_node(untyped).valid());
  EXPECT_FALSE(r.trace.task_node(other_type).valid());
  EXPECT_EQ(links.linked_tasks, 1u);
  EXPECT_EQ(links.unlinked_tasks, 2u);
  EXPECT_EQ(links.unlinked_ambiguous_node, 2u);
  EXPECT_EQ(links.unlinked_unknown_node, 0u);
  EXPECT_EQ(links.status[relu.value()], NodeStatus::kExecuted);
  EXPECT_EQ(links.status[conv.value()], NodeStatus::kNotExecuted);
  EXPECT_EQ(r.diagnostics.count(DiagnosticCode::kTaskNodeNameUnknown), 0u);
}

TEST(LinkerSourcesTest, DeclaredOriginNamingARepeatedNameIsNotGuessed) {
  TestRun r;
  GraphBuilder fw(&r.model, LayerLevel::kFramework, "fw.txt");
  fw.Node("Conv", "conv", {"x"}, {"c"});
  fw.Node("Relu", "conv", {"c"}, {"r"});
  NodeId add = fw.Node("Add", "add", {"r"}, {"y"});
  GraphBuilder cg(&r.model, LayerLevel::kCompiled, "ge.txt");
  NodeId fused = cg.Node("FusedOp", "fused", {"x"}, {"y"});
  r.model.AddNodeOriginName(fused, r.pool.Intern("conv"));
  r.model.AddNodeOriginName(fused, r.pool.Intern("add"));
  r.model.BuildIndexes();
  Links links =
      Link(r.model, &r.trace, {fw.graph(), cg.graph()}, &r.diagnostics);
  auto from = links.fused_from.Get(fused);
  ASSERT_EQ(from.size(), 1u);
  EXPECT_EQ(from[0], add);
  ASSERT_EQ(r.diagnostics.count(DiagnosticCode::kOriginNameUnresolved), 1u);
  EXPECT_NE(r.diagnostics.log()[0].message.find("2 framework nodes share"),
            std::string::npos)
      << r.diagnostics.log()[0].message;
}

}  // namespace
}  // namespace mi::linker
