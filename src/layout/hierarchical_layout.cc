#include "layout/hierarchical_layout.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace mi::layout {
namespace {

constexpr uint32_t kNone = UINT32_MAX;
// Frame of an expanded group: padding around its contents and a header band
// for its label.
constexpr float kPad = 12;
constexpr float kHeader = 24;
// Collapsed group box: two text lines (label, "N nodes"), sized like nodes.
constexpr float kCharWidth = 7;
constexpr float kSmallCharWidth = 4.5f;  // the 8 px third line
constexpr float kTextPadding = 16;
constexpr float kMinWidth = 80;
constexpr float kCollapsedHeight = 44;
// The summary line ("12 nodes · 985 µs") is drawn at 9 px: about 5.5 px a
// character (digits are 0.556 em in sans-serif fonts), and its time part
// " · " + three significant digits + unit is at most 10 characters
// (" · 1.23 ms").
constexpr float kSummaryCharWidth = 5.5f;
constexpr size_t kSummaryTimeChars = 10;

float LabelWidth(size_t chars) {
  return std::max(kMinWidth,
                  kCharWidth * static_cast<float>(chars) + kTextPadding);
}

size_t Digits(uint32_t n) {
  size_t d = 1;
  while (n >= 10) {
    n /= 10;
    ++d;
  }
  return d;
}

}  // namespace

HierarchicalLayout::HierarchicalLayout(std::span<const LayoutNode> nodes,
                                       std::span<const LayoutEdge> edges,
                                       GroupTree groups, LayoutOptions options)
    : options_(options),
      nodes_(nodes.begin(), nodes.end()),
      edges_(edges.begin(), edges.end()) {
  const size_t n = nodes_.size();
  const size_t gcount = std::max<size_t>(1, groups.parent.size());
  label_ = std::move(groups.label);
  label_.resize(gcount);
  op_names_ = std::move(groups.op_names);

  // Sanitise the tree: out-of-range parents go to the root, then groups not
  // reachable from the root (parent cycles) are cut where first met in index
  // order. Iterative throughout: hierarchies may be deep.
  parent_.assign(gcount, 0);
  parent_[0] = -1;
  for (size_t g = 1; g < groups.parent.size(); ++g) {
    int32_t p = groups.parent[g];
    if (p >= 0 && static_cast<size_t>(p) < gcount &&
        static_cast<size_t>(p) != g) {
      parent_[g] = p;
    }
  }
  auto build_children = [&](std::vector<uint32_t>& begin,
                            std::vector<int32_t>& list) {
    begin.assign(gcount + 1, 0);
    for (size_t g = 1; g < gcount; ++g) ++begin[parent_[g] + 1];
    for (size_t g = 0; g < gcount; ++g) begin[g + 1] += begin[g];
    list.assign(gcount > 0 ? gcount - 1 : 0, 0);
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    for (size_t g = 1; g < gcount; ++g) {
      list[fill[parent_[g]]++] = static_cast<int32_t>(g);
    }
  };
  std::vector<uint32_t> all_begin;
  std::vector<int32_t> all_children;
  build_children(all_begin, all_children);
  std::vector<uint8_t> reached(gcount, 0);
  std::vector<int32_t> queue;
  auto flood = [&](int32_t from) {
    size_t head = queue.size();
    queue.push_back(from);
    reached[from] = 1;
    while (head < queue.size()) {
      int32_t g = queue[head++];
      for (uint32_t i = all_begin[g]; i < all_begin[g + 1]; ++i) {
        int32_t c = all_children[i];
        if (!reached[c]) {
          reached[c] = 1;
          queue.push_back(c);
        }
      }
    }
  };
  flood(0);
  bool cut = false;
  for (size_t g = 1; g < gcount; ++g) {
    if (reached[g]) continue;
    parent_[g] = 0;
    cut = true;
    flood(static_cast<int32_t>(g));
  }
  if (cut) build_children(all_begin, all_children);
  // BFS order: parents before children, children in index order.
  order_.clear();
  order_.push_back(0);
  for (size_t head = 0; head < order_.size(); ++head) {
    int32_t g = order_[head];
    for (uint32_t i = all_begin[g]; i < all_begin[g + 1]; ++i) {
      order_.push_back(all_children[i]);
    }
  }
  depth_.assign(gcount, 0);
  for (int32_t g : order_) {
    if (g != 0) depth_[g] = depth_[parent_[g]] + 1;
  }

  node_group_.resize(n);
  for (size_t v = 0; v < n; ++v) {
    int32_t g = v < groups.node_group.size() ? groups.node_group[v] : 0;
    node_group_[v] = g >= 0 && static_cast<size_t>(g) < gcount ? g : 0;
  }
  // A group holding a single node (torch.onnx gives every op its own scope:
  // "/conv1/Conv") would only draw a frame or box around that node: the
  // node stands for itself and the group stays empty, so it is not drawn.
  auto count_subtrees = [&] {
    subtree_nodes_.assign(gcount, 0);
    for (int32_t g : node_group_) ++subtree_nodes_[g];
    for (size_t i = order_.size(); i-- > 1;) {
      int32_t g = order_[i];
      subtree_nodes_[parent_[g]] += subtree_nodes_[g];
    }
  };
  count_subtrees();
  for (int32_t& g : node_group_) {
    while (g != 0 && subtree_nodes_[g] == 1) g = parent_[g];
  }
  count_subtrees();
  // Direct nodes per group (counting sort keeps node order).
  node_begin_.assign(gcount + 1, 0);
  for (int32_t g : node_group_) ++node_begin_[g + 1];
  for (size_t g = 0; g < gcount; ++g) node_begin_[g + 1] += node_begin_[g];
  direct_nodes_.resize(n);
  local_index_.resize(n);
  {
    std::vector<uint32_t> fill(node_begin_.begin(), node_begin_.end() - 1);
    for (size_t v = 0; v < n; ++v) {
      int32_t g = node_group_[v];
      local_index_[v] = fill[g] - node_begin_[g];
      direct_nodes_[fill[g]++] = static_cast<uint32_t>(v);
    }
  }
  // Items: empty groups are not drawn, so only non-empty children count.
  child_begin_.assign(gcount + 1, 0);
  children_.clear();
  group_local_.assign(gcount, kNone);
  for (size_t g = 0; g < gcount; ++g) {
    uint32_t local = node_begin_[g + 1] - node_begin_[g];
    for (uint32_t i = all_begin[g]; i < all_begin[g + 1]; ++i) {
      int32_t c = all_children[i];
      if (subtree_nodes_[c] == 0) continue;
      group_local_[c] = local++;
      children_.push_back(c);
    }
    child_begin_[g + 1] = static_cast<uint32_t>(children_.size());
  }

  // Lift every edge to the LCA of its ends' groups; its ends there are the
  // node itself (if directly in the LCA) or the LCA's child containing it.
  struct Lifted {
    int32_t level;
    uint32_t from, to, edge;
  };
  std::vector<Lifted> lifted(edges_.size());
  for (size_t e = 0; e < edges_.size(); ++e) {
    uint32_t u = edges_[e].from, v = edges_[e].to;
    int32_t a = node_group_[u], b = node_group_[v];
    int32_t ca = -1, cb = -1;
    while (depth_[a] > depth_[b]) {
      ca = a;
      a = parent_[a];
    }
    while (depth_[b] > depth_[a]) {
      cb = b;
      b = parent_[b];
    }
    while (a != b) {
      ca = a;
      a = parent_[a];
      cb = b;
      b = parent_[b];
    }
    lifted[e] = {a, ca < 0 ? local_index_[u] : group_local_[ca],
                 cb < 0 ? local_index_[v] : group_local_[cb],
                 static_cast<uint32_t>(e)};
  }
  std::sort(lifted.begin(), lifted.end(), [](const Lifted& x, const Lifted& y) {
    if (x.level != y.level) return x.level < y.level;
    if (x.from != y.from) return x.from < y.from;
    if (x.to != y.to) return x.to < y.to;
    return x.edge < y.edge;
  });
  // Ports: an edge entering group C from outside (its LCA lies above C)
  // enters through an in-port, a pseudo node pinned to the top rank of C's
  // layout, and is routed inside C from the port to the item holding its
  // end; leaving edges likewise through out-ports on the bottom rank. One
  // port per (group, local item) and direction, so routes to different
  // items of an expanded block never share a path inside it. Ports are
  // static (they depend on the graph, not on what is expanded), so cached
  // layouts stay valid.
  {
    std::vector<uint64_t> in_keys, out_keys;
    auto walk = [&](uint32_t node, int32_t level, std::vector<uint64_t>& keys) {
      int32_t g = node_group_[node];
      uint32_t item = local_index_[node];
      while (g != level) {
        keys.push_back(static_cast<uint64_t>(g) << 32 | item);
        item = group_local_[g];
        g = parent_[g];
      }
    };
    for (const Lifted& l : lifted) {
      walk(edges_[l.edge].to, l.level, in_keys);
      walk(edges_[l.edge].from, l.level, out_keys);
    }
    auto to_csr = [&](std::vector<uint64_t>& keys, std::vector<uint32_t>& begin,
                      std::vector<uint32_t>& items) {
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      begin.assign(gcount + 1, 0);
      items.resize(keys.size());
      for (size_t i = 0; i < keys.size(); ++i) {
        ++begin[(keys[i] >> 32) + 1];
        items[i] = static_cast<uint32_t>(keys[i] & 0xffffffffu);
      }
      for (size_t g = 0; g < gcount; ++g) begin[g + 1] += begin[g];
    };
    to_csr(in_keys, in_port_begin_, in_ports_);
    to_csr(out_keys, out_port_begin_, out_ports_);
  }

  // Parallel edges between two items of a level are laid out once: the
  // level layout only needs the item graph, and multi-edges would only
  // weigh the barycenters and cost dummies. Per level: the lifted edges,
  // then one edge per in-port (port -> item), then per out-port.
  level_edge_begin_.assign(gcount + 1, 0);
  level_regular_count_.assign(gcount, 0);
  level_input_begin_.assign(gcount + 1, 0);
  level_inputs_.resize(edges_.size());
  edge_level_.resize(edges_.size());
  edge_level_edge_.resize(edges_.size());
  size_t li = 0;
  for (size_t g = 0; g < gcount; ++g) {
    level_edge_begin_[g] = static_cast<uint32_t>(level_edges_.size());
    level_input_begin_[g] = static_cast<uint32_t>(li);
    size_t first = li;
    for (; li < lifted.size() && lifted[li].level == static_cast<int32_t>(g);
         ++li) {
      const Lifted& l = lifted[li];
      if (li == first || l.from != lifted[li - 1].from ||
          l.to != lifted[li - 1].to) {
        level_edges_.push_back({l.from, l.to});
      }
      level_inputs_[li] = l.edge;
      edge_level_[l.edge] = l.level;
      edge_level_edge_[l.edge] = static_cast<uint32_t>(level_edges_.size() - 1);
    }
    level_regular_count_[g] =
        static_cast<uint32_t>(level_edges_.size()) - level_edge_begin_[g];
    uint32_t base = ItemCount(static_cast<int32_t>(g));
    uint32_t k = 0;
    for (uint32_t i = in_port_begin_[g]; i < in_port_begin_[g + 1]; ++i) {
      level_edges_.push_back({base + k++, in_ports_[i]});
    }
    for (uint32_t i = out_port_begin_[g]; i < out_port_begin_[g + 1]; ++i) {
      level_edges_.push_back({out_ports_[i], base + k++});
    }
  }
  level_edge_begin_[gcount] = static_cast<uint32_t>(level_edges_.size());
  level_input_begin_[gcount] = static_cast<uint32_t>(li);

  // Static summaries: depth, size, op-type histogram top 3 (pairs sorted,
  // so ties go to the lower op index, deterministically).
  summaries_.assign(gcount, {});
  for (size_t g = 0; g < gcount; ++g) {
    GroupSummary& s = summaries_[g];
    s.depth = depth_[g];
    s.node_count = subtree_nodes_[g];
    s.parent = parent_[g];
    if (g < groups.kind.size()) s.kind = groups.kind[g];
    if (g < groups.repeat_of.size()) {
      int32_t r = groups.repeat_of[g];
      // Only an earlier group can be the original (no chains or cycles).
      s.repeat_of = r >= 0 && static_cast<size_t>(r) < g ? r : -1;
    }
  }
  std::vector<uint64_t> pairs;
  for (size_t v = 0; v < n && v < groups.node_op.size(); ++v) {
    int32_t op = groups.node_op[v];
    if (op < 0) continue;
    for (int32_t g = node_group_[v]; g >= 0; g = parent_[g]) {
      pairs.push_back(static_cast<uint64_t>(g) << 32 |
                      static_cast<uint32_t>(op));
    }
  }
  std::sort(pairs.begin(), pairs.end());
  for (size_t i = 0; i < pairs.size();) {
    size_t j = i;
    while (j < pairs.size() && pairs[j] == pairs[i]) ++j;
    GroupSummary& s = summaries_[pairs[i] >> 32];
    int32_t op = static_cast<int32_t>(pairs[i] & 0xffffffffu);
    uint32_t count = static_cast<uint32_t>(j - i);
    for (int k = 0; k < 3; ++k) {
      if (count > s.top_op_counts[k]) {
        for (int m = 2; m > k; --m) {
          s.top_ops[m] = s.top_ops[m - 1];
          s.top_op_counts[m] = s.top_op_counts[m - 1];
        }
        s.top_ops[k] = op;
        s.top_op_counts[k] = count;
        break;
      }
    }
    i = j;
  }

  expanded_.assign(gcount, 1);
  dirty_.assign(gcount, 0);
  cache_.resize(gcount);
}

void HierarchicalLayout::SetExpanded(int32_t group, bool expanded) {
  if (group <= 0 || static_cast<size_t>(group) >= parent_.size()) return;
  if ((expanded_[group] != 0) == expanded) return;
  expanded_[group] = expanded ? 1 : 0;
  // The group's box size changed, so its parent must be laid out again, and
  // so on up. A collapsed ancestor keeps its box size: the walk stops there
  // (it is marked, as its hidden layout is now stale).
  for (int32_t p = parent_[group]; p >= 0; p = parent_[p]) {
    dirty_[p] = 1;
    if (!expanded_[p]) break;
  }
}

void HierarchicalLayout::SetSubtreeExpanded(int32_t group, bool expanded) {
  if (group < 0 || static_cast<size_t>(group) >= parent_.size()) return;
  std::vector<int32_t> stack{group};
  while (!stack.empty()) {
    int32_t g = stack.back();
    stack.pop_back();
    SetExpanded(g, expanded);
    for (uint32_t i = child_begin_[g]; i < child_begin_[g + 1]; ++i) {
      stack.push_back(children_[i]);
    }
  }
}

size_t HierarchicalLayout::VisibleItemCount() const {
  std::vector<uint8_t> open(parent_.size(), 0);
  size_t count = 0;
  for (int32_t g : order_) {
    bool parent_open = g == 0 || open[parent_[g]];
    if (!parent_open || subtree_nodes_[g] == 0) continue;
    if (g == 0 || expanded_[g]) {
      open[g] = 1;
      count += node_begin_[g + 1] - node_begin_[g];
    } else {
      ++count;
    }
  }
  return count;
}

size_t HierarchicalLayout::CollapseToBudget(size_t max_visible_items) {
  // A uniform cut: groups shallower than `cut` are expanded, the others
  // collapsed. Items visible for a cut D: nodes directly in groups of depth
  // < D, plus the non-empty groups of depth D. The deepest cut within the
  // budget wins.
  uint32_t max_depth = 0;
  for (uint32_t d : depth_) max_depth = std::max(max_depth, d);
  std::vector<size_t> nodes_at(max_depth + 2, 0), groups_at(max_depth + 2, 0);
  for (size_t g = 0; g < parent_.size(); ++g) {
    nodes_at[depth_[g]] += node_begin_[g + 1] - node_begin_[g];
    if (subtree_nodes_[g] > 0) ++groups_at[depth_[g]];
  }
  uint32_t cut = 1;
  size_t shallower = 0;  // nodes in groups of depth < D
  for (uint32_t d = 1; d <= max_depth + 1; ++d) {
    shallower += nodes_at[d - 1];
    if (shallower + groups_at[d] <= max_visible_items) cut = d;
  }
  for (size_t g = 1; g < parent_.size(); ++g) {
    SetExpanded(static_cast<int32_t>(g), depth_[g] < cut);
  }
  return VisibleItemCount();
}

size_t HierarchicalLayout::CollapseToOverview(size_t min_items,
                                              size_t expand_all_up_to,
                                              size_t max_visible_items) {
  // Items visible for a uniform cut D (groups shallower than D expanded):
  // nodes directly in groups of depth < D plus the non-empty groups of
  // depth D, as in CollapseToBudget.
  uint32_t max_depth = 0;
  for (uint32_t d : depth_) max_depth = std::max(max_depth, d);
  std::vector<size_t> nodes_at(max_depth + 2, 0), groups_at(max_depth + 2, 0);
  for (size_t g = 0; g < parent_.size(); ++g) {
    nodes_at[depth_[g]] += node_begin_[g + 1] - node_begin_[g];
    if (subtree_nodes_[g] > 0) ++groups_at[depth_[g]];
  }
  std::vector<size_t> items_at(max_depth + 2, 0);
  size_t shallower = 0;
  uint32_t budget_cut = 1;
  for (uint32_t d = 1; d <= max_depth + 1; ++d) {
    shallower += nodes_at[d - 1];
    items_at[d] = shallower + groups_at[d];
    if (items_at[d] <= max_visible_items) budget_cut = d;
  }
  uint32_t cut = max_depth + 1;  // everything expanded
  if (items_at[max_depth + 1] > expand_all_up_to) {
    // The shallowest cut that is not a handful of boxes (a single wrapper
    // scope at the top shows its children instead).
    for (uint32_t d = 1; d <= max_depth + 1; ++d) {
      cut = d;
      if (items_at[d] >= min_items) break;
    }
  }
  cut = std::min(cut, budget_cut);
  for (size_t g = 1; g < parent_.size(); ++g) {
    SetExpanded(static_cast<int32_t>(g), depth_[g] < cut);
  }
  return VisibleItemCount();
}

float HierarchicalLayout::TopInset(int32_t g) const {
  // Top to bottom, in-ports sit on their own first rank, which the frame's
  // top edge passes through: the rank gap below them holds the header.
  bool ports = in_port_begin_[g + 1] > in_port_begin_[g];
  return options_.direction == Direction::kTopToBottom && ports ? 0 : kHeader;
}

float HierarchicalLayout::BottomInset(int32_t g) const {
  bool ports = out_port_begin_[g + 1] > out_port_begin_[g];
  return options_.direction == Direction::kTopToBottom && ports ? 0 : kPad;
}

LayoutNode HierarchicalLayout::ItemSize(int32_t g) const {
  float label_width = LabelWidth(label_[g].size());
  if (expanded_[g] && cache_[g].valid) {
    return {std::max(label_width, cache_[g].width + 2 * kPad),
            cache_[g].height + TopInset(g) + BottomInset(g)};
  }
  // "label" over "N nodes" over what it holds: "same as <label>" for a
  // repeat, else its most frequent op types ("Conv×2 Relu×2 Add"), in a
  // smaller font.
  size_t summary_chars = Digits(subtree_nodes_[g]) + 6;
  size_t third_chars = 0;
  const GroupSummary& s = summaries_[g];
  if (s.repeat_of >= 0 && label_[s.repeat_of] != label_[g]) {
    third_chars = 8 + label_[s.repeat_of].size();
  } else {
    for (int k = 0; k < 3; ++k) {
      if (s.top_ops[k] < 0) continue;
      if (ui_summaries_) {
        // As the UI writes it: "Conv ×4, ReorderOutput ×4, Add ×2".
        if (third_chars > 0) third_chars += 2;
        third_chars +=
            op_names_[s.top_ops[k]].size() + 2 + Digits(s.top_op_counts[k]);
        continue;
      }
      third_chars += op_names_[s.top_ops[k]].size() + 1;
      if (s.top_op_counts[k] > 1) third_chars += 1 + Digits(s.top_op_counts[k]);
    }
  }
  float third_width =
      kSmallCharWidth * static_cast<float>(third_chars) + kTextPadding;
  float summary_width = LabelWidth(summary_chars);
  if (summary_with_time_) {
    summary_width =
        std::max(summary_width,
                 kSummaryCharWidth *
                         static_cast<float>(summary_chars + kSummaryTimeChars) +
                     kTextPadding);
  }
  return {std::max({label_width, summary_width, third_width}),
          kCollapsedHeight};
}

void HierarchicalLayout::SetUiSummaries(bool with_time) {
  if (ui_summaries_ && summary_with_time_ == with_time) return;
  ui_summaries_ = true;
  summary_with_time_ = with_time;
  // Folded boxes change size: every cached group layout is stale.
  for (GroupCache& c : cache_) c.valid = false;
  std::fill(dirty_.begin(), dirty_.end(), 1);
}

void HierarchicalLayout::LayOutGroup(int32_t g) {
  uint32_t direct = node_begin_[g + 1] - node_begin_[g];
  std::vector<LayoutNode> items;
  items.reserve(direct + child_begin_[g + 1] - child_begin_[g]);
  for (uint32_t i = node_begin_[g]; i < node_begin_[g + 1]; ++i) {
    items.push_back(nodes_[direct_nodes_[i]]);
  }
  for (uint32_t i = child_begin_[g]; i < child_begin_[g + 1]; ++i) {
    items.push_back(ItemSize(children_[i]));
  }
  for (uint32_t i = in_port_begin_[g]; i < in_port_begin_[g + 1]; ++i) {
    items.push_back({0, 0, RankPin::kFirst});
  }
  for (uint32_t i = out_port_begin_[g]; i < out_port_begin_[g + 1]; ++i) {
    items.push_back({0, 0, RankPin::kLast});
  }
  std::span<const LayoutEdge> level(
      level_edges_.data() + level_edge_begin_[g],
      level_edge_begin_[g + 1] - level_edge_begin_[g]);
  LayoutResult r = LayeredLayout(items, level, options_);
  GroupCache& c = cache_[g];
  LayoutNode before = ItemSize(g);
  c.valid = true;
  c.width = r.width;
  c.height = r.height;
  c.x = std::move(r.x);
  c.y = std::move(r.y);
  c.edge_point_begin = std::move(r.edge_point_begin);
  c.points = std::move(r.points);
  c.edge_reversed = std::move(r.edge_reversed);
  ++laid_out_;
  // Robustness: whatever made this group change size, its parent's layout
  // must follow (the parent is processed later in the bottom-up pass).
  LayoutNode after = ItemSize(g);
  if (g != 0 &&
      (before.width != after.width || before.height != after.height)) {
    dirty_[parent_[g]] = 1;
  }
}

const HierarchicalResult& HierarchicalLayout::Layout() {
  laid_out_ = 0;
  // Bottom-up over the expanded groups that can be seen: children are laid
  // out (or reuse their cache) before their parents need their sizes.
  std::vector<uint8_t> open(parent_.size(), 0);
  for (int32_t g : order_) {
    open[g] =
        (g == 0 || (expanded_[g] && open[parent_[g]])) && subtree_nodes_[g] > 0;
  }
  if (subtree_nodes_[0] == 0) open[0] = 1;
  for (size_t i = order_.size(); i-- > 0;) {
    int32_t g = order_[i];
    if (!open[g]) continue;
    if (!cache_[g].valid || dirty_[g]) {
      LayOutGroup(g);
      dirty_[g] = 0;
    }
  }
  BuildResult();
  return result_;
}

void HierarchicalLayout::BuildResult() {
  HierarchicalResult& out = result_;
  const size_t gcount = parent_.size();
  const bool lr = options_.direction == Direction::kLeftToRight;
  out.items.clear();
  out.frames.clear();
  out.edges.clear();
  out.edge_point_begin.assign(1, 0);
  out.points.clear();
  out.groups = summaries_;
  out.item_of_node.assign(nodes_.size(), kNone);
  out.width = cache_[0].width;
  out.height = cache_[0].height;
  out.direction = options_.direction;
  out.groups_laid_out = laid_out_;

  // Preorder walk of the visible tree with an explicit stack; origins are
  // content origins (top-left of a group's internal layout).
  std::vector<float> ox(gcount, 0), oy(gcount, 0);
  std::vector<uint32_t> item_of_group(gcount, kNone);
  std::vector<int32_t> open_levels;  // expanded visible groups, preorder
  std::vector<int32_t> stack{0};
  out.groups[0].visible = true;
  out.groups[0].expanded = true;
  out.groups[0].bounds = {0, 0, out.width, out.height};
  while (!stack.empty()) {
    int32_t g = stack.back();
    stack.pop_back();
    if (g != 0) {
      int32_t p = parent_[g];
      const GroupCache& pc = cache_[p];
      uint32_t local = group_local_[g];
      LayoutNode size = ItemSize(g);
      Box box{ox[p] + pc.x[local] - size.width / 2,
              oy[p] + pc.y[local] - size.height / 2, size.width, size.height};
      GroupSummary& s = out.groups[g];
      s.visible = true;
      s.bounds = box;
      if (!expanded_[g]) {
        item_of_group[g] = static_cast<uint32_t>(out.items.size());
        out.items.push_back({-1, g, box});
        continue;
      }
      s.expanded = true;
      // Centre the contents when the label made the frame wider.
      ox[g] = box.x + (box.w - cache_[g].width) / 2;
      oy[g] = box.y + TopInset(g);
      out.frames.push_back(g);
    }
    open_levels.push_back(g);
    const GroupCache& c = cache_[g];
    for (uint32_t i = node_begin_[g]; i < node_begin_[g + 1]; ++i) {
      uint32_t v = direct_nodes_[i];
      uint32_t local = i - node_begin_[g];
      float w = nodes_[v].width, h = nodes_[v].height;
      out.item_of_node[v] = static_cast<uint32_t>(out.items.size());
      out.items.push_back(
          {static_cast<int32_t>(v),
           -1,
           {ox[g] + c.x[local] - w / 2, oy[g] + c.y[local] - h / 2, w, h}});
    }
    for (uint32_t i = child_begin_[g + 1]; i-- > child_begin_[g];) {
      stack.push_back(children_[i]);
    }
  }
  // Silhouettes of the frames, from their direct items (cached centres).
  constexpr uint32_t kBands = HierarchicalResult::kProfileBands;
  out.frame_profiles.clear();
  for (int32_t g : out.frames) {
    const GroupCache& c = cache_[g];
    float along = lr ? c.width : c.height;  // rank axis
    float origin_across = lr ? oy[g] : ox[g];
    float mid = origin_across + (lr ? c.height : c.width) / 2;
    size_t at = out.frame_profiles.size();
    for (uint32_t b = 0; b < kBands; ++b) {
      out.frame_profiles.push_back(std::numeric_limits<float>::max());
      out.frame_profiles.push_back(std::numeric_limits<float>::lowest());
    }
    uint32_t direct = node_begin_[g + 1] - node_begin_[g];
    for (uint32_t i = 0; i < ItemCount(g); ++i) {
      LayoutNode size = i < direct
                            ? nodes_[direct_nodes_[node_begin_[g] + i]]
                            : ItemSize(children_[child_begin_[g] + i - direct]);
      float half_along = (lr ? size.width : size.height) / 2;
      float half_across = (lr ? size.height : size.width) / 2;
      float centre_along = lr ? c.x[i] : c.y[i];
      float centre_across = origin_across + (lr ? c.y[i] : c.x[i]);
      if (along <= 0) continue;
      auto band_of = [&](float pos) {
        float f = pos / along * static_cast<float>(kBands);
        return static_cast<uint32_t>(
            std::clamp(f, 0.0f, static_cast<float>(kBands - 1)));
      };
      uint32_t b0 = band_of(centre_along - half_along);
      uint32_t b1 = band_of(centre_along + half_along);
      for (uint32_t b = b0; b <= b1; ++b) {
        float& lo = out.frame_profiles[at + 2 * b];
        float& hi = out.frame_profiles[at + 2 * b + 1];
        lo = std::min(lo, centre_across - half_across);
        hi = std::max(hi, centre_across + half_across);
      }
    }
    for (uint32_t b = 0; b < kBands; ++b) {
      float& lo = out.frame_profiles[at + 2 * b];
      float& hi = out.frame_profiles[at + 2 * b + 1];
      if (lo > hi) lo = hi = mid;
    }
  }
  // Hidden nodes are shown by their outermost collapsed ancestor.
  std::vector<uint32_t> rep(gcount, kNone);
  for (int32_t g : order_) {
    if (g == 0) continue;
    uint32_t up = rep[parent_[g]];
    rep[g] = up != kNone ? up : item_of_group[g];
  }
  for (size_t v = 0; v < nodes_.size(); ++v) {
    if (out.item_of_node[v] == kNone) {
      out.item_of_node[v] = rep[node_group_[v]];
    }
  }

  // Visible edges: the input edges routed at a visible level, aggregated
  // per pair of visible items (the lowest edge index gives the route).
  std::vector<std::pair<uint64_t, uint32_t>> keyed;
  for (int32_t g : open_levels) {
    for (uint32_t i = level_input_begin_[g]; i < level_input_begin_[g + 1];
         ++i) {
      uint32_t e = level_inputs_[i];
      uint32_t a = out.item_of_node[edges_[e].from];
      uint32_t b = out.item_of_node[edges_[e].to];
      keyed.push_back({static_cast<uint64_t>(a) << 32 | b, e});
    }
  }
  std::sort(keyed.begin(), keyed.end());
  // Start of the current edge's points: a join point equal to the last
  // point (a port on the frame's edge) is not repeated.
  size_t edge_start = 0;
  auto push = [&](float x, float y) {
    size_t k = out.points.size();
    if (k >= edge_start + 2 && out.points[k - 2] == x &&
        out.points[k - 1] == y) {
      return;
    }
    out.points.push_back(x);
    out.points.push_back(y);
  };
  // The expanded child group of `level` shown as local item `local`, or -1.
  auto expanded_child = [&](int32_t level, uint32_t local) -> int32_t {
    uint32_t direct = node_begin_[level + 1] - node_begin_[level];
    if (local < direct || local >= ItemCount(level)) return -1;
    int32_t c = children_[child_begin_[level] + local - direct];
    return expanded_[c] ? c : -1;
  };
  // Port k of group g for local item `item` (it exists: every crossing
  // edge made one), as a level edge index local to g.
  auto port_edge = [&](int32_t g, uint32_t item, bool in) -> uint32_t {
    const std::vector<uint32_t>& begin = in ? in_port_begin_ : out_port_begin_;
    const std::vector<uint32_t>& ports = in ? in_ports_ : out_ports_;
    auto first = ports.begin() + begin[g], last = ports.begin() + begin[g + 1];
    uint32_t k =
        static_cast<uint32_t>(std::lower_bound(first, last, item) - first);
    uint32_t in_count = in_port_begin_[g + 1] - in_port_begin_[g];
    return level_regular_count_[g] + (in ? k : in_count + k);
  };
  // Points of local level edge `le` of group g, in absolute coordinates,
  // from point `skip_front` to the end minus `skip_back`.
  auto append_route = [&](int32_t g, uint32_t le, uint32_t skip_front,
                          uint32_t skip_back) {
    const GroupCache& c = cache_[g];
    uint32_t pb = c.edge_point_begin[le] + skip_front,
             pe = c.edge_point_begin[le + 1] - skip_back;
    for (uint32_t p = pb; p < pe; ++p) {
      push(ox[g] + c.points[2 * p], oy[g] + c.points[2 * p + 1]);
    }
  };
  // The point on an item's border facing (px, py).
  auto border_point = [&](const Box& box, float px, float py) {
    if (lr) {
      float x = px >= box.x + box.w / 2 ? box.x + box.w : box.x;
      return std::pair<float, float>{x, box.y + box.h / 2};
    }
    float y = py >= box.y + box.h / 2 ? box.y + box.h : box.y;
    return std::pair<float, float>{box.x + box.w / 2, y};
  };
  // The local item of group g holding node v.
  auto local_item = [&](int32_t g, uint32_t v) -> uint32_t {
    int32_t h = node_group_[v];
    if (h == g) return local_index_[v];
    while (parent_[h] != g) h = parent_[h];
    return group_local_[h];
  };
  // Chain of expanded groups from `start` (an expanded child of the level)
  // down towards node v, ending where v's visible item lies.
  std::vector<int32_t> chain;
  auto build_chain = [&](int32_t start, uint32_t v) {
    chain.clear();
    for (int32_t g = start; g >= 0;) {
      chain.push_back(g);
      g = expanded_child(g, local_item(g, v));
    }
  };
  for (size_t i = 0; i < keyed.size();) {
    size_t j = i;
    while (j < keyed.size() && keyed[j].first == keyed[i].first) ++j;
    uint32_t e = keyed[i].second;
    edge_start = out.points.size();
    uint32_t a = static_cast<uint32_t>(keyed[i].first >> 32);
    uint32_t b = static_cast<uint32_t>(keyed[i].first & 0xffffffffu);
    int32_t level = edge_level_[e];
    uint32_t le = edge_level_edge_[e];
    uint32_t local_le = le - level_edge_begin_[level];
    const GroupCache& c = cache_[level];
    uint8_t reversed = c.edge_reversed[local_le];
    out.edges.push_back({a, b, static_cast<uint32_t>(j - i), reversed});
    uint32_t u = edges_[e].from, v = edges_[e].to;
    int32_t from_group = expanded_child(level, level_edges_[le].from);
    int32_t to_group = expanded_child(level, level_edges_[le].to);
    // A back edge between groups leaves and enters on the wrong sides for
    // ports: it keeps the level route, clipped at the frames.
    if (reversed) from_group = to_group = -1;
    // Source side, innermost first: inside each expanded group from the
    // item to its out-port, then down through the frame's bottom.
    if (from_group >= 0) {
      build_chain(from_group, u);
      for (size_t k = chain.size(); k-- > 0;) {
        int32_t g = chain[k];
        uint32_t pe = port_edge(g, local_item(g, u), /*in=*/false);
        bool inner = k + 1 == chain.size();
        append_route(g, pe, inner ? 0 : 1, 0);
        const Box& frame = out.groups[g].bounds;
        float px = out.points[out.points.size() - 2];
        if (lr) {
          push(frame.x + frame.w, out.points[out.points.size() - 1]);
        } else {
          push(px, frame.y + frame.h);
        }
      }
    }
    // The level route runs between the child groups' frames: its end at a
    // frame is replaced by the port's point on that frame.
    size_t route_begin = out.points.size();
    append_route(level, local_le, from_group >= 0 ? 1 : 0,
                 to_group >= 0 ? 1 : 0);
    if (reversed && out.points.size() > route_begin) {
      // Join the clipped back edge to items deep inside expanded groups.
      if (expanded_child(level, level_edges_[le].from) >= 0) {
        auto [x, y] = border_point(out.items[a].box, out.points[route_begin],
                                   out.points[route_begin + 1]);
        out.points.insert(out.points.begin() + route_begin, {x, y});
      }
      if (expanded_child(level, level_edges_[le].to) >= 0) {
        auto [x, y] =
            border_point(out.items[b].box, out.points[out.points.size() - 2],
                         out.points[out.points.size() - 1]);
        push(x, y);
      }
    }
    // Target side, outermost first: in through the frame's top at the
    // in-port, then inside to the item.
    if (to_group >= 0) {
      build_chain(to_group, v);
      for (size_t k = 0; k < chain.size(); ++k) {
        int32_t g = chain[k];
        uint32_t pe = port_edge(g, local_item(g, v), /*in=*/true);
        const GroupCache& gc = cache_[g];
        uint32_t first = gc.edge_point_begin[pe];
        const Box& frame = out.groups[g].bounds;
        float px = ox[g] + gc.points[2 * first];
        float py = oy[g] + gc.points[2 * first + 1];
        if (lr) {
          push(frame.x, py);
        } else {
          push(px, frame.y);
        }
        bool inner = k + 1 == chain.size();
        append_route(g, pe, 0, inner ? 0 : 1);
      }
    }
    out.edge_point_begin.push_back(
        static_cast<uint32_t>(out.points.size() / 2));
    i = j;
  }
}

HierarchicalResult CropToGroup(const HierarchicalResult& r, int32_t group) {
  HierarchicalResult out;
  out.groups = r.groups;
  out.groups_laid_out = r.groups_laid_out;
  out.direction = r.direction;
  out.edge_point_begin.assign(1, 0);
  out.item_of_node.assign(r.item_of_node.size(), kNone);
  bool usable = group >= 0 && static_cast<size_t>(group) < r.groups.size() &&
                r.groups[group].visible && r.groups[group].expanded;
  const Box frame = usable ? r.groups[group].bounds : Box{};
  // Frames nest and siblings do not overlap, so lying inside the frame is
  // the same as belonging to the group.
  auto inside = [&](const Box& b) {
    constexpr float kEps = 0.01f;
    return b.x >= frame.x - kEps && b.y >= frame.y - kEps &&
           b.x + b.w <= frame.x + frame.w + kEps &&
           b.y + b.h <= frame.y + frame.h + kEps;
  };
  auto moved = [&](Box b) {
    b.x -= frame.x;
    b.y -= frame.y;
    return b;
  };
  for (GroupSummary& s : out.groups) {
    bool keep = usable && s.visible && inside(s.bounds);
    s.visible = keep;
    if (!keep) s.expanded = false;
    s.bounds = moved(s.bounds);
  }
  if (!usable) return out;
  out.width = frame.w;
  out.height = frame.h;
  std::vector<uint32_t> new_index(r.items.size(), kNone);
  for (size_t i = 0; i < r.items.size(); ++i) {
    if (!inside(r.items[i].box)) continue;
    new_index[i] = static_cast<uint32_t>(out.items.size());
    VisibleItem item = r.items[i];
    item.box = moved(item.box);
    out.items.push_back(item);
  }
  for (size_t v = 0; v < r.item_of_node.size(); ++v) {
    uint32_t i = r.item_of_node[v];
    if (i != kNone && i < new_index.size()) out.item_of_node[v] = new_index[i];
  }
  constexpr uint32_t kBands = HierarchicalResult::kProfileBands;
  // Silhouette bands hold coordinates across the rank axis.
  const float across =
      r.direction == Direction::kLeftToRight ? frame.y : frame.x;
  for (size_t f = 0; f < r.frames.size(); ++f) {
    int32_t g = r.frames[f];
    if (!out.groups[g].visible) continue;
    out.frames.push_back(g);
    size_t at = f * kBands * 2;
    for (uint32_t k = 0; k < kBands * 2; ++k) {
      float v =
          at + k < r.frame_profiles.size() ? r.frame_profiles[at + k] : across;
      out.frame_profiles.push_back(v - across);
    }
  }
  for (size_t e = 0; e < r.edges.size(); ++e) {
    uint32_t a = new_index[r.edges[e].from], b = new_index[r.edges[e].to];
    if (a == kNone || b == kNone) continue;
    VisibleEdge edge = r.edges[e];
    edge.from = a;
    edge.to = b;
    out.edges.push_back(edge);
    for (uint32_t p = r.edge_point_begin[e]; p < r.edge_point_begin[e + 1];
         ++p) {
      out.points.push_back(r.points[2 * p] - frame.x);
      out.points.push_back(r.points[2 * p + 1] - frame.y);
    }
    out.edge_point_begin.push_back(
        static_cast<uint32_t>(out.points.size() / 2));
  }
  return out;
}

}  // namespace mi::layout
