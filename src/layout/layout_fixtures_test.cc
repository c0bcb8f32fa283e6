// Lays out the real fixtures (test/fixtures) and writes their SVGs to
// $MI_LAYOUT_OUT (default /tmp/layout_out) for a person to look at.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/common/importer.h"
#include "importers/onnx/onnx_importer.h"
#include "layout/layered_layout.h"
#include "layout/model_layout.h"
#include "model/model.h"

namespace mi::layout {
namespace {

struct Loaded {
  StringPool strings;
  Model model{&strings};
  DiagnosticSink diagnostics;
  Status status;
};

std::unique_ptr<Loaded> Load(const std::string& relative) {
  std::string path = std::string(MI_SOURCE_DIR) + "/test/fixtures/" + relative;
  if (!std::filesystem::exists(path)) return nullptr;
  auto loaded = std::make_unique<Loaded>();
  importers::ImportContext ctx;
  ctx.path = path;
  ctx.model = &loaded->model;
  ctx.diagnostics = &loaded->diagnostics;
  loaded->status = importers::CreateOnnxImporter()->Import(ctx);
  return loaded;
}

void WriteSvg(const std::string& name, const std::string& svg) {
  const char* env = std::getenv("MI_LAYOUT_OUT");
  std::filesystem::path dir = env ? env : "/tmp/layout_out";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream(dir / name, std::ios::binary) << svg;
}

TEST(LayoutFixturesTest, ResNet18) {
  auto r = Load("resnet18/model.onnx");
  ASSERT_TRUE(r) << "committed fixture missing";
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  LayoutInput in = BuildLayoutInput(r->model, GraphId(0));
  // 49 ops + input + output; 8 residual blocks = 8 skip edges.
  EXPECT_EQ(in.nodes.size(), r->model.graph_nodes(GraphId(0)).size() + 2);
  LayoutResult result = LayeredLayout(in.nodes, in.edges, {});
  EXPECT_EQ(result.crossings, 0u);
  for (uint8_t reversed : result.edge_reversed) EXPECT_EQ(reversed, 0);
  std::string svg = RenderSvg(r->model, GraphId(0), in, result);
  EXPECT_NE(svg.find(">conv1/Conv<"), std::string::npos);
  WriteSvg("resnet18_framework.svg", svg);
  LayoutOptions lr;
  lr.direction = Direction::kLeftToRight;
  WriteSvg("resnet18_framework_lr.svg",
           RenderSvg(r->model, GraphId(0), in,
                     LayeredLayout(in.nodes, in.edges, lr)));
}

TEST(LayoutFixturesTest, Transformer) {
  auto r = Load("transformer/model.onnx");
  ASSERT_TRUE(r) << "committed fixture missing";
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  LayoutInput in = BuildLayoutInput(r->model, GraphId(0));
  LayoutResult result = LayeredLayout(in.nodes, in.edges, {});
  EXPECT_LE(result.crossings, in.nodes.size() / 20);
  WriteSvg("transformer_framework.svg",
           RenderSvg(r->model, GraphId(0), in, result));
}

}  // namespace
}  // namespace mi::layout
