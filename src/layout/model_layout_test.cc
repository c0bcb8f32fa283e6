#include "layout/model_layout.h"

#include <gtest/gtest.h>

#include <string>

#include "base/string_pool.h"
#include "model/model.h"

namespace mi::layout {
namespace {

// x -> Relu -> a -> Add(a, a, w) -> y, with w an initializer.
struct SmallModel {
  StringPool strings;
  Model m{&strings};
  GraphId g;
  SmallModel() {
    g = m.AddGraph(LayerLevel::kFramework, "main<&>", "m.onnx");
    ValueId x = m.GetOrAddValue(g, "x");
    ValueId a = m.GetOrAddValue(g, "a");
    ValueId w = m.GetOrAddValue(g, "w");
    ValueId y = m.GetOrAddValue(g, "y");
    int64_t dims[] = {1, -1};
    StringId names[] = {StringPool::kEmpty, strings.Intern("N")};
    m.SetValueShape(a, dims, names);
    m.AddValueFlags(w, kValueInitializer);
    m.mutable_graph(g).inputs = {x, w};
    m.mutable_graph(g).outputs = {y};
    NodeId relu = m.AddNode(g, "Relu", "", "/block/relu/Relu");
    m.AddNodeInput(relu, x);
    m.AddNodeOutput(relu, a);
    NodeId add = m.AddNode(g, "Add<T>", "", "/block/add\"&'/Add");
    m.AddNodeInput(add, a);
    m.AddNodeInput(add, a);
    m.AddNodeInput(add, w);
    m.AddNodeInput(add, ValueId::Invalid());
    m.AddNodeOutput(add, y);
  }
};

TEST(ModelLayoutTest, BuildsNodesAndEdges) {
  SmallModel s;
  LayoutInput in = BuildLayoutInput(s.m, s.g);
  // 2 nodes + input x (w is a weight) + output y.
  ASSERT_EQ(in.nodes.size(), 4u);
  EXPECT_EQ(in.kinds[2], LayoutItemKind::kGraphInput);
  EXPECT_EQ(in.kinds[3], LayoutItemKind::kGraphOutput);
  EXPECT_EQ(in.nodes[0].height, 36);
  EXPECT_EQ(in.nodes[0].width, 7 * 9 + 16);   // "relu/Relu", 7 px a char
  EXPECT_EQ(in.nodes[1].width, 7 * 10 + 16);  // "add\"&'/Add"
  EXPECT_EQ(in.nodes[2].width, 60);           // "x": the minimum width
  ASSERT_EQ(in.edges.size(), 4u);
  EXPECT_EQ(in.edges[0].from, 2u);  // x -> Relu
  EXPECT_EQ(in.edges[0].to, 0u);
  EXPECT_EQ(in.edges[1].from, 0u);  // a -> Add, twice
  EXPECT_EQ(in.edges[2].from, 0u);
  EXPECT_EQ(in.edges[3].from, 1u);  // Add -> y
  EXPECT_EQ(in.edges[3].to, 3u);
}

TEST(ModelLayoutTest, ShortNames) {
  EXPECT_EQ(NodeShortName("/layer1/layer1.0/conv1/Conv"), "conv1/Conv");
  EXPECT_EQ(NodeShortName("Conv_0"), "Conv_0");
  EXPECT_EQ(NodeShortName("/Add"), "Add");
  EXPECT_EQ(NodeShortName(""), "");
  EXPECT_EQ(NodeShortName("/a/" + std::string(40, 'x')).size(), 28u);
  // Long names are cut in the middle (12 + "…" + 13 bytes), keeping both
  // the block in front and the op at the back.
  EXPECT_EQ(NodeShortName("/m/encoder_layer_eleven_attention/MatMulInteger"),
            "encoder_laye\u2026MatMulInteger");
}

TEST(ModelLayoutTest, SvgIsEscapedAndComplete) {
  SmallModel s;
  LayoutInput in = BuildLayoutInput(s.m, s.g);
  LayoutResult r = LayeredLayout(in.nodes, in.edges, {});
  std::string svg = RenderSvg(s.m, s.g, in, r);
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("<title>main&lt;&amp;&gt;</title>"), std::string::npos);
  EXPECT_NE(svg.find("Add&lt;T&gt;"), std::string::npos);
  EXPECT_NE(svg.find("add&quot;&amp;&apos;/Add"), std::string::npos);
  EXPECT_NE(svg.find(">1xN</text>"), std::string::npos);  // shape label
  EXPECT_EQ(svg.find("Add<T>"), std::string::npos);
  // Same op type, same colour; the output is deterministic.
  EXPECT_EQ(svg, RenderSvg(s.m, s.g, in, r));
}

}  // namespace
}  // namespace mi::layout
