#pragma once

// Groups for HierarchicalLayout from the model's scope tree (module paths /
// name scopes): one group per scope of the graph, the graph's root scope
// being group 0. Graph input and output pseudo-nodes sit at the root.

#include <cstddef>
#include <vector>

#include "base/ids.h"
#include "layout/hierarchical_layout.h"
#include "layout/model_layout.h"

namespace mi {
class Model;
}  // namespace mi

namespace mi::layout {

// Groups are numbered in scope id order (parents are interned before their
// children), labels are the scopes' last path segments, and op types are
// recorded for the group summaries. Needs Model::AssignScopesFromNames (the
// importers call it); nodes without a scope sit at the root.
GroupTree GroupsFromScopes(const Model& model, GraphId graph,
                           const LayoutInput& input);

// Nodes without a scope whose neighbours all lie inside groups (what a
// compiler inserts between two ops of one block: ORT's ReorderOutput, GE's
// TransData) join the lowest group holding all their neighbours, so they
// are drawn beside them instead of at the top level with long edges back
// into the block. Graph inputs and outputs do not count as neighbours; a
// node with a neighbour at the top level stays there.
void AdoptUnscopedNodes(const LayoutInput& input, GroupTree& tree);

struct GroupingOptions {
  // Module paths / name scopes as groups.
  bool scopes = true;
  // Fusion groups (framework level): indexed by NodeId value over the whole
  // model, the compiled node each node was fused into (invalid = none).
  // Nodes sharing a compiled node form one kFusion group, labelled by it,
  // placed under the deepest scope holding all of them. Empty = none.
  std::vector<NodeId> fused_into;
  // Fusion groups a compiled graph declares itself (GE: ops sharing a UB
  // `fusion_scope` or ATC's `group_op_name` ran as one kernel).
  bool compiler_fusion = false;
  // Repeated blocks found by structure in groups with many direct nodes
  // (graphs without scopes, compiled graphs with rewritten names).
  bool repeated_blocks = true;
  // Only groups with more items than this are searched (see
  // AddRepeatedBlocks in group_detection.h).
  size_t repeated_min_items = 64;
  // Groups still holding more direct nodes than this are split into runs of
  // consecutive nodes (kChunk), so any graph can fold to a small view.
  size_t chunk_above = 1000;
};

// Everything the layout shows as compound nodes, per `options`; also
// marks groups with equal structure (GroupTree::repeat_of). Order: scope
// groups (as GroupsFromScopes; with `scopes` off only the root), fusion
// groups, repeated blocks, chunks (group_detection.h), then repeat marks.
// Op types are recorded either way. Deterministic.
GroupTree BuildGroups(const Model& model, GraphId graph,
                      const LayoutInput& input, const GroupingOptions& options);

}  // namespace mi::layout
