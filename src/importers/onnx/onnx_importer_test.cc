#include "importers/onnx/onnx_importer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "importers/onnx/onnx_skeleton.h"
#include "importers/onnx/onnx_test_util.h"

namespace mi::importers {
namespace {

using namespace onnx_test;  // NOLINT: test helpers
using ::onnx::TensorProto;

std::string TempDir(std::string_view name) {
  auto dir =
      std::filesystem::temp_directory_path() /
      ("mi_onnx_test_" + std::to_string(::getpid()) + "_" + std::string(name));
  std::filesystem::create_directories(dir);
  return dir.string();
}

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Conv -> Relu, with weights as raw_data, node names in torch's style.
::onnx::ModelProto MakeConvRelu() {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "input", TensorProto::FLOAT, {1, 3, 32, 32});
  AddFloatInitializer(g, "conv.weight", {8, 3, 3, 3});
  AddFloatInitializer(g, "conv.bias", {8});
  auto* conv = AddNode(g, "Conv", {"input", "conv.weight", "conv.bias"},
                       {"/layer1/conv/Conv_output_0"}, "/layer1/conv/Conv");
  auto* a = conv->add_attribute();
  a->set_name("kernel_shape");
  a->set_type(::onnx::AttributeProto::INTS);
  a->add_ints(3);
  a->add_ints(3);
  a = conv->add_attribute();
  a->set_name("group");
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(1);
  a = conv->add_attribute();
  a->set_name("auto_pad");
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s("SAME_UPPER");
  AddNode(g, "Relu", {"/layer1/conv/Conv_output_0"}, {"output"},
          "/layer1/relu/Relu");
  AddOutput(g, "output", TensorProto::FLOAT, {1, 8, 32, 32});
  return model;
}

TEST(OnnxImporterTest, ConvertsNodesAttributesValuesAndGraphInfo) {
  auto r = ImportProto(MakeConvRelu());
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  const Model& m = r->model;
  ASSERT_EQ(m.graph_count(), 1u);
  ASSERT_EQ(r->ctx.graphs_added.size(), 1u);
  GraphId root = r->ctx.graphs_added[0];
  const GraphInfo& info = m.graph(root);
  EXPECT_EQ(r->str(info.name), "main");
  EXPECT_EQ(r->str(info.producer), "test 1.0");
  EXPECT_EQ(r->str(info.source_file), "test.onnx");
  EXPECT_EQ(info.opset, 13);
  EXPECT_EQ(info.level, LayerLevel::kFramework);
  ASSERT_EQ(info.inputs.size(), 1u);  // weights are not graph inputs
  ASSERT_EQ(info.outputs.size(), 1u);

  ASSERT_EQ(m.node_count(), 2u);
  NodeId conv = r->Node("/layer1/conv/Conv");
  ASSERT_TRUE(conv.valid());
  EXPECT_EQ(r->str(m.node_op_type(conv)), "Conv");
  ASSERT_EQ(m.node_inputs(conv).size(), 3u);
  ASSERT_EQ(m.node_attributes(conv).size(), 3u);
  const Attribute& ks = m.node_attributes(conv)[0];
  EXPECT_EQ(r->str(ks.name), "kernel_shape");
  EXPECT_EQ(ks.kind, AttributeKind::kInts);
  EXPECT_EQ(r->str(ks.text), "[3,3]");
  EXPECT_EQ(m.node_attributes(conv)[1].int_value, 1);
  EXPECT_EQ(r->str(m.node_attributes(conv)[2].text), "SAME_UPPER");

  ValueId weight = r->Value("conv.weight");
  ASSERT_TRUE(weight.valid());
  EXPECT_EQ(m.value_flags(weight), kValueInitializer);
  EXPECT_EQ(m.value_data_bytes(weight), 8u * 3 * 3 * 3 * 4);
  EXPECT_EQ(m.FormatValueType(weight), "float32[8,3,3,3]");
  ValueId input = r->Value("input");
  EXPECT_EQ(m.value_flags(input), kValueGraphInput);
  EXPECT_EQ(m.value_flags(r->Value("output")), kValueGraphOutput);
  // The intermediate edge lacked value_info: shape inference filled it.
  EXPECT_EQ(m.FormatValueType(r->Value("/layer1/conv/Conv_output_0")),
            "float32[1,8,32,32]");
  EXPECT_EQ(m.value_producer(r->Value("output")), r->Node("/layer1/relu/Relu"));

  // Scopes come from the names.
  ScopeId scope = m.node_scope(conv);
  EXPECT_EQ(r->str(m.scope_path(scope)), "/layer1/conv");
  EXPECT_EQ(r->str(m.scope_name(m.scope_parent(scope))), "layer1");
  EXPECT_EQ(r->diagnostics.CountWithSeverity(Severity::kError), 0u);
}

TEST(OnnxImporterTest, UnnamedNodesGetOpTypeAndIndexAndOptionalInputsStay) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {-1, 4});
  AddNode(g, "Relu", {"x"}, {"a"});
  // Clip(x, <omitted min>, max): the empty name keeps the position.
  AddFloatInitializer(g, "max", {});
  AddNode(g, "Clip", {"a", "", "max"}, {"y"});
  AddOutput(g, "y", TensorProto::FLOAT, {-1, 4});
  auto r = ImportProto(model);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  NodeId relu = r->Node("Relu_0");
  NodeId clip = r->Node("Clip_1");
  ASSERT_TRUE(relu.valid());
  ASSERT_TRUE(clip.valid());
  auto inputs = r->model.node_inputs(clip);
  ASSERT_EQ(inputs.size(), 3u);
  EXPECT_FALSE(inputs[1].valid());
  EXPECT_TRUE(inputs[2].valid());
  // Symbolic dims keep their names.
  ValueId x = r->Value("x");
  EXPECT_EQ(r->model.value_dims(x)[0], -1);
  EXPECT_EQ(r->str(r->model.value_dim_names(x)[0]), "N");
  EXPECT_EQ(r->model.FormatValueType(r->Value("a")), "float32[N,4]");
}

TEST(OnnxImporterTest, ShapeInferenceUsesKeptSmallIntTensors) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {2, 3, 4});
  AddInt64Initializer(g, "shape", {6, 4});
  AddFloatInitializer(g, "w", {4, 512});  // 8 KiB: payload stripped
  AddNode(g, "Reshape", {"x", "shape"}, {"r"}, "reshape");
  AddNode(g, "MatMul", {"r", "w"}, {"y"}, "matmul");
  AddOutput(g, "y", TensorProto::FLOAT, {});
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto r = ImportProto(model);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_EQ(r->model.FormatValueType(r->Value("r")), "float32[6,4]");
  EXPECT_EQ(r->model.FormatValueType(r->Value("y")), "float32[6,512]");
  EXPECT_EQ(r->model.value_data_bytes(r->Value("w")), 4u * 512 * 4);
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kShapeInferenceFailed), 0u);
}

TEST(OnnxImporterTest, IfBranchesAreNestedGraphsResolvingOuterTensors) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "cond", TensorProto::BOOL, {});
  AddInput(g, "x", TensorProto::FLOAT, {4});
  auto* node = AddNode(g, "If", {"cond"}, {"y"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* attr = node->add_attribute();
    attr->set_name(branch);
    attr->set_type(::onnx::AttributeProto::GRAPH);
    auto* body = attr->mutable_g();
    body->set_name(std::string(branch) + "_body");
    AddNode(body, branch[0] == 't' ? "Relu" : "Neg", {"x"}, {"out"},
            std::string(branch) + "_op");
    AddOutput(body, "out", TensorProto::FLOAT, {4});
  }
  AddOutput(g, "y", TensorProto::FLOAT, {4});
  auto r = ImportProto(model);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  const Model& m = r->model;
  ASSERT_EQ(m.graph_count(), 3u);
  NodeId if_node = r->Node("if");
  ASSERT_TRUE(if_node.valid());
  auto attrs = m.node_attributes(if_node);
  ASSERT_EQ(attrs.size(), 2u);
  EXPECT_EQ(attrs[0].kind, AttributeKind::kGraph);
  GraphId then_graph = attrs[0].subgraph;
  ASSERT_TRUE(then_graph.valid());
  EXPECT_EQ(r->str(m.graph(then_graph).name), "then_branch_body");
  EXPECT_EQ(m.graph(then_graph).parent_graph, GraphId(0));
  EXPECT_EQ(m.graph(then_graph).parent_node, if_node);
  EXPECT_EQ(m.RootOf(then_graph), GraphId(0));
  ASSERT_EQ(m.graph_nodes(then_graph).size(), 1u);
  NodeId relu = m.graph_nodes(then_graph)[0];
  // "x" is the outer graph's value, not a new one in the branch.
  ValueId x = m.node_inputs(relu)[0];
  EXPECT_EQ(m.value_graph(x), GraphId(0));
  EXPECT_EQ(x, r->Value("x"));
  EXPECT_EQ(m.graph(then_graph).outputs.size(), 1u);
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kDanglingInput), 0u);
}

TEST(OnnxImporterTest, LoopBodyHasItsOwnInputs) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "trip", TensorProto::INT64, {});
  AddInput(g, "cond", TensorProto::BOOL, {});
  AddInput(g, "init", TensorProto::FLOAT, {2});
  AddFloatInitializer(g, "step", {2});
  auto* loop = AddNode(g, "Loop", {"trip", "cond", "init"}, {"final"});
  auto* attr = loop->add_attribute();
  attr->set_name("body");
  attr->set_type(::onnx::AttributeProto::GRAPH);
  auto* body = attr->mutable_g();
  body->set_name("loop_body");
  AddInput(body, "i", TensorProto::INT64, {});
  AddInput(body, "c_in", TensorProto::BOOL, {});
  AddInput(body, "acc", TensorProto::FLOAT, {2});
  AddNode(body, "Identity", {"c_in"}, {"c_out"});
  AddNode(body, "Add", {"acc", "step"}, {"acc_out"});  // outer "step"
  AddOutput(body, "c_out", TensorProto::BOOL, {});
  AddOutput(body, "acc_out", TensorProto::FLOAT, {2});
  AddOutput(g, "final", TensorProto::FLOAT, {2});
  auto r = ImportProto(model);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  const Model& m = r->model;
  ASSERT_EQ(m.graph_count(), 2u);
  GraphId body_id(1);
  EXPECT_EQ(m.graph(body_id).inputs.size(), 3u);
  EXPECT_EQ(m.graph(body_id).parent_node, r->Node("Loop_0"));
  NodeId add = m.FindNode(GraphId(0), "Add_1");
  ASSERT_TRUE(add.valid());
  EXPECT_EQ(m.node_graph(add), body_id);
  EXPECT_EQ(m.value_graph(m.node_inputs(add)[0]), body_id);
  EXPECT_EQ(m.value_graph(m.node_inputs(add)[1]), GraphId(0));
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kDanglingInput), 0u);
}

TEST(OnnxImporterTest, ContribDomainMeansCompiledUnlessHinted) {
  auto model = MakeConvRelu();
  auto* g = model.mutable_graph();
  g->mutable_node(0)->set_op_type("FusedConv");
  g->mutable_node(0)->set_domain("com.microsoft");
  auto* op = model.add_opset_import();
  op->set_domain("com.microsoft");
  op->set_version(1);
  auto r = ImportProto(model);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_EQ(r->model.graph(GraphId(0)).level, LayerLevel::kCompiled);
  EXPECT_EQ(r->model.graph(GraphId(0)).opset_imports.size(), 2u);
  // Inference must not fail because FusedConv has no schema here.
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kShapeInferenceFailed), 0u);

  auto hinted = ImportProto(model, LevelHint::kFramework);
  ASSERT_TRUE(hinted->status.ok());
  EXPECT_EQ(hinted->model.graph(GraphId(0)).level, LayerLevel::kFramework);
  auto plain = ImportProto(MakeConvRelu(), LevelHint::kCompiled);
  EXPECT_EQ(plain->model.graph(GraphId(0)).level, LayerLevel::kCompiled);
}

TEST(OnnxImporterTest, AttributeTextForTensorsAndLongLists) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  auto* big = AddNode(g, "Constant", {}, {"big"}, "big_const");
  auto* a = big->add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(TensorProto::FLOAT);
  for (int d : {64, 3, 7, 7}) t->add_dims(d);
  t->set_raw_data(std::string(64 * 3 * 7 * 7 * 4, '\0'));
  auto* small = AddNode(g, "Constant", {}, {"small"}, "small_const");
  a = small->add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  t = a->mutable_t();
  t->set_data_type(TensorProto::INT64);
  t->add_dims(2);
  t->add_int64_data(1);
  t->add_int64_data(-1);
  auto* list = AddNode(g, "Foo", {}, {"z"}, "list_node");
  a = list->add_attribute();
  a->set_name("many");
  a->set_type(::onnx::AttributeProto::INTS);
  for (int i = 0; i < 1000; ++i) a->add_ints(i);
  AddOutput(g, "big", TensorProto::FLOAT, {64, 3, 7, 7});
  auto r = ImportProto(model);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  const Model& m = r->model;
  EXPECT_EQ(r->str(m.node_attributes(r->Node("big_const"))[0].text),
            "tensor float32[64,3,7,7]");
  EXPECT_EQ(r->str(m.node_attributes(r->Node("small_const"))[0].text),
            "tensor int64[2] = [1,-1]");
  EXPECT_EQ(r->str(m.node_attributes(r->Node("list_node"))[0].text),
            "[0,1,2,3,4,5,6,7,...] (1000 items)");
}

TEST(OnnxImporterTest, WeightsAreLeftOutOfTheSkeleton) {
  auto model = MakeConvRelu();
  constexpr int64_t kRows = 1024;
  constexpr int64_t kCols = 2048;  // 8 MiB of float32
  AddFloatInitializer(model.mutable_graph(), "huge", {kRows, kCols});
  std::string bytes = model.SerializeAsString();
  ASSERT_GT(bytes.size(), 8u << 20);
  auto skeleton = onnx_import::BuildOnnxSkeleton(bytes, "m.onnx");
  ASSERT_TRUE(skeleton.ok()) << skeleton.status().ToString();
  EXPECT_LT(skeleton->bytes.size(), 4096u);
  EXPECT_EQ(skeleton->omitted_tensor_count, 2u);  // bias: 32 bytes, kept
  EXPECT_GE(skeleton->omitted_payload_bytes, uint64_t{kRows * kCols * 4});
  auto r = ImportBytes(bytes);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_EQ(r->model.value_data_bytes(r->Value("huge")),
            uint64_t{kRows * kCols * 4});
}

// Proves the weight pages of a real file are never read: the file is
// dropped from the page cache, imported through mmap, and mincore() then
// shows (almost) none of its pages came back.
TEST(OnnxImporterTest, ImportDoesNotPageInWeights) {
  auto model = MakeConvRelu();
  AddFloatInitializer(model.mutable_graph(), "huge", {4096, 4096});  // 64 MiB
  std::string dir = TempDir("pages");
  std::string path = dir + "/big.onnx";
  WriteFile(path, model.SerializeAsString());
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  size_t size = std::filesystem::file_size(path);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t pages = (size + page - 1) / page;
  std::vector<unsigned char> resident(pages);
  auto count_resident = [&] {
    ::mincore(map, size, resident.data());
    size_t n = 0;
    for (unsigned char c : resident) n += c & 1;
    return n;
  };
  if (count_resident() > pages / 10) {
    ::munmap(map, size);
    ::close(fd);
    GTEST_SKIP() << "page cache cannot be dropped here (tmpfs?)";
  }
  auto r = ImportFile(path);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  size_t after = count_resident();
  EXPECT_LT(after, pages / 20) << after << " of " << pages << " pages read";
  ::munmap(map, size);
  ::close(fd);
  std::filesystem::remove_all(dir);
}

TEST(OnnxImporterTest, ExternalDataIsRecordedAndOnlyStatted) {
  auto model = MakeConvRelu();
  auto* t = model.mutable_graph()->add_initializer();
  t->set_name("ext");
  t->set_data_type(TensorProto::FLOAT);
  t->add_dims(1024);
  t->set_data_location(TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("weights.bin");
  e = t->add_external_data();
  e->set_key("offset");
  e->set_value("0");
  auto* no_length = model.mutable_graph()->add_initializer();
  no_length->CopyFrom(*t);
  no_length->set_name("ext2");
  no_length->mutable_external_data()->RemoveLast();
  e = t->add_external_data();
  e->set_key("length");
  e->set_value("4000");

  std::string dir = TempDir("external");
  std::string path = dir + "/model.onnx";
  WriteFile(path, model.SerializeAsString());
  auto missing = ImportFile(path);
  ASSERT_TRUE(missing->status.ok()) << missing->status.ToString();
  ValueId ext = missing->Value("ext");
  EXPECT_EQ(missing->model.value_flags(ext),
            kValueInitializer | kValueExternalData);
  EXPECT_EQ(missing->model.value_data_bytes(ext), 4000u);
  EXPECT_EQ(missing->str(missing->model.value_external_location(ext)),
            "weights.bin");
  // No length entry: element count x element size.
  EXPECT_EQ(missing->model.value_data_bytes(missing->Value("ext2")), 4096u);
  EXPECT_EQ(missing->diagnostics.count(DiagnosticCode::kExternalDataMissing),
            2u);
  const Diagnostic* d = missing->Find(DiagnosticCode::kExternalDataMissing);
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->message.find("weights.bin"), std::string::npos);

  WriteFile(dir + "/weights.bin", "");  // present (its bytes are not read)
  auto present = ImportFile(path);
  ASSERT_TRUE(present->status.ok());
  EXPECT_EQ(present->diagnostics.count(DiagnosticCode::kExternalDataMissing),
            0u);
  std::filesystem::remove_all(dir);
}

TEST(OnnxImporterTest, DanglingInputIsReportedWithNodeAndByteOffset) {
  auto model = MakeConvRelu();
  AddNode(model.mutable_graph(), "Add", {"output", "ghost"}, {"sum"},
          "reads_ghost");
  auto r = ImportProto(model);
  ASSERT_TRUE(r->status.ok());
  const Diagnostic* d = r->Find(DiagnosticCode::kDanglingInput);
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->message.find("'reads_ghost' (Add)"), std::string::npos);
  EXPECT_NE(d->message.find("'ghost'"), std::string::npos);
  EXPECT_TRUE(d->location.has_byte);
  EXPECT_GT(d->location.byte, 0u);
  EXPECT_EQ(d->location.file, "test.onnx");
  // The edge still exists for display.
  EXPECT_TRUE(r->Value("ghost").valid());
}

TEST(OnnxImporterTest, CycleIsReportedNamingItsNodes) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {4});
  AddNode(g, "Relu", {"x"}, {"pre"}, "before");
  AddNode(g, "Add", {"pre", "b_out"}, {"a_out"}, "cycle_a");
  AddNode(g, "Relu", {"a_out"}, {"b_out"}, "cycle_b");
  AddNode(g, "Relu", {"b_out"}, {"y"}, "after");
  AddOutput(g, "y", TensorProto::FLOAT, {4});
  auto r = ImportProto(model);
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->diagnostics.count(DiagnosticCode::kGraphCycle), 1u);
  const Diagnostic* d = r->Find(DiagnosticCode::kGraphCycle);
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->message.find("'cycle_a' (Add) -> 'cycle_b' (Relu) -> "
                            "'cycle_a'"),
            std::string::npos)
      << d->message;
  EXPECT_EQ(d->message.find("before"), std::string::npos);
  EXPECT_EQ(r->model.node_count(), 4u);
}

TEST(OnnxImporterTest, DeepSubgraphNestingIsRejected) {
  auto model = MakeModel();
  ::onnx::GraphProto* g = model.mutable_graph();
  for (int i = 0; i < onnx_import::kMaxSubgraphDepth + 5; ++i) {
    auto* node = AddNode(g, "If", {"c"}, {"o"});
    auto* attr = node->add_attribute();
    attr->set_name("then_branch");
    attr->set_type(::onnx::AttributeProto::GRAPH);
    g = attr->mutable_g();
  }
  auto r = ImportProto(model);
  EXPECT_EQ(r->status.code(), StatusCode::kMalformedInput);
  EXPECT_NE(r->status.message().find("nested too deeply"), std::string::npos)
      << r->status.message();
}

TEST(OnnxImporterTest, SniffAcceptsModelsAndRejectsText) {
  std::string bytes = MakeConvRelu().SerializeAsString();
  EXPECT_GE(SniffOnnxBinary(bytes, "m.onnx"), 90);
  EXPECT_GE(SniffOnnxBinary(bytes, "m.bin"), 60);
  EXPECT_GE(SniffOnnxBinary(bytes.substr(0, 10), "m.onnx"), 60);
  EXPECT_EQ(SniffOnnxBinary(R"({"traceEvents": []})", "m.json"), 0);
  EXPECT_EQ(SniffOnnxBinary("[{\"ph\":\"X\"}]", "m.onnx"), 0);
  EXPECT_EQ(SniffOnnxBinary("<ir_version: 8>", "m.onnx"), 0);
  EXPECT_EQ(SniffOnnxBinary("name,dur\n", "m.csv"), 0);
  EXPECT_EQ(SniffOnnxBinary("", "m.onnx"), 0);
  EXPECT_EQ(SniffOnnxBinary(std::string("\x08\x63", 2), "m.onnx"), 0);

  EXPECT_EQ(SniffOnnxText(bytes, "m.onnx"), 0);
  EXPECT_EQ(SniffOnnxText(R"({"a": 1})", "m.json"), 0);
  EXPECT_GE(SniffOnnxText("# c\n<ir_version: 8, opset_import: [\"\": 13]>\n"
                          "g (float[N] x) => (float[N] y) { y = Relu(x) }",
                          "m.txt"),
            80);
  EXPECT_GE(SniffOnnxText("agraph (float[N] x) => (float[N] y) {}", "a.txt"),
            60);
  EXPECT_EQ(SniffOnnxText("hello (world)", "a.txt"), 0);
}

constexpr std::string_view kTextModel = R"(
<ir_version: 8, opset_import: ["" : 13], producer_name: "hand">
agraph (float[N, 4] x, float[4, 2] w) => (float[N, 2] y) {
  # comments are allowed
  h = MatMul(x, w)
  y = Relu(h)
}
)";

TEST(OnnxTextImporterTest, ParsesModelSyntaxAndInfersShapes) {
  auto r = ImportText(kTextModel);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_EQ(r->model.node_count(), 2u);
  EXPECT_EQ(r->str(r->model.graph(GraphId(0)).producer), "hand");
  EXPECT_TRUE(r->Node("MatMul_0").valid());
  EXPECT_EQ(r->model.FormatValueType(r->Value("h")), "float32[N,2]");
}

TEST(OnnxTextImporterTest, ParsesBareGraph) {
  auto r = ImportText("g (float[3] x) => (float[3] y) { y = Neg(x) }");
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_EQ(r->model.node_count(), 1u);
  EXPECT_GT(r->model.graph(GraphId(0)).opset, 0);
}

TEST(OnnxTextImporterTest, ParseErrorsHaveLineAndColumn) {
  auto r = ImportText(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[3] x) => (float[3] y) {\n"
      "  y = Neg(x\n"
      "}\n",
      "bad.onnxtxt");
  EXPECT_EQ(r->status.code(), StatusCode::kMalformedInput);
  EXPECT_EQ(r->status.message().rfind("bad.onnxtxt:4:", 0), 0u)
      << r->status.message();
  auto empty = ImportText("  # nothing\n", "e.onnxtxt");
  EXPECT_EQ(empty->status.code(), StatusCode::kMalformedInput);
  std::string deep(10000, '(');
  auto nested = ImportText("g " + deep, "d.onnxtxt");
  EXPECT_NE(nested->status.message().find("nested too deeply"),
            std::string::npos);
}

}  // namespace
}  // namespace mi::importers
