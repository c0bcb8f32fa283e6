#pragma once

// Groups for HierarchicalLayout from the model's scope tree (module paths /
// name scopes): one group per scope of the graph, the graph's root scope
// being group 0. Graph input and output pseudo-nodes sit at the root.

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

}  // namespace mi::layout
