#include "analysis/timing/timing_json.h"

namespace mi::analysis {
namespace {

template <typename Id>
void WriteIds(JsonWriter& w, std::string_view key, const std::vector<Id>& ids) {
  w.Key(key).BeginArray();
  for (Id id : ids) w.UInt(id.value());
  w.EndArray();
}

void WriteOptionalId(JsonWriter& w, std::string_view key, TaskId id) {
  w.Key(key);
  id.valid() ? w.UInt(id.value()) : w.Null();
}

void WriteScope(JsonWriter& w, const TimingScope& scope) {
  w.Field("clock", ClockName(scope.clock));
  w.Key("run");
  scope.run >= 0 ? w.Int(scope.run) : w.Null();
}

template <typename F>
std::string Encode(F&& write) {
  std::string out;
  JsonWriter w(&out);
  write(w);
  out.push_back('\n');
  return out;
}

void WriteOptionalNs(JsonWriter& w, std::string_view key,
                     const std::optional<int64_t>& ns) {
  w.Key(key);
  ns ? w.Int(*ns) : w.Null();
}

void WriteAnchor(JsonWriter& w, std::string_view key,
                 const std::optional<AnchorRef>& a) {
  w.Key(key);
  if (!a) {
    w.Null();
    return;
  }
  w.BeginObject();
  w.Field("kind", AnchorKindName(a->kind));
  w.FieldInt("from_task", a->from.value());
  w.FieldInt("to_task", a->to.value());
  w.FieldInt("from_ns", a->from_ns);
  w.FieldInt("to_ns", a->to_ns);
  w.EndObject();
}

std::string_view DomainKindName(ClockDomainOffset::Kind kind) {
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

void WriteCalibrationJson(JsonWriter& w, const CalibrationReport& r) {
  w.BeginObject();
  w.FieldBool("computed", r.computed);
  w.FieldBool("per_stream", r.per_stream);
  w.FieldInt("anchors", static_cast<int64_t>(r.anchors));
  w.Key("anchors_by_kind").BeginObject();
  for (size_t k = 0; k < kAnchorKindCount; ++k) {
    w.FieldInt(AnchorKindName(static_cast<AnchorKind>(k)),
               static_cast<int64_t>(r.anchors_by_kind[k]));
  }
  w.EndObject();
  w.Key("violations_before").BeginObject();
  w.FieldInt("count", static_cast<int64_t>(r.violations_before));
  w.FieldInt("worst_ns", r.worst_violation_before_ns);
  w.EndObject();
  w.Key("residual_violations").BeginObject();
  w.FieldInt("count", static_cast<int64_t>(r.residual_violations));
  w.FieldInt("worst_ns", r.worst_residual_ns);
  WriteOptionalId(w, "from_task", r.worst_residual_from);
  WriteOptionalId(w, "to_task", r.worst_residual_to);
  w.EndObject();
  w.FieldBool("converged", r.converged);
  w.FieldInt("contradictions", static_cast<int64_t>(r.contradictions));
  w.FieldInt("unanchored", static_cast<int64_t>(r.unanchored));
  w.FieldBool("time_bases_differ", r.time_bases_differ);
  w.Key("notes").BeginArray();
  for (const std::string& note : r.notes) w.String(note);
  w.EndArray();
  w.Key("domains").BeginArray();
  for (const ClockDomainOffset& d : r.domains) {
    w.BeginObject();
    w.Field("name", d.name);
    w.Field("kind", DomainKindName(d.kind));
    w.Key("source");
    d.source == kNoSource ? w.Null() : w.UInt(d.source);
    w.Key("device");
    d.device >= 0 ? w.Int(d.device) : w.Null();
    w.FieldBool("reference", d.reference);
    w.FieldBool("anchored", d.anchored);
    w.Key("reference_domain");
    d.reference_domain >= 0 ? w.Int(d.reference_domain) : w.Null();
    w.FieldInt("offset_ns", d.offset_ns);
    w.Key("interval").BeginObject();
    WriteOptionalNs(w, "lower_ns", d.lower_ns);
    WriteOptionalNs(w, "upper_ns", d.upper_ns);
    w.EndObject();
    WriteOptionalNs(w, "error_bound_ns", d.error_bound_ns);
    w.FieldBool("contradiction", d.contradiction);
    w.FieldInt("anchors", static_cast<int64_t>(d.anchors));
    WriteIds(w, "tracks", d.tracks);
    WriteAnchor(w, "binding_lower", d.binding_lower);
    WriteAnchor(w, "binding_upper", d.binding_upper);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void WriteCriticalPathJson(JsonWriter& w, const Model& model,
                           const Trace& trace, const CriticalPathReport& r) {
  w.BeginObject();
  WriteScope(w, r.scope);
  WriteIds(w, "tasks", r.tasks);
  // Per path task: what it is, where it ran, and how the path reached it.
  TaskClock clock(trace, r.scope.clock);
  w.Key("steps").BeginArray();
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    TaskId t = r.tasks[i];
    w.BeginObject();
    w.FieldInt("task", t.value());
    w.Field("name", trace.str(trace.task_name(t)));
    w.Field("op_type", TaskOpLabel(model, trace, t));
    w.Field("kind", TaskKindName(trace.task_kind(t)));
    w.FieldInt("track", trace.task_track(t).value());
    w.FieldInt("start_ns", clock.start(t));
    w.FieldInt("end_ns", clock.end(t));
    w.Key("node");
    trace.task_node(t).valid() ? w.UInt(trace.task_node(t).value()) : w.Null();
    w.Key("via");
    i == 0 ? w.Null() : w.String(DependencyKindName(r.via[i]));
    w.FieldInt("wait_ns", r.wait_before_ns[i]);
    w.EndObject();
  }
  w.EndArray();
  WriteIds(w, "nodes", r.nodes);
  w.FieldInt("start_ns", r.start_ns);
  w.FieldInt("end_ns", r.end_ns);
  w.FieldInt("length_ns", r.length_ns);
  w.FieldInt("wall_ns", r.wall_ns);
  w.FieldDouble("share", r.share);
  w.FieldInt("busy_ns", r.busy_ns);
  w.Key("by_track").BeginArray();
  for (const auto& t : r.by_track) {
    w.BeginObject();
    w.FieldInt("track", t.track.value());
    w.Field("name", TrackLabel(trace, t.track));
    w.FieldInt("ns", t.ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("by_op_type").BeginArray();
  for (const auto& o : r.by_op_type) {
    w.BeginObject().Field("op_type", o.label).FieldInt("ns", o.ns).EndObject();
  }
  w.EndArray();
  w.Key("waits").BeginArray();
  for (const auto& o : r.waits_by_kind) {
    w.BeginObject().Field("kind", o.label).FieldInt("ns", o.ns).EndObject();
  }
  w.EndArray();
  w.Key("graph").BeginObject();
  w.FieldInt("tasks", static_cast<int64_t>(r.graph_tasks));
  w.FieldInt("edges", static_cast<int64_t>(r.graph_edges));
  w.Key("edges_by_kind").BeginObject();
  for (size_t k = 0; k < kDependencyKindCount; ++k) {
    w.FieldInt(DependencyKindName(static_cast<DependencyKind>(k)),
               static_cast<int64_t>(r.edges_by_kind[k]));
  }
  w.EndObject();
  w.FieldInt("broken_edges", static_cast<int64_t>(r.broken_edges));
  w.FieldInt("dropped_data_edges", static_cast<int64_t>(r.dropped_data_edges));
  w.EndObject();
  w.EndObject();
}

void WriteIdleOverlapJson(JsonWriter& w, const Trace& trace,
                          const IdleOverlapReport& r) {
  w.BeginObject();
  WriteScope(w, r.scope);
  w.FieldInt("gap_threshold_ns", r.gap_threshold_ns);
  w.Key("streams").BeginArray();
  for (const StreamIdle& s : r.streams) {
    w.BeginObject();
    w.FieldInt("track", s.track.value());
    w.Field("name", TrackLabel(trace, s.track));
    w.FieldInt("tasks", static_cast<int64_t>(s.tasks));
    w.FieldInt("start_ns", s.start_ns);
    w.FieldInt("end_ns", s.end_ns);
    w.FieldInt("busy_ns", s.busy_ns);
    w.FieldInt("idle_ns", s.idle_ns);
    w.Key("idle_by_reason").BeginObject();
    w.FieldInt("host", s.idle_host_ns);
    w.FieldInt("other_stream", s.idle_other_stream_ns);
    w.FieldInt("other", s.idle_other_ns);
    w.EndObject();
    w.FieldInt("gaps", static_cast<int64_t>(s.gaps));
    w.EndObject();
  }
  w.EndArray();
  w.FieldInt("gaps_over_threshold",
             static_cast<int64_t>(r.gaps_over_threshold));
  w.Key("gaps").BeginArray();
  for (const IdleGap& g : r.gaps) {
    w.BeginObject();
    w.FieldInt("track", g.track.value());
    w.FieldInt("start_ns", g.start_ns);
    w.FieldInt("end_ns", g.end_ns);
    w.FieldInt("duration_ns", g.end_ns - g.start_ns);
    w.Field("reason", IdleReasonName(g.reason));
    WriteOptionalId(w, "before_task", g.before);
    WriteOptionalId(w, "after_task", g.after);
    WriteOptionalId(w, "cause_task", g.cause);
    w.EndObject();
  }
  w.EndArray();
  w.Key("devices").BeginArray();
  for (const DeviceOverlap& d : r.devices) {
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
  w.FieldInt("calls", static_cast<int64_t>(r.sync_calls));
  w.FieldInt("ns", r.sync_ns);
  w.FieldInt("device_idle_ns", r.sync_device_idle_ns);
  w.Key("waits").BeginArray();
  for (const SyncWait& s : r.sync_waits) {
    w.BeginObject();
    w.FieldInt("task", s.task.value());
    w.FieldInt("duration_ns", s.duration_ns);
    w.FieldInt("device_idle_ns", s.device_idle_ns);
    WriteOptionalId(w, "device_before", s.device_before);
    WriteOptionalId(w, "device_after", s.device_after);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
}

void WriteNodePathsJson(JsonWriter& w, const NodePathsReport& r) {
  w.BeginObject();
  w.FieldInt("node", r.node.value());
  WriteIds(w, "ancestors", r.ancestors);
  WriteIds(w, "descendants", r.descendants);
  WriteIds(w, "node_tasks", r.node_tasks);
  WriteIds(w, "ancestor_tasks", r.ancestor_tasks);
  WriteIds(w, "descendant_tasks", r.descendant_tasks);
  w.EndObject();
}

std::string EncodeCalibrationJson(const CalibrationReport& report) {
  return Encode([&](JsonWriter& w) { WriteCalibrationJson(w, report); });
}
std::string EncodeCriticalPathJson(const Model& model, const Trace& trace,
                                   const CriticalPathReport& report) {
  return Encode(
      [&](JsonWriter& w) { WriteCriticalPathJson(w, model, trace, report); });
}
std::string EncodeIdleOverlapJson(const Trace& trace,
                                  const IdleOverlapReport& report) {
  return Encode([&](JsonWriter& w) { WriteIdleOverlapJson(w, trace, report); });
}
std::string EncodeNodePathsJson(const NodePathsReport& report) {
  return Encode([&](JsonWriter& w) { WriteNodePathsJson(w, report); });
}

}  // namespace mi::analysis
