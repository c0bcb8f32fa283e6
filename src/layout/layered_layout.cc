#include "layout/layered_layout.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace mi::layout {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
// How far a self-loop sticks out of its node (room is reserved in the rank).
constexpr float kSelfLoopExtent = 14;

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

// Iterative DFS (deep graphs must not overflow the stack). Edges to a node
// still on the DFS stack close a cycle and are reversed. Sources are tried
// first so that the DFS follows the data flow and only true back edges of
// loops get reversed.
std::vector<uint8_t> BreakCycles(uint32_t n,
                                 std::span<const LayoutEdge> edges) {
  std::vector<uint8_t> reversed(edges.size(), 0);
  std::vector<uint32_t> keys, values;
  std::vector<uint32_t> in_degree(n, 0);
  for (uint32_t e = 0; e < edges.size(); ++e) {
    if (edges[e].from == edges[e].to) continue;
    keys.push_back(edges[e].from);
    values.push_back(e);
    ++in_degree[edges[e].to];
  }
  Csr out = BuildCsr(n, keys, values);
  std::vector<uint8_t> state(n, 0);  // 0 new, 1 on stack, 2 done
  std::vector<std::pair<uint32_t, uint32_t>> stack;  // node, next item
  auto run = [&](uint32_t s) {
    state[s] = 1;
    stack.emplace_back(s, out.begin[s]);
    while (!stack.empty()) {
      size_t top = stack.size() - 1;
      uint32_t v = stack[top].first;
      if (stack[top].second < out.begin[v + 1]) {
        uint32_t e = out.items[stack[top].second++];
        uint32_t w = edges[e].to;
        if (state[w] == 1) {
          reversed[e] = 1;
        } else if (state[w] == 0) {
          state[w] = 1;
          stack.emplace_back(w, out.begin[w]);
        }
      } else {
        state[v] = 2;
        stack.pop_back();
      }
    }
  };
  for (uint32_t v = 0; v < n; ++v) {
    if (in_degree[v] == 0 && state[v] == 0) run(v);
  }
  for (uint32_t v = 0; v < n; ++v) {
    if (state[v] == 0) run(v);
  }
  return reversed;
}

// Longest-path ranking, then balancing: a node whose out-edges outnumber its
// in-edges shortens the total edge length by moving down to just above its
// closest successor (this is what puts weights and side inputs next to
// their consumer instead of on rank 0), and a node with more in-edges moves
// up to just below its lowest predecessor. Each pass is O(V + E) and every
// move strictly shortens the total edge length, so the rounds converge; the
// budget caps them anyway. This replaces network simplex, which is
// super-linear on branchy DAGs.
std::vector<int32_t> RankNodes(uint32_t n, std::span<const uint32_t> src,
                               std::span<const uint32_t> dst,
                               std::span<const LayoutNode> nodes,
                               uint64_t budget, uint64_t* spent) {
  auto pinned = [&](uint32_t v) { return nodes[v].pin != RankPin::kNone; };
  Csr succ = BuildCsr(n, src, dst);
  Csr pred = BuildCsr(n, dst, src);
  std::vector<uint32_t> topo;
  topo.reserve(n);
  std::vector<uint32_t> pending(n);
  for (uint32_t v = 0; v < n; ++v) {
    pending[v] = pred.Degree(v);
    if (pending[v] == 0) topo.push_back(v);
  }
  for (size_t i = 0; i < topo.size(); ++i) {
    for (uint32_t w : succ.Of(topo[i])) {
      if (--pending[w] == 0) topo.push_back(w);
    }
  }
  std::vector<int32_t> rank(n, 0);
  for (uint32_t v : topo) {
    for (uint32_t w : succ.Of(v)) rank[w] = std::max(rank[w], rank[v] + 1);
  }
  // Source trees hang from their consumer: a node with one out-edge whose
  // ancestors all have one out-edge too (a weight -> Reshape -> Transpose
  // branch feeding an attention MatMul) has no edge from outside, so moving
  // the whole tree down until every edge in it spans one rank only shortens
  // the edge into the consumer. Network simplex finds this; per-node
  // balancing cannot, since a chain node's move alone is neutral.
  {
    std::vector<uint8_t> closed(n, 0);
    for (uint32_t v : topo) {
      if (succ.Degree(v) != 1 || pinned(v)) continue;
      bool all = true;
      for (uint32_t u : pred.Of(v)) all = all && closed[u];
      closed[v] = all ? 1 : 0;
    }
    for (size_t i = topo.size(); i-- > 0;) {
      uint32_t v = topo[i];
      if (closed[v]) rank[v] = std::max(rank[v], rank[succ.Of(v)[0]] - 1);
    }
  }
  const uint64_t pass_cost = n + src.size() + 1;
  *spent += pass_cost;
  // The first round always runs: it is linear, and without it every
  // constant and side input sits on rank 0 with a dummy per rank down to
  // its consumer (millions of dummies on a deep model).
  for (int round = 0;
       round < 8 && (round == 0 || *spent + 2 * pass_cost <= budget); ++round) {
    bool moved = false;
    for (size_t i = topo.size(); i-- > 0;) {
      uint32_t v = topo[i];
      uint32_t out_degree = succ.Degree(v), in_degree = pred.Degree(v);
      if (out_degree == 0 || out_degree <= in_degree || pinned(v)) continue;
      int32_t lowest = std::numeric_limits<int32_t>::max();
      for (uint32_t w : succ.Of(v)) lowest = std::min(lowest, rank[w] - 1);
      if (lowest > rank[v]) {
        rank[v] = lowest;
        moved = true;
      }
    }
    for (uint32_t v : topo) {
      uint32_t out_degree = succ.Degree(v), in_degree = pred.Degree(v);
      if (in_degree == 0 || in_degree <= out_degree || pinned(v)) continue;
      int32_t highest = std::numeric_limits<int32_t>::min();
      for (uint32_t u : pred.Of(v)) highest = std::max(highest, rank[u] + 1);
      if (highest < rank[v]) {
        rank[v] = highest;
        moved = true;
      }
    }
    *spent += 2 * pass_cost;
    if (!moved) break;
  }
  int32_t min_rank = 0;
  if (n > 0) min_rank = *std::min_element(rank.begin(), rank.end());
  for (int32_t& r : rank) r -= min_rank;
  // Pins: first-pinned sources get rank 0 to themselves (everything else
  // moves down so that none of it shares their rank: a port rank has no
  // height, so a frame's edge can pass through it); last-pinned sinks go
  // one rank below everything else.
  bool any_first = false;
  int32_t lowest_other = std::numeric_limits<int32_t>::max();
  for (uint32_t v = 0; v < n; ++v) {
    if (nodes[v].pin == RankPin::kFirst && pred.Degree(v) == 0) {
      any_first = true;
    } else {
      lowest_other = std::min(lowest_other, rank[v]);
    }
  }
  if (any_first) {
    int32_t shift = lowest_other < 1 ? 1 - lowest_other : 0;
    for (uint32_t v = 0; v < n; ++v) {
      if (nodes[v].pin == RankPin::kFirst && pred.Degree(v) == 0) {
        rank[v] = 0;
      } else {
        rank[v] += shift;
      }
    }
  }
  int32_t bottom = -1;
  bool any_last = false;
  for (uint32_t v = 0; v < n; ++v) {
    if (nodes[v].pin == RankPin::kLast) {
      any_last = true;
    } else {
      bottom = std::max(bottom, rank[v]);
    }
  }
  if (any_last) {
    for (uint32_t v = 0; v < n; ++v) {
      if (nodes[v].pin == RankPin::kLast && succ.Degree(v) == 0) {
        rank[v] = bottom + 1;
      }
    }
  }
  return rank;
}

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

// Crossings between two adjacent layers (Barth, Juenger, Mutzel): the
// positions of the lower ends of the edges, in the order of their upper
// ends, counted with an accumulator tree in O(E log V). `tree` is scratch.
uint64_t AccumulatorTreeCrossings(std::span<const uint32_t> south,
                                  uint32_t south_count,
                                  std::vector<uint32_t>& tree) {
  uint32_t first_index = 1;
  while (first_index < south_count) first_index *= 2;
  tree.assign(2 * first_index - 1, 0);
  uint64_t crossings = 0;
  for (uint32_t p : south) {
    uint32_t index = p + first_index - 1;
    ++tree[index];
    while (index > 0) {
      if (index % 2 == 1) crossings += tree[index + 1];
      index = (index - 1) / 2;
      ++tree[index];
    }
  }
  return crossings;
}

uint64_t CountLayerCrossings(const Layered& g, uint32_t r,
                             std::vector<uint32_t>& south,
                             std::vector<uint32_t>& tree) {
  south.clear();
  for (uint32_t i = g.layer_begin[r]; i < g.layer_begin[r + 1]; ++i) {
    size_t first = south.size();
    for (uint32_t w : g.down.Of(g.order[i])) south.push_back(g.pos[w]);
    std::sort(south.begin() + first, south.end());
  }
  uint32_t south_count = g.layer_begin[r + 2] - g.layer_begin[r + 1];
  return AccumulatorTreeCrossings(south, south_count, tree);
}

uint64_t CountAllCrossings(const Layered& g, std::vector<uint32_t>& south,
                           std::vector<uint32_t>& tree) {
  uint64_t total = 0;
  for (uint32_t r = 0; r + 1 < g.rank_count; ++r) {
    total += CountLayerCrossings(g, r, south, tree);
  }
  return total;
}

// Crossings among the edges of u and v (u left of v) on one side.
uint64_t PairCrossings(const Layered& g, const Csr& side, uint32_t u,
                       uint32_t v) {
  uint64_t c = 0;
  for (uint32_t a : side.Of(u)) {
    for (uint32_t b : side.Of(v)) c += g.pos[a] > g.pos[b];
  }
  return c;
}

class Orderer {
 public:
  Orderer(Layered& g, uint64_t budget, uint64_t* spent)
      : g_(g), budget_(budget), spent_(spent) {}

  uint64_t Run() {
    InitialOrder();
    uint64_t best = CountAllCrossings(g_, south_, tree_);
    const uint64_t size = g_.count + g_.down.items.size() + 1;
    *spent_ += size;
    if (best == 0) return 0;
    std::vector<uint32_t> best_order = g_.order;
    int without_gain = 0;
    // One iteration: a down sweep, an up sweep, transpositions, a count.
    for (int iter = 0; iter < 24 && without_gain < 3; ++iter) {
      if (*spent_ + 6 * size > budget_) break;
      Sweep(/*down=*/iter % 2 == 0);
      Sweep(/*down=*/iter % 2 != 0);
      Transpose();
      uint64_t c = CountAllCrossings(g_, south_, tree_);
      *spent_ += 4 * size;
      if (c < best) {
        best = c;
        best_order = g_.order;
        without_gain = 0;
        if (c == 0) break;
      } else {
        ++without_gain;
      }
    }
    g_.order = std::move(best_order);
    RefreshPositions();
    return best;
  }

 private:
  // DFS preorder along the data flow: children land next to each other in
  // every layer, which is already crossing-free for trees and chains.
  void InitialOrder() {
    std::vector<uint32_t> by_rank =
        BucketByRank();  // nodes sorted by (rank, index)
    std::vector<uint32_t> fill(g_.layer_begin.begin(),
                               g_.layer_begin.end() - 1);
    std::vector<uint8_t> seen(g_.count, 0);
    std::vector<std::pair<uint32_t, uint32_t>> stack;
    for (uint32_t s : by_rank) {
      if (seen[s]) continue;
      seen[s] = 1;
      g_.order[fill[g_.rank[s]]++] = s;
      stack.emplace_back(s, g_.down.begin[s]);
      while (!stack.empty()) {
        auto& [v, next] = stack.back();
        if (next < g_.down.begin[v + 1]) {
          uint32_t w = g_.down.items[next++];
          if (!seen[w]) {
            seen[w] = 1;
            g_.order[fill[g_.rank[w]]++] = w;
            stack.emplace_back(w, g_.down.begin[w]);
          }
        } else {
          stack.pop_back();
        }
      }
    }
    RefreshPositions();
  }

  std::vector<uint32_t> BucketByRank() {
    std::vector<uint32_t> fill(g_.layer_begin.begin(),
                               g_.layer_begin.end() - 1);
    std::vector<uint32_t> out(g_.count);
    for (uint32_t v = 0; v < g_.count; ++v) out[fill[g_.rank[v]]++] = v;
    return out;
  }

  void RefreshPositions() {
    for (uint32_t r = 0; r < g_.rank_count; ++r) {
      for (uint32_t i = g_.layer_begin[r]; i < g_.layer_begin[r + 1]; ++i) {
        g_.pos[g_.order[i]] = i - g_.layer_begin[r];
      }
    }
  }

  // Barycenter sweep: each layer is sorted by the mean position of its
  // neighbours in the previous layer of the sweep. Nodes without such
  // neighbours keep their relative place (their key is their own position
  // rescaled to the neighbour layer's width).
  void Sweep(bool down) {
    const Csr& side = down ? g_.up : g_.down;
    for (uint32_t step = 1; step < g_.rank_count; ++step) {
      uint32_t r = down ? step : g_.rank_count - 1 - step;
      uint32_t adjacent = down ? r - 1 : r + 1;
      std::span<uint32_t> layer = g_.Layer(r);
      float scale = static_cast<float>(g_.layer_begin[adjacent + 1] -
                                       g_.layer_begin[adjacent]) /
                    static_cast<float>(layer.size());
      keyed_.clear();
      for (uint32_t v : layer) {
        float key;
        auto nbrs = side.Of(v);
        if (nbrs.empty()) {
          key = static_cast<float>(g_.pos[v]) * scale;
        } else {
          double sum = 0;
          for (uint32_t w : nbrs) sum += g_.pos[w];
          key = static_cast<float>(sum / static_cast<double>(nbrs.size()));
        }
        keyed_.emplace_back(key, v);
      }
      std::stable_sort(
          keyed_.begin(), keyed_.end(),
          [](const auto& a, const auto& b) { return a.first < b.first; });
      for (size_t i = 0; i < layer.size(); ++i) {
        layer[i] = keyed_[i].second;
        g_.pos[layer[i]] = static_cast<uint32_t>(i);
      }
    }
  }

  // Swaps neighbours in a layer while that lowers the crossings with both
  // adjacent layers (Gansner et al.'s transpose heuristic).
  void Transpose() {
    for (int round = 0; round < 4; ++round) {
      bool improved = false;
      for (uint32_t r = 0; r < g_.rank_count; ++r) {
        std::span<uint32_t> layer = g_.Layer(r);
        for (size_t i = 0; i + 1 < layer.size(); ++i) {
          uint32_t u = layer[i], v = layer[i + 1];
          uint64_t cost = (g_.up.Degree(u) + 1) * (g_.up.Degree(v) + 1) +
                          (g_.down.Degree(u) + 1) * (g_.down.Degree(v) + 1);
          *spent_ += cost;
          if (cost > 4096) continue;  // hubs: not worth the quadratic count
          uint64_t keep =
              PairCrossings(g_, g_.up, u, v) + PairCrossings(g_, g_.down, u, v);
          if (keep == 0) continue;
          uint64_t swap =
              PairCrossings(g_, g_.up, v, u) + PairCrossings(g_, g_.down, v, u);
          if (swap < keep) {
            layer[i] = v;
            layer[i + 1] = u;
            g_.pos[v] = static_cast<uint32_t>(i);
            g_.pos[u] = static_cast<uint32_t>(i + 1);
            improved = true;
          }
        }
      }
      if (!improved || *spent_ > budget_) break;
    }
  }

  Layered& g_;
  uint64_t budget_;
  uint64_t* spent_;
  std::vector<uint32_t> south_, tree_;
  std::vector<std::pair<float, uint32_t>> keyed_;
};

// Brandes–Köpf coordinate assignment (with dagre's handling of node sizes):
// four alignments (up/down x left/right), each aligning nodes with a median
// neighbour into vertical blocks and compacting the blocks, then balanced.
// Chains of dummies become straight vertical lines because inner segments
// (dummy-dummy) win every type-1 conflict.
class Coordinates {
 public:
  Coordinates(Layered& g, float spacing, float rank_spacing)
      : g_(g), spacing_(spacing), rank_spacing_(rank_spacing) {}

  std::vector<float> Run() {
    MarkType1Conflicts();
    std::vector<std::vector<float>> xss;
    for (int vertical = 0; vertical < 2; ++vertical) {
      for (int horizontal = 0; horizontal < 2; ++horizontal) {
        xss.push_back(Align(vertical == 0, horizontal == 0));
      }
    }
    // Align all four to the narrowest one, then take the average median.
    size_t narrowest = 0;
    float best_width = std::numeric_limits<float>::max();
    std::vector<float> mins(4), maxs(4);
    for (size_t i = 0; i < 4; ++i) {
      float lo = std::numeric_limits<float>::max(), hi = -lo;
      for (uint32_t v = 0; v < g_.count; ++v) {
        lo = std::min(lo, xss[i][v] - g_.size[v] / 2);
        hi = std::max(hi, xss[i][v] + g_.size[v] / 2);
      }
      mins[i] = lo;
      maxs[i] = hi;
      if (hi - lo < best_width) {
        best_width = hi - lo;
        narrowest = i;
      }
    }
    for (size_t i = 0; i < 4; ++i) {
      bool left = i % 2 == 0;
      float delta =
          left ? mins[narrowest] - mins[i] : maxs[narrowest] - maxs[i];
      for (float& x : xss[i]) x += delta;
    }
    std::vector<float> x(g_.count);
    for (uint32_t v = 0; v < g_.count; ++v) {
      float a[4] = {xss[0][v], xss[1][v], xss[2][v], xss[3][v]};
      std::sort(a, a + 4);
      x[v] = (a[1] + a[2]) / 2;
    }
    // Balancing can, rarely, pull two neighbours closer than their
    // separation; one left-to-right pass restores it.
    for (uint32_t r = 0; r < g_.rank_count; ++r) {
      auto layer = g_.Layer(r);
      for (size_t i = 1; i < layer.size(); ++i) {
        float min_x = x[layer[i - 1]] + Separation(layer[i - 1], layer[i]);
        if (x[layer[i]] < min_x) x[layer[i]] = min_x;
      }
    }
    // BK keeps every block straight, which on dense graphs with many long
    // edges staircases the blocks sideways (twice the width of a packed
    // layout on a 10k-node branchy DAG). There a median placement is
    // shorter; it wins only when it is both narrower and clearly shorter,
    // since on deep residual stacks it is shorter but drifts sideways.
    std::vector<float> packed = MedianPlacement();
    if (Width(packed) < Width(x) &&
        HorizontalLength(packed) < 0.75 * HorizontalLength(x)) {
      x = std::move(packed);
    }
    // A single alignment keeps chains straight and hangs side inputs
    // beside them, where the balanced one centres every join between its
    // inputs and the chain steps sideways at each. The two shortest of the
    // five candidates (not much wider than the balanced one) are polished
    // and the shorter wins.
    float balanced_width = Width(x);
    std::vector<std::pair<double, size_t>> ranked{{DrawnLength(x), 4}};
    for (size_t i = 0; i < 4; ++i) {
      if (Width(xss[i]) <= 1.5f * balanced_width) {
        ranked.push_back({DrawnLength(xss[i]), i});
      }
    }
    std::sort(ranked.begin(), ranked.end());
    xss.push_back(std::move(x));
    double best_length = std::numeric_limits<double>::max();
    size_t best = ranked[0].second;
    for (size_t k = 0; k < std::min<size_t>(2, ranked.size()); ++k) {
      size_t i = ranked[k].second;
      Polish(xss[i]);
      double length = DrawnLength(xss[i]);
      if (length < best_length) {
        best_length = length;
        best = i;
      }
    }
    x = std::move(xss[best]);
    return x;
  }

 private:
  float Width(const std::vector<float>& x) const {
    float lo = std::numeric_limits<float>::max(), hi = -lo;
    for (uint32_t v = 0; v < g_.count; ++v) {
      lo = std::min(lo, x[v] - g_.size[v] / 2);
      hi = std::max(hi, x[v] + g_.size[v] / 2);
    }
    return g_.count ? hi - lo : 0;
  }

  double HorizontalLength(const std::vector<float>& x) const {
    double sum = 0;
    for (uint32_t v = 0; v < g_.count; ++v) {
      for (uint32_t w : g_.down.Of(v)) sum += std::fabs(x[v] - x[w]);
    }
    return sum;
  }

  // What a reader sees: each segment crosses a gap between rank bands
  // diagonally, so a small sideways step costs little and a big one about
  // its width (the segment's length minus the gap).
  // Edges of leaves (a constant with one consumer, an output) count a
  // quarter:
  // when either the chain or its side input must bend, the side input
  // should, so the main path reads as one straight line.
  double DrawnLength(const std::vector<float>& x) const {
    double sum = 0;
    double gap = rank_spacing_;
    for (uint32_t v = 0; v < g_.count; ++v) {
      for (uint32_t w : g_.down.Of(v)) {
        double dx = x[v] - x[w];
        sum += LeafFactor(v, w) * (std::sqrt(dx * dx + gap * gap) - gap +
                                   kStraightness * std::fabs(dx));
      }
    }
    return sum;
  }

  // Near 0 the drawn length grows only quadratically, so on its own it
  // prefers a chain drifting a few px per node to a straight chain with
  // side inputs beside it; a linear term keeps chains straight.
  static constexpr double kStraightness = 0.25;

  // v is the upper end, w the lower end of a segment.
  float LeafFactor(uint32_t v, uint32_t w) const {
    bool leaf_source =
        !g_.IsDummy(v) && g_.up.Degree(v) == 0 && g_.down.Degree(v) == 1;
    bool leaf_sink =
        !g_.IsDummy(w) && g_.down.Degree(w) == 0 && g_.up.Degree(w) == 1;
    return leaf_source || leaf_sink ? 0.25f : 1.0f;
  }

  struct PavScratch {
    std::vector<float> prefix;
    std::vector<double> sum, weight;
    std::vector<uint32_t> count;
  };

  // Puts a layer's nodes as close to `desired` as their order and
  // separations allow, in weighted least squares (no weights: all 1): pool
  // adjacent violators on desired - prefix separation, which is linear.
  void PlaceLayer(std::span<const uint32_t> layer,
                  std::span<const float> desired,
                  std::span<const double> weights, PavScratch& s,
                  std::vector<float>& x) const {
    size_t len = layer.size();
    s.prefix.assign(len, 0);
    for (size_t i = 1; i < len; ++i) {
      s.prefix[i] = s.prefix[i - 1] + Separation(layer[i - 1], layer[i]);
    }
    s.sum.clear();
    s.weight.clear();
    s.count.clear();
    for (size_t i = 0; i < len; ++i) {
      double w = weights.empty() ? 1.0 : weights[i];
      s.sum.push_back(w * (desired[i] - s.prefix[i]));
      s.weight.push_back(w);
      s.count.push_back(1);
      while (s.sum.size() >= 2) {
        size_t t = s.sum.size() - 1;
        if (s.sum[t - 1] * s.weight[t] <= s.sum[t] * s.weight[t - 1]) break;
        s.sum[t - 1] += s.sum[t];
        s.weight[t - 1] += s.weight[t];
        s.count[t - 1] += s.count[t];
        s.sum.pop_back();
        s.weight.pop_back();
        s.count.pop_back();
      }
    }
    size_t i = 0;
    for (size_t b = 0; b < s.sum.size(); ++b) {
      float y = static_cast<float>(s.sum[b] / s.weight[b]);
      for (uint32_t k = 0; k < s.count[b]; ++k, ++i) {
        x[layer[i]] = y + s.prefix[i];
      }
    }
  }

  // Local improvement of total horizontal edge length (what dot's network
  // simplex minimises): each layer in turn moves its nodes towards the
  // weighted median of their neighbours on both sides (dot's weights: 1
  // real-real, 2 real-dummy, 8 dummy-dummy, so long edges stay straight),
  // as close as order and separations allow (isotonic regression). A round
  // is kept only if the total shrank. BK alone leaves residual stacks ~1.3x
  // longer than dot, mostly in sideways jogs of skip edges.
  void Polish(std::vector<float>& x) const {
    if (g_.count == 0) return;
    std::vector<float> desired;
    std::vector<double> weights;
    PavScratch scratch;
    std::vector<std::pair<float, float>> nbr;
    auto weight = [&](uint32_t a, uint32_t b) {
      int dummies = g_.IsDummy(a) + g_.IsDummy(b);
      return dummies == 2 ? 8.0f : dummies == 1 ? 2.0f : 1.0f;
    };
    double best = DrawnLength(x);
    std::vector<float> trial;
    constexpr int kRounds = 4;
    for (int round = 0; round < kRounds; ++round) {
      trial = x;
      bool down = round % 2 == 0;
      for (uint32_t step = 0; step < g_.rank_count; ++step) {
        uint32_t r = down ? step : g_.rank_count - 1 - step;
        auto layer = g_.Layer(r);
        size_t len = layer.size();
        desired.resize(len);
        weights.resize(len);
        for (size_t i = 0; i < len; ++i) {
          uint32_t v = layer[i];
          nbr.clear();
          float total = 0;
          for (uint32_t w : g_.up.Of(v)) {
            nbr.push_back({trial[w], weight(v, w) * LeafFactor(w, v)});
            total += nbr.back().second;
          }
          for (uint32_t w : g_.down.Of(v)) {
            nbr.push_back({trial[w], weight(v, w) * LeafFactor(v, w)});
            total += nbr.back().second;
          }
          float target = trial[v];
          if (!nbr.empty()) {
            std::sort(nbr.begin(), nbr.end());
            float acc = 0;
            for (size_t k = 0; k < nbr.size(); ++k) {
              acc += nbr[k].second;
              if (2 * acc > total) {
                target = nbr[k].first;
                break;
              }
              if (2 * acc == total) {
                target = (nbr[k].first + nbr[k + 1].first) / 2;
                break;
              }
            }
          }
          desired[i] = target;
          // Nodes with more (and straighter) edges pull harder.
          weights[i] = std::max(0.1f, total);
        }
        PlaceLayer(layer, desired, weights, scratch, trial);
      }
      double length = DrawnLength(trial);
      if (length >= best * 0.999) break;
      best = length;
      x.swap(trial);
    }
  }

  // Sweeps that put each node at the mean of its neighbours' medians in the
  // previous layer, as close as the order and separations allow: per layer
  // an isotonic regression (pool adjacent violators) on x_i - prefix_sep_i,
  // which is linear. Ends with a pass that looks at both sides.
  std::vector<float> MedianPlacement() {
    std::vector<float> x(g_.count, 0);
    std::vector<float> desired;
    PavScratch scratch;
    std::vector<float> nbr_x;
    auto median_of = [&](std::span<const uint32_t> nb, float fallback) {
      if (nb.empty()) return fallback;
      nbr_x.clear();
      for (uint32_t w : nb) nbr_x.push_back(x[w]);
      std::sort(nbr_x.begin(), nbr_x.end());
      size_t k = nbr_x.size();
      return k % 2 ? nbr_x[k / 2] : (nbr_x[k / 2 - 1] + nbr_x[k / 2]) / 2;
    };
    auto place = [&](uint32_t r) {
      PlaceLayer(g_.Layer(r), desired, {}, scratch, x);
    };
    // Start: every layer packed and centred on 0.
    for (uint32_t r = 0; r < g_.rank_count; ++r) {
      auto layer = g_.Layer(r);
      desired.assign(layer.size(), 0);
      place(r);
    }
    constexpr int kRounds = 8;
    for (int round = 0; round <= kRounds; ++round) {
      bool down = round % 2 == 0;
      bool both = round == kRounds;
      for (uint32_t step = 0; step < g_.rank_count; ++step) {
        uint32_t r = down ? step : g_.rank_count - 1 - step;
        auto layer = g_.Layer(r);
        desired.resize(layer.size());
        for (size_t i = 0; i < layer.size(); ++i) {
          uint32_t v = layer[i];
          float up = median_of(g_.up.Of(v), x[v]);
          float dn = median_of(g_.down.Of(v), x[v]);
          if (both) {
            desired[i] = (up + dn) / 2;
          } else {
            desired[i] = down ? up : dn;
          }
        }
        place(r);
      }
    }
    return x;
  }

  float Separation(uint32_t u, uint32_t v) const {
    float gap_u = g_.IsDummy(u) ? spacing_ / 4 : spacing_ / 2;
    float gap_v = g_.IsDummy(v) ? spacing_ / 4 : spacing_ / 2;
    return (g_.size[u] + g_.size[v]) / 2 + gap_u + gap_v;
  }

  static uint64_t Key(uint32_t a, uint32_t b) {
    if (a > b) std::swap(a, b);
    return (static_cast<uint64_t>(a) << 32) | b;
  }
  bool HasConflict(uint32_t a, uint32_t b) const {
    return std::binary_search(conflicts_.begin(), conflicts_.end(), Key(a, b));
  }

  // A non-inner segment crossing an inner (dummy-dummy) segment.
  void MarkType1Conflicts() {
    for (uint32_t r = 1; r < g_.rank_count; ++r) {
      auto layer = g_.Layer(r);
      uint32_t prev_len = g_.layer_begin[r] - g_.layer_begin[r - 1];
      uint32_t k0 = 0;
      size_t scan = 0;
      for (size_t i = 0; i < layer.size(); ++i) {
        uint32_t v = layer[i];
        uint32_t inner = kNone;
        if (g_.IsDummy(v)) {
          for (uint32_t u : g_.up.Of(v)) {
            if (g_.IsDummy(u)) inner = u;
          }
        }
        uint32_t k1 = inner != kNone ? g_.pos[inner] : prev_len;
        if (inner != kNone || i + 1 == layer.size()) {
          for (; scan <= i; ++scan) {
            uint32_t s = layer[scan];
            for (uint32_t u : g_.up.Of(s)) {
              uint32_t p = g_.pos[u];
              if ((p < k0 || k1 < p) && !(g_.IsDummy(u) && g_.IsDummy(s))) {
                conflicts_.push_back(Key(u, s));
              }
            }
          }
          k0 = k1;
        }
      }
    }
    std::sort(conflicts_.begin(), conflicts_.end());
  }

  // One of the four alignments. `down`: blocks follow upper neighbours
  // (sweep top to bottom); `left`: layers are scanned left to right.
  std::vector<float> Align(bool down, bool left) {
    const uint32_t n = g_.count;
    const Csr& nbr = down ? g_.up : g_.down;
    // Position in the mirrored order when scanning right to left.
    auto pos = [&](uint32_t v) {
      if (left) return g_.pos[v];
      uint32_t len =
          g_.layer_begin[g_.rank[v] + 1] - g_.layer_begin[g_.rank[v]];
      return len - 1 - g_.pos[v];
    };
    auto layer_at = [&](uint32_t r, uint32_t i) {
      if (left) return g_.order[g_.layer_begin[r] + i];
      return g_.order[g_.layer_begin[r + 1] - 1 - i];
    };
    std::vector<uint32_t> root(n), align(n), above(n, kNone);
    for (uint32_t v = 0; v < n; ++v) root[v] = align[v] = v;
    std::vector<uint32_t> ws, bound;
    // Two rounds per layer: first real-real and dummy-dummy pairs, then
    // mixed ones. Plain BK lets the leftmost child claim its parent; when
    // that child is the dummy of a residual skip, the main chain steps one
    // slot right in every block and the drawing drifts sideways. Letting
    // real chains align first keeps the trunk straight and bends the skip.
    for (uint32_t step = 0; step < g_.rank_count; ++step) {
      uint32_t r = down ? step : g_.rank_count - 1 - step;
      uint32_t len = g_.layer_begin[r + 1] - g_.layer_begin[r];
      uint32_t adjacent_len = 0;
      if (step > 0) {
        uint32_t a = down ? r - 1 : r + 1;
        adjacent_len = g_.layer_begin[a + 1] - g_.layer_begin[a];
      }
      for (int round = 0; round < 2; ++round) {
        // bound[i]: position of the closest upper partner right of i.
        bound.assign(len, adjacent_len);
        uint32_t next = adjacent_len;
        for (uint32_t i = len; i-- > 0;) {
          bound[i] = next;
          uint32_t v = layer_at(r, i);
          if (above[v] != kNone) next = pos(above[v]);
        }
        int64_t prev = -1;
        for (uint32_t i = 0; i < len; ++i) {
          uint32_t v = layer_at(r, i);
          if (above[v] != kNone) {
            prev = pos(above[v]);
            continue;
          }
          auto nb = nbr.Of(v);
          if (nb.empty()) continue;
          ws.assign(nb.begin(), nb.end());
          std::sort(ws.begin(), ws.end(), [&](uint32_t a, uint32_t b) {
            return pos(a) < pos(b) || (pos(a) == pos(b) && a < b);
          });
          size_t lo = (ws.size() - 1) / 2, hi = ws.size() / 2;
          for (size_t k = lo; k <= hi; ++k) {
            uint32_t w = ws[k];
            bool mixed = g_.IsDummy(v) != g_.IsDummy(w);
            if (mixed != (round == 1)) continue;
            if (above[v] == kNone && prev < static_cast<int64_t>(pos(w)) &&
                pos(w) < bound[i] && !HasConflict(v, w)) {
              align[w] = v;
              align[v] = root[v] = root[w];
              above[v] = w;
              prev = pos(w);
            }
          }
        }
      }
    }
    // Block graph: an edge from the root of each node's left neighbour to
    // its own root, weighted by their separation.
    std::vector<uint32_t> src, dst;
    std::vector<float> weight;
    for (uint32_t r = 0; r < g_.rank_count; ++r) {
      uint32_t len = g_.layer_begin[r + 1] - g_.layer_begin[r];
      for (uint32_t i = 1; i < len; ++i) {
        uint32_t u = layer_at(r, i - 1), v = layer_at(r, i);
        src.push_back(root[u]);
        dst.push_back(root[v]);
        weight.push_back(Separation(u, v));
      }
    }
    std::vector<uint32_t> edge_ids(src.size());
    for (uint32_t e = 0; e < edge_ids.size(); ++e) edge_ids[e] = e;
    Csr out = BuildCsr(n, src, edge_ids);
    Csr in = BuildCsr(n, dst, edge_ids);
    std::vector<uint32_t> topo, pending(n);
    for (uint32_t v = 0; v < n; ++v) {
      if (root[v] != v) continue;
      pending[v] = in.Degree(v);
      if (pending[v] == 0) topo.push_back(v);
    }
    for (size_t i = 0; i < topo.size(); ++i) {
      for (uint32_t e : out.Of(topo[i])) {
        if (--pending[dst[e]] == 0) topo.push_back(dst[e]);
      }
    }
    std::vector<float> xs(n, 0);
    for (uint32_t v : topo) {
      float x = 0;
      for (uint32_t e : in.Of(v)) x = std::max(x, xs[src[e]] + weight[e]);
      xs[v] = x;
    }
    // Pull blocks with slack towards their right neighbours, so that
    // unconstrained blocks do not all pile up on the left.
    for (size_t i = topo.size(); i-- > 0;) {
      uint32_t v = topo[i];
      float m = std::numeric_limits<float>::max();
      for (uint32_t e : out.Of(v)) m = std::min(m, xs[dst[e]] - weight[e]);
      if (m != std::numeric_limits<float>::max()) xs[v] = std::max(xs[v], m);
    }
    std::vector<float> x(n);
    for (uint32_t v = 0; v < n; ++v) x[v] = left ? xs[root[v]] : -xs[root[v]];
    return x;
  }

  Layered& g_;
  float spacing_;
  float rank_spacing_;
  std::vector<uint64_t> conflicts_;
};

}  // namespace

uint64_t CountBilayerCrossings(std::span<const uint32_t> south_positions,
                               uint32_t south_count) {
  std::vector<uint32_t> tree;
  return AccumulatorTreeCrossings(south_positions, south_count, tree);
}

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
  result.crossings = Orderer(g, order_budget, &spent).Run();

  // 4. Coordinates: x within the rank, y per rank band.
  std::vector<float> x =
      Coordinates(g, options.node_spacing, options.rank_spacing).Run();
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
