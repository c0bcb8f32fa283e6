#include "layout/layered_layout.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "layout/layered_layout_internal.h"

namespace mi::layout {
namespace layered_detail {

// keys[i] is the bucket of value values[i].
Csr BuildCsr(uint32_t n, std::span<const uint32_t> keys,
             std::span<const uint32_t> values) {
  Csr csr;
  csr.begin.assign(n + 1, 0);
  for (uint32_t k : keys) ++csr.begin[k + 1];
  for (uint32_t i = 0; i < n; ++i) csr.begin[i + 1] += csr.begin[i];
  csr.items.resize(keys.size());
  std::vector<uint32_t> fill(csr.begin.begin(), csr.begin.end() - 1);
  for (size_t i = 0; i < keys.size(); ++i)
    csr.items[fill[keys[i]]++] = values[i];
  return csr;
}

}  // namespace layered_detail

namespace {

using layered_detail::AssignCoordinates;
using layered_detail::BreakCycles;
using layered_detail::BuildCsr;
using layered_detail::kNone;
using layered_detail::Layered;
using layered_detail::OrderLayers;
using layered_detail::RankNodes;

// How far a self-loop sticks out of its node (room is reserved in the rank).
constexpr float kSelfLoopExtent = 14;

}  // namespace

LayoutResult LayeredLayout(std::span<const LayoutNode> nodes,
                           std::span<const LayoutEdge> edges,
                           const LayoutOptions& options) {
  LayoutResult result;
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  const uint32_t m = static_cast<uint32_t>(edges.size());
  const bool lr = options.direction == Direction::kLeftToRight;
  const uint64_t budget =
      options.work_budget != 0
          ? options.work_budget
          : LayoutOptions::kWorkPerElement * (uint64_t{n} + m + 1);
  uint64_t spent = 0;
  result.edge_reversed = BreakCycles(n, edges);

  // 1. Ranks on the acyclic edge set.
  std::vector<uint32_t> src, dst;
  src.reserve(m);
  dst.reserve(m);
  std::vector<uint8_t> has_loop(n, 0);
  for (uint32_t e = 0; e < m; ++e) {
    uint32_t a = edges[e].from, b = edges[e].to;
    if (a == b) {
      has_loop[a] = 1;
      continue;
    }
    if (result.edge_reversed[e]) std::swap(a, b);
    src.push_back(a);
    dst.push_back(b);
  }
  std::vector<int32_t> rank = RankNodes(n, src, dst, nodes, budget / 4, &spent);

  // 2. Proper layered graph with dummies on long edges. The long edges of
  // one source share one chain of dummies (edge concentration): each edge
  // leaves the chain one rank above its target. Without it a node feeding
  // every block of a model (an attention mask, a shared constant) needs
  // O(blocks x depth) dummies; with it, at most one per rank per source.
  Layered g;
  g.real_count = n;
  std::vector<uint32_t> chain_begin(n, kNone);
  std::vector<int32_t> chain_len(n, 0);
  for (size_t i = 0; i < src.size(); ++i) {
    chain_len[src[i]] =
        std::max(chain_len[src[i]], rank[dst[i]] - rank[src[i]] - 1);
  }
  uint64_t dummies = 0;
  for (uint32_t v = 0; v < n; ++v) {
    if (chain_len[v] > 0) {
      chain_begin[v] = n + static_cast<uint32_t>(dummies);
      dummies += static_cast<uint64_t>(chain_len[v]);
    }
  }
  g.count = n + static_cast<uint32_t>(dummies);
  g.rank = std::move(rank);
  g.rank.resize(g.count);
  g.size.resize(g.count, 0);
  g.depth.resize(g.count, 0);
  for (uint32_t v = 0; v < n; ++v) {
    float w = lr ? nodes[v].height : nodes[v].width;
    float h = lr ? nodes[v].width : nodes[v].height;
    g.size[v] = w + (has_loop[v] ? 2 * kSelfLoopExtent : 0);
    g.depth[v] = h;
  }
  std::vector<uint32_t> seg_up, seg_down;
  seg_up.reserve(src.size() + dummies);
  seg_down.reserve(src.size() + dummies);
  for (uint32_t v = 0; v < n; ++v) {
    uint32_t prev = v;
    for (int32_t k = 0; k < chain_len[v]; ++k) {
      uint32_t d = chain_begin[v] + static_cast<uint32_t>(k);
      g.rank[d] = g.rank[v] + 1 + k;
      seg_up.push_back(prev);
      seg_down.push_back(d);
      prev = d;
    }
  }
  for (size_t i = 0; i < src.size(); ++i) {
    int32_t span = g.rank[dst[i]] - g.rank[src[i]];
    seg_up.push_back(span == 1 ? src[i]
                               : chain_begin[src[i]] +
                                     static_cast<uint32_t>(span - 2));
    seg_down.push_back(dst[i]);
  }
  std::vector<uint32_t>().swap(src);
  std::vector<uint32_t>().swap(dst);
  g.down = BuildCsr(g.count, seg_up, seg_down);
  g.up = BuildCsr(g.count, seg_down, seg_up);
  std::vector<uint32_t>().swap(seg_up);
  std::vector<uint32_t>().swap(seg_down);
  g.rank_count = 0;
  for (uint32_t v = 0; v < g.count; ++v) {
    g.rank_count = std::max(g.rank_count, static_cast<uint32_t>(g.rank[v]) + 1);
  }
  g.layer_begin.assign(g.rank_count + 1, 0);
  for (uint32_t v = 0; v < g.count; ++v) ++g.layer_begin[g.rank[v] + 1];
  for (uint32_t r = 0; r < g.rank_count; ++r) {
    g.layer_begin[r + 1] += g.layer_begin[r];
  }
  g.order.resize(g.count);
  g.pos.resize(g.count);

  // 3. Crossing reduction. Its automatic budget scales with the proper
  // layered graph (dummies included), which is what a sweep visits.
  const uint64_t order_budget =
      options.work_budget != 0
          ? options.work_budget
          : LayoutOptions::kWorkPerElement *
                (uint64_t{g.count} + g.down.items.size() + 1);
  result.crossings = OrderLayers(g, order_budget, &spent);

  // 4. Coordinates: x within the rank, y per rank band.
  std::vector<float> x =
      AssignCoordinates(g, options.node_spacing, options.rank_spacing);
  std::vector<float> band(g.rank_count, 0), center(g.rank_count, 0);
  for (uint32_t v = 0; v < n; ++v) {
    band[g.rank[v]] = std::max(band[g.rank[v]], g.depth[v]);
  }
  float top = 0;
  for (uint32_t r = 0; r < g.rank_count; ++r) {
    center[r] = top + band[r] / 2;
    top += band[r] + options.rank_spacing;
  }
  float min_x = 0, max_x = 0;
  if (g.count > 0) {
    min_x = std::numeric_limits<float>::max();
    max_x = -min_x;
    for (uint32_t v = 0; v < g.count; ++v) {
      min_x = std::min(min_x, x[v] - g.size[v] / 2);
      max_x = std::max(max_x, x[v] + g.size[v] / 2);
    }
  }
  for (float& v : x) v -= min_x;
  float extent_x = max_x - min_x;
  float extent_y = g.rank_count > 0 ? top - options.rank_spacing : 0;

  // 5. Output in the requested orientation (layout space is x = in-rank,
  // y = rank axis; left-to-right swaps them).
  result.x.resize(n);
  result.y.resize(n);
  result.rank.assign(g.rank.begin(), g.rank.begin() + n);
  for (uint32_t v = 0; v < n; ++v) {
    float cx = x[v], cy = center[g.rank[v]];
    result.x[v] = lr ? cy : cx;
    result.y[v] = lr ? cx : cy;
  }
  result.width = lr ? extent_y : extent_x;
  result.height = lr ? extent_x : extent_y;
  result.edge_point_begin.resize(m + 1);
  result.points.reserve(static_cast<size_t>(m) * 6);
  // Routes are built in layout space; points inside a vertical run are
  // dropped, so an edge riding a shared straight dummy chain costs a few
  // points instead of one per rank (keeps the output linear in practice).
  // run_end[d - n]: the last dummy of d's chain in the same straight run.
  std::vector<uint32_t> run_end(dummies);
  for (uint32_t v = 0; v < n; ++v) {
    for (int32_t k = chain_len[v] - 1; k >= 0; --k) {
      uint32_t d = chain_begin[v] + static_cast<uint32_t>(k);
      bool straight = k + 1 < chain_len[v] && x[d + 1] == x[d];
      run_end[d - n] = straight ? run_end[d + 1 - n] : d;
    }
  }
  std::vector<float> route;
  auto put = [&route](float px, float py) {
    size_t k = route.size();
    if (k >= 4 && route[k - 2] == px && route[k - 4] == px) {
      route[k - 1] = py;
      return;
    }
    route.push_back(px);
    route.push_back(py);
  };
  for (uint32_t e = 0; e < m; ++e) {
    result.edge_point_begin[e] =
        static_cast<uint32_t>(result.points.size() / 2);
    route.clear();
    uint32_t a = edges[e].from, b = edges[e].to;
    if (a == b) {
      // The node's slot already includes the loop; draw it on the far side.
      float half = (g.size[a] / 2) - kSelfLoopExtent;
      float cx = x[a], cy = center[g.rank[a]];
      float dy = g.depth[a] / 4;
      route = {cx + half,
               cy - dy,
               cx + half + kSelfLoopExtent,
               cy - dy,
               cx + half + kSelfLoopExtent,
               cy + dy,
               cx + half,
               cy + dy};
    } else {
      bool rev = result.edge_reversed[e];
      if (rev) std::swap(a, b);
      put(x[a], center[g.rank[a]] + g.depth[a] / 2);
      uint32_t count = static_cast<uint32_t>(g.rank[b] - g.rank[a] - 1);
      for (uint32_t k = 0; k < count;) {
        // Through each band vertically: the dummy owns this slot of the
        // rank, so the route cannot cut through a neighbouring node. A
        // straight run of the chain is one segment (jumped in O(1)).
        uint32_t d = chain_begin[a] + k;
        uint32_t last = std::min(run_end[d - n], chain_begin[a] + count - 1);
        put(x[d], center[g.rank[d]] - band[g.rank[d]] / 2);
        put(x[d], center[g.rank[last]] + band[g.rank[last]] / 2);
        k = last - chain_begin[a] + 1;
      }
      put(x[b], center[g.rank[b]] - g.depth[b] / 2);
      if (rev) {
        // Stored from the real source to the real target.
        size_t points = route.size() / 2;
        for (size_t i = 0; i < points / 2; ++i) {
          std::swap(route[2 * i], route[2 * (points - 1 - i)]);
          std::swap(route[2 * i + 1], route[2 * (points - 1 - i) + 1]);
        }
      }
    }
    for (size_t i = 0; i < route.size(); i += 2) {
      result.points.push_back(lr ? route[i + 1] : route[i]);
      result.points.push_back(lr ? route[i] : route[i + 1]);
    }
  }
  result.edge_point_begin[m] = static_cast<uint32_t>(result.points.size() / 2);
  result.dummy_count = static_cast<uint32_t>(dummies);
  result.rank_count = g.rank_count;
  result.work_spent = spent;
  return result;
}

}  // namespace mi::layout
