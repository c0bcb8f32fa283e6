#include "model/model.h"

#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace mi {
namespace {

TEST(ModelTest, BuildsNodesValuesAndConsumers) {
  StringPool pool;
  Model m(&pool);
  GraphId g = m.AddGraph(LayerLevel::kFramework, "main", "m.onnx");
  ValueId x = m.GetOrAddValue(g, "x");
  ValueId y = m.GetOrAddValue(g, "y");
  ValueId z = m.GetOrAddValue(g, "z");
  NodeId a = m.AddNode(g, "Relu", "", "/block/relu/Relu");
  m.AddNodeInput(a, x);
  m.AddNodeOutput(a, y);
  NodeId b = m.AddNode(g, "Add", "", "/block/Add");
  m.AddNodeInput(b, y);
  m.AddNodeInput(b, x);
  m.AddNodeOutput(b, z);
  Attribute attr;
  attr.name = pool.Intern("alpha");
  attr.kind = AttributeKind::kFloat;
  attr.float_value = 0.5;
  m.AddNodeAttribute(b, attr);
  m.BuildIndexes();

  EXPECT_EQ(m.value_producer(y), a);
  ASSERT_EQ(m.value_consumers(x).size(), 2u);
  EXPECT_EQ(m.node_inputs(b).size(), 2u);
  EXPECT_EQ(m.node_attributes(a).size(), 0u);
  ASSERT_EQ(m.node_attributes(b).size(), 1u);
  EXPECT_EQ(m.FindNode(g, "/block/Add"), b);
  EXPECT_EQ(m.FindValue(g, "z"), z);
}

// Repeated names (ONNX allows them in subgraph bodies): a lookup by name
// never picks one of the nodes; FindNodes lists them all and the repeats
// are recorded for the duplicate_node_name diagnostic.
TEST(ModelTest, RepeatedNamesAreNeverResolvedToTheFirstNode) {
  StringPool pool;
  Model m(&pool);
  GraphId g = m.AddGraph(LayerLevel::kFramework, "main", "m.onnx");
  NodeId conv = m.AddNode(g, "Conv", "", "block");
  NodeId unique = m.AddNode(g, "Add", "", "add");
  NodeId relu = m.AddNode(g, "Relu", "", "block");
  GraphId other = m.AddGraph(LayerLevel::kCompiled, "main", "o.onnx");
  NodeId elsewhere = m.AddNode(other, "Conv", "", "block");
  m.BuildIndexes();

  EXPECT_FALSE(m.FindNode(g, "block").valid());
  EXPECT_EQ(m.FindNodes(g, "block"), (std::vector<NodeId>{conv, relu}));
  EXPECT_EQ(m.FindNode(g, "add"), unique);
  EXPECT_EQ(m.FindNodes(g, "add"), (std::vector<NodeId>{unique}));
  EXPECT_TRUE(m.FindNodes(g, "nothing").empty());
  // Names are per root graph: the other file's "block" is its own.
  EXPECT_EQ(m.FindNode(other, "block"), elsewhere);
  ASSERT_EQ(m.duplicate_node_names().size(), 1u);
  EXPECT_EQ(m.duplicate_node_names()[0],
            (std::pair<NodeId, NodeId>{conv, relu}));
}

TEST(ModelTest, DerivesScopesFromSlashNames) {
  StringPool pool;
  Model m(&pool);
  GraphId g = m.AddGraph(LayerLevel::kFramework, "main", "m.onnx");
  NodeId conv = m.AddNode(g, "Conv", "", "/layer1/layer1.0/conv1/Conv");
  NodeId relu = m.AddNode(g, "Relu", "", "/layer1/layer1.0/relu/Relu");
  NodeId flat = m.AddNode(g, "Gemm", "", "Gemm_12");
  m.AssignScopesFromNames(g);
  ScopeId s = m.node_scope(conv);
  EXPECT_EQ(m.str(m.scope_path(s)), "/layer1/layer1.0/conv1");
  EXPECT_EQ(m.str(m.scope_name(s)), "conv1");
  ScopeId parent = m.scope_parent(s);
  EXPECT_EQ(m.str(m.scope_path(parent)), "/layer1/layer1.0");
  EXPECT_EQ(m.scope_parent(m.node_scope(relu)), parent);
  EXPECT_EQ(m.str(m.scope_path(m.node_scope(flat))), "");
}

TEST(ModelTest, SubgraphsResolveOuterScopeValues) {
  StringPool pool;
  Model m(&pool);
  GraphId g = m.AddGraph(LayerLevel::kCompiled, "main", "m.onnx");
  ValueId outer = m.GetOrAddValue(g, "cond_input");
  NodeId iff = m.AddNode(g, "If", "", "if0");
  GraphId body = m.AddGraph(LayerLevel::kCompiled, "then", "m.onnx", g, iff);
  EXPECT_EQ(m.ResolveValue(body, "cond_input"), outer);
  EXPECT_FALSE(m.FindValue(body, "cond_input").valid());
  EXPECT_EQ(m.RootOf(body), g);
  m.SetLevel(g, LayerLevel::kFramework);
  EXPECT_EQ(m.graph(body).level, LayerLevel::kFramework);
  EXPECT_EQ(m.RootGraphs(LayerLevel::kFramework).size(), 1u);
}

}  // namespace
}  // namespace mi
