#include "layout/layered_layout_internal.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "layout/layered_layout.h"

namespace mi::layout::layered_detail {

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

}  // namespace mi::layout::layered_detail
