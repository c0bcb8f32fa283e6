#include "session/layout_view.h"

#include <algorithm>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "layout/hierarchical_layout.h"
#include "layout/hierarchical_layout_model.h"
#include "layout/layered_layout.h"
#include "layout/layout_encoding.h"
#include "layout/model_layout.h"
#include "linker/links.h"
#include "model/model.h"
#include "session/node_queries.h"
#include "session/session_impl.h"
#include "trace/trace.h"

namespace mi {
namespace {

class LayoutViewImpl final : public LayoutView {
 public:
  LayoutViewImpl(const Model& model, const layout::LayoutInput& input,
                 layout::GroupTree groups, layout::LayoutLabels labels,
                 layout::LayoutOptions options, size_t max_visible_items,
                 bool overview, bool ui_summaries)
      : model_(model),
        labels_(std::move(labels)),
        node_group_(groups.node_group),
        layout_(input.nodes, input.edges, std::move(groups), options) {
    // Model node -> layout node, for Reveal.
    for (size_t v = 0; v < labels_.node_kind.size(); ++v) {
      if (labels_.node_kind[v] != layout::LayoutItemKind::kNode) continue;
      uint32_t id = v < labels_.node_model_id.size() ? labels_.node_model_id[v]
                                                     : UINT32_MAX;
      if (id != UINT32_MAX) layout_node_.emplace(id, static_cast<uint32_t>(v));
    }
    // The UI's folded groups say their op mix and, with node times, their
    // time: size their boxes for those lines.
    if (ui_summaries) {
      layout_.SetUiSummaries(std::any_of(labels_.node_time_us.begin(),
                                         labels_.node_time_us.end(),
                                         [](float t) { return t >= 0; }));
    }
    if (overview) {
      layout_.CollapseToOverview(
          8, 24, max_visible_items > 0 ? max_visible_items : SIZE_MAX);
    } else if (max_visible_items > 0) {
      layout_.CollapseToBudget(max_visible_items);
    } else {
      layout_.SetSubtreeExpanded(0, true);
    }
    // Paths of every group; the first group (lowest index) wins when two
    // share one.
    const size_t n = labels_.group_label.size();
    std::vector<int32_t> parent(n, -1);
    const layout::HierarchicalResult& r = layout_.Layout();
    for (size_t g = 0; g < n && g < r.groups.size(); ++g) {
      parent[g] = r.groups[g].parent;
    }
    parent_.assign(layout_.group_count(), 0);
    for (size_t g = 0; g < r.groups.size(); ++g) {
      parent_[g] = r.groups[g].parent;
    }
    for (size_t g = 1; g < n; ++g) {
      // Parents may come after children in the numbering: walk up.
      std::vector<int32_t> chain;
      for (int32_t x = static_cast<int32_t>(g);
           x > 0 && chain.size() <= n && static_cast<size_t>(x) < n;
           x = parent[x]) {
        chain.push_back(x);
      }
      std::string path;
      for (size_t i = chain.size(); i-- > 0;) {
        if (!path.empty()) path.push_back('/');
        path += labels_.group_label[chain[i]];
      }
      by_path_.try_emplace(std::move(path), static_cast<uint32_t>(g));
    }
  }

  size_t group_count() const override { return layout_.group_count(); }

  StatusOr<uint32_t> FindGroup(std::string_view path) const override {
    if (path.empty() || path == "/") return 0u;
    if (path.front() == '/') path.remove_prefix(1);
    if (!path.empty() && path.back() == '/') path.remove_suffix(1);
    auto it = by_path_.find(path);
    if (it != by_path_.end()) return it->second;
    // Say what exists below the deepest prefix that names a group.
    std::string_view known = path;
    while (!known.empty()) {
      size_t slash = known.rfind('/');
      known = slash == std::string_view::npos ? std::string_view()
                                              : known.substr(0, slash);
      if (by_path_.find(known) != by_path_.end()) break;
    }
    std::string prefix = known.empty() ? "" : std::string(known) + "/";
    std::vector<std::string> children;
    for (const auto& [p, g] : by_path_) {
      if (p.size() > prefix.size() && p.starts_with(prefix) &&
          p.find('/', prefix.size()) == std::string::npos) {
        children.push_back(p.substr(prefix.size()));
      }
    }
    std::string message = "no group '" + std::string(path) + "'";
    std::string where = known.empty() ? std::string("the top level")
                                      : "'" + std::string(known) + "'";
    if (children.empty()) {
      message += known.empty() ? "; this view has no groups"
                               : "; " + where + " has no groups inside";
    } else {
      message += "; groups at " + where + ": ";
      for (size_t i = 0; i < children.size() && i < 12; ++i) {
        if (i > 0) message += ", ";
        message += children[i];
      }
      if (children.size() > 12) {
        message += ", ... (" + std::to_string(children.size()) + " in all)";
      }
    }
    return NotFoundError(message);
  }

  Status SetExpanded(uint32_t group, bool expanded) override {
    if (group >= layout_.group_count()) {
      return InvalidArgumentError(
          "group " + std::to_string(group) + " out of range; this view has " +
          std::to_string(layout_.group_count()) + " groups");
    }
    if (group == 0) {
      if (expanded) return Status::Ok();
      return InvalidArgumentError(
          "group 0 is the whole graph and cannot be collapsed");
    }
    layout_.SetExpanded(static_cast<int32_t>(group), expanded);
    return Status::Ok();
  }

  Status SetFocus(uint32_t group) override {
    if (group >= layout_.group_count()) {
      return InvalidArgumentError(
          "group " + std::to_string(group) + " out of range; this view has " +
          std::to_string(layout_.group_count()) + " groups");
    }
    focus_ = static_cast<int32_t>(group);
    for (int32_t g = focus_; g > 0; g = parent_[g]) {
      layout_.SetExpanded(g, true);
    }
    return Status::Ok();
  }

  Status Reveal(uint32_t model_node) override {
    auto it = layout_node_.find(model_node);
    // A node inside a subgraph (If / Loop body) is shown by the node that
    // owns the body on this level.
    if (it == layout_node_.end() && model_node < model_.node_count()) {
      GraphId g = model_.node_graph(NodeId(model_node));
      for (size_t depth = 0; it == layout_node_.end() && depth < 64; ++depth) {
        NodeId owner = model_.graph(g).parent_node;
        if (!owner.valid()) break;
        it = layout_node_.find(owner.value());
        g = model_.node_graph(owner);
      }
    }
    if (it == layout_node_.end()) {
      return NotFoundError("node " + std::to_string(model_node) +
                           " is not on this level");
    }
    int32_t g = it->second < node_group_.size() ? node_group_[it->second] : 0;
    if (g < 0 || static_cast<size_t>(g) >= parent_.size()) g = 0;
    // Expand the node's group and every group above it (a group holding a
    // single node is not drawn, so expanding it changes nothing).
    for (size_t steps = 0; g > 0 && steps <= parent_.size(); ++steps) {
      if (!layout_.expanded(g)) layout_.SetExpanded(g, true);
      g = parent_[g];
    }
    return Status::Ok();
  }

  std::string Binary() override {
    return layout::EncodeLayoutBinary(Result(), labels_);
  }
  std::string Json() override {
    return layout::EncodeLayoutJson(Result(), labels_);
  }
  std::string Svg() override {
    return layout::RenderHierarchicalSvg(Result(), labels_);
  }

 private:
  const layout::HierarchicalResult& Result() {
    const layout::HierarchicalResult& full = layout_.Layout();
    if (focus_ <= 0) return full;
    cropped_ = layout::CropToGroup(full, focus_);
    return cropped_;
  }

  const Model& model_;
  layout::LayoutLabels labels_;
  std::vector<int32_t> node_group_;  // per layout node, its innermost group
  std::map<uint32_t, uint32_t> layout_node_;  // model node -> layout node
  layout::HierarchicalLayout layout_;  // copies the nodes, edges and groups
  std::vector<int32_t> parent_;        // per group, -1 for group 0
  int32_t focus_ = 0;
  layout::HierarchicalResult cropped_;
  std::map<std::string, uint32_t, std::less<>> by_path_;
};

// Per layout node: the linker's status, and the total time and number of
// the tasks linked to it (for a fused framework node, those of the compiled
// node that ran it, as the node details report them).
void AddRunInfo(const Session::Impl& session, const layout::LayoutInput& input,
                layout::LayoutLabels* labels) {
  const size_t n = input.nodes.size();
  labels->node_status.assign(n, NodeStatus::kUnknown);
  labels->node_time_us.assign(n, -1.0f);
  labels->node_task_count.assign(n, 0);
  const Links& links = session.links;
  for (size_t v = 0; v < n && v < input.model_nodes.size(); ++v) {
    if (v < input.kinds.size() &&
        input.kinds[v] != layout::LayoutItemKind::kNode) {
      continue;
    }
    NodeId node = input.model_nodes[v];
    if (!node.valid()) continue;
    if (node.value() < links.status.size()) {
      labels->node_status[v] = links.status[node.value()];
    }
    auto tasks = links.mapped_tasks.Get(node);
    if (tasks.empty()) continue;
    int64_t total_ns = 0;
    for (TaskId t : tasks) total_ns += session.trace.task_duration_ns(t);
    labels->node_time_us[v] = static_cast<float>(total_ns / 1e3);
    labels->node_task_count[v] = static_cast<uint32_t>(tasks.size());
  }
}

}  // namespace

StatusOr<std::unique_ptr<LayoutView>> CreateLayoutView(
    const Session::Impl& session, const LayoutViewOptions& options) {
  if (options.level != "framework" && options.level != "compiled" &&
      options.level.rfind("stage:", 0) != 0) {
    return InvalidArgumentError(
        "level: expected 'framework', 'compiled' or 'stage:<Stage>', found '" +
        options.level + "'");
  }
  auto root = LevelRoot(session, options.level);
  if (!root.ok() && options.level.rfind("stage:", 0) == 0) {
    return root.status();
  }
  GraphId graph = root.ok() ? *root : GraphId::Invalid();
  bool framework =
      graph.valid() ? session.model.graph(graph).level == LayerLevel::kFramework
                    : options.level == "framework";
  layout::GroupingOptions grouping;
  if (options.grouping == "none") {
    grouping.scopes = false;
  } else if (options.grouping != "scopes" && options.grouping != "fusion") {
    return InvalidArgumentError(
        "grouping: expected 'scopes', 'fusion' or 'none', found '" +
        options.grouping + "'");
  }
  if (!graph.valid()) {
    return NotFoundError("no " + options.level +
                         " graph among the inputs; give a model (.onnx) for "
                         "that level");
  }
  const Model& model = session.model;
  if (options.grouping == "fusion" && framework) {
    // Fusion groups need the compiled graph the framework was compiled to.
    if (!session.compiled.valid() || !session.links.has_compiled_link) {
      return InvalidArgumentError(
          "grouping 'fusion' needs a compiled graph among the inputs; give a "
          "run directory or --compiled MODEL, or use 'scopes'");
    }
    grouping.fused_into.assign(model.node_count(), NodeId::Invalid());
    for (NodeId node : model.graph_nodes(graph)) {
      auto into = session.links.fused_into.Get(node);
      if (!into.empty()) grouping.fused_into[node.value()] = into.front();
    }
  }
  // On a compiled level, fusion groups are what the compiler declares (GE
  // UB fusion scopes); nothing when it declares none.
  if (options.grouping == "fusion" && !framework) {
    grouping.compiler_fusion = true;
  }
  layout::LayoutInput input = layout::BuildLayoutInput(model, graph);
  layout::GroupTree groups = layout::BuildGroups(model, graph, input, grouping);
  layout::LayoutOptions layout_options;
  layout_options.direction = options.left_to_right
                                 ? layout::Direction::kLeftToRight
                                 : layout::Direction::kTopToBottom;
  layout::LayoutLabels labels = layout::LabelsFromModel(
      model, graph, input, groups, layout_options.direction);
  AddRunInfo(session, input, &labels);
  return std::unique_ptr<LayoutView>(new LayoutViewImpl(
      model, input, std::move(groups), std::move(labels), layout_options,
      options.max_visible_items, options.overview, options.ui_summaries));
}

}  // namespace mi
