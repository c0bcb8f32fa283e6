#include "layout/hierarchical_layout_model.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "layout/group_detection.h"
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

namespace {

// Nodes sharing a key (>= 2 of them) become a kFusion group labelled
// labels[key], under the deepest group holding all of them. `key` is per
// layout node (UINT32_MAX = none); groups follow key order.
void AddGroupsByKey(std::span<const uint32_t> key,
                    const std::vector<std::string>& labels, GroupTree& tree) {
  std::vector<std::pair<uint32_t, uint32_t>> pairs;  // (key, layout node)
  for (size_t i = 0; i < key.size(); ++i) {
    if (key[i] != UINT32_MAX)
      pairs.push_back({key[i], static_cast<uint32_t>(i)});
  }
  std::sort(pairs.begin(), pairs.end());
  // Depths (the tree is normalised: every chain reaches the root), memoised
  // with an explicit path instead of recursion.
  std::vector<int32_t> depth(tree.parent.size(), -1);
  depth[0] = 0;
  std::vector<int32_t> path;
  auto depth_of = [&](int32_t g) {
    path.clear();
    while (depth[g] < 0) {
      path.push_back(g);
      g = tree.parent[g];
    }
    for (size_t k = path.size(); k-- > 0;) {
      depth[path[k]] = depth[tree.parent[path[k]]] + 1;
    }
    return depth[path.empty() ? g : path.front()];
  };
  auto lca = [&](int32_t a, int32_t b) {
    int32_t da = depth_of(a), db = depth_of(b);
    while (da > db) a = tree.parent[a], --da;
    while (db > da) b = tree.parent[b], --db;
    while (a != b) a = tree.parent[a], b = tree.parent[b];
    return a;
  };
  for (size_t i = 0; i < pairs.size();) {
    size_t j = i + 1;
    while (j < pairs.size() && pairs[j].first == pairs[i].first) ++j;
    if (j - i >= 2) {
      int32_t where = tree.node_group[pairs[i].second];
      for (size_t k = i + 1; k < j; ++k) {
        where = lca(where, tree.node_group[pairs[k].second]);
      }
      int32_t g = static_cast<int32_t>(tree.parent.size());
      tree.parent.push_back(where);
      tree.label.push_back(pairs[i].first < labels.size()
                               ? labels[pairs[i].first]
                               : std::string());
      tree.kind.push_back(GroupKind::kFusion);
      tree.repeat_of.push_back(-1);
      depth.push_back(-1);
      for (size_t k = i; k < j; ++k) tree.node_group[pairs[k].second] = g;
    }
    i = j;
  }
}

// Fusion groups on the framework level: framework nodes sharing a compiled
// node, labelled by it.
void AddFusionGroups(const Model& model, const LayoutInput& input,
                     std::span<const NodeId> fused_into, GroupTree& tree) {
  std::vector<uint32_t> key(input.nodes.size(), UINT32_MAX);
  std::vector<std::string> labels(model.node_count());
  for (size_t i = 0; i < input.nodes.size(); ++i) {
    if (input.kinds[i] != LayoutItemKind::kNode) continue;
    uint32_t m = input.model_nodes[i].value();
    if (m >= fused_into.size()) continue;
    NodeId c = fused_into[m];
    if (!c.valid() || c.value() >= model.node_count()) continue;
    key[i] = c.value();
    if (!labels[c.value()].empty()) continue;
    std::string label(model.str(model.node_op_type(c)));
    std::string_view name = model.str(model.node_name(c));
    // Compiled names are mostly long paths; only short plain ones help.
    if (!name.empty() && name.size() <= 20 &&
        name.find('/') == std::string_view::npos && name != label) {
      label += " ";
      label += name;
    }
    labels[c.value()] = std::move(label);
  }
  AddGroupsByKey(key, labels, tree);
}

// Fusion groups on a compiled level that says what it fused together: GE's
// UB fusion (ops sharing a `fusion_scope`, or ATC's `group_op_name`), one
// kernel per group.
void AddCompilerFusionGroups(const Model& model, const LayoutInput& input,
                             GroupTree& tree) {
  std::vector<uint32_t> key(input.nodes.size(), UINT32_MAX);
  std::vector<std::string> labels;
  std::map<std::string, uint32_t, std::less<>> index;
  for (size_t i = 0; i < input.nodes.size(); ++i) {
    if (input.kinds[i] != LayoutItemKind::kNode) continue;
    NodeId n = input.model_nodes[i];
    std::string id;
    std::string pass;
    for (const Attribute& a : model.node_attributes(n)) {
      std::string_view name = model.str(a.name);
      if (name == "group_op_name" && a.kind == AttributeKind::kString) {
        id = std::string(model.str(a.text));
      } else if (name == "fusion_scope" && a.kind == AttributeKind::kInt &&
                 id.empty()) {
        id = "UB fusion " + std::to_string(a.int_value);
      } else if (name == "pass_name_ub") {
        pass = std::string(model.str(a.text));
      }
    }
    if (id.empty()) continue;
    auto [it, inserted] =
        index.try_emplace(id, static_cast<uint32_t>(labels.size()));
    if (inserted) labels.push_back(pass.empty() ? id : id + " (" + pass + ")");
    key[i] = it->second;
  }
  AddGroupsByKey(key, labels, tree);
}

}  // namespace

void AdoptUnscopedNodes(const LayoutInput& input, GroupTree& tree) {
  const size_t n = input.nodes.size();
  const size_t groups = tree.parent.size();
  auto group_of = [&](uint32_t v) -> int32_t {
    int32_t g = v < tree.node_group.size() ? tree.node_group[v] : 0;
    return g >= 0 && static_cast<size_t>(g) < groups ? g : 0;
  };
  std::vector<uint32_t> depth(groups, 0);
  // Parents may come after children in the numbering: walk up (bounded).
  for (size_t g = 1; g < groups; ++g) {
    uint32_t d = 0;
    for (int32_t x = static_cast<int32_t>(g); x > 0 && d <= groups;
         x = tree.parent[x]) {
      ++d;
    }
    depth[g] = d;
  }
  auto lca = [&](int32_t a, int32_t b) {
    while (a != b) {
      if (depth[a] >= depth[b]) {
        a = a > 0 ? tree.parent[a] : 0;
      } else {
        b = b > 0 ? tree.parent[b] : 0;
      }
      if (a < 0) a = 0;
      if (b < 0) b = 0;
    }
    return a;
  };
  // Per node at the top level: the lowest common group of its neighbours
  // (-1: none yet; 0: one of them is at the top level too).
  std::vector<int32_t> common(n, -1);
  auto meet = [&](uint32_t v, uint32_t neighbour) {
    if (v >= n || input.kinds[v] != LayoutItemKind::kNode || group_of(v) != 0) {
      return;
    }
    if (neighbour >= n || input.kinds[neighbour] != LayoutItemKind::kNode) {
      return;  // graph inputs and outputs do not pull a node anywhere
    }
    int32_t g = group_of(neighbour);
    common[v] = common[v] < 0 ? g : lca(common[v], g);
  };
  for (const LayoutEdge& e : input.edges) {
    meet(e.from, e.to);
    meet(e.to, e.from);
  }
  if (tree.node_group.size() < n) tree.node_group.resize(n, 0);
  for (size_t v = 0; v < n; ++v) {
    if (common[v] > 0) tree.node_group[v] = common[v];
  }
}

GroupTree BuildGroups(const Model& model, GraphId graph,
                      const LayoutInput& input,
                      const GroupingOptions& options) {
  const size_t n = input.nodes.size();
  GroupTree tree = GroupsFromScopes(model, graph, input);
  if (!options.scopes) {  // keep the op types, drop the scope groups
    tree.parent.assign(1, -1);
    tree.label.assign(1, "");
    tree.node_group.assign(n, 0);
  }
  NormalizeGroupTree(tree, n);
  if (options.scopes) AdoptUnscopedNodes(input, tree);
  if (options.compiler_fusion) AddCompilerFusionGroups(model, input, tree);
  if (!options.fused_into.empty()) {
    AddFusionGroups(model, input, options.fused_into, tree);
  }
  if (options.repeated_blocks) {
    AddRepeatedBlocks(tree, n, input.edges, options.repeated_min_items);
  }
  AddChunks(tree, n, input.edges, options.chunk_above);
  MarkRepeats(tree, input.edges);
  return tree;
}

}  // namespace mi::layout
