// Imports the real fixtures (torch.onnx.export + ONNX Runtime, see
// test/fixtures/README.md).

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "importers/onnx/onnx_test_util.h"

namespace mi::importers {
namespace {

using namespace onnx_test;  // NOLINT: test helpers

const std::string kFixtures = std::string(MI_SOURCE_DIR) + "/test/fixtures";

std::unique_ptr<Imported> ImportFixture(const std::string& relative) {
  std::string path = kFixtures + "/" + relative;
  if (!std::filesystem::exists(path)) return nullptr;
  return ImportFile(path);
}

TEST(OnnxFixturesTest, ResNet18FrameworkGraph) {
  auto r = ImportFixture("resnet18/model.onnx");
  ASSERT_TRUE(r) << "committed fixture missing";
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  const Model& m = r->model;
  const GraphInfo& info = m.graph(GraphId(0));
  EXPECT_EQ(info.level, LayerLevel::kFramework);
  EXPECT_EQ(r->str(info.producer).rfind("pytorch ", 0), 0u);
  EXPECT_EQ(info.opset, 13);
  std::set<std::string> ops;
  for (NodeId n : m.graph_nodes(GraphId(0))) {
    ops.insert(std::string(r->str(m.node_op_type(n))));
  }
  EXPECT_EQ(ops,
            (std::set<std::string>{"Add", "Conv", "Flatten", "Gemm",
                                   "GlobalAveragePool", "MaxPool", "Relu"}));
  NodeId conv = r->Node("/layer1/layer1.0/conv1/Conv");
  ASSERT_TRUE(conv.valid());
  EXPECT_EQ(r->str(m.scope_path(m.node_scope(conv))), "/layer1/layer1.0/conv1");
  // Every edge has a dtype and a full shape.
  for (NodeId n : m.graph_nodes(GraphId(0))) {
    for (auto list : {m.node_inputs(n), m.node_outputs(n)}) {
      for (ValueId v : list) {
        ASSERT_TRUE(v.valid());
        EXPECT_EQ(m.value_dtype(v), 1) << m.str(m.value_name(v));
        EXPECT_TRUE(m.value_has_shape(v)) << m.str(m.value_name(v));
      }
    }
  }
  EXPECT_EQ(m.FormatValueType(r->Value("input")), "float32[1,3,224,224]");
  EXPECT_EQ(m.FormatValueType(r->Value("logits")), "float32[1,1000]");
  uint64_t weight_bytes = 0;
  for (uint32_t v = 0; v < m.value_count(); ++v) {
    if (m.value_flags(ValueId(v)) & kValueInitializer) {
      weight_bytes += m.value_data_bytes(ValueId(v));
    }
  }
  // The weights are nearly the whole file.
  uint64_t file_size =
      std::filesystem::file_size(kFixtures + "/resnet18/model.onnx");
  EXPECT_GT(weight_bytes, file_size * 9 / 10);
  EXPECT_LT(weight_bytes, file_size);
  EXPECT_EQ(r->diagnostics.CountWithSeverity(Severity::kError), 0u);
}

TEST(OnnxFixturesTest, OrtOptimisedGraphsAreCompiled) {
  for (const char* path : {"resnet18/ort_all/model.optimized.onnx",
                           "resnet18/ort_extended/model.optimized.onnx"}) {
    SCOPED_TRACE(path);
    auto r = ImportFixture(path);
    ASSERT_TRUE(r) << "committed fixture missing";
    ASSERT_TRUE(r->status.ok()) << r->status.ToString();
    EXPECT_EQ(r->model.graph(GraphId(0)).level, LayerLevel::kCompiled);
    EXPECT_EQ(r->diagnostics.CountWithSeverity(Severity::kError), 0u);
    EXPECT_GT(r->model.node_count(), 20u);
  }
  auto all = ImportFixture("resnet18/ort_all/model.optimized.onnx");
  bool has_nchwc = false;
  for (uint32_t n = 0; n < all->model.node_count(); ++n) {
    has_nchwc |=
        all->str(all->model.node_domain(NodeId(n))) == "com.microsoft.nchwc";
  }
  EXPECT_TRUE(has_nchwc);
}

// Compiled graphs are not checked: outputs of ORT contrib ops (no schema in
// libonnx) and everything downstream stay without shapes (README, gaps).
TEST(OnnxFixturesTest, TransformerHasShapesOnEveryEdge) {
  for (const char* path : {"transformer/model.onnx"}) {
    SCOPED_TRACE(path);
    auto r = ImportFixture(path);
    ASSERT_TRUE(r) << "committed fixture missing";
    ASSERT_TRUE(r->status.ok()) << r->status.ToString();
    const Model& m = r->model;
    for (uint32_t n = 0; n < m.node_count(); ++n) {
      for (ValueId v : m.node_outputs(NodeId(n))) {
        EXPECT_TRUE(m.value_has_shape(v)) << m.str(m.value_name(v));
        EXPECT_NE(m.value_dtype(v), 0) << m.str(m.value_name(v));
      }
    }
  }
}

}  // namespace
}  // namespace mi::importers
