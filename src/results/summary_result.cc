// Write() of the summary: summary.json
// (docs/reference/schemas/summary.schema.json) and `summary --format json`.

#include <string>

#include "model_inspector/results/diagnosis.h"
#include "model_inspector/summary.h"

namespace mi {
namespace {

// The whole-trace analyses of a summary (summary_analyses.cc).
void WriteSummaryAnalyses(ResultWriter& w, const SummaryReport& r) {
  w.Key("critical_path");
  if (r.has_critical_path) {
    const CriticalPathSummary& c = r.critical_path;
    w.BeginObject();
    w.FieldDouble("length_us", c.length_us).FieldDouble("wall_us", c.wall_us);
    w.FieldDouble("share", c.share);
    w.FieldInt("tasks", static_cast<int64_t>(c.tasks));
    w.Key("top_op_types").BeginArray();
    for (const auto& [op, us] : c.top_op_types_us) {
      w.BeginObject().Field("op_type", op).FieldDouble("us", us).EndObject();
    }
    w.EndArray();
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("overlap").BeginArray();
  for (const OverlapRow& o : r.overlap) {
    w.BeginObject()
        .Field("device", o.device)
        .FieldDouble("compute_us", o.compute_us)
        .FieldDouble("data_movement_us", o.data_movement_us)
        .FieldDouble("overlap_us", o.overlap_us)
        .FieldDouble("overlap_share", o.overlap_share)
        .EndObject();
  }
  w.EndArray();
  w.Key("host_sync").BeginObject();
  w.FieldInt("calls", static_cast<int64_t>(r.host_sync.calls));
  w.FieldDouble("total_us", r.host_sync.total_us);
  w.FieldDouble("device_idle_us", r.host_sync.device_idle_us);
  w.EndObject();
  w.Key("memory");
  if (r.has_memory) {
    const MemorySummary& m = r.memory;
    w.BeginObject().Field("level", m.level).Field("order", m.order);
    w.FieldInt("peak_activation_bytes",
               static_cast<int64_t>(m.peak_activation_bytes));
    w.FieldInt("weight_bytes", static_cast<int64_t>(m.weight_bytes));
    w.Key("reported_peak_bytes");
    m.reported_peak_bytes >= 0 ? w.Int(m.reported_peak_bytes) : w.Null();
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("findings").BeginArray();
  for (const FindingInfo& f : r.findings) WriteFinding(w, f);
  w.EndArray();
}

}  // namespace

std::vector<UnlinkedReason> UnlinkedReasons(const SummaryReport& r) {
  std::vector<UnlinkedReason> out;
  auto add = [&out](std::string_view code, uint64_t n, std::string_view text) {
    if (n > 0) out.push_back({std::string(code), n, std::string(text)});
  };
  add("without_node_name", r.unlinked_without_node_name, "name no node");
  add("unknown_node", r.unlinked_unknown_node, "name a node the graphs lack");
  add("ambiguous_node", r.unlinked_ambiguous_node,
      "name a node several nodes share (duplicate_node_name)");
  add("no_graph", r.unlinked_no_graph, "have no graph to link to");
  return out;
}

void SummaryReport::Write(ResultWriter& w) const {
  const SummaryReport& r = *this;
  w.BeginObject();
  w.Field("schema", "model-inspector/summary/1");
  w.Field("basis", r.basis);
  w.Field("dialect", r.dialect);
  w.FieldDouble("total_us", r.total_us);
  w.FieldInt("tasks", static_cast<int64_t>(r.tasks));
  // Written only when there are syncs, so summaries without any read as
  // before.
  if (r.sync_tasks > 0) {
    w.FieldInt("sync_tasks", static_cast<int64_t>(r.sync_tasks));
  }
  w.FieldInt("linked_tasks", static_cast<int64_t>(r.linked_tasks));
  w.FieldInt("unlinked_tasks", static_cast<int64_t>(r.unlinked_tasks));
  w.Key("unlinked_reasons").BeginObject();
  w.FieldInt("without_node_name",
             static_cast<int64_t>(r.unlinked_without_node_name));
  w.FieldInt("unknown_node", static_cast<int64_t>(r.unlinked_unknown_node));
  // Only when some task names a node several nodes share (the field is
  // optional, so summaries of graphs without repeated names are unchanged).
  if (r.unlinked_ambiguous_node > 0) {
    w.FieldInt("ambiguous_node",
               static_cast<int64_t>(r.unlinked_ambiguous_node));
  }
  w.FieldInt("no_graph", static_cast<int64_t>(r.unlinked_no_graph));
  w.EndObject();
  w.FieldInt("aligned_host_ops", static_cast<int64_t>(r.aligned_host_ops));
  const GraphCounts& g = r.graph;
  w.Key("graph").BeginObject();
  w.FieldInt("framework_nodes", static_cast<int64_t>(g.framework_nodes));
  w.FieldInt("compiled_nodes", static_cast<int64_t>(g.compiled_nodes));
  w.FieldInt("fused_framework_nodes",
             static_cast<int64_t>(g.fused_framework_nodes));
  w.FieldInt("folded_framework_nodes",
             static_cast<int64_t>(g.folded_framework_nodes));
  w.FieldInt("eliminated_framework_nodes",
             static_cast<int64_t>(g.eliminated_framework_nodes));
  w.FieldInt("inserted_compiled_nodes",
             static_cast<int64_t>(g.inserted_compiled_nodes));
  w.FieldInt("unexplained_compiled_nodes",
             static_cast<int64_t>(g.unexplained_compiled_nodes));
  w.FieldInt("executed_nodes", static_cast<int64_t>(g.executed_nodes));
  w.FieldInt("not_executed_nodes", static_cast<int64_t>(g.not_executed_nodes));
  w.EndObject();
  w.Key("op_types").BeginArray();
  for (const OpTypeRow& row : r.op_types) {
    w.BeginObject()
        .Field("op_type", row.op_type)
        .Field("kind", row.kind)
        .FieldInt("nodes", static_cast<int64_t>(row.nodes))
        .FieldInt("calls", static_cast<int64_t>(row.calls))
        .FieldDouble("total_us", row.total_us)
        .FieldDouble("average_us", row.average_us)
        .FieldDouble("share", row.share)
        .EndObject();
  }
  w.EndArray();
  w.Key("streams").BeginArray();
  for (const StreamRow& row : r.streams) {
    w.BeginObject()
        .FieldInt("stream_id", row.stream_id)
        .Field("name", row.name)
        .Field("kind", row.kind)
        .FieldInt("tasks", static_cast<int64_t>(row.tasks))
        .FieldDouble("total_us", row.total_us)
        .FieldDouble("busy_us", row.busy_us)
        .FieldDouble("span_us", row.span_us)
        .FieldDouble("utilisation", row.utilisation);
    if (row.idle_us >= 0) {
      w.Key("idle").BeginObject();
      w.FieldDouble("total_us", row.idle_us);
      w.FieldDouble("waiting_host_us", row.idle_waiting_host_us);
      w.FieldDouble("waiting_other_stream_us",
                    row.idle_waiting_other_stream_us);
      w.FieldDouble("other_us", row.idle_other_us);
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("top_nodes").BeginArray();
  for (const NodeRow& row : r.top_nodes) {
    w.BeginObject().Field("name", row.name).Field("op_type", row.op_type);
    w.Field("status", row.status);
    w.Key("node_id");
    row.node_id >= 0 ? w.Int(row.node_id) : w.Null();
    w.FieldInt("calls", static_cast<int64_t>(row.calls))
        .FieldDouble("total_us", row.total_us)
        .FieldDouble("average_us", row.average_us)
        .FieldDouble("share", row.share)
        .EndObject();
  }
  w.EndArray();
  w.Key("runs").BeginArray();
  for (const RunRow& row : r.runs) {
    w.BeginObject()
        .FieldInt("run", row.index)
        .Field("name", row.name)
        .FieldDouble("start_us", row.start_us)
        .FieldDouble("duration_us", row.duration_us)
        .FieldInt("tasks", static_cast<int64_t>(row.tasks))
        .FieldDouble("task_time_us", row.task_time_us)
        .EndObject();
  }
  w.EndArray();
  if (r.has_analyses) WriteSummaryAnalyses(w, r);
  w.EndObject();
}

}  // namespace mi
