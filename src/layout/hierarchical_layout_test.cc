#include "layout/hierarchical_layout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "base/string_pool.h"
#include "diag/diagnostics.h"
#include "importers/common/importer.h"
#include "importers/onnx/onnx_importer.h"
#include "layout/hierarchical_layout_model.h"
#include "layout/hierarchical_layout_test_graphs.h"
#include "layout/hierarchical_layout_test_util.h"
#include "layout/model_layout.h"
#include "model/model.h"

namespace mi::layout {
namespace {

using test_graphs::ScopedGraph;
using test_graphs::ScopedTransformer;

HierarchicalLayout Make(const ScopedGraph& s) {
  return HierarchicalLayout(s.graph.nodes, s.graph.edges, s.groups, {});
}

using test_util::ExpectNested;
using test_util::Inside;

// A plain SVG of a hierarchical view (frames, boxes, routes), written to
// $MI_LAYOUT_OUT (default /tmp/layout_out) for a person to look at.
void WriteSvg(const std::string& name, const HierarchicalResult& r,
              const GroupTree& groups) {
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(r.width + 40) + "\" height=\"" +
                    std::to_string(r.height + 40) +
                    "\" font-family=\"sans-serif\" font-size=\"10\">"
                    "<g transform=\"translate(20,20)\">\n";
  auto rect = [&](const Box& b, const char* style) {
    svg += "<rect x=\"" + std::to_string(b.x) + "\" y=\"" +
           std::to_string(b.y) + "\" width=\"" + std::to_string(b.w) +
           "\" height=\"" + std::to_string(b.h) + "\" " + style + "/>\n";
  };
  auto text = [&](float x, float y, const std::string& t) {
    svg += "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) +
           "\">" + t + "</text>\n";
  };
  for (int32_t f : r.frames) {
    const Box& b = r.groups[f].bounds;
    rect(b,
         "rx=\"8\" fill=\"#e8eef8\" fill-opacity=\"0.5\" "
         "stroke=\"#88a\"");
    text(b.x + 6, b.y + 14, groups.label[f]);
  }
  for (size_t e = 0; e < r.edges.size(); ++e) {
    svg += "<polyline fill=\"none\" stroke=\"#555\" stroke-width=\"" +
           std::to_string(r.edges[e].count > 1 ? 2.5 : 1) + "\" points=\"";
    for (uint32_t p = r.edge_point_begin[e]; p < r.edge_point_begin[e + 1];
         ++p) {
      svg += std::to_string(r.points[2 * p]) + "," +
             std::to_string(r.points[2 * p + 1]) + " ";
    }
    svg += "\"/>\n";
  }
  for (const VisibleItem& item : r.items) {
    if (item.group >= 0) {
      rect(item.box, "rx=\"8\" fill=\"#cde\" stroke=\"#446\"");
      text(item.box.x + 6, item.box.y + 16, groups.label[item.group]);
      text(item.box.x + 6, item.box.y + 30,
           std::to_string(r.groups[item.group].node_count) + " nodes");
    } else {
      rect(item.box, "rx=\"5\" fill=\"#fed\" stroke=\"#864\"");
      if (item.node < static_cast<int32_t>(groups.node_op.size()) &&
          groups.node_op[item.node] >= 0) {
        text(item.box.x + 6, item.box.y + 20,
             groups.op_names[groups.node_op[item.node]]);
      }
    }
  }
  svg += "</g></svg>\n";
  const char* env = std::getenv("MI_LAYOUT_OUT");
  std::filesystem::path dir = env ? env : "/tmp/layout_out";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream(dir / name, std::ios::binary) << svg;
}

bool OnBorder(const Box& b, float x, float y) {
  constexpr float kEps = 0.05f;
  bool in_x = x >= b.x - kEps && x <= b.x + b.w + kEps;
  bool in_y = y >= b.y - kEps && y <= b.y + b.h + kEps;
  return (in_x &&
          (std::abs(y - b.y) < kEps || std::abs(y - b.y - b.h) < kEps)) ||
         (in_y && (std::abs(x - b.x) < kEps || std::abs(x - b.x - b.w) < kEps));
}

// Whether segment p-q passes through the interior of box b (shrunk by a
// margin, so touching a border does not count).
bool SegmentCrossesBox(float px, float py, float qx, float qy, const Box& b) {
  constexpr float kMargin = 0.5f;
  float x0 = b.x + kMargin, x1 = b.x + b.w - kMargin;
  float y0 = b.y + kMargin, y1 = b.y + b.h - kMargin;
  if (x0 >= x1 || y0 >= y1) return false;
  // Liang-Barsky clipping of the segment against the box.
  float t0 = 0, t1 = 1, dx = qx - px, dy = qy - py;
  auto clip = [&](float p, float q) {
    if (p == 0) return q >= 0;
    float t = q / p;
    if (p < 0) {
      if (t > t1) return false;
      t0 = std::max(t0, t);
    } else {
      if (t < t0) return false;
      t1 = std::min(t1, t);
    }
    return true;
  };
  return clip(-dx, px - x0) && clip(dx, x1 - px) && clip(-dy, py - y0) &&
         clip(dy, y1 - py) && t0 < t1;
}

// Every visible edge runs from its source item's border to its target
// item's border (through the ports of expanded groups, not from a frame),
// and no segment passes through a node or collapsed group it does not
// connect.
void ExpectRoutesConnectItems(const HierarchicalResult& r) {
  for (size_t e = 0; e < r.edges.size(); ++e) {
    const VisibleEdge& edge = r.edges[e];
    uint32_t pb = r.edge_point_begin[e], pe = r.edge_point_begin[e + 1];
    ASSERT_GE(pe - pb, 2u);
    if (edge.from == edge.to) continue;
    const Box& from = r.items[edge.from].box;
    const Box& to = r.items[edge.to].box;
    EXPECT_TRUE(OnBorder(from, r.points[2 * pb], r.points[2 * pb + 1]))
        << "edge " << e << " starts off its source";
    EXPECT_TRUE(OnBorder(to, r.points[2 * pe - 2], r.points[2 * pe - 1]))
        << "edge " << e << " ends off its target";
    if (edge.reversed) continue;
    for (uint32_t p = pb; p + 1 < pe; ++p) {
      for (size_t i = 0; i < r.items.size(); ++i) {
        if (i == edge.from || i == edge.to) continue;
        EXPECT_FALSE(SegmentCrossesBox(r.points[2 * p], r.points[2 * p + 1],
                                       r.points[2 * p + 2], r.points[2 * p + 3],
                                       r.items[i].box))
            << "edge " << e << " segment " << p - pb << " crosses item " << i;
      }
    }
  }
}

const VisibleEdge* FindEdge(const HierarchicalResult& r, uint32_t a,
                            uint32_t b) {
  for (const VisibleEdge& e : r.edges) {
    if (e.from == a && e.to == b) return &e;
  }
  return nullptr;
}

TEST(HierarchicalLayoutTest, FullyExpandedShowsEveryNode) {
  ScopedGraph s = ScopedTransformer(1000);
  HierarchicalLayout h = Make(s);
  const HierarchicalResult& r = h.Layout();
  EXPECT_EQ(r.items.size(), s.graph.nodes.size());
  uint32_t total = 0;
  for (const VisibleEdge& e : r.edges) total += e.count;
  EXPECT_EQ(total, s.graph.edges.size());
  for (size_t e = 0; e < r.edges.size(); ++e) {
    EXPECT_GE(r.edge_point_begin[e + 1] - r.edge_point_begin[e], 2u);
  }
  ExpectNested(r, s.groups);
}

TEST(HierarchicalLayoutTest, RoutesReachItemsInsideExpandedGroups) {
  ScopedGraph s = ScopedTransformer(400);
  HierarchicalLayout h = Make(s);
  ExpectRoutesConnectItems(h.Layout());
  // Mixed: every other layer collapsed, so routes join boxes and nodes
  // deep inside frames.
  for (size_t i = 0; i < s.layer_groups.size(); i += 2) {
    h.SetExpanded(s.layer_groups[i], false);
  }
  ExpectRoutesConnectItems(h.Layout());
}

TEST(HierarchicalLayoutTest, CropToGroupKeepsItsContentsAtTheOrigin) {
  ScopedGraph s = ScopedTransformer(400);
  HierarchicalLayout h = Make(s);
  const HierarchicalResult& full = h.Layout();
  int32_t g = s.layer_groups[1];
  HierarchicalResult crop = CropToGroup(full, g);
  ASSERT_FALSE(crop.frames.empty());
  EXPECT_EQ(crop.frames[0], g);
  EXPECT_EQ(crop.groups[g].bounds.x, 0);
  EXPECT_EQ(crop.groups[g].bounds.y, 0);
  EXPECT_EQ(crop.width, full.groups[g].bounds.w);
  EXPECT_EQ(crop.items.size(), full.groups[g].node_count);
  EXPECT_EQ(crop.frame_profiles.size(),
            crop.frames.size() * 2 * HierarchicalResult::kProfileBands);
  EXPECT_FALSE(crop.groups[0].visible);
  ExpectRoutesConnectItems(crop);
  for (const VisibleItem& item : crop.items) {
    EXPECT_TRUE(Inside(item.box, crop.groups[g].bounds));
  }
  // A collapsed group has no frame to crop to.
  h.SetExpanded(g, false);
  EXPECT_TRUE(CropToGroup(h.Layout(), g).items.empty());
}

TEST(HierarchicalLayoutTest, FrameProfilesOutlineTheContents) {
  ScopedGraph s = ScopedTransformer(400);
  HierarchicalLayout h = Make(s);
  h.SetExpanded(s.layer_groups[1], false);
  const HierarchicalResult& r = h.Layout();
  constexpr uint32_t kBands = HierarchicalResult::kProfileBands;
  ASSERT_FALSE(r.frames.empty());
  ASSERT_EQ(r.frame_profiles.size(), r.frames.size() * kBands * 2);
  for (size_t f = 0; f < r.frames.size(); ++f) {
    const Box& frame = r.groups[r.frames[f]].bounds;
    const float* bands = &r.frame_profiles[f * kBands * 2];
    uint32_t occupied = 0;
    for (uint32_t b = 0; b < kBands; ++b) {
      EXPECT_LE(bands[2 * b], bands[2 * b + 1]);
      EXPECT_GE(bands[2 * b], frame.x - 0.01f);
      EXPECT_LE(bands[2 * b + 1], frame.x + frame.w + 0.01f);
      if (bands[2 * b + 1] > bands[2 * b]) ++occupied;
    }
    // Items are at most a rank spacing apart: most bands hold one.
    EXPECT_GE(occupied, kBands / 2) << "frame " << r.frames[f];
  }
}

TEST(HierarchicalLayoutTest, ExpandKeepsUntouchedGroupsRigid) {
  ScopedGraph s = ScopedTransformer(1500);
  ASSERT_GE(s.layer_groups.size(), 6u);
  HierarchicalLayout h = Make(s);
  for (int32_t l : s.layer_groups) h.SetExpanded(l, false);
  h.SetExpanded(s.layer_groups[1], true);
  h.SetExpanded(s.layer_groups[3], true);
  HierarchicalResult before = h.Layout();
  // Relative positions of layer 1's and 3's nodes, and their frame sizes.
  auto relative = [&](const HierarchicalResult& r, int32_t group) {
    std::vector<float> out;
    const Box& frame = r.groups[group].bounds;
    out.push_back(frame.w);
    out.push_back(frame.h);
    for (size_t v = 0; v < s.graph.nodes.size(); ++v) {
      int32_t g = s.groups.node_group[v];
      while (g > 0 && g != group) g = s.groups.parent[g];
      if (g != group) continue;
      const Box& b = r.items[r.item_of_node[v]].box;
      out.push_back(b.x - frame.x);
      out.push_back(b.y - frame.y);
    }
    return out;
  };
  std::vector<float> rel1 = relative(before, s.layer_groups[1]);
  std::vector<float> rel3 = relative(before, s.layer_groups[3]);
  ASSERT_GT(rel3.size(), 100u);

  // Centres of the root's own items (its nodes and child groups), to check
  // that expanding moves the rest minimally: ranks and the order within
  // each rank are combinatorial, so they do not change; only spacing does.
  auto root_centres = [&](const HierarchicalResult& r) {
    std::vector<std::pair<float, float>> out;
    for (size_t v = 0; v < s.graph.nodes.size(); ++v) {
      if (s.groups.node_group[v] != 0) continue;
      const Box& b = r.items[r.item_of_node[v]].box;
      out.push_back({b.y + b.h / 2, b.x + b.w / 2});
    }
    for (size_t g = 1; g < s.groups.parent.size(); ++g) {
      if (s.groups.parent[g] != 0 || !r.groups[g].visible) continue;
      const Box& b = r.groups[g].bounds;
      out.push_back({b.y + b.h / 2, b.x + b.w / 2});
    }
    return out;
  };
  std::vector<std::pair<float, float>> centres_before = root_centres(before);

  h.SetExpanded(s.layer_groups[2], true);
  const HierarchicalResult& after = h.Layout();
  std::vector<std::pair<float, float>> centres_after = root_centres(after);
  ASSERT_EQ(centres_after.size(), centres_before.size());
  for (size_t i = 0; i < centres_before.size(); ++i) {
    for (size_t j = i + 1; j < centres_before.size(); ++j) {
      auto [yi, xi] = centres_before[i];
      auto [yj, xj] = centres_before[j];
      auto [ayi, axi] = centres_after[i];
      auto [ayj, axj] = centres_after[j];
      EXPECT_EQ(yi < yj, ayi < ayj) << i << " " << j;
      if (yi == yj) {
        EXPECT_EQ(xi < xj, axi < axj) << i << " " << j;
      }
    }
  }
  // Only layer 2's own subtree (never laid out: it was collapsed) and the
  // root were laid out; siblings reused their caches.
  EXPECT_LE(after.groups_laid_out, 12u);
  EXPECT_GT(after.items.size(), before.items.size());
  EXPECT_EQ(relative(after, s.layer_groups[1]), rel1);
  EXPECT_EQ(relative(after, s.layer_groups[3]), rel3);
  ExpectNested(after, s.groups);

  // Collapsing it again gives back the first view exactly (same inputs to
  // the root layout, caches for the rest).
  h.SetExpanded(s.layer_groups[2], false);
  const HierarchicalResult& again = h.Layout();
  EXPECT_EQ(again.groups_laid_out, 1u);
  ASSERT_EQ(again.items.size(), before.items.size());
  EXPECT_EQ(0, std::memcmp(again.items.data(), before.items.data(),
                           before.items.size() * sizeof(VisibleItem)));
  EXPECT_EQ(again.points, before.points);
}

// x -> [block: b -> c] -> add, with the skip x -> add.
TEST(HierarchicalLayoutTest, CollapsedBlockKeepsSkipConnection) {
  std::vector<LayoutNode> nodes(5, LayoutNode{60, 30});
  // 0 = x, 1 = b, 2 = c, 3 = add, 4 = d (also in the block, fed by x).
  std::vector<LayoutEdge> edges = {{0, 1}, {1, 2}, {2, 3},
                                   {0, 3}, {0, 4}, {4, 2}};
  GroupTree groups;
  groups.parent = {-1, 0};
  groups.label = {"", "block"};
  groups.node_group = {0, 1, 1, 0, 1};
  HierarchicalLayout h(nodes, edges, groups, {});
  h.SetExpanded(1, false);
  const HierarchicalResult& r = h.Layout();
  ASSERT_EQ(r.items.size(), 3u);  // x, add, block
  uint32_t x = r.item_of_node[0], add = r.item_of_node[3],
           block = r.item_of_node[1];
  EXPECT_EQ(r.item_of_node[2], block);
  EXPECT_EQ(r.items[block].group, 1);
  ASSERT_NE(FindEdge(r, x, add), nullptr);  // the skip stays visible
  ASSERT_NE(FindEdge(r, x, block), nullptr);
  EXPECT_EQ(FindEdge(r, x, block)->count, 2u);  // x->b and x->d aggregated
  ASSERT_NE(FindEdge(r, block, add), nullptr);
  EXPECT_EQ(r.edges.size(), 3u);  // b->c, d->c are inside the box
  EXPECT_EQ(r.groups[1].node_count, 3u);
}

TEST(HierarchicalLayoutTest, CollapseToBudget) {
  for (uint32_t per_block : {0u, 7u}) {
    ScopedGraph s = ScopedTransformer(20000, per_block);
    HierarchicalLayout h = Make(s);
    for (size_t budget : {2000u, 500u, 100u}) {
      size_t visible = h.CollapseToBudget(budget);
      const HierarchicalResult& r = h.Layout();
      EXPECT_EQ(r.items.size(), visible);
      if (per_block == 0 && budget < s.layer_groups.size()) continue;
      EXPECT_LE(visible, budget) << per_block << " " << budget;
      EXPECT_GT(visible, 0u);
      ExpectNested(r, s.groups);
      // Every skip around a layer is still drawn between layer boxes.
      uint32_t total = 0;
      for (const VisibleEdge& e : r.edges) total += e.count;
      EXPECT_GT(total, 0u);
    }
  }
}

// Nested groups 1 ⊃ 2 ⊃ ... ⊃ depth, two nodes in each, a chain through
// all and an edge from the deepest node back out to the root's node.
void DeepHierarchy(int32_t depth) {
  std::vector<LayoutNode> nodes;
  std::vector<LayoutEdge> edges;
  GroupTree groups;
  groups.parent.push_back(-1);
  groups.label.emplace_back();
  nodes.push_back({60, 30});
  groups.node_group.push_back(0);
  for (int32_t d = 1; d <= depth; ++d) {
    groups.parent.push_back(d - 1);
    groups.label.push_back("g" + std::to_string(d));
    for (int k = 0; k < 2; ++k) {
      nodes.push_back({60, 30});
      groups.node_group.push_back(d);
      edges.push_back({static_cast<uint32_t>(nodes.size() - 2),
                       static_cast<uint32_t>(nodes.size() - 1)});
    }
  }
  nodes.push_back({60, 30});
  groups.node_group.push_back(0);
  edges.push_back({static_cast<uint32_t>(nodes.size() - 2),
                   static_cast<uint32_t>(nodes.size() - 1)});
  HierarchicalLayout h(nodes, edges, groups, {});
  const HierarchicalResult& full = h.Layout();
  EXPECT_EQ(full.items.size(), nodes.size());
  EXPECT_EQ(full.frames.size(), static_cast<size_t>(depth));
  ExpectNested(full, groups);
  h.SetExpanded(depth / 2, false);
  const HierarchicalResult& half = h.Layout();
  EXPECT_EQ(half.items.size(), 1u + 2u * static_cast<size_t>(depth / 2));
  // Only the ancestors of the collapsed group were laid out again.
  EXPECT_EQ(half.groups_laid_out, static_cast<uint32_t>(depth / 2));
  h.SetExpanded(1, false);
  EXPECT_EQ(h.Layout().items.size(), 3u);
  // Cut at depth 4: 2 + 2 + 2 + 2 nodes and one box.
  EXPECT_EQ(h.CollapseToBudget(10), 9u);
}

TEST(HierarchicalLayoutTest, DeepHierarchy50) { DeepHierarchy(50); }
TEST(HierarchicalLayoutTest, DeepHierarchy3000NoRecursion) {
  DeepHierarchy(3000);
}

TEST(HierarchicalLayoutTest, BadTreeIsSanitised) {
  std::vector<LayoutNode> nodes(4, LayoutNode{60, 30});
  std::vector<LayoutEdge> edges = {{0, 1}, {1, 2}, {2, 3}, {3, 3}};
  GroupTree groups;
  groups.parent = {-1, 2, 1, 99};  // 1 <-> 2 cycle, 3 out of range
  groups.label = {"", "a", "b", "c"};
  groups.node_group = {0, 1, 2, 7};
  HierarchicalLayout h(nodes, edges, groups, {});
  EXPECT_EQ(h.Layout().items.size(), 4u);
  h.SetExpanded(1, false);
  EXPECT_EQ(h.Layout().items.size(), 3u);
}

TEST(HierarchicalLayoutTest, Deterministic) {
  ScopedGraph s = ScopedTransformer(5000, 4);
  auto run = [&] {
    HierarchicalLayout h = Make(s);
    h.CollapseToBudget(300);
    h.Layout();
    h.SetSubtreeExpanded(s.block_groups[2], true);
    h.SetExpanded(s.layer_groups[0], true);
    return h.Layout();
  };
  HierarchicalResult a = run(), b = run();
  ASSERT_EQ(a.items.size(), b.items.size());
  EXPECT_EQ(0, std::memcmp(a.items.data(), b.items.data(),
                           a.items.size() * sizeof(VisibleItem)));
  ASSERT_EQ(a.edges.size(), b.edges.size());
  for (size_t e = 0; e < a.edges.size(); ++e) {  // fields: padding differs
    EXPECT_EQ(a.edges[e].from, b.edges[e].from);
    EXPECT_EQ(a.edges[e].to, b.edges[e].to);
    EXPECT_EQ(a.edges[e].count, b.edges[e].count);
    EXPECT_EQ(a.edges[e].reversed, b.edges[e].reversed);
  }
  EXPECT_EQ(a.points, b.points);
  EXPECT_EQ(a.edge_point_begin, b.edge_point_begin);
  EXPECT_EQ(a.frames, b.frames);
}

struct Loaded {
  StringPool strings;
  Model model{&strings};
  DiagnosticSink diagnostics;
  Status status;
};

TEST(HierarchicalLayoutTest, ResNet18ByLayers) {
  std::string path =
      std::string(MI_SOURCE_DIR) + "/test/fixtures/resnet18/model.onnx";
  ASSERT_TRUE(std::filesystem::exists(path)) << "committed fixture missing";
  auto r = std::make_unique<Loaded>();
  importers::ImportContext ctx;
  ctx.path = path;
  ctx.model = &r->model;
  ctx.diagnostics = &r->diagnostics;
  r->status = importers::CreateOnnxImporter()->Import(ctx);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  LayoutInput in = BuildLayoutInput(r->model, GraphId(0));
  GroupTree groups = GroupsFromScopes(r->model, GraphId(0), in);
  int32_t layer2 = -1, layers = 0;
  for (size_t g = 1; g < groups.parent.size(); ++g) {
    if (groups.parent[g] != 0) continue;
    if (groups.label[g].rfind("layer", 0) == 0) ++layers;
    if (groups.label[g] == "layer2") layer2 = static_cast<int32_t>(g);
  }
  ASSERT_EQ(layers, 4);
  ASSERT_GE(layer2, 0);
  HierarchicalLayout h(in.nodes, in.edges, groups, {});
  for (size_t g = 1; g < groups.parent.size(); ++g) {
    if (groups.parent[g] == 0) h.SetExpanded(static_cast<int32_t>(g), false);
  }
  const HierarchicalResult& collapsed = h.Layout();
  // Stem (conv, relu, pool), head (pool, flatten, fc), input, output and
  // the four layer boxes.
  EXPECT_LE(collapsed.items.size(), 16u);
  // The chain layer1 -> layer2 -> layer3 -> layer4 stays connected.
  uint32_t edge_total = 0;
  for (const VisibleEdge& e : collapsed.edges) edge_total += e.count;
  EXPECT_GE(collapsed.edges.size(), collapsed.items.size() - 1);
  const GroupSummary& s2 = collapsed.groups[layer2];
  EXPECT_TRUE(s2.visible);
  EXPECT_FALSE(s2.expanded);
  EXPECT_GT(s2.node_count, 5u);
  ASSERT_GE(s2.top_ops[0], 0);
  EXPECT_EQ(groups.op_names[s2.top_ops[0]], "Conv");
  size_t before = collapsed.items.size();
  WriteSvg("resnet18_collapsed.svg", collapsed, groups);

  h.SetExpanded(layer2, true);
  const HierarchicalResult& open = h.Layout();
  EXPECT_EQ(open.items.size(), before - 1 + s2.node_count);
  EXPECT_TRUE(open.groups[layer2].expanded);
  ExpectNested(open, groups);
  WriteSvg("resnet18_layer2.svg", open, groups);
  ExpectRoutesConnectItems(open);
  h.SetSubtreeExpanded(0, true);
  ExpectRoutesConnectItems(h.Layout());
  // Layer 2's skip connections (its two residual adds) are drawn.
  uint32_t open_total = 0;
  for (const VisibleEdge& e : open.edges) open_total += e.count;
  EXPECT_GT(open_total, edge_total);
}

// The demo's compiled graph (ONNX Runtime "all" optimisations of the
// ResNet-18 fixture): ORT inserts ReorderOutput nodes without a scope
// between two convs of one residual block. Seen in a browser they sat at
// the top level, below the blocks, with dashed back edges into them.
TEST(HierarchicalLayoutTest, DemoCompiledGraphKeepsNodesInTheirBlocks) {
  std::string path = std::string(MI_SOURCE_DIR) +
                     "/test/fixtures/resnet18/ort_all/model.optimized.onnx";
  ASSERT_TRUE(std::filesystem::exists(path)) << "committed fixture missing";
  auto r = std::make_unique<Loaded>();
  importers::ImportContext ctx;
  ctx.path = path;
  ctx.model = &r->model;
  ctx.diagnostics = &r->diagnostics;
  r->status = importers::CreateOnnxImporter()->Import(ctx);
  ASSERT_TRUE(r->status.ok()) << r->status.ToString();
  LayoutInput in = BuildLayoutInput(r->model, GraphId(0));
  GroupTree groups = BuildGroups(r->model, GraphId(0), in, {});
  auto path_of = [&](int32_t g) {
    std::string p;
    for (; g > 0; g = groups.parent[g]) p = groups.label[g] + "/" + p;
    return p;
  };
  // Every ReorderOutput whose producer and consumer lie in one block is
  // in that block. From the fixture's graph (python3 onnx: each
  // ReorderOutput's producer -> consumer): ReorderOutput_token_45..48 sit
  // between two ops of layer1.0 / layer1.1; ReorderOutput (stem conv ->
  // max pool) and ReorderOutput_token_49 (avgpool -> Flatten) between
  // top-level ops.
  int top_level_reorders = 0, block_reorders = 0;
  for (size_t v = 0; v < in.nodes.size(); ++v) {
    if (in.kinds[v] != LayoutItemKind::kNode) continue;
    NodeId node = in.model_nodes[v];
    if (r->model.str(r->model.node_op_type(node)) != "ReorderOutput") continue;
    int32_t g = groups.node_group[v];
    if (g <= 0) {
      ++top_level_reorders;
    } else {
      ++block_reorders;
      EXPECT_EQ(path_of(g).rfind("layer", 0), 0u)
          << r->model.str(r->model.node_name(node)) << " in " << path_of(g);
    }
  }
  EXPECT_EQ(top_level_reorders, 2);
  EXPECT_EQ(block_reorders, 4);

  HierarchicalLayout h(in.nodes, in.edges, groups, {});
  auto check = [&](const HierarchicalResult& res, const char* what) {
    SCOPED_TRACE(what);
    // Nodes and folded groups inside the frames of the groups holding
    // them; frames inside their parents'.
    ExpectNested(res, groups);
    // No back edges: nothing in the graph is a cycle.
    for (const VisibleEdge& e : res.edges) EXPECT_FALSE(e.reversed);
    // Items never overlap.
    for (size_t i = 0; i < res.items.size(); ++i) {
      for (size_t j = i + 1; j < res.items.size(); ++j) {
        const Box& a = res.items[i].box;
        const Box& b = res.items[j].box;
        EXPECT_FALSE(a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h &&
                     b.y < a.y + a.h)
            << "items " << i << " and " << j << " overlap";
      }
    }
    ExpectRoutesConnectItems(res);
  };
  // The first screen: the four layers folded, nothing else.
  h.CollapseToOverview();
  const HierarchicalResult& overview = h.Layout();
  int folded_layers = 0;
  for (const VisibleItem& item : overview.items) {
    if (item.group >= 0 && groups.parent[item.group] == 0 &&
        groups.label[item.group].rfind("layer", 0) == 0) {
      ++folded_layers;
    }
  }
  EXPECT_EQ(folded_layers, 4);
  check(overview, "overview");
  // Unfolding layer1 incrementally, then everything.
  for (size_t g = 1; g < groups.parent.size(); ++g) {
    if (groups.label[g] == "layer1" && groups.parent[g] == 0) {
      h.SetSubtreeExpanded(static_cast<int32_t>(g), true);
    }
  }
  check(h.Layout(), "layer1 expanded");
  h.SetSubtreeExpanded(0, true);
  check(h.Layout(), "all expanded");
}

}  // namespace
}  // namespace mi::layout
