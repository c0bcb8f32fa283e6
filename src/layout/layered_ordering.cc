#include "layout/layered_layout_internal.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "layout/layered_layout.h"

namespace mi::layout {
namespace layered_detail {
namespace {

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

}  // namespace

uint64_t OrderLayers(Layered& g, uint64_t budget, uint64_t* spent) {
  return Orderer(g, budget, spent).Run();
}

}  // namespace layered_detail

uint64_t CountBilayerCrossings(std::span<const uint32_t> south_positions,
                               uint32_t south_count) {
  std::vector<uint32_t> tree;
  return layered_detail::AccumulatorTreeCrossings(south_positions, south_count,
                                                  tree);
}

}  // namespace mi::layout
