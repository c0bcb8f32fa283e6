#include "analysis/diagnosis/diagnose.h"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/diagnosis/rules.h"

namespace mi::analysis {
namespace {

// A hand-built run: one graph of `level` (plus, optionally, a framework
// graph), a device stream and a host thread.
struct TestRun {
  StringPool pool;
  Model model{&pool};
  Trace trace{&pool};
  Links links;
  GraphId graph;
  TrackId stream;
  TrackId host;

  explicit TestRun(LayerLevel level = LayerLevel::kCompiled) {
    graph = model.AddGraph(level, "g", "g.onnx");
    TrackInfo s;
    s.kind = TrackKind::kDeviceStream;
    s.stream = 7;
    stream = trace.AddTrack(s);
    TrackInfo h;
    h.kind = TrackKind::kHostThread;
    h.tid = 1;
    host = trace.AddTrack(h);
    trace.AddRun({pool.Intern("step 0"), 0, 1'000'000'000});
  }

  ValueId V(std::string_view name) { return model.GetOrAddValue(graph, name); }
  ValueId Const(std::string_view name) {
    ValueId v = V(name);
    model.AddValueFlags(v, kValueInitializer);
    return v;
  }
  NodeId Node(std::string_view op, std::string_view name,
              std::vector<std::string_view> inputs,
              std::vector<std::string_view> outputs,
              std::string_view perm = {}) {
    NodeId n = model.AddNode(graph, op, "", name);
    for (auto in : inputs) model.AddNodeInput(n, V(in));
    for (auto out : outputs) model.AddNodeOutput(n, V(out));
    if (!perm.empty()) {
      Attribute a;
      a.name = pool.Intern("perm");
      a.kind = AttributeKind::kInts;
      a.text = pool.Intern(perm);
      model.AddNodeAttribute(n, a);
    }
    return n;
  }
  TaskId Task(std::string_view op, int64_t start_us, int64_t dur_us,
              TaskKind kind = TaskKind::kCompute, std::string_view name = {}) {
    TaskRow row;
    row.kind = kind;
    row.name = pool.Intern(name.empty() ? op : name);
    row.op_type = pool.Intern(op);
    row.track = stream;
    row.start_ns = start_us * 1000;
    row.duration_ns = dur_us * 1000;
    return trace.AddTask(row);
  }
  // What the CANN importers record (importers/common/ascend_task_type.h):
  // their sources class TransData as a layout conversion by op type, and
  // HCCL collectives are communication tasks.
  void ClassAsCann() {
    trace.mutable_source(trace.track_source(stream))
        .op_type_classes.emplace_back(pool.Intern("TransData"),
                                      pool.Intern("layout_conversion"));
  }
  TaskId Collective(std::string_view name, int64_t start_us, int64_t dur_us) {
    TaskId t = Task(name, start_us, dur_us);
    trace.SetTaskClass(t, pool.Intern("communication"));
    return t;
  }
  // Indexes and links: every node executed; tasks linked to `task_nodes`.
  void Finish(std::vector<std::pair<NodeId, TaskId>> task_nodes = {}) {
    model.BuildIndexes();
    links.status.assign(model.node_count(), NodeStatus::kExecuted);
    for (auto [n, t] : task_nodes) trace.SetTaskNode(t, n);
    links.mapped_tasks.Build(model.node_count(), task_nodes);
  }
  std::vector<Finding> Only(std::string_view rule, double threshold = -1) {
    DiagnosisOptions options;
    for (const RuleSpec& r : DiagnosisRuleSpecs()) {
      if (r.id != rule) options.disabled.emplace_back(r.id);
    }
    if (threshold >= 0) options.thresholds[std::string(rule)] = threshold;
    return Diagnose(model, trace, links, options);
  }
};

// ---- the table ----

TEST(DiagnosisRulesTest, TableRowsAreCompleteAndUnique) {
  std::set<std::string_view> ids;
  for (const RuleSpec& r : DiagnosisRuleSpecs()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_FALSE(r.title.empty()) << r.id;
    EXPECT_FALSE(r.why.empty()) << r.id;
    EXPECT_FALSE(r.suggestion.empty()) << r.id;
    EXPECT_TRUE(r.threshold_unit == "share" || r.threshold_unit == "count" ||
                r.threshold_unit == "us")
        << r.id;
  }
  std::string md = RulesReferenceMarkdown(DiagnosisRuleSpecs());
  for (std::string_view id : ids) {
    EXPECT_NE(md.find("## `" + std::string(id) + "`"), std::string::npos);
  }
}

TEST(DiagnosisRulesTest, EveryRuleIsEvaluated) {
  // A rule without an evaluator would silently never fire: a run where
  // each rule fires must yield each id once.
  TestRun r;
  // dynamic input
  ValueId in = r.V("x");
  int64_t dims[] = {-1, 4};
  StringId names[] = {r.pool.Intern("batch"), StringPool::kEmpty};
  r.model.SetValueShape(in, dims, names);
  r.model.mutable_graph(r.graph).inputs.push_back(in);
  r.model.AddValueFlags(in, kValueGraphInput);
  r.Node("Conv", "conv", {"x", "w"}, {"c"});
  r.Node("Relu", "relu", {"c"}, {"r"});
  r.Node("MatMul", "mm", {"r", "w2"}, {"m"});
  r.Const("b");
  r.Node("Add", "bias", {"m", "b"}, {"a"});
  r.Node("ReduceMean", "mean", {"a"}, {"mu"});
  r.Node("Sub", "sub", {"a", "mu"}, {"d"});
  r.Node("Pow", "pow", {"d", "two"}, {"d2"});
  r.Node("ReduceMean", "var", {"d2"}, {"v"});
  r.Node("Add", "eps", {"v", "e"}, {"ve"});
  r.Node("Sqrt", "sqrt", {"ve"}, {"s"});
  r.Node("Div", "div", {"d", "s"}, {"n"});
  r.Node("Div", "gdiv", {"n", "sq2"}, {"g1"});
  r.Node("Erf", "erf", {"g1"}, {"g2"});
  r.Node("Add", "gadd", {"g2", "one"}, {"g3"});
  r.Node("Mul", "gmul", {"n", "g3"}, {"g4"});
  r.Node("Transpose", "t1", {"g4"}, {"t1o"}, "[1,0]");
  r.Node("Transpose", "t2", {"t1o"}, {"t2o"}, "[1,0]");
  r.ClassAsCann();
  r.Task("TransData", 0, 50);
  r.Task("Conv", 50, 30);
  r.Task("Memcpy", 80, 20, TaskKind::kDataMovement);
  // eager: one kernel per launch, shorter than the launch (threshold 0)
  TaskRow launch;
  launch.kind = TaskKind::kRuntime;
  launch.name = r.pool.Intern("cudaLaunchKernel");
  launch.track = r.host;
  launch.start_ns = 0;
  launch.duration_ns = 10'000;
  launch.correlation = 5;
  r.trace.AddTask(launch);
  TaskId k = r.Task("Relu", 200, 1);
  r.trace.SetTaskCorrelation(k, 5);
  r.Finish();
  DiagnosisOptions options;
  options.thresholds[std::string(kRuleEagerLaunches)] = 0;
  std::vector<Finding> findings = Diagnose(r.model, r.trace, r.links, options);
  std::multiset<std::string> fired;
  for (const Finding& f : findings) fired.insert(f.rule_id);
  for (const RuleSpec& rule : DiagnosisRuleSpecs()) {
    EXPECT_EQ(fired.count(std::string(rule.id)), 1u) << rule.id;
  }
}

TEST(DiagnosisRulesTest, OptionsAreValidated) {
  DiagnosisOptions o;
  EXPECT_TRUE(ValidateDiagnosisOptions(o, DiagnosisRuleSpecs()).ok());
  o.thresholds["no_such_rule"] = 1;
  Status s = ValidateDiagnosisOptions(o, DiagnosisRuleSpecs());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no rule 'no_such_rule'"), std::string::npos);
  EXPECT_NE(s.message().find("layout_conversion_share"), std::string::npos);
  o.thresholds.clear();
  o.thresholds["data_movement_share"] = 1.5;
  EXPECT_NE(ValidateDiagnosisOptions(o, DiagnosisRuleSpecs())
                .message()
                .find("between 0 and 1"),
            std::string::npos);
  o.thresholds.clear();
  o.thresholds["eager_launches"] = -1;
  EXPECT_FALSE(ValidateDiagnosisOptions(o, DiagnosisRuleSpecs()).ok());
  o.thresholds.clear();
  o.disabled.push_back("typo");
  EXPECT_NE(ValidateDiagnosisOptions(o, DiagnosisRuleSpecs())
                .message()
                .find("--disable: no rule 'typo'"),
            std::string::npos);
}

TEST(DiagnosisRulesTest, FindingsSortBySeverityThenTime) {
  std::vector<Finding> f(4);
  f[0] = {.rule_id = "a", .severity = FindingSeverity::kInfo, .time_ns = 900};
  f[1] = {.rule_id = "b", .severity = FindingSeverity::kWarning, .time_ns = 5};
  f[2] = {.rule_id = "c", .severity = FindingSeverity::kError, .time_ns = 1};
  f[3] = {.rule_id = "d", .severity = FindingSeverity::kWarning, .time_ns = 50};
  SortFindings(f);
  EXPECT_EQ(f[0].rule_id, "c");
  EXPECT_EQ(f[1].rule_id, "d");
  EXPECT_EQ(f[2].rule_id, "b");
  EXPECT_EQ(f[3].rule_id, "a");
}

// ---- share rules ----

TEST(LayoutConversionShareTest, FiresAboveThresholdWithBreakdown) {
  TestRun r;
  r.ClassAsCann();
  r.Task("TransData", 0, 4);
  r.Task("TransData", 10, 2);
  r.Task("Conv", 20, 94);
  r.Finish();
  std::vector<Finding> f = r.Only(kRuleLayoutConversionShare);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_DOUBLE_EQ(f[0].share, 0.06);
  EXPECT_EQ(f[0].time_ns, 6000);
  EXPECT_EQ(f[0].tasks, (std::vector<TaskId>{TaskId(0), TaskId(1)}));
  EXPECT_NE(f[0].message.find("6.0% of compute time"), std::string::npos)
      << f[0].message;
  EXPECT_NE(f[0].message.find("TransData 6.0 us in 2"), std::string::npos);
  EXPECT_FALSE(f[0].suggestion.empty());
  // The same run under a 10% threshold: silent.
  EXPECT_TRUE(r.Only(kRuleLayoutConversionShare, 0.10).empty());
}

// GE names the TransData ops it inserts trans_TransData_N; a timeline
// without op types gives only that name, and the CANN importers class the
// task by it.
TEST(LayoutConversionShareTest, TasksTheImporterClassedCount) {
  TestRun r;
  TaskId t = r.Task("trans_TransData_0", 0, 6);
  r.trace.SetTaskClass(t, r.pool.Intern("layout_conversion"));
  r.Task("Conv", 20, 94);
  r.Finish();
  std::vector<Finding> f = r.Only(kRuleLayoutConversionShare);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_DOUBLE_EQ(f[0].share, 0.06);
  // The same name from a format that classes nothing is no evidence.
  TestRun plain;
  plain.Task("trans_TransData_0", 0, 6);
  plain.Task("Conv", 20, 94);
  plain.Finish();
  EXPECT_TRUE(plain.Only(kRuleLayoutConversionShare).empty());
}

TEST(LayoutConversionShareTest, ExactlyAtThresholdDoesNotFire) {
  TestRun r;
  r.Task("ReorderOutput", 0, 5);
  r.Task("Conv", 10, 95);
  r.Finish();
  EXPECT_TRUE(r.Only(kRuleLayoutConversionShare).empty());
}

TEST(LayoutConversionShareTest, TransposeCountsOnlyWhenInsertedByCompiler) {
  TestRun r;
  NodeId model_transpose = r.Node("Transpose", "attn/transpose", {"a"}, {"b"});
  NodeId inserted = r.Node("Transpose", "layout_fix", {"b"}, {"c"});
  TaskId t1 = r.Task("Transpose", 0, 20);
  TaskId t2 = r.Task("Transpose", 20, 3);
  r.Task("MatMul", 30, 77);
  r.Finish({{model_transpose, t1}, {inserted, t2}});
  EXPECT_TRUE(r.Only(kRuleLayoutConversionShare).empty());  // 0%
  r.links.status[inserted.value()] = NodeStatus::kInserted;
  auto f = r.Only(kRuleLayoutConversionShare, 0.02);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].tasks, std::vector<TaskId>{t2});
  EXPECT_EQ(f[0].nodes, std::vector<NodeId>{inserted});
  // GE names its inserted conversions trans_*: counted without a graph.
  TestRun g;
  g.Task("TransposeD", 0, 6, TaskKind::kCompute, "trans_TransposeD_12");
  g.Task("TransposeD", 6, 50, TaskKind::kCompute, "model_permute");
  g.Task("Conv2D", 60, 44);
  g.Finish();
  f = g.Only(kRuleLayoutConversionShare);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].time_ns, 6000);
}

TEST(DataMovementShareTest, FiresAboveThresholdOnly) {
  TestRun r;
  r.Task("Memcpy HtoD", 0, 11, TaskKind::kDataMovement);
  r.Task("Conv", 20, 89);
  r.Finish();
  auto f = r.Only(kRuleDataMovementShare);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NEAR(f[0].share, 0.11, 1e-12);
  TestRun near;
  near.Task("MemcpyToHost", 0, 10);  // ORT copy node: by op type
  near.Task("Conv", 20, 90);
  near.Finish();
  EXPECT_TRUE(near.Only(kRuleDataMovementShare).empty());
  EXPECT_EQ(near.Only(kRuleDataMovementShare, 0.09).size(), 1u);
}

TEST(DataMovementShareTest, CollectiveCommunicationIsNotInTheBasis) {
  TestRun r;
  r.Task("Memcpy HtoD", 0, 20, TaskKind::kDataMovement);
  r.Task("Conv", 20, 180);
  // The all-reduce (800 us) is left out: copies are 20 of 200 us, 10%,
  // exactly the threshold (silent); with it they would be 2%.
  r.Collective("hcom_allReduce_", 200, 800);
  r.Finish();
  EXPECT_TRUE(r.Only(kRuleDataMovementShare).empty());
  auto f = r.Only(kRuleDataMovementShare, 0.09);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_DOUBLE_EQ(f[0].share, 0.1);
  // Layout conversions are measured against compute time only.
  TestRun l;
  l.ClassAsCann();
  l.Task("TransData", 0, 10);
  l.Task("Conv", 10, 90);
  l.Task("Memcpy HtoD", 100, 900, TaskKind::kDataMovement);
  TaskRow nccl;
  nccl.kind = TaskKind::kCompute;
  nccl.name = l.pool.Intern("ncclDevKernel_AllReduce_Sum_f32");
  nccl.track = l.stream;
  nccl.duration_ns = 5'000'000;
  l.trace.AddTask(nccl);
  l.Finish();
  f = l.Only(kRuleLayoutConversionShare);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_DOUBLE_EQ(f[0].share, 0.1);
}

TEST(DataMovementShareTest, HostOnlyTraceHasNoBasis) {
  TestRun r;
  r.Task("aten::copy_", 0, 50, TaskKind::kHostOp);
  r.Finish();
  EXPECT_TRUE(r.Only(kRuleDataMovementShare, 0).empty());
}

// ---- eager launches ----

// `kernels` device kernels, each launched by its own cudaLaunchKernel.
void AddLaunches(TestRun& r, int kernels, int64_t kernel_us, int64_t launch_us,
                 int kernels_per_launch = 1) {
  for (int i = 0; i < kernels; ++i) {
    int launch = i / kernels_per_launch;
    if (i % kernels_per_launch == 0) {
      TaskRow row;
      row.kind = TaskKind::kRuntime;
      row.name = r.pool.Intern("cudaLaunchKernel");
      row.track = r.host;
      row.start_ns = launch * 100'000;
      row.duration_ns = launch_us * 1000;
      row.correlation = launch;
      r.trace.AddTask(row);
    }
    TaskId k =
        r.Task("Add", launch * 100 + 50 + i % kernels_per_launch, kernel_us);
    r.trace.SetTaskCorrelation(k, launch);
  }
}

TEST(EagerLaunchesTest, FiresAboveThresholdOfLaunchBoundKernels) {
  TestRun r;
  AddLaunches(r, 101, 2, 5);
  r.Finish();
  auto f = r.Only(kRuleEagerLaunches);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].tasks.size(), 101u);
  EXPECT_EQ(f[0].time_ns, 101 * 5000);
  EXPECT_NE(f[0].message.find("101 of 101 device kernels"), std::string::npos)
      << f[0].message;
  TestRun near;
  AddLaunches(near, 100, 2, 5);
  near.Finish();
  EXPECT_TRUE(near.Only(kRuleEagerLaunches).empty());
}

TEST(EagerLaunchesTest, SilentForLongKernelsGraphLaunchesOrBatchedLaunches) {
  TestRun long_kernels;
  AddLaunches(long_kernels, 200, 8, 5);  // device-bound
  long_kernels.Finish();
  EXPECT_TRUE(long_kernels.Only(kRuleEagerLaunches).empty());

  TestRun graph;
  AddLaunches(graph, 200, 2, 5);
  TaskRow g;
  g.kind = TaskKind::kRuntime;
  g.name = graph.pool.Intern("cudaGraphLaunch");
  g.track = graph.host;
  graph.trace.AddTask(g);
  graph.Finish();
  EXPECT_TRUE(graph.Only(kRuleEagerLaunches).empty());

  TestRun batched;
  AddLaunches(batched, 400, 2, 5, /*kernels_per_launch=*/2);
  batched.Finish();
  EXPECT_TRUE(batched.Only(kRuleEagerLaunches).empty());
}

TEST(EagerLaunchesTest, UsesTheImportersLaunchLink) {
  TestRun r;  // CANN: launch links set by the importer, no correlation ids
  for (int i = 0; i < 3; ++i) {
    TaskRow row;
    row.kind = TaskKind::kRuntime;
    row.name = r.pool.Intern("Node@launch");
    row.track = r.host;
    row.start_ns = i * 100'000;
    row.duration_ns = 20'000;
    TaskId launch = r.trace.AddTask(row);
    TaskId k = r.Task("Mul", i * 100 + 50, 3);
    r.trace.SetTaskLaunch(k, launch);
  }
  r.Finish();
  EXPECT_EQ(r.Only(kRuleEagerLaunches, 2).size(), 1u);
  EXPECT_TRUE(r.Only(kRuleEagerLaunches, 3).empty());
}

// ---- graph rules ----

TEST(UnfusedConvBnActivationTest, CompiledChainIsAWarning) {
  TestRun r;
  NodeId conv = r.Node("Conv", "conv1", {"x", "w"}, {"c"});
  NodeId bn = r.Node("BatchNormalization", "bn1", {"c", "s"}, {"b"});
  NodeId relu = r.Node("Relu", "relu1", {"b"}, {"y"});
  TaskId t = r.Task("Conv", 0, 10);
  r.Finish({{conv, t}});
  auto f = r.Only(kRuleUnfusedConvBnActivation);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, FindingSeverity::kWarning);
  EXPECT_EQ(f[0].nodes, (std::vector<NodeId>{conv, bn, relu}));
  EXPECT_EQ(f[0].tasks, std::vector<TaskId>{t});
  EXPECT_EQ(f[0].time_ns, 10000);
  EXPECT_NE(f[0].message.find("1 x Conv -> BatchNormalization -> Relu"),
            std::string::npos)
      << f[0].message;
  EXPECT_NE(f[0].message.find("compiled graph"), std::string::npos);
  EXPECT_TRUE(r.Only(kRuleUnfusedConvBnActivation, 1).empty());
}

TEST(UnfusedConvBnActivationTest, ResidualAddThenActivationCounts) {
  TestRun r;
  NodeId conv = r.Node("Conv", "conv", {"x", "w"}, {"c"});
  NodeId add = r.Node("Add", "add", {"c", "skip"}, {"a"});
  NodeId relu = r.Node("Relu", "relu", {"a"}, {"y"});
  r.Finish();
  auto f = r.Only(kRuleUnfusedConvBnActivation);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].nodes, (std::vector<NodeId>{conv, add, relu}));
}

TEST(UnfusedConvBnActivationTest, SharedAddAndReluCountOnce) {
  // A residual block with a downsample conv: both convs feed one Add.
  TestRun r;
  NodeId c1 = r.Node("Conv", "conv2", {"x", "w"}, {"a"});
  NodeId c2 = r.Node("Conv", "downsample", {"x", "w2"}, {"b"});
  NodeId add = r.Node("Add", "add", {"a", "b"}, {"s"});
  NodeId relu = r.Node("Relu", "relu", {"s"}, {"y"});
  TaskId t_add = r.Task("Add", 0, 5);
  TaskId t_c1 = r.Task("Conv", 5, 20);
  r.Finish({{add, t_add}, {c1, t_c1}});
  auto f = r.Only(kRuleUnfusedConvBnActivation);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].message.find("2 convolutions"), std::string::npos);
  EXPECT_NE(f[0].message.find("4 nodes"), std::string::npos) << f[0].message;
  EXPECT_EQ(f[0].nodes, (std::vector<NodeId>{c1, add, relu, c2}));
  EXPECT_EQ(f[0].time_ns, 25000);  // the Add once
}

TEST(UnfusedConvBnActivationTest, NearMissesDoNotFire) {
  TestRun r;
  // The conv output is also read elsewhere: it must be materialised.
  r.Node("Conv", "conv", {"x", "w"}, {"c"});
  r.Node("Relu", "relu", {"c"}, {"y"});
  r.Node("Identity", "probe", {"c"}, {"z"});
  // Conv -> Add without an activation: no fusion to suggest.
  r.Node("Conv", "conv2", {"y", "w"}, {"c2"});
  r.Node("Add", "add", {"c2", "z"}, {"a"});
  r.Finish();
  EXPECT_TRUE(r.Only(kRuleUnfusedConvBnActivation).empty());
}

TEST(UnfusedConvBnActivationTest, FrameworkOnlyIsInfoWithANote) {
  TestRun r(LayerLevel::kFramework);
  r.Node("Conv", "conv", {"x", "w"}, {"c"});
  r.Node("Relu", "relu", {"c"}, {"y"});
  r.Finish();
  auto f = r.Only(kRuleUnfusedConvBnActivation);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, FindingSeverity::kInfo);
  EXPECT_NE(f[0].message.find("framework graph only"), std::string::npos);
}

TEST(UnfusedConvBnActivationTest, FrameworkGraphIgnoredWhenCompiledPresent) {
  TestRun r;  // compiled graph g is clean; the framework graph has the chain
  GraphId fw = r.model.AddGraph(LayerLevel::kFramework, "fw", "fw.onnx");
  NodeId c = r.model.AddNode(fw, "Conv", "", "conv");
  r.model.AddNodeOutput(c, r.model.GetOrAddValue(fw, "c"));
  NodeId relu = r.model.AddNode(fw, "Relu", "", "relu");
  r.model.AddNodeInput(relu, r.model.GetOrAddValue(fw, "c"));
  r.Node("FusedConv", "conv", {"x"}, {"y"});
  r.Finish();
  EXPECT_TRUE(r.Only(kRuleUnfusedConvBnActivation).empty());
}

TEST(UnfusedMatMulAddTest, BiasAddFiresResidualAddDoesNot) {
  TestRun r;
  r.Const("bias");
  NodeId mm = r.Node("MatMul", "fc", {"x", "w"}, {"m"});
  NodeId add = r.Node("Add", "fc_bias", {"m", "bias"}, {"a"});
  NodeId act = r.Node("Relu", "act", {"a"}, {"y"});
  r.Node("MatMul", "proj", {"y", "w2"}, {"m2"});
  r.Node("Add", "residual", {"m2", "x"}, {"out"});
  r.Finish();
  auto f = r.Only(kRuleUnfusedMatMulAdd);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].nodes, (std::vector<NodeId>{mm, add, act}));
  EXPECT_NE(f[0].message.find("1 MatMuls"), std::string::npos) << f[0].message;
}

TEST(UnfusedMatMulAddTest, ConstantNodeBiasCounts) {
  TestRun r;
  r.Node("Constant", "c", {}, {"bias"});
  r.Node("MatMul", "fc", {"x", "w"}, {"m"});
  r.Node("Add", "fc_bias", {"bias", "m"}, {"a"});
  r.Finish();
  EXPECT_EQ(r.Only(kRuleUnfusedMatMulAdd).size(), 1u);
  EXPECT_TRUE(r.Only(kRuleUnfusedMatMulAdd, 1).empty());
}

void AddLayerNorm(TestRun& r, bool with_sqrt) {
  r.Node("ReduceMean", "mean", {"x"}, {"mu"});
  r.Node("Sub", "sub", {"x", "mu"}, {"d"});
  r.Node("Pow", "pow", {"d", "two"}, {"d2"});
  r.Node("ReduceMean", "var", {"d2"}, {"v"});
  r.Node("Add", "eps", {"v", "e"}, {"ve"});
  if (with_sqrt) {
    r.Node("Sqrt", "sqrt", {"ve"}, {"s"});
    r.Node("Div", "div", {"d", "s"}, {"n"});
  } else {
    r.Node("Div", "div", {"d", "ve"}, {"n"});
  }
  r.Const("gamma");
  r.Const("beta");
  r.Node("Mul", "scale", {"n", "gamma"}, {"ns"});
  r.Node("Add", "shift", {"ns", "beta"}, {"y"});
}

TEST(UnfusedLayerNormTest, DecomposedLayerNormFires) {
  TestRun r;
  AddLayerNorm(r, true);
  r.Finish();
  auto f = r.Only(kRuleUnfusedLayerNorm);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].nodes.size(), 9u);
  EXPECT_NE(f[0].message.find("ReduceMean -> Sub -> Pow -> ReduceMean -> Add "
                              "-> Sqrt -> Div -> Mul -> Add"),
            std::string::npos)
      << f[0].message;
}

TEST(UnfusedLayerNormTest, WithoutSqrtItIsNotALayerNorm) {
  TestRun r;
  AddLayerNorm(r, false);
  r.Finish();
  EXPECT_TRUE(r.Only(kRuleUnfusedLayerNorm).empty());
}

TEST(UnfusedGeluTest, ErfAndTanhFormsFire) {
  TestRun r;
  r.Node("Div", "d", {"x", "sqrt2"}, {"a"});
  r.Node("Erf", "erf", {"a"}, {"b"});
  r.Node("Add", "p1", {"b", "one"}, {"c"});
  r.Node("Mul", "m", {"x", "c"}, {"e"});
  r.Const("half");
  r.Node("Mul", "h", {"e", "half"}, {"y"});
  // tanh approximation on y
  r.Node("Pow", "cube", {"y", "three"}, {"y3"});
  r.Node("Mul", "k", {"y3", "coef"}, {"y3k"});
  r.Node("Add", "inner", {"y", "y3k"}, {"i"});
  r.Node("Mul", "scale", {"i", "c2pi"}, {"si"});
  r.Node("Tanh", "tanh", {"si"}, {"t"});
  r.Node("Add", "t1", {"t", "one"}, {"t1o"});
  r.Node("Mul", "halfx", {"y", "half"}, {"hx"});
  r.Node("Mul", "out", {"hx", "t1o"}, {"z"});
  r.Finish();
  auto f = r.Only(kRuleUnfusedGelu);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].nodes.size(), 5u + 8u);
  EXPECT_NE(f[0].message.find("GELU (Erf)"), std::string::npos);
  EXPECT_NE(f[0].message.find("GELU (tanh approximation)"), std::string::npos);
  EXPECT_TRUE(r.Only(kRuleUnfusedGelu, 2).empty());
}

TEST(UnfusedGeluTest, ErfWithoutTheGeluTailDoesNotFire) {
  TestRun r;
  r.Node("Div", "d", {"x", "sqrt2"}, {"a"});
  r.Node("Erf", "erf", {"a"}, {"b"});
  r.Node("Add", "p1", {"b", "one"}, {"c"});
  r.Node("Sigmoid", "s", {"c"}, {"y"});
  r.Finish();
  EXPECT_TRUE(r.Only(kRuleUnfusedGelu).empty());
}

TEST(RedundantTransposeReshapeTest, PairsCancelMergeOrAreIdentity) {
  TestRun r;
  NodeId a = r.Node("Transpose", "a", {"x"}, {"xa"}, "[0,2,1,3]");
  NodeId b = r.Node("Transpose", "b", {"xa"}, {"xb"}, "[0,2,1,3]");
  r.Node("Transpose", "c", {"xb"}, {"xc"}, "[0,1,3,2]");  // sole after b
  r.Node("Relu", "use", {"xc"}, {"y"});
  r.Node("Reshape", "r1", {"y", "s1"}, {"y1"});
  r.Node("Reshape", "r2", {"y1", "s2"}, {"y2"});
  r.Node("Transpose", "id", {"y2"}, {"y3"}, "[0,1,2]");
  r.Finish();
  auto f = r.Only(kRuleRedundantTransposeReshape);
  ASSERT_EQ(f.size(), 1u);
  // a->b cancel, b->c merge, r1->r2 merge, identity transpose.
  EXPECT_NE(f[0].message.find("4 redundant"), std::string::npos)
      << f[0].message;
  EXPECT_NE(f[0].message.find("1 x Transpose -> Transpose (cancel out)"),
            std::string::npos);
  EXPECT_NE(f[0].message.find("1 x Transpose -> Transpose (merge into one)"),
            std::string::npos);
  EXPECT_NE(f[0].message.find("1 x Reshape -> Reshape (merge into one "
                              "Reshape)"),
            std::string::npos);
  EXPECT_NE(f[0].message.find("1 x Transpose (identity permutation)"),
            std::string::npos);
  EXPECT_EQ(f[0].nodes[0], a);
  EXPECT_EQ(f[0].nodes[1], b);
  EXPECT_TRUE(r.Only(kRuleRedundantTransposeReshape, 4).empty());
}

TEST(RedundantTransposeReshapeTest, SharedIntermediateIsNotRedundant) {
  TestRun r;
  r.Node("Transpose", "a", {"x"}, {"xa"}, "[0,2,1,3]");
  r.Node("Transpose", "b", {"xa"}, {"xb"}, "[0,2,1,3]");
  r.Node("Relu", "other_reader", {"xa"}, {"y"});
  r.Node("Reshape", "r1", {"y", "s"}, {"y1"});
  r.Node("MatMul", "mm", {"y1", "w"}, {"y2"});
  r.Finish();
  EXPECT_TRUE(r.Only(kRuleRedundantTransposeReshape).empty());
}

TEST(DynamicInputShapeTest, SymbolicAndUnknownDimsFire) {
  TestRun r;
  ValueId ids = r.V("input_ids");
  int64_t dims[] = {-1, -1};
  StringId names[] = {r.pool.Intern("batch"), r.pool.Intern("seq")};
  r.model.SetValueShape(ids, dims, names);
  r.model.SetValueType(ids, 7);  // int64
  ValueId fixed = r.V("mask");
  int64_t fixed_dims[] = {1, 16};
  StringId no_names[] = {StringPool::kEmpty, StringPool::kEmpty};
  r.model.SetValueShape(fixed, fixed_dims, no_names);
  ValueId weight = r.Const("w");  // initializers listed as inputs: skipped
  r.model.mutable_graph(r.graph).inputs = {ids, fixed, weight};
  NodeId use = r.Node("Gather", "embed", {"w", "input_ids"}, {"e"});
  r.Finish();
  auto f = r.Only(kRuleDynamicInputShape);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, FindingSeverity::kInfo);
  EXPECT_EQ(f[0].nodes, std::vector<NodeId>{use});
  EXPECT_NE(f[0].message.find("1 graph input has dynamic dimensions: "
                              "'input_ids' int64[batch,seq] (compiled)"),
            std::string::npos)
      << f[0].message;
  EXPECT_TRUE(r.Only(kRuleDynamicInputShape, 1).empty());
}

TEST(DynamicInputShapeTest, StaticInputsAreSilent) {
  TestRun r;
  ValueId x = r.V("x");
  int64_t dims[] = {1, 3, 224, 224};
  StringId names[4] = {StringPool::kEmpty, StringPool::kEmpty,
                       StringPool::kEmpty, StringPool::kEmpty};
  r.model.SetValueShape(x, dims, names);
  r.model.mutable_graph(r.graph).inputs = {x};
  r.Finish();
  EXPECT_TRUE(r.Only(kRuleDynamicInputShape).empty());
}

}  // namespace
}  // namespace mi::analysis
