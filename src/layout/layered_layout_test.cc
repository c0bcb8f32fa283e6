#include "layout/layered_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "layout/layout_test_graphs.h"

namespace mi::layout {
namespace {

using test_graphs::Graph;

LayoutResult LayOut(const Graph& g, LayoutOptions options = {}) {
  return LayeredLayout(g.nodes, g.edges, options);
}

// Structural invariants every layout must satisfy.
void CheckInvariants(const Graph& g, const LayoutResult& r,
                     const LayoutOptions& options = {}) {
  const size_t n = g.nodes.size();
  ASSERT_EQ(r.x.size(), n);
  ASSERT_EQ(r.y.size(), n);
  ASSERT_EQ(r.rank.size(), n);
  ASSERT_EQ(r.edge_reversed.size(), g.edges.size());
  ASSERT_EQ(r.edge_point_begin.size(), g.edges.size() + 1);
  ASSERT_EQ(r.points.size(), 2 * size_t{r.edge_point_begin.back()});
  const bool lr = options.direction == Direction::kLeftToRight;
  // Every non-loop edge goes down the ranks, unless it was reversed.
  for (size_t e = 0; e < g.edges.size(); ++e) {
    auto [a, b] = g.edges[e];
    ASSERT_GE(r.edge_point_begin[e + 1] - r.edge_point_begin[e], 2u);
    if (a == b) continue;
    if (r.edge_reversed[e]) {
      EXPECT_GT(r.rank[a], r.rank[b]) << "edge " << e;
    } else {
      EXPECT_LT(r.rank[a], r.rank[b]) << "edge " << e;
    }
  }
  // No two nodes of one rank overlap (along the in-rank axis).
  std::vector<std::vector<uint32_t>> layers;
  for (uint32_t v = 0; v < n; ++v) {
    if (layers.size() <= static_cast<size_t>(r.rank[v])) {
      layers.resize(r.rank[v] + 1);
    }
    layers[r.rank[v]].push_back(v);
  }
  for (auto& layer : layers) {
    auto along = [&](uint32_t v) { return lr ? r.y[v] : r.x[v]; };
    auto extent = [&](uint32_t v) {
      return lr ? g.nodes[v].height : g.nodes[v].width;
    };
    std::sort(layer.begin(), layer.end(),
              [&](uint32_t a, uint32_t b) { return along(a) < along(b); });
    for (size_t i = 1; i < layer.size(); ++i) {
      uint32_t a = layer[i - 1], b = layer[i];
      EXPECT_GE(along(b) - extent(b) / 2 + 1e-3f, along(a) + extent(a) / 2)
          << "nodes " << a << " and " << b << " overlap";
    }
  }
  // Everything lies inside the reported extent.
  for (uint32_t v = 0; v < n; ++v) {
    EXPECT_GE(r.x[v] - g.nodes[v].width / 2, -1e-3f);
    EXPECT_LE(r.x[v] + g.nodes[v].width / 2, r.width + 1e-3f);
    EXPECT_GE(r.y[v] - g.nodes[v].height / 2, -1e-3f);
    EXPECT_LE(r.y[v] + g.nodes[v].height / 2, r.height + 1e-3f);
  }
}

TEST(LayeredLayoutTest, EmptyGraph) {
  LayoutResult r = LayeredLayout({}, {}, {});
  EXPECT_TRUE(r.x.empty());
  EXPECT_EQ(r.edge_point_begin.size(), 1u);
  EXPECT_EQ(r.width, 0);
}

TEST(LayeredLayoutTest, ChainIsStraightAndRanked) {
  Graph g;
  for (int i = 0; i < 5; ++i) g.Add();
  for (uint32_t i = 0; i + 1 < 5; ++i) g.Edge(i, i + 1);
  LayoutResult r = LayOut(g);
  CheckInvariants(g, r);
  for (uint32_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r.rank[i], static_cast<int32_t>(i));
    EXPECT_FLOAT_EQ(r.x[i], r.x[0]);
  }
  EXPECT_FLOAT_EQ(r.y[1] - r.y[0], 36 + LayoutOptions().rank_spacing);
  // Edge 0 starts on the bottom border of node 0, ends on the top of node 1.
  EXPECT_FLOAT_EQ(r.points[1], r.y[0] + 18);
  EXPECT_FLOAT_EQ(r.points[3], r.y[1] - 18);
  EXPECT_EQ(r.crossings, 0u);
}

TEST(LayeredLayoutTest, CyclesAreBrokenAndMarked) {
  Graph g;
  for (int i = 0; i < 4; ++i) g.Add();
  g.Edge(0, 1);
  g.Edge(1, 2);
  g.Edge(2, 3);
  g.Edge(3, 1);  // loop back edge
  LayoutResult r = LayOut(g);
  CheckInvariants(g, r);
  EXPECT_EQ(r.edge_reversed, (std::vector<uint8_t>{0, 0, 0, 1}));
  // The reversed edge's polyline still runs from its source (3) to its
  // target (1): it starts at 3's top border.
  uint32_t p = r.edge_point_begin[3];
  EXPECT_FLOAT_EQ(r.points[2 * p + 1], r.y[3] - 18);
  uint32_t q = r.edge_point_begin[4] - 1;
  EXPECT_FLOAT_EQ(r.points[2 * q + 1], r.y[1] + 18);
}

TEST(LayeredLayoutTest, TwoCycleAndPureCycle) {
  Graph g;
  for (int i = 0; i < 5; ++i) g.Add();
  g.Edge(0, 1);
  g.Edge(1, 0);  // 2-cycle
  g.Edge(2, 3);
  g.Edge(3, 4);
  g.Edge(4, 2);  // cycle with no source at all
  LayoutResult r = LayOut(g);
  CheckInvariants(g, r);
  int reversed = 0;
  for (uint8_t b : r.edge_reversed) reversed += b;
  EXPECT_EQ(reversed, 2);
}

TEST(LayeredLayoutTest, SelfLoopsAreDrawnBesideTheNode) {
  Graph g;
  g.Add();
  g.Add();
  g.Edge(0, 0);
  g.Edge(0, 1);
  g.Edge(1, 1);
  LayoutResult r = LayOut(g);
  CheckInvariants(g, r);
  EXPECT_EQ(r.edge_reversed[0], 0);
  EXPECT_EQ(r.rank[0], 0);
  EXPECT_EQ(r.rank[1], 1);
  // A loop: 4 points, starting and ending on node 0's right border.
  ASSERT_EQ(r.edge_point_begin[1] - r.edge_point_begin[0], 4u);
  EXPECT_FLOAT_EQ(r.points[0], r.x[0] + 40);
  EXPECT_FLOAT_EQ(r.points[6], r.x[0] + 40);
  EXPECT_GT(r.points[2], r.x[0] + 40);
}

TEST(LayeredLayoutTest, MultiEdges) {
  Graph g;
  g.Add();
  g.Add();
  g.Add();
  g.Edge(0, 2);
  g.Edge(0, 2);
  g.Edge(0, 1);
  g.Edge(1, 2);
  LayoutResult r = LayOut(g);
  CheckInvariants(g, r);
  EXPECT_EQ(r.rank[2], 2);
  // Both copies of the long edge pass the dummy's band (border, band top,
  // band bottom, border; a vertical run merges into one segment) along the
  // same route.
  uint32_t points = r.edge_point_begin[1] - r.edge_point_begin[0];
  EXPECT_GE(points, 3u);
  EXPECT_LE(points, 4u);
  ASSERT_EQ(r.edge_point_begin[2] - r.edge_point_begin[1], points);
  for (uint32_t i = 0; i < 2 * points; ++i) {
    EXPECT_EQ(r.points[2 * r.edge_point_begin[0] + i],
              r.points[2 * r.edge_point_begin[1] + i]);
  }
  EXPECT_EQ(r.dummy_count, 1u);  // long edges of one source share dummies
}

TEST(LayeredLayoutTest, DisconnectedComponentsDoNotOverlap) {
  Graph g;
  for (int c = 0; c < 3; ++c) {
    uint32_t a = g.Add(), b = g.Add(120), d = g.Add();
    g.Edge(a, b);
    g.Edge(b, d);
  }
  g.Add(40, 20);  // isolated node
  LayoutResult r = LayOut(g);
  CheckInvariants(g, r);
  EXPECT_EQ(r.rank[9], 0);
}

TEST(LayeredLayoutTest, SourcesMoveNextToTheirConsumer) {
  // A long chain whose last node also reads a side input: the side input
  // belongs next to its consumer, not on rank 0.
  Graph g;
  for (int i = 0; i < 6; ++i) g.Add();
  for (uint32_t i = 0; i + 1 < 6; ++i) g.Edge(i, i + 1);
  uint32_t side = g.Add();
  g.Edge(side, 5);
  LayoutResult r = LayOut(g);
  CheckInvariants(g, r);
  EXPECT_EQ(r.rank[side], 4);
  EXPECT_EQ(r.dummy_count, 0u);
}

TEST(LayeredLayoutTest, SourceTreesHangFromTheirConsumer) {
  // Main chain 0..6; a three-node source chain (weight -> Reshape ->
  // Transpose) and a constant join it at node 6. Longest path would put
  // the branch on ranks 0..2 with a long edge down to 6.
  Graph g;
  for (int i = 0; i < 7; ++i) g.Add();
  for (uint32_t i = 0; i + 1 < 7; ++i) g.Edge(i, i + 1);
  uint32_t a = g.Add(), b = g.Add(), c = g.Add(), k = g.Add();
  g.Edge(a, b);
  g.Edge(k, b);
  g.Edge(b, c);
  g.Edge(c, 6);
  LayoutResult r = LayOut(g);
  CheckInvariants(g, r);
  EXPECT_EQ(r.rank[c], r.rank[6] - 1);
  EXPECT_EQ(r.rank[b], r.rank[6] - 2);
  EXPECT_EQ(r.rank[a], r.rank[6] - 3);
  EXPECT_EQ(r.rank[k], r.rank[6] - 3);
  EXPECT_EQ(r.dummy_count, 0u);
}

TEST(LayeredLayoutTest, PinnedPortsStayOnTheOuterRanks) {
  // A port feeding a node deep in a chain stays on rank 0 (balancing
  // would move an unpinned source down); an out-port goes below all.
  Graph g;
  for (int i = 0; i < 5; ++i) g.Add();
  for (uint32_t i = 0; i + 1 < 5; ++i) g.Edge(i, i + 1);
  uint32_t in = g.Add(0, 0), out = g.Add(0, 0), free_source = g.Add();
  g.nodes[in].pin = RankPin::kFirst;
  g.nodes[out].pin = RankPin::kLast;
  g.Edge(in, 3);
  g.Edge(1, out);
  g.Edge(free_source, 3);
  LayoutResult r = LayOut(g);
  CheckInvariants(g, r);
  // The port has rank 0 to itself: the chain starts on rank 1.
  EXPECT_EQ(r.rank[in], 0);
  for (uint32_t v = 0; v < 5; ++v)
    EXPECT_EQ(r.rank[v], static_cast<int>(v) + 1);
  EXPECT_EQ(r.rank[out], 6);
  EXPECT_EQ(r.rank[free_source], 3);
}

TEST(LayeredLayoutTest, SideInputsDoNotBendTheChain) {
  // A chain where every node also takes a constant (bias, scale): the
  // chain stays one straight line (within a few px: far less than the
  // 47 px step of a staircase), the constants hang beside it. Node 0 is a
  // source like the constants, so the line starts at node 1.
  Graph g;
  constexpr int kLength = 8;
  for (int i = 0; i < kLength; ++i) g.Add();
  for (uint32_t i = 0; i + 1 < kLength; ++i) g.Edge(i, i + 1);
  for (uint32_t i = 1; i < kLength; ++i) g.Edge(g.Add(60), i);
  LayoutResult r = LayOut(g);
  CheckInvariants(g, r);
  for (uint32_t i = 2; i < kLength; ++i) {
    EXPECT_NEAR(r.x[i], r.x[1], 6.0f) << "node " << i;
  }
}

TEST(LayeredLayoutTest, KnownCrossingsAreRemoved) {
  // Two edges given in crossing order: reduction must untangle them.
  Graph g;
  for (int i = 0; i < 4; ++i) g.Add();
  g.Edge(0, 3);
  g.Edge(1, 2);
  LayoutResult r = LayOut(g);
  CheckInvariants(g, r);
  EXPECT_EQ(r.crossings, 0u);
  // K(3,3) drawn in two layers has C(3,2)^2 = 9 crossings in any order.
  Graph k;
  for (int i = 0; i < 6; ++i) k.Add();
  for (uint32_t a = 0; a < 3; ++a) {
    for (uint32_t b = 3; b < 6; ++b) k.Edge(a, b);
  }
  LayoutResult rk = LayOut(k);
  CheckInvariants(k, rk);
  EXPECT_EQ(rk.crossings, 9u);
}

TEST(LayeredLayoutTest, BilayerCrossingCount) {
  // Upper nodes in order, each with its lower ends sorted: 0->{1}, 1->{0}.
  std::vector<uint32_t> south = {1, 0};
  EXPECT_EQ(CountBilayerCrossings(south, 2), 1u);
  south = {0, 1, 2};
  EXPECT_EQ(CountBilayerCrossings(south, 3), 0u);
  south = {2, 1, 0};
  EXPECT_EQ(CountBilayerCrossings(south, 3), 3u);
  south = {0, 2, 1, 1};  // 0->{0,2}, 1->{1}, 2->{1}
  EXPECT_EQ(CountBilayerCrossings(south, 3), 2u);
}

TEST(LayeredLayoutTest, LongChainDoesNotOverflowTheStack) {
  Graph g;
  const uint32_t n = 100000;
  for (uint32_t i = 0; i < n; ++i) g.Add();
  for (uint32_t i = 0; i + 1 < n; ++i) g.Edge(i, i + 1);
  g.Edge(n - 1, 0);  // and one huge cycle
  LayoutResult r = LayOut(g);
  EXPECT_EQ(r.rank[n - 1], static_cast<int32_t>(n - 1));
  EXPECT_EQ(r.edge_reversed[n - 1], 1);
  EXPECT_EQ(r.crossings, 0u);
  EXPECT_FLOAT_EQ(r.x[n - 1], r.x[0]);
}

TEST(LayeredLayoutTest, Deterministic) {
  Graph g = test_graphs::BranchyDag(3000, 7);
  g.Edge(2500, 10);  // a few back edges
  g.Edge(1200, 5);
  LayoutResult a = LayOut(g), b = LayOut(g);
  CheckInvariants(g, a);
  auto same = [](const auto& u, const auto& v) {
    return u.size() == v.size() &&
           std::memcmp(u.data(), v.data(), u.size() * sizeof(u[0])) == 0;
  };
  EXPECT_TRUE(same(a.x, b.x));
  EXPECT_TRUE(same(a.y, b.y));
  EXPECT_TRUE(same(a.points, b.points));
  EXPECT_TRUE(same(a.edge_point_begin, b.edge_point_begin));
  EXPECT_TRUE(same(a.rank, b.rank));
  EXPECT_TRUE(same(a.edge_reversed, b.edge_reversed));
  EXPECT_EQ(a.crossings, b.crossings);
}

TEST(LayeredLayoutTest, TransformerStackInvariants) {
  Graph g = test_graphs::TransformerStack(2000);
  LayoutResult r = LayOut(g);
  CheckInvariants(g, r);
  // Residual stacks lay out nearly crossing-free.
  EXPECT_LT(r.crossings, g.nodes.size() / 20);
}

TEST(LayeredLayoutTest, LeftToRightSwapsAxes) {
  Graph g = test_graphs::TransformerStack(300);
  LayoutOptions lr;
  lr.direction = Direction::kLeftToRight;
  LayoutResult a = LayOut(g), b = LayOut(g, lr);
  CheckInvariants(g, b, lr);
  EXPECT_EQ(a.rank, b.rank);
  // Ranks now advance along x.
  for (size_t e = 0; e < g.edges.size(); ++e) {
    auto [u, v] = g.edges[e];
    EXPECT_LT(b.x[u], b.x[v]);
  }
}

TEST(LayeredLayoutTest, SmallBudgetStillValid) {
  Graph g = test_graphs::BranchyDag(2000, 3);
  LayoutOptions tiny;
  tiny.work_budget = 1;
  LayoutResult r = LayOut(g, tiny);
  CheckInvariants(g, r);
  LayoutResult full = LayOut(g);
  EXPECT_LE(full.crossings, r.crossings);
}

}  // namespace
}  // namespace mi::layout
