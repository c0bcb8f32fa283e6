#include "layout/group_detection.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mi::layout {
namespace {

constexpr uint32_t kNone = UINT32_MAX;
// An item of a group is a node, or (with this bit) a child group.
constexpr uint32_t kGroupBit = 1u << 31;

// Repeated blocks: the smallest period (2 would make "Conv, Relu" blocks of
// every CNN), the fewest items a run of blocks must cover (random op
// sequences match by chance over short runs), the candidate periods tried,
// how far back equal op types are paired for candidate gaps (an op type
// occurring k <= this times per block yields the period as its k-th gap, so
// the true period collects about one count per item while a sub-pattern
// such as the q/k/v projections collects only its own items),
// and the searches per group (one more for each period found: an encoder
// then a decoder stack).
constexpr uint32_t kMinPeriod = 3;
constexpr uint32_t kMinCoverage = 16;
constexpr size_t kMaxCandidates = 16;
constexpr uint32_t kGapLookback = 32;
constexpr uint32_t kMaxPasses = 3;

// splitmix64's finaliser: a fixed, platform-independent mix (never
// std::hash, whose values differ between standard libraries).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
uint64_t Combine(uint64_t h, uint64_t v) { return Mix(h ^ Mix(v)); }

int32_t OpOf(const GroupTree& tree, uint32_t v) {
  return v < tree.node_op.size() ? tree.node_op[v] : -1;
}

// Children per group (CSR, by index), groups parents first (BFS), depths.
// Needs a normalised tree.
struct TreeShape {
  std::vector<uint32_t> child_begin;
  std::vector<int32_t> children;
  std::vector<int32_t> order;
  std::vector<uint32_t> depth;
};

TreeShape Shape(const GroupTree& tree) {
  TreeShape s;
  size_t gcount = tree.parent.size();
  s.child_begin.assign(gcount + 1, 0);
  for (size_t g = 1; g < gcount; ++g) ++s.child_begin[tree.parent[g] + 1];
  for (size_t g = 0; g < gcount; ++g) s.child_begin[g + 1] += s.child_begin[g];
  s.children.resize(gcount > 0 ? gcount - 1 : 0);
  std::vector<uint32_t> fill(s.child_begin.begin(), s.child_begin.end() - 1);
  for (size_t g = 1; g < gcount; ++g) {
    s.children[fill[tree.parent[g]]++] = static_cast<int32_t>(g);
  }
  s.depth.assign(gcount, 0);
  s.order.reserve(gcount);
  s.order.push_back(0);
  for (size_t i = 0; i < s.order.size(); ++i) {
    int32_t g = s.order[i];
    for (uint32_t c = s.child_begin[g]; c < s.child_begin[g + 1]; ++c) {
      s.depth[s.children[c]] = s.depth[g] + 1;
      s.order.push_back(s.children[c]);
    }
  }
  return s;
}

// Direct nodes per group (CSR), each group's in topological order.
struct Members {
  std::vector<uint32_t> begin;
  std::vector<uint32_t> nodes;
  uint32_t count(size_t g) const { return begin[g + 1] - begin[g]; }
};

Members DirectNodes(const GroupTree& tree, std::span<const uint32_t> rank) {
  Members m;
  size_t n = tree.node_group.size();
  std::vector<uint32_t> by_rank(n);
  for (size_t v = 0; v < n; ++v) by_rank[rank[v]] = static_cast<uint32_t>(v);
  m.begin.assign(tree.parent.size() + 1, 0);
  for (size_t v = 0; v < n; ++v) ++m.begin[tree.node_group[v] + 1];
  for (size_t g = 0; g + 1 < m.begin.size(); ++g) m.begin[g + 1] += m.begin[g];
  m.nodes.resize(n);
  std::vector<uint32_t> fill(m.begin.begin(), m.begin.end() - 1);
  for (uint32_t v : by_rank) m.nodes[fill[tree.node_group[v]]++] = v;
  return m;
}

int32_t AddGroup(GroupTree& tree, int32_t parent, std::string label,
                 GroupKind kind) {
  tree.parent.push_back(parent);
  tree.label.push_back(std::move(label));
  tree.kind.push_back(kind);
  tree.repeat_of.push_back(-1);
  return static_cast<int32_t>(tree.parent.size() - 1);
}

// Moves an item (node or group) into group `g`.
void MoveItem(GroupTree& tree, uint32_t item, int32_t g) {
  if (item & kGroupBit) {
    tree.parent[item & ~kGroupBit] = g;
  } else {
    tree.node_group[item] = g;
  }
}

// ---- repeated blocks ----

struct LocalEdge {
  uint32_t a = 0, b = 0;  // positions in the item sequence, a < b
};

struct Block {
  uint32_t start = 0, len = 0;
};

// Periodic regions of `s` for period p: maximal runs where s[i] == s[i+p],
// each extended by p (not overlapping the previous region), long enough for
// 2 blocks and kMinCoverage items, and not periodic with period 1 or 2
// (a chain of one or two op types is not a block structure). `same1` /
// `same2` are prefix counts of s[i] == s[i+1] / s[i] == s[i+2].
std::vector<Block> Regions(std::span<const uint64_t> s, uint32_t p,
                           std::span<const uint32_t> same1,
                           std::span<const uint32_t> same2) {
  std::vector<Block> out;
  uint32_t n = static_cast<uint32_t>(s.size());
  uint32_t prev_end = 0;
  auto periodic = [&](std::span<const uint32_t> same, uint32_t d, uint32_t a,
                      uint32_t b) {
    return b - a <= d || same[b - d] - same[a] == b - d - a;
  };
  for (uint32_t i = 0; i + p < n;) {
    if (s[i] != s[i + p]) {
      ++i;
      continue;
    }
    uint32_t a = i;
    while (i + p < n && s[i] == s[i + p]) ++i;
    uint32_t start = std::max(a, prev_end);
    uint32_t end = i + p;  // s is p-periodic on [a, i + p)
    if (end < start) continue;
    uint32_t len = end - start;
    if (len < 2 * p || len < kMinCoverage) continue;
    if (periodic(same1, 1, start, end) || periodic(same2, 2, start, end)) {
      continue;
    }
    out.push_back({start, len});
    prev_end = end;
  }
  return out;
}

// Blocks of equal length found in the item sequence with symbols `s` and
// internal edges `edges` (see AddRepeatedBlocks), in sequence order.
std::vector<Block> FindBlocks(std::span<const uint64_t> s,
                              std::span<const LocalEdge> edges) {
  uint32_t n = static_cast<uint32_t>(s.size());
  if (n < 2 * kMinPeriod || n < kMinCoverage) return {};
  // Candidate periods: gaps between an item and the 1st..kGapLookback-th
  // previous item with the same symbol, most frequent first.
  std::vector<uint32_t> ord(n);
  std::iota(ord.begin(), ord.end(), 0u);
  std::stable_sort(ord.begin(), ord.end(),
                   [&](uint32_t x, uint32_t y) { return s[x] < s[y]; });
  std::vector<uint32_t> gap_count(n / 2 + 1, 0);
  for (uint32_t j = 1; j < n; ++j) {
    for (uint32_t k = 1; k <= kGapLookback && k <= j; ++k) {
      if (s[ord[j - k]] != s[ord[j]]) break;
      uint32_t gap = ord[j] - ord[j - k];
      if (gap >= kMinPeriod && gap <= n / 2) ++gap_count[gap];
    }
  }
  std::vector<std::pair<uint32_t, uint32_t>> candidates;  // (count, gap)
  for (uint32_t g = 0; g < gap_count.size(); ++g) {
    if (gap_count[g] > 0) candidates.push_back({gap_count[g], g});
  }
  auto by_count = [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  };
  size_t keep = std::min(candidates.size(), kMaxCandidates);
  std::partial_sort(candidates.begin(), candidates.begin() + keep,
                    candidates.end(), by_count);
  candidates.resize(keep);

  std::vector<uint32_t> same1(n + 1, 0), same2(n + 1, 0);
  for (uint32_t i = 0; i < n; ++i) {
    same1[i + 1] = same1[i] + (i + 1 < n && s[i] == s[i + 1]);
    same2[i + 1] = same2[i] + (i + 2 < n && s[i] == s[i + 2]);
  }
  // The candidate covering the most items in whole blocks; ties: shorter.
  uint32_t best_p = 0;
  uint64_t best_cover = 0;
  for (const auto& [count, p] : candidates) {
    uint64_t cover = 0;
    for (const Block& r : Regions(s, p, same1, same2)) {
      cover += static_cast<uint64_t>(r.len / p) * p;
    }
    if (cover > best_cover ||
        (cover == best_cover && cover > 0 && p < best_p)) {
      best_cover = cover;
      best_p = p;
    }
  }
  if (best_cover == 0) return {};
  const uint32_t p = best_p;
  std::vector<Block> regions = Regions(s, p, same1, same2);

  // Phase per region: where blocks start, minimising the tensors (source
  // items) whose edges cross a block boundary. A source at position a whose
  // furthest edge inside the region spans m < p positions crosses the
  // boundaries t in (a, a + m], i.e. a cyclic range of residues
  // (t - start) mod p: a difference array, O(E + p) per region.
  std::vector<uint32_t> region_of(n, kNone);
  for (uint32_t r = 0; r < regions.size(); ++r) {
    for (uint32_t i = 0; i < regions[r].len; ++i) {
      region_of[regions[r].start + i] = r;
    }
  }
  std::vector<uint32_t> span(n, 0);
  for (const LocalEdge& e : edges) {
    uint32_t r = region_of[e.a];
    if (r == kNone || r != region_of[e.b]) continue;
    span[e.a] = std::max(span[e.a], e.b - e.a);
  }
  struct Phase {
    uint32_t first = 0, blocks = 0;  // first block's start, block count
  };
  std::vector<Phase> phases(regions.size());
  std::vector<int64_t> diff;
  for (size_t r = 0; r < regions.size(); ++r) {
    const Block& reg = regions[r];
    diff.assign(p + 1, 0);
    for (uint32_t i = 0; i < reg.len; ++i) {
      uint32_t m = span[reg.start + i];
      if (m == 0 || m >= p) continue;  // no edge, or crosses at any phase
      uint32_t first = (i + 1) % p;
      if (first + m <= p) {
        ++diff[first];
        --diff[first + m];
      } else {
        ++diff[first];
        --diff[p];
        ++diff[0];
        --diff[first + m - p];
      }
    }
    int64_t cost = 0, best_cost = INT64_MAX;
    uint32_t best_blocks = 0, best_phase = 0;
    for (uint32_t phi = 0; phi < p; ++phi) {
      cost += diff[phi];
      uint32_t blocks = phi < reg.len ? (reg.len - phi) / p : 0;
      if (blocks < 2) continue;
      if (cost < best_cost || (cost == best_cost && blocks > best_blocks)) {
        best_cost = cost;
        best_blocks = blocks;
        best_phase = phi;
      }
    }
    phases[r] = {reg.start + best_phase, best_blocks};
  }

  // Blocks must also agree on their internal edges: a multiset hash of the
  // (offset, offset) pairs per block, and its edge count. Runs of at least
  // two consecutive equal blocks are kept.
  std::vector<uint32_t> block_base(regions.size() + 1, 0);
  for (size_t r = 0; r < regions.size(); ++r) {
    block_base[r + 1] = block_base[r] + phases[r].blocks;
  }
  std::vector<uint64_t> block_hash(block_base.back(), 0);
  std::vector<uint32_t> block_edges(block_base.back(), 0);
  for (const LocalEdge& e : edges) {
    uint32_t r = region_of[e.a];
    if (r == kNone || r != region_of[e.b]) continue;
    const Phase& ph = phases[r];
    if (e.a < ph.first) continue;
    uint32_t k = (e.a - ph.first) / p;
    if (k >= ph.blocks || (e.b - ph.first) / p != k) continue;
    uint64_t start = ph.first + static_cast<uint64_t>(k) * p;
    block_hash[block_base[r] + k] += Mix((e.a - start) << 32 | (e.b - start));
    ++block_edges[block_base[r] + k];
  }
  std::vector<Block> out;
  for (size_t r = 0; r < regions.size(); ++r) {
    const Phase& ph = phases[r];
    for (uint32_t k = 0; k < ph.blocks;) {
      uint32_t j = k + 1, base = block_base[r];
      while (j < ph.blocks && block_hash[base + j] == block_hash[base + k] &&
             block_edges[base + j] == block_edges[base + k]) {
        ++j;
      }
      if (j - k >= 2 && (j - k) * p >= kMinCoverage) {
        for (uint32_t b = k; b < j; ++b) out.push_back({ph.first + b * p, p});
      }
      k = j;
    }
  }
  return out;
}

// One sequence of items to search: a group's items, the items left over
// after a search, or a found block (searched once more).
struct Work {
  int32_t group = 0;
  bool nested = false;
  uint32_t pass = 0;
  std::vector<uint32_t> items;
  std::vector<uint64_t> symbols;
  std::vector<LocalEdge> edges;
};

// The items at `keep` positions of `w` (ascending), renumbered, with the
// edges between them.
Work SubWork(const Work& w, std::span<const uint32_t> keep,
             std::vector<uint32_t>& scratch) {
  Work out;
  scratch.assign(w.items.size(), kNone);
  for (uint32_t i = 0; i < keep.size(); ++i) {
    scratch[keep[i]] = i;
    out.items.push_back(w.items[keep[i]]);
    out.symbols.push_back(w.symbols[keep[i]]);
  }
  for (const LocalEdge& e : w.edges) {
    if (scratch[e.a] != kNone && scratch[e.b] != kNone) {
      out.edges.push_back({scratch[e.a], scratch[e.b]});
    }
  }
  return out;
}

}  // namespace

void NormalizeGroupTree(GroupTree& tree, size_t num_nodes) {
  if (tree.parent.empty()) tree.parent.push_back(-1);
  const size_t gcount = tree.parent.size();
  const int32_t gsize = static_cast<int32_t>(gcount);
  tree.parent[0] = -1;
  for (size_t g = 1; g < gcount; ++g) {
    int32_t p = tree.parent[g];
    if (p < 0 || p >= gsize || p == static_cast<int32_t>(g)) tree.parent[g] = 0;
  }
  // Cut cycles: walk up from each group; meeting the current path again
  // means a cycle, cut where it closes.
  std::vector<uint8_t> state(gcount, 0);  // 0 new, 1 on the path, 2 done
  state[0] = 2;
  std::vector<int32_t> path;
  for (size_t g = 1; g < gcount; ++g) {
    if (state[g] != 0) continue;
    path.clear();
    int32_t x = static_cast<int32_t>(g);
    while (state[x] == 0) {
      state[x] = 1;
      path.push_back(x);
      x = tree.parent[x];
    }
    if (state[x] == 1) tree.parent[x] = 0;
    for (int32_t y : path) state[y] = 2;
  }
  tree.label.resize(gcount);
  tree.kind.resize(gcount, GroupKind::kScope);
  tree.repeat_of.resize(gcount, -1);
  tree.node_group.resize(num_nodes, 0);
  for (int32_t& g : tree.node_group) {
    if (g < 0 || g >= gsize) g = 0;
  }
}

std::vector<uint32_t> TopologicalRank(size_t num_nodes,
                                      std::span<const LayoutEdge> edges) {
  std::vector<uint32_t> rank(num_nodes);
  bool forward = true;
  for (const LayoutEdge& e : edges) {
    if (e.from > e.to && e.from < num_nodes) {
      forward = false;
      break;
    }
  }
  if (forward) {
    std::iota(rank.begin(), rank.end(), 0u);
    return rank;
  }
  // Each node in index order, preceded by its predecessors not placed yet
  // (iterative depth-first search over in-edges; an edge back to the search
  // path closes a cycle and is ignored). Graph inputs, which the layout
  // input numbers last, land just before their first consumer; a min-index
  // Kahn order would instead put every constant of the graph first.
  std::vector<uint32_t> begin(num_nodes + 1, 0);
  for (const LayoutEdge& e : edges) {
    if (e.from == e.to || e.from >= num_nodes || e.to >= num_nodes) continue;
    ++begin[e.to + 1];
  }
  for (size_t v = 0; v < num_nodes; ++v) begin[v + 1] += begin[v];
  std::vector<uint32_t> in(begin.back());
  {
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    for (const LayoutEdge& e : edges) {
      if (e.from == e.to || e.from >= num_nodes || e.to >= num_nodes) continue;
      in[fill[e.to]++] = e.from;
    }
  }
  std::vector<uint8_t> state(num_nodes, 0);  // 0 new, 1 on the path, 2 done
  std::vector<std::pair<uint32_t, uint32_t>> stack;  // (node, next in-edge)
  uint32_t r = 0;
  for (uint32_t s = 0; s < num_nodes; ++s) {
    if (state[s] != 0) continue;
    state[s] = 1;
    stack.push_back({s, begin[s]});
    while (!stack.empty()) {
      auto& [v, k] = stack.back();
      if (k < begin[v + 1]) {
        uint32_t u = in[k++];
        if (state[u] == 0) {
          state[u] = 1;
          stack.push_back({u, begin[u]});
        }
        continue;
      }
      state[v] = 2;
      rank[v] = r++;
      stack.pop_back();
    }
  }
  return rank;
}

size_t AddRepeatedBlocks(GroupTree& tree, size_t num_nodes,
                         std::span<const LayoutEdge> edges, size_t min_items) {
  NormalizeGroupTree(tree, num_nodes);
  const size_t n = num_nodes;
  const size_t gcount = tree.parent.size();
  std::vector<uint32_t> rank = TopologicalRank(n, edges);
  Members members = DirectNodes(tree, rank);
  TreeShape shape = Shape(tree);

  // Symbols: the op type, or without op types the (clipped) degrees.
  std::vector<uint64_t> node_symbol(n);
  if (tree.node_op.empty()) {
    std::vector<uint32_t> in(n, 0), out(n, 0);
    for (const LayoutEdge& e : edges) {
      if (e.from >= n || e.to >= n) continue;
      ++out[e.from];
      ++in[e.to];
    }
    for (size_t v = 0; v < n; ++v) {
      node_symbol[v] = Mix(std::min(in[v], 4u) * 8 + std::min(out[v], 4u));
    }
  } else {
    for (size_t v = 0; v < n; ++v) {
      node_symbol[v] = Mix(static_cast<uint64_t>(
          static_cast<int64_t>(OpOf(tree, static_cast<uint32_t>(v))) + 2));
    }
  }
  // Child groups taken as single items: leaves holding one node (a scope of
  // one op) or a fusion group. Symbol: kind, node count and op multiset.
  std::vector<uint8_t> atomic(gcount, 0);
  std::vector<uint64_t> group_symbol(gcount, 0);
  for (size_t g = 1; g < gcount; ++g) {
    uint32_t count = members.count(g);
    bool leaf = shape.child_begin[g] == shape.child_begin[g + 1];
    if (!leaf || count == 0) continue;
    if (count != 1 && tree.kind[g] != GroupKind::kFusion) continue;
    atomic[g] = 1;
    uint64_t ops = 0;
    for (uint32_t i = members.begin[g]; i < members.begin[g + 1]; ++i) {
      ops += node_symbol[members.nodes[i]];
    }
    group_symbol[g] =
        Combine(Combine(static_cast<uint64_t>(tree.kind[g]) + 1, count), ops);
  }
  // Items per group; groups with more than min_items are searched.
  std::vector<uint32_t> item_count(gcount, 0);
  for (size_t g = 0; g < gcount; ++g) {
    item_count[g] += members.count(g);
    if (atomic[g]) ++item_count[tree.parent[g]];
  }
  std::vector<uint32_t> work_of(gcount, kNone);
  std::vector<Work> works;
  for (size_t g = 0; g < gcount; ++g) {
    if (item_count[g] <= min_items || atomic[g]) continue;
    work_of[g] = static_cast<uint32_t>(works.size());
    works.emplace_back();
    works.back().group = static_cast<int32_t>(g);
  }
  if (works.empty()) return 0;
  // Item sequences in topological order (a leaf group at its first node).
  std::vector<uint32_t> pos(n, kNone), group_pos(gcount, kNone);
  {
    // (rank, item): direct nodes are in rank order already; leaf groups
    // are sorted on their own and merged in.
    std::vector<std::pair<uint32_t, uint32_t>> direct, leaves, keyed;
    for (Work& w : works) {
      direct.clear();
      leaves.clear();
      keyed.clear();
      int32_t g = w.group;
      for (uint32_t i = members.begin[g]; i < members.begin[g + 1]; ++i) {
        uint32_t v = members.nodes[i];
        direct.push_back({rank[v], v});
      }
      for (uint32_t c = shape.child_begin[g]; c < shape.child_begin[g + 1];
           ++c) {
        int32_t x = shape.children[c];
        if (!atomic[x]) continue;
        leaves.push_back({rank[members.nodes[members.begin[x]]],
                          kGroupBit | static_cast<uint32_t>(x)});
      }
      std::sort(leaves.begin(), leaves.end());
      std::merge(direct.begin(), direct.end(), leaves.begin(), leaves.end(),
                 std::back_inserter(keyed));
      for (const auto& [r, item] : keyed) {
        uint32_t p = static_cast<uint32_t>(w.items.size());
        w.items.push_back(item);
        if (item & kGroupBit) {
          group_pos[item & ~kGroupBit] = p;
          w.symbols.push_back(group_symbol[item & ~kGroupBit]);
        } else {
          pos[item] = p;
          w.symbols.push_back(node_symbol[item]);
        }
      }
    }
  }
  // Edges between two items of one searched group.
  auto locate = [&](uint32_t v, int32_t& level, uint32_t& p) {
    int32_t g = tree.node_group[v];
    if (atomic[g]) {
      level = tree.parent[g];
      p = group_pos[g];
    } else {
      level = g;
      p = pos[v];
    }
  };
  for (const LayoutEdge& e : edges) {
    if (e.from >= n || e.to >= n) continue;
    int32_t la, lb;
    uint32_t pa, pb;
    locate(e.from, la, pa);
    locate(e.to, lb, pb);
    if (la != lb || pa == pb || work_of[la] == kNone) continue;
    works[work_of[la]].edges.push_back({std::min(pa, pb), std::max(pa, pb)});
  }

  std::vector<uint32_t> blocks_in(gcount, 0);  // labels: block K per parent
  std::vector<uint32_t> scratch, keep;
  size_t added = 0;
  for (size_t wi = 0; wi < works.size(); ++wi) {
    std::vector<Block> blocks = FindBlocks(works[wi].symbols, works[wi].edges);
    if (blocks.empty()) continue;
    const int32_t group = works[wi].group;
    const bool nested = works[wi].nested;
    const uint32_t pass = works[wi].pass;
    std::vector<uint8_t> in_block(works[wi].items.size(), 0);
    for (const Block& b : blocks) {
      if (blocks_in.size() <= static_cast<size_t>(group)) {
        blocks_in.resize(group + 1, 0);
      }
      int32_t ng =
          AddGroup(tree, group, "block " + std::to_string(++blocks_in[group]),
                   GroupKind::kRepeat);
      ++added;
      keep.clear();
      for (uint32_t i = b.start; i < b.start + b.len; ++i) {
        MoveItem(tree, works[wi].items[i], ng);
        in_block[i] = 1;
        keep.push_back(i);
      }
      if (!nested && b.len > min_items) {
        Work sub = SubWork(works[wi], keep, scratch);
        sub.group = ng;
        sub.nested = true;
        works.push_back(std::move(sub));
      }
    }
    keep.clear();
    for (uint32_t i = 0; i < in_block.size(); ++i) {
      if (!in_block[i]) keep.push_back(i);
    }
    if (keep.size() > min_items && pass + 1 < kMaxPasses) {
      Work rest = SubWork(works[wi], keep, scratch);
      rest.group = group;
      rest.nested = nested;
      rest.pass = pass + 1;
      works.push_back(std::move(rest));
    }
    // `works` may have grown: release this item's memory only now.
    works[wi] = Work();
  }
  return added;
}

size_t AddChunks(GroupTree& tree, size_t num_nodes,
                 std::span<const LayoutEdge> edges, size_t chunk_above) {
  NormalizeGroupTree(tree, num_nodes);
  if (chunk_above == 0) return 0;
  chunk_above = std::max<size_t>(chunk_above, 2);  // chunks must shrink
  const size_t gcount = tree.parent.size();
  std::vector<uint32_t> rank = TopologicalRank(num_nodes, edges);
  Members members = DirectNodes(tree, rank);
  TreeShape shape = Shape(tree);
  // Subtree node counts and first ranks, children before parents.
  std::vector<uint32_t> count(gcount, 0), first(gcount, kNone);
  for (size_t g = 0; g < gcount; ++g) {
    count[g] = members.count(g);
    if (count[g] > 0) first[g] = rank[members.nodes[members.begin[g]]];
  }
  for (size_t i = shape.order.size(); i-- > 1;) {
    int32_t g = shape.order[i], p = tree.parent[g];
    count[p] += count[g];
    first[p] = std::min(first[p], first[g]);
  }

  struct Item {
    uint32_t key = 0;    // first rank
    uint32_t item = 0;   // node, or kGroupBit | group
    uint32_t nodes = 0;  // nodes it holds
    bool chunk = false;  // a node or a chunk made here: labelled by nodes
  };
  size_t added = 0;
  std::vector<Item> items, next;
  for (size_t g = 0; g < gcount; ++g) {
    size_t direct = members.count(g);
    size_t child_count = shape.child_begin[g + 1] - shape.child_begin[g];
    if (direct + child_count <= chunk_above) continue;
    // Direct nodes are in rank order already; child groups are sorted on
    // their own and merged in.
    auto by_key = [](const Item& a, const Item& b) {
      return a.key != b.key ? a.key < b.key : a.item < b.item;
    };
    next.clear();
    for (uint32_t i = members.begin[g]; i < members.begin[g + 1]; ++i) {
      uint32_t v = members.nodes[i];
      next.push_back({rank[v], v, 1, true});
    }
    size_t nodes_end = next.size();
    for (uint32_t c = shape.child_begin[g]; c < shape.child_begin[g + 1]; ++c) {
      int32_t x = shape.children[c];
      if (count[x] == 0) continue;  // empty: not drawn, left in place
      next.push_back(
          {first[x], kGroupBit | static_cast<uint32_t>(x), count[x], false});
    }
    std::sort(next.begin() + nodes_end, next.end(), by_key);
    items.clear();
    std::merge(next.begin(), next.begin() + nodes_end, next.begin() + nodes_end,
               next.end(), std::back_inserter(items), by_key);
    // Chunks of chunks while there are too many.
    while (items.size() > chunk_above) {
      size_t m = items.size();
      size_t size = static_cast<size_t>(std::ceil(std::sqrt(double(m))));
      size = std::max(size, (m + chunk_above - 1) / chunk_above);
      size = std::min(size, chunk_above);
      size_t chunks = (m + size - 1) / size;
      next.clear();
      uint64_t nodes_before = 0;
      size_t i = 0;
      for (size_t c = 0; c < chunks; ++c) {
        size_t len = m / chunks + (c < m % chunks ? 1 : 0);
        bool by_nodes = false;
        uint32_t nodes = 0;
        for (size_t k = i; k < i + len; ++k) {
          by_nodes = by_nodes || items[k].chunk;
          nodes += items[k].nodes;
        }
        std::string label;
        if (by_nodes) {
          label = "nodes " + std::to_string(nodes_before + 1) + "\u2013" +
                  std::to_string(nodes_before + nodes);
        } else {
          label = tree.label[items[i].item & ~kGroupBit] + " \u2026 " +
                  tree.label[items[i + len - 1].item & ~kGroupBit];
        }
        int32_t ng = AddGroup(tree, static_cast<int32_t>(g), std::move(label),
                              GroupKind::kChunk);
        ++added;
        for (size_t k = i; k < i + len; ++k) MoveItem(tree, items[k].item, ng);
        next.push_back(
            {items[i].key, kGroupBit | static_cast<uint32_t>(ng), nodes, true});
        nodes_before += nodes;
        i += len;
      }
      items.swap(next);
    }
  }
  return added;
}

size_t MarkRepeats(GroupTree& tree, std::span<const LayoutEdge> edges) {
  size_t n = tree.node_group.size();
  for (const LayoutEdge& e : edges) {
    n = std::max<size_t>(n, std::max(e.from, e.to) + size_t{1});
  }
  NormalizeGroupTree(tree, n);
  const size_t gcount = tree.parent.size();
  tree.repeat_of.assign(gcount, -1);
  if (gcount < 3) return 0;
  std::vector<uint32_t> rank = TopologicalRank(n, edges);
  Members members = DirectNodes(tree, rank);
  TreeShape shape = Shape(tree);
  auto op_symbol = [&](uint32_t v) {
    return static_cast<uint32_t>(OpOf(tree, v) + 1);  // -1 -> 0
  };

  // Cheap class keys, bottom-up: node count, group count, a hash of the
  // nested groups' shape, the op multiset, internal edges (counted at the
  // lowest group holding both ends) and their op pairs.
  struct Key {
    uint32_t nodes = 0, groups = 0, edges = 0;
    uint64_t shape = 0, ops = 0, edge_ops = 0;
    auto Tie() const {
      return std::tie(nodes, groups, edges, shape, ops, edge_ops);
    }
  };
  std::vector<Key> key(gcount);
  std::vector<uint64_t> child_shapes(gcount, 0);
  for (size_t g = 0; g < gcount; ++g) {
    key[g].nodes = members.count(g);
    key[g].groups = 1;
    for (uint32_t i = members.begin[g]; i < members.begin[g + 1]; ++i) {
      key[g].ops += Mix(op_symbol(members.nodes[i]));
    }
  }
  // Lowest common ancestors by binary lifting (hierarchies may be deep).
  uint32_t max_depth = 0;
  for (uint32_t d : shape.depth) max_depth = std::max(max_depth, d);
  uint32_t levels = 1;
  while ((1u << levels) <= max_depth) ++levels;
  std::vector<std::vector<int32_t>> up(levels, std::vector<int32_t>(gcount));
  for (size_t g = 0; g < gcount; ++g) up[0][g] = g == 0 ? 0 : tree.parent[g];
  for (uint32_t k = 1; k < levels; ++k) {
    for (size_t g = 0; g < gcount; ++g) up[k][g] = up[k - 1][up[k - 1][g]];
  }
  auto lca = [&](int32_t a, int32_t b) {
    if (shape.depth[a] < shape.depth[b]) std::swap(a, b);
    uint32_t diff = shape.depth[a] - shape.depth[b];
    for (uint32_t k = 0; diff > 0; ++k, diff >>= 1) {
      if (diff & 1) a = up[k][a];
    }
    if (a == b) return a;
    for (uint32_t k = levels; k-- > 0;) {
      if (up[k][a] != up[k][b]) {
        a = up[k][a];
        b = up[k][b];
      }
    }
    return up[0][a];
  };
  for (const LayoutEdge& e : edges) {
    int32_t a = tree.node_group[e.from], b = tree.node_group[e.to];
    int32_t l = a == b ? a : lca(a, b);
    ++key[l].edges;
    key[l].edge_ops +=
        Mix(static_cast<uint64_t>(op_symbol(e.from)) << 32 | op_symbol(e.to));
  }
  for (size_t i = shape.order.size(); i-- > 0;) {
    int32_t g = shape.order[i];
    key[g].shape =
        Combine(Combine(static_cast<uint64_t>(tree.kind[g]), members.count(g)),
                child_shapes[g]);
    if (g == 0) break;
    Key& p = key[tree.parent[g]];
    p.nodes += key[g].nodes;
    p.groups += key[g].groups;
    p.edges += key[g].edges;
    p.ops += key[g].ops;
    p.edge_ops += key[g].edge_ops;
    child_shapes[tree.parent[g]] += Mix(key[g].shape);
  }

  std::vector<int32_t> candidates;
  for (size_t g = 1; g < gcount; ++g) {
    if (key[g].nodes >= 2) candidates.push_back(static_cast<int32_t>(g));
  }
  std::sort(candidates.begin(), candidates.end(), [&](int32_t a, int32_t b) {
    return key[a].Tie() != key[b].Tie() ? key[a].Tie() < key[b].Tie() : a < b;
  });

  // Exact structure of a candidate: its nested groups in preorder (kind,
  // parent's preorder index), then its nodes in topological order (op,
  // group's preorder index, offsets back to its internal inputs, sorted).
  std::vector<uint32_t> in_begin(n + 1, 0), in_from;
  for (const LayoutEdge& e : edges) ++in_begin[e.to + 1];
  for (size_t v = 0; v < n; ++v) in_begin[v + 1] += in_begin[v];
  in_from.resize(in_begin.back());
  {
    std::vector<uint32_t> fill(in_begin.begin(), in_begin.end() - 1);
    for (const LayoutEdge& e : edges) in_from[fill[e.to]++] = e.from;
  }
  std::vector<uint32_t> rel(gcount, kNone), local(n, kNone);
  std::vector<int32_t> stack, sub_groups;
  std::vector<uint32_t> nodes, offsets;
  auto signature = [&](int32_t g, std::vector<uint32_t>& sig) {
    sig.clear();
    sub_groups.clear();
    stack.assign(1, g);
    while (!stack.empty()) {
      int32_t x = stack.back();
      stack.pop_back();
      rel[x] = static_cast<uint32_t>(sub_groups.size());
      sub_groups.push_back(x);
      for (uint32_t c = shape.child_begin[x + 1]; c-- > shape.child_begin[x];) {
        stack.push_back(shape.children[c]);
      }
    }
    nodes.clear();
    for (int32_t x : sub_groups) {
      sig.push_back(static_cast<uint32_t>(tree.kind[x]));
      sig.push_back(x == g ? kNone : rel[tree.parent[x]]);
      for (uint32_t i = members.begin[x]; i < members.begin[x + 1]; ++i) {
        nodes.push_back(members.nodes[i]);
      }
    }
    std::sort(nodes.begin(), nodes.end(),
              [&](uint32_t a, uint32_t b) { return rank[a] < rank[b]; });
    for (uint32_t i = 0; i < nodes.size(); ++i) local[nodes[i]] = i;
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      uint32_t v = nodes[i];
      sig.push_back(op_symbol(v));
      sig.push_back(rel[tree.node_group[v]]);
      offsets.clear();
      for (uint32_t k = in_begin[v]; k < in_begin[v + 1]; ++k) {
        uint32_t u = local[in_from[k]];
        if (u != kNone) offsets.push_back(i - u);
      }
      std::sort(offsets.begin(), offsets.end());
      sig.push_back(static_cast<uint32_t>(offsets.size()));
      sig.insert(sig.end(), offsets.begin(), offsets.end());
    }
    for (uint32_t v : nodes) local[v] = kNone;
    for (int32_t x : sub_groups) rel[x] = kNone;
  };

  // Work bound: signatures are only built for groups sharing a class key,
  // which are disjoint subtrees, so the total is O(V + E) per nesting level
  // of repeated structure; the budget caps pathological inputs (the rest
  // stay unmarked, never wrongly marked).
  const uint64_t budget = 64 * (uint64_t{n} + edges.size()) + 4096;
  uint64_t spent = 0;
  size_t marked = 0;
  struct Rep {
    int32_t group;
    std::vector<uint32_t> sig;
  };
  std::vector<Rep> reps;
  // Lookup only, never iterated: representatives by signature hash.
  std::unordered_map<uint64_t, std::vector<uint32_t>> reps_by_hash;
  std::vector<uint32_t> sig;
  for (size_t i = 0; i < candidates.size() && spent <= budget;) {
    size_t j = i + 1;
    while (j < candidates.size() &&
           key[candidates[j]].Tie() == key[candidates[i]].Tie()) {
      ++j;
    }
    if (j - i >= 2) {
      reps.clear();
      reps_by_hash.clear();
      for (size_t k = i; k < j && spent <= budget; ++k) {
        int32_t g = candidates[k];
        signature(g, sig);
        spent += sig.size();
        uint64_t h = 0xcbf29ce484222325ull;
        for (uint32_t x : sig) h = Combine(h, x);
        std::vector<uint32_t>& same_hash = reps_by_hash[h];
        bool found = false;
        for (uint32_t r : same_hash) {
          if (reps[r].sig == sig) {
            tree.repeat_of[g] = reps[r].group;
            ++marked;
            found = true;
            break;
          }
        }
        if (!found) {
          same_hash.push_back(static_cast<uint32_t>(reps.size()));
          reps.push_back({g, sig});
        }
      }
    }
    i = j;
  }
  return marked;
}

}  // namespace mi::layout
