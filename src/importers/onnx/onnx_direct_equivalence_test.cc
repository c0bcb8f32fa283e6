// The direct (wire-format) path and the skeleton + libonnx path must build
// identical Models: every fixture and generated model is imported both
// ways and compared field by field (graphs, nodes, values, attributes incl.
// their text, shapes, flags, scopes, diagnostics). Models the direct path
// does not cover must be declined, never imported differently.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "importers/onnx/onnx_model_compare.h"
#include "importers/onnx/onnx_test_util.h"
#include "onnx/shape_inference/implementation.h"

namespace mi::importers {
namespace {

using namespace onnx_test;  // NOLINT: test helpers
using ::onnx::AttributeProto;
using ::onnx::TensorProto;

std::unique_ptr<Imported> ImportWith(std::string_view bytes,
                                     const std::string& path,
                                     OnnxImportPath force,
                                     LevelHint hint = LevelHint::kAuto) {
  auto result = std::make_unique<Imported>();
  result->ctx.path = path;
  result->ctx.model = &result->model;
  result->ctx.diagnostics = &result->diagnostics;
  result->ctx.level_hint = hint;
  OnnxImportOptions options;
  options.force_path = force;
  result->status = ImportOnnxFromBuffer(bytes, result->ctx, options);
  return result;
}

// Imports `bytes` both ways; the direct path must accept and match.
void ExpectSame(std::string_view bytes, const std::string& path = "test.onnx",
                LevelHint hint = LevelHint::kAuto) {
  auto direct = ImportWith(bytes, path, OnnxImportPath::kDirect, hint);
  auto reference = ImportWith(bytes, path, OnnxImportPath::kProtobuf, hint);
  ASSERT_TRUE(reference->status.ok()) << reference->status.ToString();
  ASSERT_TRUE(direct->status.ok()) << direct->status.ToString();
  EXPECT_EQ(DiffModels(direct->model, reference->model), "");
  EXPECT_EQ(DiffDiagnostics(direct->diagnostics, reference->diagnostics), "");
  EXPECT_EQ(direct->ctx.graphs_added, reference->ctx.graphs_added);
}

// The direct path must decline (import nothing); kAuto must then give the
// reference result.
void ExpectDeclined(std::string_view bytes,
                    const std::string& path = "test.onnx") {
  auto direct = ImportWith(bytes, path, OnnxImportPath::kDirect);
  EXPECT_EQ(direct->status.code(), StatusCode::kUnsupported)
      << direct->status.ToString();
  EXPECT_EQ(direct->model.graph_count(), 0u);
  EXPECT_TRUE(direct->diagnostics.log().empty());
  auto automatic = ImportWith(bytes, path, OnnxImportPath::kAuto);
  auto reference = ImportWith(bytes, path, OnnxImportPath::kProtobuf);
  EXPECT_EQ(automatic->status.ToString(), reference->status.ToString());
  EXPECT_EQ(DiffModels(automatic->model, reference->model), "");
  EXPECT_EQ(DiffDiagnostics(automatic->diagnostics, reference->diagnostics),
            "");
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(OnnxDirectPathTest, FixturesMatchOrAreDeclined) {
  const std::string fixtures = std::string(MI_SOURCE_DIR) + "/test/fixtures";
  int compared = 0;
  int declined = 0;
  for (const char* rel :
       {"resnet18/model.onnx", "resnet18/ort_all/model.optimized.onnx",
        "resnet18/ort_extended/model.optimized.onnx", "transformer/model.onnx",
        "transformer/ort_all/model.optimized.onnx",
        "transformer/ort_extended/model.optimized.onnx"}) {
    std::string path = fixtures + "/" + rel;
    SCOPED_TRACE(rel);
    ASSERT_TRUE(std::filesystem::exists(path)) << "committed fixture missing";
    std::string bytes = ReadFile(path);
    ::onnx::ModelProto proto;
    ASSERT_TRUE(proto.ParseFromString(bytes));
    bool needs = false;
    // Same rule as the converter: some node output lacks type+shape.
    {
      std::set<std::string> known;
      const auto& g = proto.graph();
      for (const auto* list : {&g.input(), &g.output(), &g.value_info()}) {
        for (const auto& info : *list) {
          const auto& t = info.type();
          if (t.has_tensor_type() && t.tensor_type().elem_type() != 0 &&
              t.tensor_type().has_shape()) {
            known.insert(info.name());
          }
        }
      }
      for (const auto& node : g.node()) {
        for (const auto& o : node.output()) {
          if (!o.empty() && !known.count(o)) needs = true;
        }
      }
    }
    if (needs) {
      ExpectDeclined(bytes, path);
      ++declined;
      // The same model with the value_info ONNX shape inference adds (as
      // shape-inferred files carry) is covered where every output got one.
      ::onnx::shape_inference::InferShapes(proto);
      std::string inferred = proto.SerializeAsString();
      auto direct = ImportWith(inferred, path, OnnxImportPath::kDirect);
      if (direct->status.ok()) {
        ExpectSame(inferred, path);
        ++compared;
      }
    } else {
      ExpectSame(bytes, path);
      ++compared;
    }
  }
  EXPECT_GE(compared, 2);
  RecordProperty("compared", compared);
  RecordProperty("declined", declined);
}

// Every node output typed: the direct path applies.
void Type(::onnx::GraphProto* g, std::string_view name, int32_t dtype,
          std::initializer_list<int64_t> dims) {
  SetType(g->add_value_info(), name, dtype, dims);
}

::onnx::ModelProto MakeEverything() {
  auto model = MakeModel();
  model.add_opset_import()->set_domain("com.example");
  model.mutable_opset_import(1)->set_version(2);
  auto* meta = model.add_metadata_props();
  meta->set_key("k");
  meta->set_value("v");
  auto* g = model.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {-1, 4});
  AddInput(g, "cond", TensorProto::BOOL, {});
  AddInput(g, "w", TensorProto::FLOAT, {4, 4});  // IR < 4 style
  AddFloatInitializer(g, "w", {4, 4});
  AddInt64Initializer(g, "shape", {1, -1});
  auto* typed = g->add_initializer();
  typed->set_name("typed");
  typed->set_data_type(TensorProto::FLOAT);
  typed->add_dims(100);
  for (int i = 0; i < 100; ++i) typed->add_float_data(0.5f * i);
  auto* strs = g->add_initializer();
  strs->set_name("strs");
  strs->set_data_type(TensorProto::STRING);
  strs->add_dims(2);
  strs->add_string_data("hello");
  strs->add_string_data("world!");
  auto* big_int = g->add_initializer();
  big_int->set_name("big_int");
  big_int->set_data_type(TensorProto::INT64);
  big_int->add_dims(300);
  for (int i = 0; i < 300; ++i) big_int->add_int64_data(i * 1000003);
  // External data: with length, without, no location, outside the dir.
  for (int k = 0; k < 4; ++k) {
    auto* t = g->add_initializer();
    t->set_name("ext" + std::to_string(k));
    t->set_data_type(TensorProto::FLOAT);
    t->add_dims(256);
    t->set_data_location(TensorProto::EXTERNAL);
    if (k != 2) {
      auto* e = t->add_external_data();
      e->set_key("location");
      e->set_value(k == 3 ? "../outside.bin" : "weights.bin");
    }
    if (k == 0) {
      auto* e = t->add_external_data();
      e->set_key("length");
      e->set_value("4000");
    }
  }
  auto* mm = AddNode(g, "MatMul", {"x", "w"}, {"mm"}, "/block/mm/MatMul");
  (void)mm;
  Type(g, "mm", TensorProto::FLOAT, {-1, 4});
  auto* attrs = AddNode(g, "Custom", {"mm", "", "shape"}, {"c", ""});
  attrs->set_domain("com.example");
  Type(g, "c", TensorProto::FLOAT, {-1, 4});
  auto add = [&](std::string_view name, AttributeProto::AttributeType type) {
    auto* a = attrs->add_attribute();
    a->set_name(std::string(name));
    if (type != AttributeProto::UNDEFINED) a->set_type(type);
    return a;
  };
  add("f", AttributeProto::FLOAT)->set_f(0.25f);
  add("i", AttributeProto::INT)->set_i(-7);
  add("s", AttributeProto::STRING)->set_s(std::string(100, 'z'));
  auto* ft = add("t_float", AttributeProto::TENSOR)->mutable_t();
  ft->set_data_type(TensorProto::FLOAT);
  ft->add_dims(2);
  ft->add_float_data(1.5f);
  ft->add_float_data(-2.f);
  auto* rt = add("t_raw", AttributeProto::TENSOR)->mutable_t();
  rt->set_data_type(TensorProto::INT64);
  rt->add_dims(2);
  int64_t raw[2] = {3, -4};
  rt->set_raw_data(std::string(reinterpret_cast<const char*>(raw), 16));
  auto* it = add("t_int32", AttributeProto::TENSOR)->mutable_t();
  it->set_data_type(TensorProto::INT32);
  it->add_dims(3);
  for (int v : {1, 2, 3}) it->add_int32_data(v);
  auto* bt = add("t_big", AttributeProto::TENSOR)->mutable_t();
  bt->set_data_type(TensorProto::FLOAT);
  bt->add_dims(2);
  bt->set_raw_data(std::string(400, '\x02'));  // mismatched, left out
  add("t_absent", AttributeProto::TENSOR);
  auto* fl = add("floats", AttributeProto::FLOATS);
  for (int k = 0; k < 12; ++k) fl->add_floats(0.1f * k);
  auto* il = add("ints", AttributeProto::INTS);
  for (int k = 0; k < 3; ++k) il->add_ints(k - 1);
  auto* sl = add("strings", AttributeProto::STRINGS);
  sl->add_strings("a");
  sl->add_strings(std::string(80, 'q'));
  auto* tl = add("tensors", AttributeProto::TENSORS);
  tl->add_tensors()->CopyFrom(*ft);
  tl->add_tensors()->CopyFrom(*rt);
  add("tp", AttributeProto::TYPE_PROTO);
  add("sparse", AttributeProto::SPARSE_TENSOR);
  add("ref", AttributeProto::FLOAT)->set_ref_attr_name("outer_ref");
  add("other", AttributeProto::SPARSE_TENSORS)->set_ref_attr_name("r");
  add("undef_i", AttributeProto::UNDEFINED)->set_i(5);
  add("undef_f", AttributeProto::UNDEFINED)->set_f(5.5f);
  add("undef_ints", AttributeProto::UNDEFINED)->add_ints(9);
  add("undef", AttributeProto::UNDEFINED);
  add("g_absent", AttributeProto::GRAPH);
  // If with bodies reading outer tensors, one unnamed.
  auto* if_node = AddNode(g, "If", {"cond"}, {"y"}, "/block/if");
  Type(g, "y", TensorProto::FLOAT, {-1, 4});
  for (int b = 0; b < 2; ++b) {
    auto* a = if_node->add_attribute();
    a->set_name(b == 0 ? "then_branch" : "else_branch");
    a->set_type(AttributeProto::GRAPH);
    auto* body = a->mutable_g();
    if (b == 0) body->set_name("then_body");
    AddNode(body, b == 0 ? "Relu" : "Neg", {"c"}, {"out"});
    AddNode(body, "Identity", {"missing_in_body"}, {"out2"}, "/inner/id");
    SetType(body->add_value_info(), "out2", TensorProto::FLOAT, {});
    AddOutput(body, "out", TensorProto::FLOAT, {-1, 4});
  }
  // Loop with GRAPHS-style attribute (Scan-like) and nested If.
  auto* loop = AddNode(g, "Loop", {"", "cond"}, {"z"}, "loop");
  Type(g, "z", TensorProto::FLOAT, {});
  auto* body_attr = loop->add_attribute();
  body_attr->set_name("body");
  body_attr->set_type(AttributeProto::GRAPH);
  auto* body = body_attr->mutable_g();
  body->set_name("loop_body");
  AddInput(body, "iter", TensorProto::INT64, {});
  AddInput(body, "cond_in", TensorProto::BOOL, {});
  auto* inner_if = AddNode(body, "If", {"cond_in"}, {"r"}, "inner_if");
  SetType(body->add_value_info(), "r", TensorProto::FLOAT, {});
  auto* branches = inner_if->add_attribute();
  branches->set_name("branches");
  branches->set_type(AttributeProto::GRAPHS);
  for (int b = 0; b < 2; ++b) {
    auto* inner = branches->add_graphs();
    if (b == 1) inner->set_name("second");
    AddNode(inner, "Abs", {"x"}, {"q"}, "abs");
    AddOutput(inner, "q", TensorProto::FLOAT, {});
  }
  AddOutput(body, "cond_in", TensorProto::BOOL, {});
  AddOutput(body, "r", TensorProto::FLOAT, {});
  // A dangling input and a cycle.
  AddNode(g, "Add", {"c", "nowhere"}, {"d"}, "/block/add");
  Type(g, "d", TensorProto::FLOAT, {});
  AddNode(g, "Relu", {"e2"}, {"e1"}, "cyc1");
  AddNode(g, "Relu", {"e1"}, {"e2"}, "cyc2");
  Type(g, "e1", TensorProto::FLOAT, {2});
  Type(g, "e2", TensorProto::FLOAT, {2});
  AddOutput(g, "y", TensorProto::FLOAT, {-1, 4});
  AddOutput(g, "z", TensorProto::FLOAT, {});
  AddOutput(g, "not_produced", TensorProto::INT8, {3});
  return model;
}

TEST(OnnxDirectPathTest, EveryAttributeKindSubgraphsAndDiagnostics) {
  ExpectSame(MakeEverything().SerializeAsString());
  ExpectSame(MakeEverything().SerializeAsString(), "test.onnx",
             LevelHint::kCompiled);
}

TEST(OnnxDirectPathTest, ExternalDataLookupsMatch) {
  std::string dir = ::testing::TempDir() + "/mi_direct_external";
  std::filesystem::create_directories(dir);
  std::string path = dir + "/model.onnx";
  std::string bytes = MakeEverything().SerializeAsString();
  ExpectSame(bytes, path);
  { std::ofstream(dir + "/weights.bin") << ""; }
  ExpectSame(bytes, path);
  std::filesystem::remove_all(dir);
}

TEST(OnnxDirectPathTest, ContribDomainAndSymbolicDims) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {-1, 3});
  AddNode(g, "FusedConv", {"x"}, {"y"}, "fc")->set_domain("com.microsoft");
  AddOutput(g, "y", TensorProto::FLOAT, {-1, 3});
  ExpectSame(model.SerializeAsString());
  ExpectSame(model.SerializeAsString(), "t.onnx", LevelHint::kFramework);
}

TEST(OnnxDirectPathTest, ManyScopedNodes) {
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "t0", TensorProto::FLOAT, {1, 64});
  for (int i = 0; i < 2000; ++i) {
    std::string op = i % 2 == 0 ? "Relu" : "Neg";
    std::string name = "/block" + std::to_string(i / 100) + "/layer" +
                       std::to_string(i % 7) + "/" + op;
    if (i % 13 == 0) name = i % 2 ? "noslash" : "";
    if (i % 17 == 0) name = "a//b/" + op;
    AddNode(g, op, {"t" + std::to_string(i)}, {"t" + std::to_string(i + 1)},
            name);
    Type(g, "t" + std::to_string(i + 1), TensorProto::FLOAT, {1, 64});
  }
  AddOutput(g, "t2000", TensorProto::FLOAT, {1, 64});
  ExpectSame(model.SerializeAsString());
}

TEST(OnnxDirectPathTest, DeclinesWhatItDoesNotCover) {
  // Needs shape inference (an untyped intermediate edge).
  auto model = MakeModel();
  auto* g = model.mutable_graph();
  AddInput(g, "x", TensorProto::FLOAT, {2});
  AddNode(g, "Relu", {"x"}, {"mid"});
  AddNode(g, "Neg", {"mid"}, {"y"});
  AddOutput(g, "y", TensorProto::FLOAT, {2});
  ExpectDeclined(model.SerializeAsString());
  // Sparse initializer.
  auto sparse = MakeEverything();
  sparse.mutable_graph()->add_sparse_initializer()->mutable_values()->set_name(
      "sp");
  ExpectDeclined(sparse.SerializeAsString());
  // Sequence types.
  auto seq = MakeEverything();
  seq.mutable_graph()
      ->add_value_info()
      ->mutable_type()
      ->mutable_sequence_type();
  ExpectDeclined(seq.SerializeAsString());
  // Functions.
  auto fn = MakeEverything();
  fn.add_functions()->set_name("f");
  ExpectDeclined(fn.SerializeAsString());
  // Malformed: every truncation of a valid model, and garbage.
  std::string bytes = MakeEverything().SerializeAsString();
  for (size_t cut : {size_t{0}, size_t{1}, size_t{7}, bytes.size() / 3,
                     bytes.size() / 2, bytes.size() - 1}) {
    SCOPED_TRACE(cut);
    ExpectDeclined(std::string_view(bytes).substr(0, cut));
  }
  ExpectDeclined("\x3a\x02\x0a\xff");
  // A graph field given twice (protobuf merges them).
  std::string twice = bytes + std::string("\x3a\x00", 2);
  ExpectDeclined(twice);
}

TEST(OnnxDirectPathTest, DeepNestingIsDeclined) {
  auto model = MakeModel();
  ::onnx::GraphProto* g = model.mutable_graph();
  for (int depth = 0; depth < 70; ++depth) {
    auto* node = AddNode(g, "If", {}, {}, "n");
    auto* a = node->add_attribute();
    a->set_name("then_branch");
    a->set_type(AttributeProto::GRAPH);
    g = a->mutable_g();
  }
  ExpectDeclined(model.SerializeAsString());
}

}  // namespace
}  // namespace mi::importers
