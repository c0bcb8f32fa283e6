// Session methods of the timing analyses (src/analysis/timing): clock
// calibration report, critical path, idle/overlap and node paths as JSON.

#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/timing/calibration.h"
#include "analysis/timing/critical_path.h"
#include "analysis/timing/idle_overlap.h"
#include "analysis/timing/timing_json.h"
#include "base/json_writer.h"
#include "model_inspector/session.h"
#include "session/node_queries.h"
#include "session/session_impl.h"

namespace mi {
namespace {

StatusOr<analysis::TimingScope> ScopeOf(const Session::Impl& run,
                                        const TimingRequest& request) {
  analysis::TimingScope scope;
  scope.clock = request.clock;
  if (request.run >= 0) {
    size_t runs = run.trace.runs().size();
    if (static_cast<size_t>(request.run) >= runs) {
      return InvalidArgumentError(
          runs == 0
              ? fmt::format("run {}: this input has no trace", request.run)
              : fmt::format("run {}: the trace has runs 0..{}", request.run,
                            runs - 1));
    }
  }
  scope.run = request.run;
  return scope;
}

}  // namespace

std::string Session::CalibrationJson() const {
  return analysis::EncodeCalibrationJson(impl_->calibration);
}

StatusOr<std::string> Session::CriticalPathJson(
    const TimingRequest& request) const {
  analysis::TimingScope scope;
  MI_ASSIGN_OR_RETURN(scope, ScopeOf(*impl_, request));
  analysis::CriticalPathReport report = analysis::ComputeCriticalPath(
      impl_->model, impl_->trace, impl_->links, scope);
  return analysis::EncodeCriticalPathJson(impl_->model, impl_->trace, report);
}

StatusOr<std::string> Session::IdleOverlapJson(
    const TimingRequest& request) const {
  analysis::IdleOptions options;
  MI_ASSIGN_OR_RETURN(options.scope, ScopeOf(*impl_, request));
  options.gap_threshold_ns = request.gap_threshold_ns;
  options.max_gaps = request.max_gaps;
  analysis::IdleOverlapReport report = analysis::ComputeIdleOverlap(
      impl_->model, impl_->trace, impl_->links, options);
  return analysis::EncodeIdleOverlapJson(impl_->trace, report);
}

StatusOr<std::string> Session::NodePathsJson(std::string_view level,
                                             uint32_t node) const {
  const Model& m = impl_->model;
  GraphId root;
  MI_ASSIGN_OR_RETURN(root, LevelRoot(*impl_, level));
  if (node >= m.node_count() || m.RootOf(m.node_graph(NodeId(node))) != root) {
    return NotFoundError(fmt::format("node {} is not on the {} level", node,
                                     std::string(level)));
  }
  return analysis::EncodeNodePathsJson(
      analysis::ComputeNodePaths(m, impl_->trace, impl_->links, NodeId(node)));
}

StatusOr<uint32_t> Session::FindNodeId(std::string_view level,
                                       std::string_view name) const {
  GraphId root;
  MI_ASSIGN_OR_RETURN(root, LevelRoot(*impl_, level));
  const Model& m = impl_->model;
  // "#17": node 17, for a name several nodes share.
  if (name.size() > 1 && name.front() == '#' &&
      name.find_first_not_of("0123456789", 1) == std::string_view::npos &&
      name.size() < 11) {
    uint64_t id = std::stoull(std::string(name.substr(1)));
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

std::string Session::AnalysesJson() const {
  const Session::Impl& run = *impl_;
  std::string out;
  JsonWriter w(&out, /*pretty=*/true);
  w.BeginObject();
  w.Field("schema", "model-inspector/analyses/1");
  if (run.trace.task_count() > 0) {
    w.Key("calibration");
    analysis::WriteCalibrationJson(w, run.calibration);
    analysis::TimingScope scope;
    w.Key("critical_path");
    analysis::WriteCriticalPathJson(
        w, run.model, run.trace,
        analysis::ComputeCriticalPath(run.model, run.trace, run.links, scope));
    analysis::IdleOptions options;
    w.Key("idle_overlap");
    analysis::WriteIdleOverlapJson(
        w, run.trace,
        analysis::ComputeIdleOverlap(run.model, run.trace, run.links, options));
  }
  // findings, sequences, blocks (diagnosis_queries.cc)
  WriteDiagnosisSections(*this, w);
  w.EndObject();
  out.push_back('\n');
  return out;
}

}  // namespace mi
