#pragma once

// Computes fused_from for every node of a compiled graph against the
// framework graph it was compiled from. The algorithm is described in
// docs/design/fusion-matching.md; in short: compiled nodes connected through
// tensors the framework graph does not know (renamed by the compiler) form a
// cluster; the framework nodes between a cluster's framework-named inputs and
// outputs are its region; the region is shared out among the cluster's
// members by name anchors, op type, and data flow.

#include <utility>
#include <vector>

#include "linker/links.h"
#include "model/model.h"

namespace mi::linker {

struct FusionMatch {
  // (compiled node, framework node) pairs.
  std::vector<std::pair<NodeId, NodeId>> fused_from;
  // Per compiled node of the graph (index = position in graph_nodes).
  std::vector<MatchKind> kinds;
  // Framework nodes a compiled node is named after (they ran as
  // themselves; the rest of a fusion ran inside them).
  std::vector<NodeId> anchors;
  std::vector<NodeId> folded;      // framework nodes folded to constants
  std::vector<NodeId> eliminated;  // covered by nothing, not constant
  uint32_t unexplained = 0;
};

FusionMatch MatchCompiledToFramework(const Model& model, GraphId framework,
                                     GraphId compiled);

// True for op types compilers insert for layout, type or placement reasons
// (ReorderInput/Output, Cast, Memcpy*, TransData, ...).
bool IsInsertableOpType(std::string_view op_type);

}  // namespace mi::linker
