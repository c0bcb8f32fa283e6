// Write() of the timing results: calibration, critical path, idle/overlap
// and node paths (JSON shapes: docs/reference/http-api.md "Timing
// analyses", docs/reference/schemas/analyses.schema.json). Times are
// integer nanoseconds on the result's clock.

#include <optional>
#include <string_view>
#include <vector>

#include "model_inspector/results/calibration.h"
#include "model_inspector/results/critical_path.h"
#include "model_inspector/results/idle_overlap.h"
#include "model_inspector/results/node_paths.h"

namespace mi {
namespace {

void WriteIds(ResultWriter& w, std::string_view key,
              const std::vector<uint32_t>& ids) {
  w.Key(key).BeginArray();
  for (uint32_t id : ids) w.UInt(id);
  w.EndArray();
}

void WriteScope(ResultWriter& w, const std::string& clock,
                const std::optional<int>& run) {
  w.Field("clock", clock);
  w.FieldOptional("run", run);
}

void WriteAnchor(ResultWriter& w, std::string_view key,
                 const std::optional<CalibrationAnchor>& a) {
  w.Key(key);
  if (!a) {
    w.Null();
    return;
  }
  w.BeginObject();
  w.Field("kind", a->kind);
  w.FieldInt("from_task", a->from_task);
  w.FieldInt("to_task", a->to_task);
  w.FieldInt("from_ns", a->from_ns);
  w.FieldInt("to_ns", a->to_ns);
  w.EndObject();
}

}  // namespace

void CalibrationResult::Write(ResultWriter& w) const {
  w.BeginObject();
  w.FieldBool("computed", computed);
  w.FieldBool("per_stream", per_stream);
  w.FieldUInt("anchors", anchors);
  w.Key("anchors_by_kind").BeginObject();
  for (const auto& [kind, count] : anchors_by_kind) w.FieldUInt(kind, count);
  w.EndObject();
  w.Key("violations_before").BeginObject();
  w.FieldUInt("count", violations_before);
  w.FieldInt("worst_ns", worst_violation_before_ns);
  w.EndObject();
  w.Key("residual_violations").BeginObject();
  w.FieldUInt("count", residual_violations);
  w.FieldInt("worst_ns", worst_residual_ns);
  w.FieldOptional("from_task", worst_residual_from);
  w.FieldOptional("to_task", worst_residual_to);
  w.EndObject();
  w.FieldBool("converged", converged);
  w.FieldUInt("contradictions", contradictions);
  w.FieldUInt("unanchored", unanchored);
  w.FieldBool("time_bases_differ", time_bases_differ);
  w.Key("notes").BeginArray();
  for (const std::string& note : notes) w.String(note);
  w.EndArray();
  w.Key("domains").BeginArray();
  for (const ClockDomainInfo& d : domains) {
    w.BeginObject();
    w.Field("name", d.name);
    w.Field("kind", d.kind);
    w.FieldOptional("source", d.source);
    w.FieldOptional("device", d.device);
    w.FieldBool("reference", d.reference);
    w.FieldBool("anchored", d.anchored);
    w.FieldOptional("reference_domain", d.reference_domain);
    w.FieldInt("offset_ns", d.offset_ns);
    w.Key("interval").BeginObject();
    w.FieldOptional("lower_ns", d.lower_ns);
    w.FieldOptional("upper_ns", d.upper_ns);
    w.EndObject();
    w.FieldOptional("error_bound_ns", d.error_bound_ns);
    w.FieldBool("contradiction", d.contradiction);
    w.FieldUInt("anchors", d.anchors);
    WriteIds(w, "tracks", d.tracks);
    WriteAnchor(w, "binding_lower", d.binding_lower);
    WriteAnchor(w, "binding_upper", d.binding_upper);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void CriticalPathResult::Write(ResultWriter& w) const {
  w.BeginObject();
  WriteScope(w, clock, run);
  WriteIds(w, "tasks", tasks);
  // Per path task: what it is, where it ran, and how the path reached it.
  w.Key("steps").BeginArray();
  for (const CriticalPathStep& s : steps) {
    w.BeginObject();
    w.FieldUInt("task", s.task);
    w.Field("name", s.name);
    w.Field("op_type", s.op_type);
    w.Field("kind", s.kind);
    w.FieldUInt("track", s.track);
    w.FieldInt("start_ns", s.start_ns);
    w.FieldInt("end_ns", s.end_ns);
    w.FieldOptional("node", s.node);
    w.Key("via");
    s.via.empty() ? w.Null() : w.String(s.via);
    w.FieldInt("wait_ns", s.wait_ns);
    w.EndObject();
  }
  w.EndArray();
  WriteIds(w, "nodes", nodes);
  w.FieldInt("start_ns", start_ns);
  w.FieldInt("end_ns", end_ns);
  w.FieldInt("length_ns", length_ns);
  w.FieldInt("wall_ns", wall_ns);
  w.FieldDouble("share", share);
  w.FieldInt("busy_ns", busy_ns);
  w.Key("by_track").BeginArray();
  for (const TrackTime& t : by_track) {
    w.BeginObject();
    w.FieldUInt("track", t.track);
    w.Field("name", t.name);
    w.FieldInt("ns", t.ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("by_op_type").BeginArray();
  for (const LabelTime& o : by_op_type) {
    w.BeginObject().Field("op_type", o.label).FieldInt("ns", o.ns).EndObject();
  }
  w.EndArray();
  w.Key("waits").BeginArray();
  for (const LabelTime& o : waits) {
    w.BeginObject().Field("kind", o.label).FieldInt("ns", o.ns).EndObject();
  }
  w.EndArray();
  w.Key("graph").BeginObject();
  w.FieldUInt("tasks", graph_tasks);
  w.FieldUInt("edges", graph_edges);
  w.Key("edges_by_kind").BeginObject();
  for (const auto& [kind, count] : edges_by_kind) w.FieldUInt(kind, count);
  w.EndObject();
  w.FieldUInt("broken_edges", broken_edges);
  w.FieldUInt("dropped_data_edges", dropped_data_edges);
  w.EndObject();
  w.EndObject();
}

void IdleOverlapResult::Write(ResultWriter& w) const {
  w.BeginObject();
  WriteScope(w, clock, run);
  w.FieldInt("gap_threshold_ns", gap_threshold_ns);
  w.Key("streams").BeginArray();
  for (const StreamIdleInfo& s : streams) {
    w.BeginObject();
    w.FieldUInt("track", s.track);
    w.Field("name", s.name);
    w.FieldUInt("tasks", s.tasks);
    w.FieldInt("start_ns", s.start_ns);
    w.FieldInt("end_ns", s.end_ns);
    w.FieldInt("busy_ns", s.busy_ns);
    w.FieldInt("idle_ns", s.idle_ns);
    w.Key("idle_by_reason_ns").BeginObject();
    w.FieldInt("host", s.idle_host_ns);
    w.FieldInt("other_stream", s.idle_other_stream_ns);
    w.FieldInt("other", s.idle_other_ns);
    w.EndObject();
    w.FieldUInt("gaps", s.gaps);
    w.EndObject();
  }
  w.EndArray();
  w.FieldUInt("gaps_over_threshold", gaps_over_threshold);
  w.Key("gaps").BeginArray();
  for (const IdleGapInfo& g : gaps) {
    w.BeginObject();
    w.FieldUInt("track", g.track);
    w.FieldInt("start_ns", g.start_ns);
    w.FieldInt("end_ns", g.end_ns);
    w.FieldInt("duration_ns", g.end_ns - g.start_ns);
    w.Field("reason", g.reason);
    w.FieldOptional("before_task", g.before_task);
    w.FieldOptional("after_task", g.after_task);
    w.FieldOptional("cause_task", g.cause_task);
    w.EndObject();
  }
  w.EndArray();
  w.Key("devices").BeginArray();
  for (const DeviceOverlapInfo& d : devices) {
    w.BeginObject();
    w.Field("device", d.device);
    w.FieldInt("compute_ns", d.compute_ns);
    w.FieldInt("data_movement_ns", d.data_movement_ns);
    w.FieldInt("overlap_ns", d.overlap_ns);
    w.FieldDouble("overlap_share", d.overlap_share);
    WriteIds(w, "exposed_copies", d.exposed_copies);
    w.EndObject();
  }
  w.EndArray();
  w.Key("sync").BeginObject();
  w.FieldUInt("calls", sync_calls);
  w.FieldInt("ns", sync_ns);
  w.FieldInt("device_idle_ns", sync_device_idle_ns);
  w.Key("waits").BeginArray();
  for (const SyncWaitInfo& s : sync_waits) {
    w.BeginObject();
    w.FieldUInt("task", s.task);
    w.FieldInt("duration_ns", s.duration_ns);
    w.FieldInt("device_idle_ns", s.device_idle_ns);
    w.FieldOptional("device_before", s.device_before);
    w.FieldOptional("device_after", s.device_after);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
}

void NodePathsResult::Write(ResultWriter& w) const {
  w.BeginObject();
  w.FieldUInt("node", node);
  WriteIds(w, "ancestors", ancestors);
  WriteIds(w, "descendants", descendants);
  WriteIds(w, "node_tasks", node_tasks);
  WriteIds(w, "ancestor_tasks", ancestor_tasks);
  WriteIds(w, "descendant_tasks", descendant_tasks);
  w.EndObject();
}

}  // namespace mi
