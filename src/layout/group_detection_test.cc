#include "layout/group_detection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/common/importer.h"
#include "importers/onnx/onnx_importer.h"
#include "layout/hierarchical_layout.h"
#include "layout/hierarchical_layout_model.h"
#include "layout/hierarchical_layout_test_graphs.h"
#include "layout/hierarchical_layout_test_util.h"
#include "layout/layout_test_graphs.h"
#include "layout/model_layout.h"
#include "model/model.h"

namespace mi::layout {
namespace {

using test_graphs::Graph;

// The generated graphs carry no op types; their node widths stand in for
// them (each generator op has a fixed width, so a repeated block has a
// repeated width sequence). A harder input than real op types: one "op"
// (width 60) occurs many times per block.
void OpsFromWidths(const Graph& g, GroupTree& tree) {
  std::vector<float> widths;
  for (const LayoutNode& n : g.nodes) widths.push_back(n.width);
  std::sort(widths.begin(), widths.end());
  widths.erase(std::unique(widths.begin(), widths.end()), widths.end());
  tree.op_names.clear();
  for (float w : widths) tree.op_names.push_back(std::to_string(int(w)));
  tree.node_op.clear();
  for (const LayoutNode& n : g.nodes) {
    tree.node_op.push_back(static_cast<int32_t>(
        std::lower_bound(widths.begin(), widths.end(), n.width) -
        widths.begin()));
  }
}

GroupTree FlatTree(const Graph& g) {
  GroupTree tree;
  tree.parent = {-1};
  tree.label = {""};
  tree.node_group.assign(g.nodes.size(), 0);
  OpsFromWidths(g, tree);
  return tree;
}

// Nodes per layer of TransformerStack: one layer plus input and output.
uint32_t TransformerPeriod() {
  return static_cast<uint32_t>(test_graphs::TransformerStack(3).nodes.size()) -
         2;
}

// The child of the root holding `node`, or 0.
int32_t TopGroup(const GroupTree& t, uint32_t node) {
  int32_t g = t.node_group[node];
  while (g > 0 && t.parent[g] != 0) g = t.parent[g];
  return g;
}

std::vector<int32_t> GroupsOfKind(const GroupTree& t, GroupKind kind,
                                  int32_t parent = -2) {
  std::vector<int32_t> out;
  for (size_t g = 1; g < t.parent.size(); ++g) {
    if (t.kind[g] != kind) continue;
    if (parent != -2 && t.parent[g] != parent) continue;
    out.push_back(static_cast<int32_t>(g));
  }
  return out;
}

// Subtree node counts.
std::vector<uint32_t> SubtreeNodes(const GroupTree& t) {
  std::vector<uint32_t> count(t.parent.size(), 0);
  for (int32_t g : t.node_group) {
    for (int32_t x = g; x >= 0; x = t.parent[x]) ++count[x];
  }
  return count;
}

using test_util::ExpectNested;
using test_util::Inside;

TEST(GroupDetectionTest, TopologicalRankPullsInputsBeforeConsumers) {
  // 0 <- 3 (a graph input numbered last), 0 -> 1 -> 2, 4 -> 1, cycle 2 -> 1.
  std::vector<LayoutEdge> edges = {{3, 0}, {0, 1}, {1, 2}, {4, 1}, {2, 1}};
  std::vector<uint32_t> rank = TopologicalRank(5, edges);
  // 3 before 0, 0 and 4 before 1; the cycle 1 <-> 2 is broken by the
  // search (1 pulls in its predecessor 2 first).
  EXPECT_LT(rank[3], rank[0]);
  EXPECT_LT(rank[0], rank[1]);
  EXPECT_LT(rank[4], rank[1]);
  EXPECT_LT(rank[2], rank[1]);
  std::vector<uint32_t> sorted = rank;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(sorted[i], i);
}

TEST(GroupDetectionTest, NormalizeCutsCyclesAndBadIndices) {
  GroupTree t;
  t.parent = {5, 2, 3, 1, 99, 0};
  t.node_group = {7, -1, 3};
  NormalizeGroupTree(t, 4);
  EXPECT_EQ(t.parent[0], -1);
  EXPECT_EQ(t.parent[4], 0);
  // 1 -> 2 -> 3 -> 1 is cut once; every chain reaches the root.
  for (size_t g = 1; g < t.parent.size(); ++g) {
    int32_t x = static_cast<int32_t>(g);
    for (int steps = 0; x != 0 && steps < 10; ++steps) x = t.parent[x];
    EXPECT_EQ(x, 0) << g;
  }
  EXPECT_EQ(t.node_group, (std::vector<int32_t>{0, 0, 3, 0}));
  EXPECT_EQ(t.kind.size(), 6u);
  EXPECT_EQ(t.repeat_of.size(), 6u);
}

TEST(GroupDetectionTest, FlatTransformerBlocksHavePeriodAndPhase) {
  Graph g = test_graphs::TransformerStack(3000);
  const uint32_t p = TransformerPeriod();
  const uint32_t layers = static_cast<uint32_t>(g.nodes.size() - 2) / p;
  ASSERT_GE(layers, 10u);
  GroupTree t = FlatTree(g);
  size_t added = AddRepeatedBlocks(t, g.nodes.size(), g.edges, 64);
  std::vector<int32_t> blocks = GroupsOfKind(t, GroupKind::kRepeat, 0);
  EXPECT_EQ(blocks.size(), layers);
  EXPECT_GE(added, blocks.size());
  // Block k is layer k exactly: it starts at the layer's first layer-norm
  // node (after the previous layer's residual add), the phase where one
  // tensor crosses each boundary.
  for (uint32_t k = 0; k < layers; ++k) {
    for (uint32_t j = 0; j < p; ++j) {
      ASSERT_EQ(TopGroup(t, 1 + k * p + j), blocks[k]) << k << " " << j;
    }
  }
  EXPECT_EQ(TopGroup(t, 0), 0);  // input and output stay at the root
  EXPECT_EQ(TopGroup(t, static_cast<uint32_t>(g.nodes.size() - 1)), 0);
  EXPECT_EQ(t.label[blocks[0]], "block 1");
  EXPECT_EQ(t.label[blocks[2]], "block 3");

  MarkRepeats(t, g.edges);
  EXPECT_EQ(t.repeat_of[blocks[0]], -1);
  for (size_t k = 1; k < blocks.size(); ++k) {
    EXPECT_EQ(t.repeat_of[blocks[k]], blocks[0]);
  }
}

TEST(GroupDetectionTest, BlockOfBlockWhenBlocksAreLarge) {
  Graph g = test_graphs::TransformerStack(3000);
  GroupTree t = FlatTree(g);
  // Blocks of 64 nodes are searched again with a threshold of 32: the
  // q/k/v projections (MatMul, Add, dynamic reshape) repeat three times.
  AddRepeatedBlocks(t, g.nodes.size(), g.edges, 32);
  std::vector<int32_t> top = GroupsOfKind(t, GroupKind::kRepeat, 0);
  ASSERT_FALSE(top.empty());
  std::vector<int32_t> inner = GroupsOfKind(t, GroupKind::kRepeat, top[1]);
  EXPECT_EQ(inner.size(), 3u);
  std::vector<uint32_t> count = SubtreeNodes(t);
  for (int32_t b : inner) EXPECT_EQ(count[b], 8u);
}

TEST(GroupDetectionTest, NoRepetitionNoBlocks) {
  // Random op types on a random DAG.
  Graph g = test_graphs::BranchyDag(20000, 7);
  GroupTree t;
  t.parent = {-1};
  t.node_group.assign(g.nodes.size(), 0);
  test_graphs::Lcg rng(3);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    t.node_op.push_back(static_cast<int32_t>(rng.Below(24)));
  }
  EXPECT_EQ(AddRepeatedBlocks(t, g.nodes.size(), g.edges, 64), 0u);
  EXPECT_TRUE(GroupsOfKind(t, GroupKind::kRepeat).empty());
  // A chain of one op type (period 1) and of alternating two (period 2)
  // are not block structures either.
  for (int period : {1, 2}) {
    Graph chain;
    GroupTree c;
    c.parent = {-1};
    for (uint32_t i = 0; i < 500; ++i) {
      chain.Add();
      if (i > 0) chain.Edge(i - 1, i);
      c.node_op.push_back(static_cast<int32_t>(i % period));
    }
    EXPECT_EQ(AddRepeatedBlocks(c, 500, chain.edges, 64), 0u) << period;
  }
}

TEST(GroupDetectionTest, SameOpsDifferentEdgesAreNotBlocks) {
  // Period-8 op sequence, but every other block wires its nodes
  // differently: no two consecutive blocks agree on their edges.
  Graph g;
  GroupTree t;
  t.parent = {-1};
  for (uint32_t b = 0; b < 40; ++b) {
    uint32_t base = static_cast<uint32_t>(g.nodes.size());
    for (uint32_t j = 0; j < 8; ++j) {
      g.Add();
      t.node_op.push_back(static_cast<int32_t>(j));
      if (j > 0) g.Edge(base + j - 1, base + j);
    }
    if (b > 0) g.Edge(base - 1, base);
    g.Edge(base, base + (b % 2 ? 5 : 3));
  }
  EXPECT_EQ(AddRepeatedBlocks(t, g.nodes.size(), g.edges, 64), 0u);
}

TEST(GroupDetectionTest, EncoderThenDecoderTwoPeriods) {
  // 12 blocks of one 10-op pattern, then 12 of another 14-op pattern.
  Graph g;
  GroupTree t;
  t.parent = {-1};
  auto stack = [&](uint32_t ops, int32_t first_op) {
    for (uint32_t b = 0; b < 12; ++b) {
      for (uint32_t j = 0; j < ops; ++j) {
        uint32_t v = g.Add();
        t.node_op.push_back(first_op + static_cast<int32_t>(j));
        if (v > 0) g.Edge(v - 1, v);
      }
    }
  };
  stack(10, 0);
  stack(14, 100);
  AddRepeatedBlocks(t, g.nodes.size(), g.edges, 64);
  std::vector<int32_t> blocks = GroupsOfKind(t, GroupKind::kRepeat, 0);
  EXPECT_EQ(blocks.size(), 24u);
  std::vector<uint32_t> count = SubtreeNodes(t);
  std::map<uint32_t, int> sizes;
  for (int32_t b : blocks) ++sizes[count[b]];
  EXPECT_EQ(sizes[10], 12);
  EXPECT_EQ(sizes[14], 12);
}

TEST(GroupDetectionTest, ChunksKeepEveryGroupSmall) {
  Graph g;
  for (uint32_t i = 0; i < 5000; ++i) {
    g.Add();
    if (i > 0) g.Edge(i - 1, i);
  }
  GroupTree t = FlatTree(g);
  // 5000 > 50^2: chunks of chunks.
  EXPECT_GT(AddChunks(t, g.nodes.size(), g.edges, 50), 0u);
  std::vector<size_t> items(t.parent.size(), 0);
  for (int32_t x : t.node_group) ++items[x];
  for (size_t x = 1; x < t.parent.size(); ++x) ++items[t.parent[x]];
  for (size_t x = 0; x < items.size(); ++x) EXPECT_LE(items[x], 50u) << x;
  // Chunks are runs of consecutive nodes in order.
  for (uint32_t i = 1; i < 5000; ++i) {
    EXPECT_GE(t.node_group[i], t.node_group[i - 1]);
  }
  EXPECT_EQ(t.label[t.node_group[0]].rfind("nodes 1\u2013", 0), 0u)
      << t.label[t.node_group[0]];
}

TEST(GroupDetectionTest, RandomDag100kFoldsToBudget) {
  Graph g = test_graphs::BranchyDag(100000, 5);
  GroupTree t = FlatTree(g);
  AddRepeatedBlocks(t, g.nodes.size(), g.edges, 64);
  AddChunks(t, g.nodes.size(), g.edges, 1000);
  MarkRepeats(t, g.edges);
  HierarchicalLayout h(g.nodes, g.edges, t, {});
  size_t visible = h.CollapseToBudget(2000);
  EXPECT_LE(visible, 2000u);
  const HierarchicalResult& r = h.Layout();
  EXPECT_LE(r.items.size(), 2000u);
  EXPECT_GE(r.items.size(), 100u);
  // Open one chunk: its nodes appear inside its frame.
  int32_t chunk = t.node_group[50000];
  h.SetExpanded(chunk, true);
  const HierarchicalResult& open = h.Layout();
  EXPECT_TRUE(open.groups[chunk].expanded);
  ExpectNested(open, t);
}

TEST(GroupDetectionTest, MarkRepeatsOnScopedTransformer) {
  test_graphs::ScopedGraph s = test_graphs::ScopedTransformer(1500);
  GroupTree t = s.groups;
  OpsFromWidths(s.graph, t);
  ASSERT_GE(s.layer_groups.size(), 4u);
  EXPECT_EQ(MarkRepeats(t, s.graph.edges) > 0, true);
  const int32_t l0 = s.layer_groups[0];
  EXPECT_EQ(t.repeat_of[l0], -1);
  for (size_t i = 1; i < s.layer_groups.size(); ++i) {
    EXPECT_EQ(t.repeat_of[s.layer_groups[i]], l0) << i;
  }
  // Children of layer 0 by label, and of layer 2.
  auto child = [&](int32_t parent, const std::string& label) {
    for (size_t g = 1; g < t.parent.size(); ++g) {
      if (t.parent[g] == parent && t.label[g] == label) {
        return static_cast<int32_t>(g);
      }
    }
    return -1;
  };
  int32_t attn0 = child(l0, "self_attn"), mlp0 = child(l0, "mlp");
  int32_t attn2 = child(s.layer_groups[2], "self_attn");
  int32_t mlp2 = child(s.layer_groups[2], "mlp");
  EXPECT_EQ(t.repeat_of[attn0], -1);
  EXPECT_EQ(t.repeat_of[mlp0], -1);  // different structure from attention
  EXPECT_EQ(t.repeat_of[attn2], attn0);
  EXPECT_EQ(t.repeat_of[mlp2], mlp0);
  // Both layer norms of a layer have one structure: the second is a
  // repeat of the first.
  int32_t ln1 = child(l0, "input_layernorm");
  int32_t ln2 = child(l0, "post_attention_layernorm");
  EXPECT_EQ(t.repeat_of[ln1], -1);
  EXPECT_EQ(t.repeat_of[ln2], ln1);

  // One extra edge inside layer 3's MLP: layer 3 is no longer a repeat
  // (same op multiset, different edges), the others still are.
  std::vector<LayoutEdge> edges = s.graph.edges;
  int32_t l3 = s.layer_groups[3];
  std::vector<uint32_t> in_l3;
  for (uint32_t v = 0; v < t.node_group.size(); ++v) {
    if (TopGroup(t, v) == l3) in_l3.push_back(v);
  }
  ASSERT_GT(in_l3.size(), 10u);
  edges.push_back({in_l3[2], in_l3[9]});
  GroupTree t2 = s.groups;
  OpsFromWidths(s.graph, t2);
  MarkRepeats(t2, edges);
  EXPECT_EQ(t2.repeat_of[l3], -1);
  EXPECT_EQ(t2.repeat_of[s.layer_groups[2]], l0);
  EXPECT_EQ(t2.repeat_of[s.layer_groups[4]], l0);
}

TEST(GroupDetectionTest, MarkRepeatsNeedsSameEdges) {
  // Two groups with ops A, B, C: a chain A -> B -> C, and A -> C, B -> C.
  GroupTree t;
  t.parent = {-1, 0, 0, 0};
  t.node_group = {1, 1, 1, 2, 2, 2, 3, 3, 3};
  t.node_op = {0, 1, 2, 0, 1, 2, 0, 1, 2};
  std::vector<LayoutEdge> edges = {{0, 1}, {1, 2}, {3, 5},
                                   {4, 5}, {6, 7}, {7, 8}};
  EXPECT_EQ(MarkRepeats(t, edges), 1u);
  EXPECT_EQ(t.repeat_of, (std::vector<int32_t>{-1, -1, -1, 1}));
}

TEST(GroupDetectionTest, DeepHierarchyNoRecursion) {
  // 3000 nested groups, two nodes each, a chain through all of them.
  GroupTree t;
  Graph g;
  t.parent.push_back(-1);
  for (uint32_t d = 1; d <= 3000; ++d) {
    t.parent.push_back(static_cast<int32_t>(d - 1));
    for (int k = 0; k < 2; ++k) {
      uint32_t v = g.Add();
      t.node_group.push_back(static_cast<int32_t>(d));
      t.node_op.push_back(k);
      if (v > 0) g.Edge(v - 1, v);
    }
  }
  AddRepeatedBlocks(t, g.nodes.size(), g.edges, 64);
  AddChunks(t, g.nodes.size(), g.edges, 1000);
  MarkRepeats(t, g.edges);
  // Nothing to add (two items per group), nothing alike (every subtree has
  // a different size); HierarchicalLayout on this tree is tested in
  // hierarchical_layout_test.cc (DeepHierarchy3000NoRecursion).
  EXPECT_EQ(t.parent.size(), 3001u);
  for (int32_t r : t.repeat_of) EXPECT_EQ(r, -1);
}

TEST(GroupDetectionTest, DeterministicAndLayoutStaysValid) {
  auto build = [] {
    Graph g = test_graphs::TransformerStack(6000);
    GroupTree t = FlatTree(g);
    AddRepeatedBlocks(t, g.nodes.size(), g.edges, 64);
    AddChunks(t, g.nodes.size(), g.edges, 30);
    MarkRepeats(t, g.edges);
    return std::make_pair(g, t);
  };
  auto [g, a] = build();
  auto [g2, b] = build();
  EXPECT_EQ(a.parent, b.parent);
  EXPECT_EQ(a.label, b.label);
  EXPECT_EQ(a.node_group, b.node_group);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.repeat_of, b.repeat_of);
  EXPECT_FALSE(GroupsOfKind(a, GroupKind::kChunk).empty());

  HierarchicalLayout h(g.nodes, g.edges, a, {});
  const HierarchicalResult& full = h.Layout();
  EXPECT_EQ(full.items.size(), g.nodes.size());
  ExpectNested(full, a);
  h.CollapseToBudget(200);
  const HierarchicalResult& folded = h.Layout();
  EXPECT_LE(folded.items.size(), 200u);
  ExpectNested(folded, a);
}

// ---- model level: BuildGroups on the ONNX fixtures ----

struct Loaded {
  StringPool strings;
  Model model{&strings};
  DiagnosticSink diagnostics;
};

// Imports `files` (relative to test/fixtures) into one model; the root
// graph each added, in order.
std::vector<GraphId> Import(Loaded& l, const std::vector<std::string>& files) {
  std::vector<GraphId> graphs;
  for (const std::string& f : files) {
    std::string path = std::string(MI_SOURCE_DIR) + "/test/fixtures/" + f;
    if (!std::filesystem::exists(path)) return {};
    importers::ImportContext ctx;
    ctx.path = path;
    ctx.model = &l.model;
    ctx.diagnostics = &l.diagnostics;
    Status st = importers::CreateOnnxImporter()->Import(ctx);
    if (!st.ok() || ctx.graphs_added.empty()) {
      ADD_FAILURE() << st.ToString();
      return {};
    }
    graphs.push_back(ctx.graphs_added.front());
  }
  return graphs;
}

TEST(GroupDetectionModelTest, FusionGroupsOnResNet18) {
  Loaded l;
  std::vector<GraphId> graphs = Import(l, {"resnet18/model.onnx",
                                           "resnet18/ort_extended/"
                                           "model.optimized.onnx"});
  ASSERT_EQ(graphs.size(), 2u) << "committed fixtures missing";
  const Model& m = l.model;
  const GraphId fw = graphs[0], compiled = graphs[1];
  // fused_into by hand (the linker's job): a framework node named like a
  // compiled node, or producing a tensor a compiled node produces, went
  // into that compiled node (FusedConv = Conv + Relu).
  std::vector<NodeId> fused_into(m.node_count(), NodeId::Invalid());
  for (NodeId c : m.graph_nodes(compiled)) {
    NodeId same = m.FindNode(fw, m.str(m.node_name(c)));
    if (same.valid() && m.node_graph(same) == fw) fused_into[same.value()] = c;
    for (ValueId out : m.node_outputs(c)) {
      ValueId v = m.FindValue(fw, m.str(m.value_name(out)));
      if (!v.valid()) continue;
      NodeId producer = m.value_producer(v);
      if (producer.valid()) fused_into[producer.value()] = c;
    }
  }
  LayoutInput in = BuildLayoutInput(m, fw);
  GroupingOptions options;
  options.fused_into = fused_into;
  GroupTree t = BuildGroups(m, fw, in, options);
  std::vector<int32_t> fusions = GroupsOfKind(t, GroupKind::kFusion);
  ASSERT_EQ(fusions.size(), 9u);  // stem conv + conv1 of 8 basic blocks
  std::vector<uint32_t> count = SubtreeNodes(t);
  for (int32_t f : fusions) {
    EXPECT_EQ(t.label[f].rfind("FusedConv", 0), 0u) << t.label[f];
    EXPECT_EQ(count[f], 2u);
    std::vector<std::string> ops;
    for (uint32_t v = 0; v < t.node_group.size(); ++v) {
      if (t.node_group[v] == f) ops.push_back(t.op_names[t.node_op[v]]);
    }
    EXPECT_EQ(ops, (std::vector<std::string>{"Conv", "Relu"}));
  }
  // The stem's fusion sits at the root; layer1.0's under scope layer1.0.
  EXPECT_EQ(t.parent[fusions[0]], 0);
  EXPECT_EQ(t.label[t.parent[fusions[1]]], "layer1.0");
  // All fusions have one structure: the first is the representative.
  EXPECT_EQ(t.repeat_of[fusions[0]], -1);
  for (size_t i = 1; i < fusions.size(); ++i) {
    EXPECT_EQ(t.repeat_of[fusions[i]], fusions[0]);
  }
  // Without scopes the fusions hang under the root.
  options.scopes = false;
  GroupTree flat = BuildGroups(m, fw, in, options);
  std::vector<int32_t> flat_fusions = GroupsOfKind(flat, GroupKind::kFusion);
  EXPECT_EQ(flat_fusions.size(), 9u);
  for (int32_t f : flat_fusions) EXPECT_EQ(flat.parent[f], 0);

  HierarchicalLayout h(in.nodes, in.edges, t, {});
  ExpectNested(h.Layout(), t);
}

TEST(GroupDetectionModelTest, TransformerFixtureLayers) {
  Loaded l;
  std::vector<GraphId> graphs = Import(l, {"transformer/model.onnx"});
  ASSERT_EQ(graphs.size(), 1u) << "committed fixture missing";
  LayoutInput in = BuildLayoutInput(l.model, graphs[0]);
  // Scopes: layers.1 is a repeat of layers.0.
  GroupTree scoped = BuildGroups(l.model, graphs[0], in, {});
  int32_t layer0 = -1, layer1 = -1;
  for (size_t g = 1; g < scoped.parent.size(); ++g) {
    if (scoped.label[g] == "layers.0") layer0 = static_cast<int32_t>(g);
    if (scoped.label[g] == "layers.1") layer1 = static_cast<int32_t>(g);
  }
  ASSERT_GE(layer0, 0);
  ASSERT_GE(layer1, 0);
  EXPECT_EQ(scoped.repeat_of[layer0], -1);
  EXPECT_EQ(scoped.repeat_of[layer1], layer0);
  EXPECT_TRUE(GroupsOfKind(scoped, GroupKind::kRepeat).empty());

  // No scopes: the two layers are found as repeated blocks, each holding
  // exactly the nodes of one layers.N scope.
  GroupingOptions options;
  options.scopes = false;
  GroupTree flat = BuildGroups(l.model, graphs[0], in, options);
  std::vector<int32_t> blocks = GroupsOfKind(flat, GroupKind::kRepeat, 0);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(flat.repeat_of[blocks[1]], blocks[0]);
  std::map<int32_t, int32_t> scope_of_block;
  for (uint32_t v = 0; v < in.nodes.size(); ++v) {
    int32_t b = flat.node_group[v];
    int32_t s = TopGroup(scoped, v);
    if (b == 0) continue;
    auto [it, inserted] = scope_of_block.try_emplace(b, s);
    EXPECT_EQ(it->second, s) << "node " << v;
  }
  EXPECT_EQ(scope_of_block[blocks[0]], layer0);
  EXPECT_EQ(scope_of_block[blocks[1]], layer1);
}

}  // namespace
}  // namespace mi::layout
