#pragma once

// Layered (Sugiyama) layout of a directed graph: cycle breaking, budgeted
// rank balancing, dummy nodes for long edges, crossing reduction, Brandes–Köpf
// coordinates and polyline edge routes. Pure geometry: it knows nothing of
// the model (see model_layout.h for the adapter), so it can be tested and
// benchmarked on generated graphs. Every phase is linear or O(E log V) per
// pass, and the passes that iterate are bounded by a work budget, so
// 100,000-node graphs lay out in seconds.

#include <cstdint>
#include <span>
#include <vector>

namespace mi::layout {

enum class Direction : uint8_t { kTopToBottom, kLeftToRight };

// Rank constraints, for the ports of a compound node's contents: edges from
// outside enter at the top rank and leave from the bottom one.
enum class RankPin : uint8_t { kNone, kFirst, kLast };

struct LayoutNode {
  float width = 0, height = 0;
  // kFirst: a source kept on rank 0 (not moved down by balancing); kLast: a
  // sink on a rank of its own below every other node.
  RankPin pin = RankPin::kNone;
};

// Multi-edges and self-loops are allowed.
struct LayoutEdge {
  uint32_t from = 0, to = 0;
};

struct LayoutOptions {
  Direction direction = Direction::kTopToBottom;
  // Gap between neighbouring nodes of one rank (dummies take a quarter each
  // side, so bundles of long edges stay tight).
  float node_spacing = 24;
  // Gap between the bands of two consecutive ranks.
  // Graphviz dot's default ranksep (0.5 in = 36 pt): room for one line of
  // shape label between ranks, and a fair basis for edge-length comparisons.
  float rank_spacing = 36;
  // Bounds the iterative phases (rank balancing rounds after the first,
  // crossing-reduction sweeps and transpositions), in work units of about
  // one node or edge visit. 0 = automatic: kWorkPerElement per element
  // (nodes + edges for ranking; nodes + dummies + segments for ordering),
  // so the cost stays linear in the graph.
  uint64_t work_budget = 0;
  static constexpr uint64_t kWorkPerElement = 64;
};

struct LayoutResult {
  std::vector<float> x, y;  // node centres
  // CSR per input edge (size edges + 1), counted in points (x,y pairs):
  // edge e owns floats points[2 * begin[e] .. 2 * begin[e + 1]).
  std::vector<uint32_t> edge_point_begin;
  // Polyline x,y pairs per edge, from the source border to the target border.
  std::vector<float> points;
  std::vector<uint8_t> edge_reversed;  // 1 = back edge of a cycle
  std::vector<int32_t> rank;           // per node
  float width = 0, height = 0;
  uint64_t crossings = 0;  // between adjacent ranks after reduction
  // Diagnostics for benchmarks and the README figures.
  uint32_t dummy_count = 0;
  uint32_t rank_count = 0;
  uint64_t work_spent = 0;
};

LayoutResult LayeredLayout(std::span<const LayoutNode> nodes,
                           std::span<const LayoutEdge> edges,
                           const LayoutOptions& options);

// Crossings between two adjacent ranks (Barth–Jünger–Mutzel accumulator
// tree, O(E log V)). `south_positions` lists, for the upper rank's nodes in
// order and each node's edges sorted by lower position, the position of the
// lower end; `south_count` is the size of the lower rank. Exposed for tests.
uint64_t CountBilayerCrossings(std::span<const uint32_t> south_positions,
                               uint32_t south_count);

}  // namespace mi::layout
