#pragma once

// Internal to the layered layout (layered_layout.h): what its phases share.
// LayeredLayout (layered_layout.cc) breaks cycles and ranks the nodes
// (layered_ranking.cc), builds the proper layered graph with dummies,
// orders each rank to reduce crossings (layered_ordering.cc), assigns
// coordinates (layered_coordinates.cc) and routes the edges.

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "layout/layered_layout.h"

namespace mi::layout::layered_detail {

inline constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// Compressed adjacency: items[begin[v] .. begin[v+1]). Built by a counting
// sort that keeps the input order of each node's items, which is what makes
// every later traversal deterministic.
struct Csr {
  std::vector<uint32_t> begin;
  std::vector<uint32_t> items;
  std::span<const uint32_t> Of(uint32_t v) const {
    return {items.data() + begin[v], items.data() + begin[v + 1]};
  }
  uint32_t Degree(uint32_t v) const { return begin[v + 1] - begin[v]; }
};

// keys[i] is the bucket of value values[i].
Csr BuildCsr(uint32_t n, std::span<const uint32_t> keys,
             std::span<const uint32_t> values);

// The proper layered graph: real nodes 0..n-1, dummies after them, every
// segment spanning exactly one rank.
struct Layered {
  uint32_t real_count = 0;
  uint32_t count = 0;         // real + dummies
  std::vector<int32_t> rank;  // per layered node
  std::vector<float> size;    // extent along the rank (in-rank axis)
  std::vector<float> depth;   // extent across the rank
  Csr down, up;               // segment neighbours
  // Layers: nodes of rank r are order[layer_begin[r] .. layer_begin[r+1]).
  std::vector<uint32_t> layer_begin;
  std::vector<uint32_t> order;
  std::vector<uint32_t> pos;  // index within its layer
  uint32_t rank_count = 0;

  bool IsDummy(uint32_t v) const { return v >= real_count; }
  std::span<uint32_t> Layer(uint32_t r) {
    return {order.data() + layer_begin[r], order.data() + layer_begin[r + 1]};
  }
};

// Cycle breaking: 1 per edge reversed to make the graph acyclic.
std::vector<uint8_t> BreakCycles(uint32_t n, std::span<const LayoutEdge> edges);

// Ranks of the nodes on the acyclic edges src[i] -> dst[i], pins applied;
// balancing rounds after the first stop within `budget`.
std::vector<int32_t> RankNodes(uint32_t n, std::span<const uint32_t> src,
                               std::span<const uint32_t> dst,
                               std::span<const LayoutNode> nodes,
                               uint64_t budget, uint64_t* spent);

// Crossing reduction: puts the best order found within `budget` into
// g.order and g.pos and returns its crossings.
uint64_t OrderLayers(Layered& g, uint64_t budget, uint64_t* spent);

// Coordinate assignment: the x (in-rank axis) of every layered node.
std::vector<float> AssignCoordinates(Layered& g, float spacing,
                                     float rank_spacing);

}  // namespace mi::layout::layered_detail
