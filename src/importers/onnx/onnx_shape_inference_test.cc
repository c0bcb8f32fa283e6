// Shape inference on models whose attributes crash libonnx: the model opens
// with the shapes it declares and a warning naming node, attribute and
// value; inference still runs for the other nodes. With the check turned
// off the crash happens for real inside the child process and costs a
// warning, not the test process.
//
// Expected shapes come from the ONNX operator definitions, not from the code
// under test: Relu's output has its input's shape; a 3x3 Conv with stride 1
// and no padding on 8x8 gives 6x6.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "importers/onnx/onnx_model_converter.h"
#include "importers/onnx/onnx_shape_inference.h"
#include "importers/onnx/onnx_test_util.h"

namespace mi::importers {
namespace {

using namespace onnx_test;  // NOLINT: test helpers
using ::onnx::AttributeProto;
using ::onnx::TensorProto;

void SetInts(::onnx::NodeProto* node, const std::string& name,
             std::initializer_list<int64_t> values) {
  AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}

// x[1,3,8,8] -> <op> 'bad' -> c (declared [1,4,6,6]) -> Relu -> y (no shape)
//            -> Relu 'other' -> z (no shape)
::onnx::ModelProto CrashingModel(std::string_view op) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {1, 3, 8, 8});
  ::onnx::NodeProto* bad = nullptr;
  if (op == "Conv") {
    AddFloatInitializer(g, "w", {4, 3, 3, 3});
    bad = AddNode(g, "Conv", {"x", "w"}, {"c"}, "bad");
    SetInts(bad, "strides", {0, 0});
  } else {
    bad = AddNode(g, "MaxPool", {"x"}, {"c"}, "bad");
    SetInts(bad, "kernel_shape", {0, 0});
  }
  SetType(g->add_value_info(), "c", TensorProto::FLOAT, {1, 4, 6, 6});
  AddNode(g, "Relu", {"c"}, {"y"}, "after");
  AddNode(g, "Relu", {"x"}, {"z"}, "other");
  AddOutput(g, "y", TensorProto::FLOAT, {});
  AddOutput(g, "z", TensorProto::FLOAT, {});
  for (int i = 0; i < 2; ++i) {
    g->mutable_output(i)->mutable_type()->mutable_tensor_type()->clear_shape();
  }
  return model;
}

std::unique_ptr<Imported> Convert(::onnx::ModelProto model,
                                  const onnx_import::OnnxConvertOptions& o) {
  auto result = std::make_unique<Imported>();
  result->ctx.path = "crafted.onnx";
  result->ctx.model = &result->model;
  result->ctx.diagnostics = &result->diagnostics;
  result->status = onnx_import::ConvertOnnxModel(model, o, result->ctx);
  return result;
}

std::string Messages(const Imported& r) {
  std::string out;
  for (const Diagnostic& d : r.diagnostics.log()) out += d.message + "\n";
  return out;
}

void ExpectDeclaredAndInferredShapes(const Imported& r) {
  // Declared in value_info: kept.
  EXPECT_EQ(r.model.FormatValueType(r.Value("c")), "float32[1,4,6,6]");
  // Inferred from the declared shape of 'c' and from 'x'.
  EXPECT_EQ(r.model.FormatValueType(r.Value("y")), "float32[1,4,6,6]");
  EXPECT_EQ(r.model.FormatValueType(r.Value("z")), "float32[1,3,8,8]");
}

TEST(OnnxShapeInferenceTest, ConvWithStrideZeroIsLeftOutWithAWarning) {
  auto r = ImportProto(CrashingModel("Conv"));
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  const Diagnostic* d = r->Find(DiagnosticCode::kShapeInferenceFailed);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kShapeInferenceFailed), 1u)
      << Messages(*r);
  EXPECT_NE(d->message.find("leaves out node 'bad' (Conv): attribute "
                            "strides[0] is 0; expected an integer >= 1"),
            std::string::npos)
      << d->message;
  EXPECT_TRUE(d->location.has_byte);
  ExpectDeclaredAndInferredShapes(*r);
}

TEST(OnnxShapeInferenceTest, MaxPoolWithKernelZeroIsLeftOutWithAWarning) {
  auto r = ImportProto(CrashingModel("MaxPool"));
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kShapeInferenceFailed), 1u)
      << Messages(*r);
  EXPECT_NE(Messages(*r).find("'bad' (MaxPool): attribute kernel_shape[0] "
                              "is 0; expected an integer >= 1"),
            std::string::npos)
      << Messages(*r);
  ExpectDeclaredAndInferredShapes(*r);
}

TEST(OnnxShapeInferenceTest, NegativeDilationAndBatchDimsAreLeftOut) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {1, 3, 8, 8});
  AddInput(g, "i", TensorProto::INT64, {2, 1});
  AddFloatInitializer(g, "w", {4, 3, 3, 3});
  SetInts(AddNode(g, "Conv", {"x", "w"}, {"c"}, "conv"), "dilations", {1, -2});
  auto* gather = AddNode(g, "GatherND", {"x", "i"}, {"n"}, "gather");
  AttributeProto* batch = gather->add_attribute();
  batch->set_name("batch_dims");
  batch->set_type(AttributeProto::INT);
  batch->set_i(-5);
  AddOutput(g, "c", TensorProto::FLOAT, {1, 4, 6, 6});
  AddOutput(g, "n", TensorProto::FLOAT, {7});
  AddNode(g, "Relu", {"x"}, {"z"}, "other");
  AddOutput(g, "z", TensorProto::FLOAT, {});
  g->mutable_output(2)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto r = ImportProto(model);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  std::string messages = Messages(*r);
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kShapeInferenceFailed), 2u)
      << messages;
  EXPECT_NE(messages.find("'conv' (Conv): attribute dilations[1] is -2"),
            std::string::npos)
      << messages;
  EXPECT_NE(messages.find("'gather' (GatherND): attribute batch_dims is -5; "
                          "expected an integer >= 0"),
            std::string::npos)
      << messages;
  EXPECT_EQ(r->model.FormatValueType(r->Value("c")), "float32[1,4,6,6]");
  EXPECT_EQ(r->model.FormatValueType(r->Value("n")), "float32[7]");
  EXPECT_EQ(r->model.FormatValueType(r->Value("z")), "float32[1,3,8,8]");
}

TEST(OnnxShapeInferenceTest, NodesOfBodiesAndFunctionsAreChecked) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {1, 3, 8, 8});
  AddInput(g, "cond", TensorProto::BOOL, {});
  auto* if_node = AddNode(g, "If", {"cond"}, {"y"}, "branch");
  for (const char* name : {"then_branch", "else_branch"}) {
    AttributeProto* attr = if_node->add_attribute();
    attr->set_name(name);
    attr->set_type(AttributeProto::GRAPH);
    auto* body = attr->mutable_g();
    body->set_name(name);
    SetInts(AddNode(body, "MaxPool", {"x"}, {std::string(name) + "_out"},
                    std::string(name) + "_pool"),
            "strides", {0, 1});
    AddOutput(body, std::string(name) + "_out", TensorProto::FLOAT, {});
  }
  auto* function = model.add_functions();
  function->set_name("Pool");
  function->set_domain("local");
  function->add_input("a");
  function->add_output("b");
  auto* fnode = function->add_node();
  fnode->set_op_type("MaxPool");
  fnode->set_name("in_function");
  fnode->add_input("a");
  fnode->add_output("b");
  SetInts(fnode, "kernel_shape", {2, 0});
  AddOutput(g, "y", TensorProto::FLOAT, {});
  // Outputs with a type but no shape: inference is needed.
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto r = ImportProto(model);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  std::string messages = Messages(*r);
  for (const char* expected :
       {"'then_branch_pool' (MaxPool): attribute strides[0] is 0",
        "'else_branch_pool' (MaxPool): attribute strides[0] is 0",
        "'in_function' (MaxPool): attribute kernel_shape[1] is 0"}) {
    EXPECT_NE(messages.find(expected), std::string::npos)
        << r->status.ToString() << messages;
  }
}

// x -> local:Again 'call' -> y; the function's body calls itself through
// node 'again'. libonnx 1.12 expands the call without end (SIGSEGV once the
// stack is exhausted).
::onnx::ModelProto RecursiveFunctionModel() {
  auto model = MakeModel();
  auto* local = model.add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  auto* g = model.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {2});
  AddNode(g, "Again", {"x"}, {"y"}, "call")->set_domain("local");
  AddNode(g, "Relu", {"x"}, {"z"}, "other");
  AddOutput(g, "y", TensorProto::FLOAT, {});
  AddOutput(g, "z", TensorProto::FLOAT, {});
  for (int i = 0; i < 2; ++i) {
    g->mutable_output(i)->mutable_type()->mutable_tensor_type()->clear_shape();
  }
  auto* function = model.add_functions();
  function->set_name("Again");
  function->set_domain("local");
  function->add_input("a");
  function->add_output("b");
  *function->add_opset_import() = model.opset_import(0);
  *function->add_opset_import() = *local;
  auto* again = function->add_node();
  again->set_op_type("Again");
  again->set_domain("local");
  again->set_name("again");
  again->add_input("a");
  again->add_output("b");
  return model;
}

TEST(OnnxShapeInferenceTest, RecursiveFunctionCallIsLeftOut) {
  auto r = ImportProto(RecursiveFunctionModel());
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  std::string messages = Messages(*r);
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kShapeInferenceFailed), 1u)
      << messages;
  EXPECT_NE(messages.find("leaves out node 'again' (Again): calls function "
                          "'local:Again', which is already being called "
                          "(recursion)"),
            std::string::npos)
      << messages;
  EXPECT_EQ(r->model.FormatValueType(r->Value("z")), "float32[2]");
}

// The check off: libonnx divides by the zero stride inside the child. The
// node is found by bisection and left out; the rest is inferred.
TEST(OnnxShapeInferenceTest, CrashInLibonnxCostsAWarningNotTheProcess) {
  onnx_import::OnnxConvertOptions options;
  options.check_before_inference = false;
  for (const char* op : {"Conv", "MaxPool"}) {
    auto model = CrashingModel(op);
    if (std::string_view(op) == "MaxPool") {
      // kernel_shape 0 alone does not divide; a zero stride does.
      auto* node = model.mutable_graph()->mutable_node(0);
      node->mutable_attribute(0)->set_ints(0, 2);
      node->mutable_attribute(0)->set_ints(1, 2);
      SetInts(node, "strides", {0, 0});
    }
    auto r = Convert(model, options);
    ASSERT_TRUE(r->status.ok()) << r->status.ToString();
    EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kShapeInferenceFailed), 1u)
        << Messages(*r);
    EXPECT_NE(Messages(*r).find(fmt::format(
                  "ONNX shape inference crashed (SIGFPE) in node 'bad' ({}), "
                  "which was left out",
                  op)),
              std::string::npos)
        << op << ": " << Messages(*r);
    ExpectDeclaredAndInferredShapes(*r);
  }
}

// The bisection finds a crashing node among many: a 300-node Relu chain
// with the zero-stride Conv as node 150 (the chain stays inferred).
TEST(OnnxShapeInferenceTest, CrashIsLocatedAmongManyNodes) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {1, 3, 8, 8});
  AddFloatInitializer(g, "w", {4, 3, 3, 3});
  for (int i = 0; i < 300; ++i) {
    if (i == 150) {
      SetInts(AddNode(g, "Conv", {"x", "w"}, {"c"}, "deep_bad"), "strides",
              {0, 0});
    }
    AddNode(g, "Relu", {i == 0 ? "x" : "r" + std::to_string(i - 1)},
            {"r" + std::to_string(i)}, "relu" + std::to_string(i));
  }
  AddOutput(g, "r299", TensorProto::FLOAT, {});
  AddOutput(g, "c", TensorProto::FLOAT, {});
  for (int i = 0; i < 2; ++i) {
    g->mutable_output(i)->mutable_type()->mutable_tensor_type()->clear_shape();
  }
  onnx_import::OnnxConvertOptions options;
  options.check_before_inference = false;
  auto r = Convert(model, options);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_NE(Messages(*r).find("crashed (SIGFPE) in node 'deep_bad' (Conv)"),
            std::string::npos)
      << Messages(*r);
  EXPECT_EQ(r->model.FormatValueType(r->Value("r299")), "float32[1,3,8,8]");
  EXPECT_EQ(r->model.value_dims(r->Value("c")).size(), 0u);
}

// Without the node found (locating turned off) nothing is inferred.
TEST(OnnxShapeInferenceTest, CrashNotLocatedLeavesDeclaredShapesOnly) {
  onnx_import::OnnxConvertOptions options;
  options.check_before_inference = false;
  options.inference.max_crashing_nodes_left_out = 0;
  auto r = Convert(CrashingModel("Conv"), options);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_NE(Messages(*r).find("ONNX shape inference crashed (SIGFPE); "
                              "skipped, shapes as the file declares them"),
            std::string::npos)
      << Messages(*r);
  EXPECT_EQ(r->model.FormatValueType(r->Value("c")), "float32[1,4,6,6]");
  EXPECT_EQ(r->model.value_dims(r->Value("z")).size(), 0u);
}

// The check off: libonnx recurses until the child's stack overflows, in the
// main-graph node that calls the function.
TEST(OnnxShapeInferenceTest, StackOverflowInLibonnxCostsAWarning) {
  onnx_import::OnnxConvertOptions options;
  options.check_before_inference = false;
  auto r = Convert(RecursiveFunctionModel(), options);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_NE(Messages(*r).find("ONNX shape inference crashed (SIGSEGV) in "
                              "node 'call' (Again), which was left out"),
            std::string::npos)
      << Messages(*r);
  EXPECT_EQ(r->model.FormatValueType(r->Value("z")), "float32[2]");
}

// The hook stands for a crash whose cause no check knows; it crashes with
// every node left out too, so no node is blamed.
TEST(OnnxShapeInferenceTest, ChildKilledBySegfaultGivesAWarning) {
  onnx_import::OnnxConvertOptions options;
  options.inference.fault_for_testing =
      onnx_import::InferenceChildFault::kSegfault;
  auto r = Convert(CrashingModel("Conv"), options);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  std::string messages = Messages(*r);
  EXPECT_NE(messages.find("ONNX shape inference crashed (SIGSEGV); skipped"),
            std::string::npos)
      << messages;
  EXPECT_EQ(r->model.FormatValueType(r->Value("c")), "float32[1,4,6,6]");
}

TEST(OnnxShapeInferenceTest, ChildPastItsDeadlineIsKilled) {
  onnx_import::OnnxConvertOptions options;
  options.inference.fault_for_testing = onnx_import::InferenceChildFault::kHang;
  options.inference.deadline = std::chrono::milliseconds(200);
  auto r = Convert(CrashingModel("Conv"), options);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  std::string messages = Messages(*r);
  EXPECT_NE(messages.find("ONNX shape inference did not finish within 200 ms "
                          "and was stopped"),
            std::string::npos)
      << messages;
  EXPECT_EQ(r->model.FormatValueType(r->Value("c")), "float32[1,4,6,6]");
}

// The server opens models while other threads allocate and hold locks: the
// child must still infer.
TEST(OnnxShapeInferenceTest, InfersWhileOtherThreadsAllocate) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&stop] {
      std::vector<std::unique_ptr<std::string>> keep;
      while (!stop.load(std::memory_order_relaxed)) {
        keep.push_back(std::make_unique<std::string>(4096, 'x'));
        if (keep.size() > 64) keep.clear();
      }
    });
  }
  for (int i = 0; i < 20; ++i) {
    auto r = ImportProto(CrashingModel("Conv"));
    ASSERT_TRUE(r->status.ok()) << r->status.ToString();
    EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kShapeInferenceFailed), 1u)
        << Messages(*r);
    ExpectDeclaredAndInferredShapes(*r);
  }
  stop = true;
  for (auto& t : threads) t.join();
}

}  // namespace
}  // namespace mi::importers
