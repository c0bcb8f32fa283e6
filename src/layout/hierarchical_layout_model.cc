#include "layout/hierarchical_layout_model.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/model.h"

namespace mi::layout {

GroupTree GroupsFromScopes(const Model& model, GraphId graph,
                           const LayoutInput& input) {
  GroupTree tree;
  tree.parent.push_back(-1);
  tree.label.emplace_back();
  // Scope id -> group; the graph's root scopes (empty path) map to 0.
  std::vector<int32_t> group_of(model.scope_count(), -1);
  for (size_t s = 0; s < model.scope_count(); ++s) {
    ScopeId id(static_cast<uint32_t>(s));
    if (model.scope_graph(id) != graph) continue;
    ScopeId parent = model.scope_parent(id);
    if (!parent.valid()) {
      group_of[s] = 0;
      continue;
    }
    int32_t p = parent.value() < s ? group_of[parent.value()] : -1;
    group_of[s] = static_cast<int32_t>(tree.parent.size());
    tree.parent.push_back(p < 0 ? 0 : p);
    tree.label.emplace_back(model.str(model.scope_name(id)));
  }
  // Lookup only, never iterated: op indices follow first appearance.
  std::unordered_map<uint32_t, int32_t> op_index;
  tree.node_group.assign(input.nodes.size(), 0);
  tree.node_op.assign(input.nodes.size(), -1);
  for (size_t i = 0; i < input.nodes.size(); ++i) {
    if (input.kinds[i] != LayoutItemKind::kNode) continue;
    NodeId node = input.model_nodes[i];
    ScopeId scope = model.node_scope(node);
    if (scope.valid() && scope.value() < group_of.size() &&
        group_of[scope.value()] >= 0) {
      tree.node_group[i] = group_of[scope.value()];
    }
    StringId op = model.node_op_type(node);
    auto [it, inserted] = op_index.try_emplace(
        op.value(), static_cast<int32_t>(tree.op_names.size()));
    if (inserted) tree.op_names.emplace_back(model.str(op));
    tree.node_op[i] = it->second;
  }
  return tree;
}

// Placeholder until fusion groups and repeated blocks land: scopes only.
GroupTree BuildGroups(const Model& model, GraphId graph,
                      const LayoutInput& input,
                      const GroupingOptions& options) {
  if (!options.scopes) {
    GroupTree tree;
    tree.parent.push_back(-1);
    tree.label.emplace_back();
    return tree;
  }
  return GroupsFromScopes(model, graph, input);
}

}  // namespace mi::layout
