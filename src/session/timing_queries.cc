// Session methods of the timing analyses (src/analysis/timing): the clock
// calibration report, critical path, idle/overlap and node paths as typed
// results, and node lookup by name.

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/timing/timing_results.h"
#include "base/strings.h"
#include "model_inspector/session.h"
#include "session/node_queries.h"
#include "session/session_impl.h"

namespace mi {

CalibrationResult Session::Calibration() const {
  return analysis::ToCalibrationResult(impl_->calibration);
}

StatusOr<CriticalPathResult> Session::CriticalPath(
    const TimingRequest& request) const {
  return analysis::RunCriticalPath(ContextOf(*impl_), request.run,
                                   request.clock);
}

StatusOr<IdleOverlapResult> Session::IdleOverlap(
    const TimingRequest& request) const {
  analysis::IdleOptions options;
  options.scope.run = request.run;
  options.scope.clock = request.clock;
  options.gap_threshold_ns = request.gap_threshold_ns;
  options.max_gaps = request.max_gaps;
  return analysis::RunIdleOverlap(ContextOf(*impl_), options);
}

StatusOr<NodePathsResult> Session::NodePaths(std::string_view level,
                                             uint32_t node) const {
  const Model& m = impl_->model;
  GraphId root;
  MI_ASSIGN_OR_RETURN(root, LevelRoot(*impl_, level));
  if (node >= m.node_count() || m.RootOf(m.node_graph(NodeId(node))) != root) {
    return NotFoundError(fmt::format("node {} is not on the {} level", node,
                                     std::string(level)));
  }
  return analysis::ToNodePathsResult(
      analysis::ComputeNodePaths(m, impl_->trace, impl_->links, NodeId(node)));
}

StatusOr<uint32_t> Session::FindNodeId(std::string_view level,
                                       std::string_view name) const {
  GraphId root;
  MI_ASSIGN_OR_RETURN(root, LevelRoot(*impl_, level));
  const Model& m = impl_->model;
  // "#17": node 17, for a name several nodes share.
  std::optional<uint64_t> number;
  if (name.size() > 1 && name.size() < 11 && name.front() == '#') {
    number = ParseInteger<uint64_t>(name.substr(1));
  }
  if (number) {
    uint64_t id = *number;
    if (id >= m.node_count() ||
        m.RootOf(m.node_graph(NodeId(static_cast<uint32_t>(id)))) != root) {
      return NotFoundError(fmt::format("node {} is not on the {} level", id,
                                       std::string(level)));
    }
    return static_cast<uint32_t>(id);
  }
  std::vector<NodeId> nodes = m.FindNodes(root, name);
  if (nodes.empty()) {
    return NotFoundError(fmt::format("no node named '{}' on the {} level",
                                     std::string(name), std::string(level)));
  }
  if (nodes.size() > 1) {
    std::string which;
    for (NodeId n : nodes) {
      which += fmt::format("{}#{} ({})", which.empty() ? "" : ", ", n.value(),
                           m.str(m.node_op_type(n)));
    }
    return InvalidArgumentError(fmt::format(
        "{} nodes on the {} level are named '{}': {}; give one as '#<id>'",
        nodes.size(), std::string(level), std::string(name), which));
  }
  return nodes[0].value();
}

}  // namespace mi
