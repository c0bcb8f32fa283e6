#pragma once

// Hierarchical (compound) layout on top of the flat LayeredLayout, with
// collapse / expand and level of detail. Groups (scopes, fusion groups,
// repeated blocks) form a tree; each expanded group is laid out on its own with
// LayeredLayout, its items being its direct nodes plus its child groups as
// boxes. Edges whose ends lie in different child groups are lifted to their
// lowest common ancestor (LCA) and routed there. Each group's internal layout
// is cached and stored relative to the group's origin, so expanding or
// collapsing a group re-lays out only that group (if it has no cache yet) and
// its ancestors: every other group keeps its internal layout and only moves as
// a whole. Pure geometry like LayeredLayout: see hierarchical_layout_model.h
// for scopes.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "layout/layered_layout.h"

namespace mi::layout {

// What a group stands for (drawn differently; the UI filters by it).
enum class GroupKind : uint8_t {
  kScope,   // a module path / name scope ("/encoder/layer.3")
  kFusion,  // framework nodes fused into one compiled node
  kRepeat,  // a repeated block found by structure (no scope said so)
  kChunk,   // a run of consecutive nodes, so huge flat graphs can fold
};

// Group 0 is the root (parent -1). Other groups may be numbered in any
// order; a parent chain that does not reach the root (a cycle or an index
// out of range) is cut and the group hung under the root.
struct GroupTree {
  std::vector<int32_t> parent;
  std::vector<std::string> label;
  // Per layout node: its innermost group (out of range = root). A group
  // whose subtree holds a single node is not drawn (neither box nor frame):
  // the node is placed in the nearest ancestor with more.
  std::vector<int32_t> node_group;
  // Optional, for group summaries: per layout node an index into
  // `op_names`, or -1 (graph inputs and outputs).
  std::vector<int32_t> node_op;
  std::vector<std::string> op_names;
  // Optional, per group (missing = kScope / -1): the kind, and for a group
  // whose contents have the same structure as an earlier group, that
  // group's index (the UI says "same as layer.0"; repeated blocks collapse
  // alike).
  std::vector<GroupKind> kind;
  std::vector<int32_t> repeat_of;
};

// Boxes are given by their top-left corner (unlike LayoutResult, which gives
// centres): this is what a renderer draws.
struct Box {
  float x = 0, y = 0, w = 0, h = 0;
};

struct VisibleItem {
  int32_t node = -1;   // a layout node, or -1
  int32_t group = -1;  // a collapsed group, or -1
  Box box;
};

struct VisibleEdge {
  uint32_t from = 0, to = 0;  // indices into HierarchicalResult::items
  // Number of input edges drawn by this edge (edges between collapsed groups
  // are aggregated; a skip around a collapsed block stays one visible edge).
  uint32_t count = 0;
  uint8_t reversed = 0;  // drawn against the flow (back edge of a cycle)
};

struct GroupSummary {
  // Valid while the group is visible: its collapsed box or expanded frame.
  bool visible = false;
  bool expanded = false;
  GroupKind kind = GroupKind::kScope;
  int32_t parent = -1;
  int32_t repeat_of = -1;  // see GroupTree::repeat_of
  Box bounds;
  uint32_t depth = 0;
  // Layout nodes in the subtree; 0 for groups that are not drawn (empty, or
  // holding a single node).
  uint32_t node_count = 0;
  // The three most frequent op types in the subtree (index into
  // GroupTree::op_names, -1 = none) and their counts, for level of detail.
  int32_t top_ops[3] = {-1, -1, -1};
  uint32_t top_op_counts[3] = {0, 0, 0};
};

struct HierarchicalResult {
  // Visible nodes and collapsed groups, in a deterministic order (group
  // tree preorder, nodes of a group before its child groups).
  std::vector<VisibleItem> items;
  // Per layout node: the item showing it (itself or a collapsed ancestor).
  std::vector<uint32_t> item_of_node;
  // Expanded visible groups other than the root, parents before children:
  // frames to draw behind the items.
  std::vector<int32_t> frames;
  std::vector<VisibleEdge> edges;
  // CSR like LayoutResult: edge i owns points [2 * begin[i], 2 * begin[i+1]).
  std::vector<uint32_t> edge_point_begin;
  std::vector<float> points;
  std::vector<GroupSummary> groups;  // per group
  // Level of detail: per frame (in `frames` order), a coarse silhouette of
  // its contents that a renderer draws instead of the nodes when zoomed
  // out: kProfileBands bands of equal size along the rank axis (y top to
  // bottom, x left to right), each with the lowest and highest coordinate
  // its items occupy across that axis, absolute. A band with no item has
  // lo = hi = the frame's centre line.
  static constexpr uint32_t kProfileBands = 16;
  std::vector<float> frame_profiles;  // frames.size() * kProfileBands * 2
  float width = 0, height = 0;
  Direction direction = Direction::kTopToBottom;
  // Diagnostics: groups laid out by the last Layout() call (cache misses).
  uint32_t groups_laid_out = 0;
};

// The part of a view inside expanded group `group`'s frame, moved so that
// the frame's top-left corner is the origin: its items, the edges between
// them, its frames (the group's own first) and silhouettes. Groups outside
// are marked not visible; nodes shown outside map to no item (UINT32_MAX).
// A group that is not an expanded visible frame gives an empty view.
HierarchicalResult CropToGroup(const HierarchicalResult& result, int32_t group);

class HierarchicalLayout {
 public:
  HierarchicalLayout(std::span<const LayoutNode> nodes,
                     std::span<const LayoutEdge> edges, GroupTree groups,
                     LayoutOptions options);

  // Default view of a huge graph: collapses whole depth levels, deepest
  // first, until at most `max_visible_items` items are visible (a uniform
  // cut, so repeated blocks look alike). Cannot go below the root's own
  // nodes plus its child groups; returns the number of visible items.
  size_t CollapseToBudget(size_t max_visible_items = 2000);
  // The first screen a person can read (what Model Explorer opens on): the
  // shallowest uniform cut that shows at least `min_items` items, so the
  // top-level groups are folded and labelled with their op mix; a graph
  // whose fully expanded view has at most `expand_all_up_to` items is shown
  // whole. Never deeper than CollapseToBudget(max_visible_items) would go;
  // returns the number of visible items.
  size_t CollapseToOverview(size_t min_items = 8, size_t expand_all_up_to = 24,
                            size_t max_visible_items = 2000);
  // The root is always expanded. Expanding a group inside a collapsed
  // ancestor is remembered and shows once the ancestor is expanded.
  void SetExpanded(int32_t group, bool expanded);
  // Expands or collapses `group` and all its descendants.
  void SetSubtreeExpanded(int32_t group, bool expanded);
  bool expanded(int32_t group) const { return expanded_[group] != 0; }
  size_t group_count() const { return parent_.size(); }
  const std::string& group_label(int32_t g) const { return label_[g]; }
  const std::vector<std::string>& op_names() const { return op_names_; }
  const LayoutOptions& options() const { return options_; }
  // Sizes folded group boxes for the summary lines the web UI draws: the op
  // mix as "Conv ×4, ReorderOutput ×4, Add ×2" and, `with_time` (the level
  // has node times), "12 nodes · 985 µs". Call before Layout(); by default
  // boxes fit the SVG renderer's lines ("Conv×4 Add×2", "12 nodes").
  void SetUiSummaries(bool with_time);
  size_t VisibleItemCount() const;

  // Incremental: lays out only groups without a cached layout and ancestors
  // of groups toggled since the last call.
  const HierarchicalResult& Layout();

 private:
  struct GroupCache {
    bool valid = false;
    float width = 0, height = 0;  // internal layout extent
    std::vector<float> x, y;      // item centres, relative to the origin
    std::vector<uint32_t> edge_point_begin;  // per level edge
    std::vector<float> points;
    std::vector<uint8_t> edge_reversed;
  };

  void LayOutGroup(int32_t g);
  LayoutNode ItemSize(int32_t g) const;  // of group g as a box in its parent
  // Space between an expanded group's frame and its contents, top and
  // bottom (header band and padding, or none where ports meet the frame).
  float TopInset(int32_t g) const;
  float BottomInset(int32_t g) const;
  // Items of group g's layout other than ports: direct nodes, child groups.
  uint32_t ItemCount(int32_t g) const {
    return node_begin_[g + 1] - node_begin_[g] + child_begin_[g + 1] -
           child_begin_[g];
  }
  void BuildResult();

  LayoutOptions options_;
  std::vector<LayoutNode> nodes_;
  std::vector<LayoutEdge> edges_;
  std::vector<int32_t> node_group_;
  std::vector<std::string> label_;
  std::vector<std::string> op_names_;

  // Group tree, sanitised; `order_` lists groups parents first (BFS).
  std::vector<int32_t> parent_;
  std::vector<uint32_t> depth_;
  std::vector<int32_t> order_;
  std::vector<uint32_t> subtree_nodes_;
  // Items of a group: direct nodes, then non-empty child groups (CSR).
  std::vector<uint32_t> node_begin_, direct_nodes_;
  std::vector<uint32_t> child_begin_;
  std::vector<int32_t> children_;
  std::vector<uint32_t> local_index_;  // node: index in its group's items
  std::vector<uint32_t> group_local_;  // group: index in its parent's items
  // Edges lifted to their LCA level: per level (group), its deduplicated
  // edges between local items (CSR), and per input edge its level edge.
  std::vector<uint32_t> level_edge_begin_;
  std::vector<LayoutEdge> level_edges_;
  // Per level: how many of its level edges are lifted input edges (the
  // rest connect ports).
  std::vector<uint32_t> level_regular_count_;
  // Ports per group (CSR, sorted by local item): the local items that
  // edges from outside enter (in) or leave from (out). In-port k of group g
  // is local item ItemCount(g) + k, out-port k follows the in-ports.
  std::vector<uint32_t> in_port_begin_, in_ports_;
  std::vector<uint32_t> out_port_begin_, out_ports_;
  std::vector<int32_t> edge_level_;        // per input edge
  std::vector<uint32_t> edge_level_edge_;  // per input edge, global index
  // Input edges sorted by level (CSR), for assembling visible edges.
  std::vector<uint32_t> level_input_begin_, level_inputs_;

  std::vector<uint8_t> expanded_;
  std::vector<uint8_t> dirty_;
  std::vector<GroupCache> cache_;
  std::vector<GroupSummary> summaries_;  // static part, computed once
  bool ui_summaries_ = false;
  bool summary_with_time_ = false;
  HierarchicalResult result_;
  uint32_t laid_out_ = 0;
};

}  // namespace mi::layout
