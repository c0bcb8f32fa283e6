#include "analysis/timing/timing_results.h"

#include <optional>
#include <string>
#include <vector>

namespace mi::analysis {
namespace {

template <typename Id>
std::vector<uint32_t> Ids(const std::vector<Id>& ids) {
  std::vector<uint32_t> out;
  out.reserve(ids.size());
  for (Id id : ids) out.push_back(id.value());
  return out;
}

std::optional<uint32_t> OptionalId(TaskId id) {
  return id.valid() ? std::optional<uint32_t>(id.value()) : std::nullopt;
}

std::optional<int> RunOf(const TimingScope& scope) {
  return scope.run >= 0 ? std::optional<int>(scope.run) : std::nullopt;
}

std::optional<CalibrationAnchor> Anchor(const std::optional<AnchorRef>& a) {
  if (!a) return std::nullopt;
  return CalibrationAnchor{std::string(AnchorKindName(a->kind)),
                           a->from.value(), a->to.value(), a->from_ns,
                           a->to_ns};
}

std::string DomainKindName(ClockDomainOffset::Kind kind) {
  switch (kind) {
    case ClockDomainOffset::Kind::kHost:
      return "host";
    case ClockDomainOffset::Kind::kDevice:
      return "device";
    case ClockDomainOffset::Kind::kStream:
      return "stream";
  }
  return "host";
}

}  // namespace

CalibrationResult ToCalibrationResult(const CalibrationReport& r) {
  CalibrationResult out;
  out.computed = r.computed;
  out.per_stream = r.per_stream;
  out.anchors = r.anchors;
  for (size_t k = 0; k < kAnchorKindCount; ++k) {
    out.anchors_by_kind.emplace_back(
        std::string(AnchorKindName(static_cast<AnchorKind>(k))),
        r.anchors_by_kind[k]);
  }
  out.violations_before = r.violations_before;
  out.worst_violation_before_ns = r.worst_violation_before_ns;
  out.residual_violations = r.residual_violations;
  out.worst_residual_ns = r.worst_residual_ns;
  out.worst_residual_from = OptionalId(r.worst_residual_from);
  out.worst_residual_to = OptionalId(r.worst_residual_to);
  out.converged = r.converged;
  out.contradictions = r.contradictions;
  out.unanchored = r.unanchored;
  out.time_bases_differ = r.time_bases_differ;
  out.notes = r.notes;
  for (const ClockDomainOffset& d : r.domains) {
    ClockDomainInfo info;
    info.name = d.name;
    info.kind = DomainKindName(d.kind);
    if (d.source != kNoSource) info.source = d.source;
    if (d.device >= 0) info.device = d.device;
    info.reference = d.reference;
    info.anchored = d.anchored;
    if (d.reference_domain >= 0) info.reference_domain = d.reference_domain;
    info.offset_ns = d.offset_ns;
    info.lower_ns = d.lower_ns;
    info.upper_ns = d.upper_ns;
    info.error_bound_ns = d.error_bound_ns;
    info.contradiction = d.contradiction;
    info.anchors = d.anchors;
    info.tracks = Ids(d.tracks);
    info.binding_lower = Anchor(d.binding_lower);
    info.binding_upper = Anchor(d.binding_upper);
    out.domains.push_back(std::move(info));
  }
  return out;
}

CriticalPathResult ToCriticalPathResult(const Model& model, const Trace& trace,
                                        const CriticalPathReport& r) {
  CriticalPathResult out;
  out.clock = std::string(ClockName(r.scope.clock));
  out.run = RunOf(r.scope);
  out.tasks = Ids(r.tasks);
  TaskClock clock(trace, r.scope.clock);
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    TaskId t = r.tasks[i];
    CriticalPathStep s;
    s.task = t.value();
    s.name = std::string(trace.str(trace.task_name(t)));
    s.op_type = std::string(TaskOpLabel(model, trace, t));
    s.kind = std::string(TaskKindName(trace.task_kind(t)));
    s.track = trace.task_track(t).value();
    s.start_ns = clock.start(t);
    s.end_ns = clock.end(t);
    if (trace.task_node(t).valid()) s.node = trace.task_node(t).value();
    if (i > 0) s.via = std::string(DependencyKindName(r.via[i]));
    s.wait_ns = r.wait_before_ns[i];
    out.steps.push_back(std::move(s));
  }
  out.nodes = Ids(r.nodes);
  out.start_ns = r.start_ns;
  out.end_ns = r.end_ns;
  out.length_ns = r.length_ns;
  out.wall_ns = r.wall_ns;
  out.share = r.share;
  out.busy_ns = r.busy_ns;
  for (const auto& t : r.by_track) {
    out.by_track.push_back(
        {t.track.value(), TrackMentionName(trace, t.track), t.ns});
  }
  for (const auto& o : r.by_op_type) out.by_op_type.push_back({o.label, o.ns});
  for (const auto& o : r.waits_by_kind) out.waits.push_back({o.label, o.ns});
  out.graph_tasks = r.graph_tasks;
  out.graph_edges = r.graph_edges;
  for (size_t k = 0; k < kDependencyKindCount; ++k) {
    out.edges_by_kind.emplace_back(
        std::string(DependencyKindName(static_cast<DependencyKind>(k))),
        r.edges_by_kind[k]);
  }
  out.broken_edges = r.broken_edges;
  out.dropped_data_edges = r.dropped_data_edges;
  return out;
}

IdleOverlapResult ToIdleOverlapResult(const Trace& trace,
                                      const IdleOverlapReport& r) {
  IdleOverlapResult out;
  out.clock = std::string(ClockName(r.scope.clock));
  out.run = RunOf(r.scope);
  out.gap_threshold_ns = r.gap_threshold_ns;
  for (const StreamIdle& s : r.streams) {
    out.streams.push_back({s.track.value(), TrackMentionName(trace, s.track),
                           s.tasks, s.start_ns, s.end_ns, s.busy_ns, s.idle_ns,
                           s.idle_host_ns, s.idle_other_stream_ns,
                           s.idle_other_ns, s.gaps});
  }
  out.gaps_over_threshold = r.gaps_over_threshold;
  for (const IdleGap& g : r.gaps) {
    out.gaps.push_back({g.track.value(), g.start_ns, g.end_ns,
                        std::string(IdleReasonName(g.reason)),
                        OptionalId(g.before), OptionalId(g.after),
                        OptionalId(g.cause)});
  }
  for (const DeviceOverlap& d : r.devices) {
    out.devices.push_back({d.device, d.compute_ns, d.data_movement_ns,
                           d.overlap_ns, d.overlap_share,
                           Ids(d.exposed_copies)});
  }
  out.sync_calls = r.sync_calls;
  out.sync_ns = r.sync_ns;
  out.sync_device_idle_ns = r.sync_device_idle_ns;
  for (const SyncWait& s : r.sync_waits) {
    out.sync_waits.push_back({s.task.value(), s.duration_ns, s.device_idle_ns,
                              OptionalId(s.device_before),
                              OptionalId(s.device_after)});
  }
  return out;
}

NodePathsResult ToNodePathsResult(const NodePathsReport& r) {
  NodePathsResult out;
  out.node = r.node.value();
  out.ancestors = Ids(r.ancestors);
  out.descendants = Ids(r.descendants);
  out.node_tasks = Ids(r.node_tasks);
  out.ancestor_tasks = Ids(r.ancestor_tasks);
  out.descendant_tasks = Ids(r.descendant_tasks);
  return out;
}

}  // namespace mi::analysis
