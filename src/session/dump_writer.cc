// Encoders of the dump files graph.json and trace.json (schemas in
// docs/reference/schemas/; summary.json and analyses.json are their results'
// Write(), encoded by src/encoders). Field names follow PRODUCT.md's
// NodeDesc / TaskDesc. Output is deterministic: id order throughout.

#include <string>

#include "base/json_writer.h"
#include "importers/common/collectives.h"
#include "linker/links.h"
#include "model_inspector/session.h"
#include "session/session_impl.h"

namespace mi {
namespace {

constexpr double kNsPerUs = 1000.0;

void WriteValueRef(JsonWriter& w, const Model& m, ValueId v) {
  w.BeginObject();
  if (!v.valid()) {
    w.Field("name", "").Key("dtype").Null().Key("shape").Null();
    w.EndObject();
    return;
  }
  w.Field("name", m.str(m.value_name(v)));
  w.Field("dtype", DataTypeName(m.value_dtype(v)));
  w.Key("shape");
  WriteValueShape(w, m, v);
  WriteValueLayoutFields(w, m, v);
  w.EndObject();
}

void WriteAttributeValue(JsonWriter& w, const Model& m, const Attribute& a) {
  switch (a.kind) {
    case AttributeKind::kInt:
      w.Int(a.int_value);
      return;
    case AttributeKind::kFloat:
      w.Double(a.float_value);
      return;
    default:
      w.String(m.str(a.text));
  }
}

template <typename Id>
void WriteIdList(JsonWriter& w, std::span<const Id> ids) {
  w.BeginArray();
  for (Id id : ids) w.UInt(id.value());
  w.EndArray();
}

}  // namespace

std::string EncodeGraphJson(const Session::Impl& run) {
  const Model& m = run.model;
  const Links& links = run.links;
  std::string out;
  out.reserve(m.node_count() * 400 + 1024);
  JsonWriter w(&out);
  w.BeginObject();
  w.Field("schema", "model-inspector/graph/1");
  w.Key("graphs").BeginArray();
  for (uint32_t i = 0; i < m.graph_count(); ++i) {
    const GraphInfo& g = m.graph(GraphId(i));
    w.BeginObject();
    w.FieldInt("graph_id", i);
    w.Field("layer_level", LayerLevelName(g.level));
    w.Field("name", m.str(g.name));
    w.Field("source_file", m.str(g.source_file));
    w.Field("producer", m.str(g.producer));
    w.FieldInt("opset", g.opset);
    w.Key("parent_graph_id");
    g.parent_graph.valid() ? w.UInt(g.parent_graph.value()) : w.Null();
    w.Key("parent_node_id");
    g.parent_node.valid() ? w.UInt(g.parent_node.value()) : w.Null();
    w.Key("inputs").BeginArray();
    for (ValueId v : g.inputs) WriteValueRef(w, m, v);
    w.EndArray();
    w.Key("outputs").BeginArray();
    for (ValueId v : g.outputs) WriteValueRef(w, m, v);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("nodes").BeginArray();
  for (uint32_t i = 0; i < m.node_count(); ++i) {
    NodeId n(i);
    w.BeginObject();
    w.FieldInt("node_id", i);
    w.Field("layer_level", LayerLevelName(m.node_level(n)));
    w.FieldInt("graph_id", m.node_graph(n).value());
    w.Field("op_type", m.str(m.node_op_type(n)));
    w.Field("domain", m.str(m.node_domain(n)));
    w.Field("name", m.str(m.node_name(n)));
    ScopeId scope = m.node_scope(n);
    w.Field("scope", scope.valid() ? m.str(m.scope_path(scope)) : "");
    w.Key("inputs").BeginArray();
    for (ValueId v : m.node_inputs(n)) WriteValueRef(w, m, v);
    w.EndArray();
    w.Key("outputs").BeginArray();
    for (ValueId v : m.node_outputs(n)) WriteValueRef(w, m, v);
    w.EndArray();
    w.Key("attributes").BeginObject();
    for (const Attribute& a : m.node_attributes(n)) {
      w.Key(m.str(a.name));
      WriteAttributeValue(w, m, a);
    }
    w.EndObject();
    w.Key("fused_from");
    WriteIdList(w, links.fused_from.Get(n));
    // What the compiler declares (GE _datadump_original_op_names), by name:
    // meaningful even without the framework graph loaded.
    if (!m.node_origin_names(n).empty()) {
      w.Key("origin_names").BeginArray();
      for (StringId name : m.node_origin_names(n)) w.String(m.str(name));
      w.EndArray();
    }
    w.Key("fused_into");
    WriteIdList(w, links.fused_into.Get(n));
    w.Key("mapped_task_ids");
    WriteIdList(w, links.mapped_tasks.Get(n));
    w.Field("status",
            NodeStatusName(i < links.status.size() ? links.status[i]
                                                   : NodeStatus::kUnknown));
    w.Field("match",
            MatchKindName(i < links.match_kind.size() ? links.match_kind[i]
                                                      : MatchKind::kNone));
    w.EndObject();
  }
  w.EndArray();
  w.Key("links").BeginObject();
  w.FieldInt("unexplained_compiled_nodes", links.unexplained_compiled_nodes);
  w.Key("folded_framework_nodes");
  WriteIdList(w, std::span<const NodeId>(links.folded));
  w.Key("eliminated_framework_nodes");
  WriteIdList(w, std::span<const NodeId>(links.eliminated));
  w.EndObject();
  w.EndObject();
  out.push_back('\n');
  return out;
}

// The collectives and communication tables (trace/collectives.h), as read.
void WriteCommunication(JsonWriter& w, const Trace& t) {
  const CommunicationTables& c = t.communication();
  w.Key("communication").BeginObject();
  w.Key("collectives").BeginArray();
  for (const CollectiveRecord& r : c.collectives) {
    w.BeginObject();
    w.FieldInt("source", r.source.value());
    w.Key("task_id");
    r.task.valid() ? w.UInt(r.task.value()) : w.Null();
    w.Field("name", t.str(r.name));
    w.Field("type", importers::CollectiveTypeName(r.type));
    w.Field("group", t.str(r.group));
    w.FieldIntOrNull("group_size", r.group_size);
    w.FieldIntOrNull("sequence", r.sequence);
    w.FieldInt("start_ns", r.start_ns);
    w.FieldInt("end_ns", r.end_ns);
    w.FieldIntOrNull("in_elements", r.in_elements);
    w.FieldIntOrNull("out_elements", r.out_elements);
    w.Field("dtype", t.str(r.dtype));
    w.FieldIntOrNull("bytes", r.bytes);
    w.Field("algorithm", t.str(r.algorithm));
    w.Field("protocol", t.str(r.protocol));
    w.FieldIntOrNull("run", r.run);
    w.Field("step", t.str(r.step_label));
    w.FieldIntOrNull("transit_ns", r.transit_ns);
    w.FieldIntOrNull("wait_ns", r.wait_ns);
    w.FieldIntOrNull("synchronization_ns", r.synchronization_ns);
    w.FieldIntOrNull("idle_ns", r.idle_ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("bandwidth").BeginArray();
  for (const CommunicationBandwidthRow& r : c.bandwidth) {
    w.BeginObject();
    w.FieldInt("source", r.source.value());
    w.Field("step", t.str(r.step));
    w.Field("op_name", t.str(r.op_name));
    w.Field("group", t.str(r.group));
    w.FieldBool("p2p", r.p2p);
    w.Field("transport", t.str(r.transport));
    w.FieldIntOrNull("size_bytes", r.size_bytes);
    w.FieldIntOrNull("transit_ns", r.transit_ns);
    w.FieldDoubleOrNull("bandwidth_gbps", r.bandwidth_gbps);
    w.FieldDoubleOrNull("large_packet_ratio", r.large_packet_ratio);
    w.EndObject();
  }
  w.EndArray();
  w.Key("links").BeginArray();
  for (const CommunicationLinkRow& r : c.links) {
    w.BeginObject();
    w.FieldInt("source", r.source.value());
    w.Field("step", t.str(r.step));
    w.Field("statistic", t.str(r.statistic));
    w.Field("group", t.str(r.group));
    w.FieldBool("p2p", r.p2p);
    w.FieldIntOrNull("src_rank", r.src_rank);
    w.FieldIntOrNull("dst_rank", r.dst_rank);
    w.Field("transport", t.str(r.transport));
    w.FieldIntOrNull("size_bytes", r.size_bytes);
    w.FieldIntOrNull("transit_ns", r.transit_ns);
    w.FieldDoubleOrNull("bandwidth_gbps", r.bandwidth_gbps);
    w.Field("op_name", t.str(r.op_name));
    w.EndObject();
  }
  w.EndArray();
  w.Key("step_trace").BeginArray();
  for (const StepTraceRow& r : c.step_trace) {
    w.BeginObject();
    w.FieldInt("source", r.source.value());
    w.Field("step", t.str(r.step));
    w.FieldIntOrNull("device", r.device);
    w.Field("type", t.str(r.type));
    w.Key("ranks").BeginArray();
    for (int32_t rank : r.ranks) w.Int(rank);
    w.EndArray();
    w.FieldIntOrNull("computing_ns", r.computing_ns);
    w.FieldIntOrNull("communication_not_overlapped_ns",
                     r.communication_not_overlapped_ns);
    w.FieldIntOrNull("overlapped_ns", r.overlapped_ns);
    w.FieldIntOrNull("communication_ns", r.communication_ns);
    w.FieldIntOrNull("free_ns", r.free_ns);
    w.FieldIntOrNull("stage_ns", r.stage_ns);
    w.FieldIntOrNull("bubble_ns", r.bubble_ns);
    w.FieldIntOrNull("communication_not_overlapped_excluding_receive_ns",
                     r.communication_not_overlapped_excluding_receive_ns);
    w.FieldIntOrNull("preparing_ns", r.preparing_ns);
    w.FieldInt("line", static_cast<int64_t>(r.line));
    w.EndObject();
  }
  w.EndArray();
  w.Key("cluster_communication").BeginArray();
  for (const ClusterCommunicationRow& r : c.cluster_communication) {
    w.BeginObject();
    w.FieldInt("source", r.source.value());
    w.Key("group_ranks").BeginArray();
    for (int32_t rank : r.group_ranks) w.Int(rank);
    w.EndArray();
    w.Field("step", t.str(r.step));
    w.Field("op_name", t.str(r.op_name));
    w.Field("group", t.str(r.group));
    w.FieldInt("rank", r.rank);
    w.FieldIntOrNull("start_ns", r.start_ns);
    w.FieldIntOrNull("elapse_ns", r.elapse_ns);
    w.FieldIntOrNull("transit_ns", r.transit_ns);
    w.FieldIntOrNull("wait_ns", r.wait_ns);
    w.FieldIntOrNull("synchronization_ns", r.synchronization_ns);
    w.FieldIntOrNull("idle_ns", r.idle_ns);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

std::string EncodeTraceJson(const Session::Impl& run) {
  const Trace& t = run.trace;
  std::string out;
  out.reserve(t.task_count() * 300 + 1024);
  JsonWriter w(&out);
  w.BeginObject();
  w.Field("schema", "model-inspector/trace/1");
  w.Field("dialect", TraceDialects(t));
  // The profiled processes the tracks came from: ids and clocks are per
  // source (trace/trace.h SourceInfo).
  w.Key("sources").BeginArray();
  for (uint32_t i = 0; i < t.source_count(); ++i) {
    const SourceInfo& s = t.source(SourceId(i));
    w.BeginObject();
    w.FieldInt("source", i);
    w.Field("name", SourceName(t, SourceId(i)));
    w.Field("key", t.str(s.key));
    w.Key("files").BeginArray();
    for (StringId f : s.files) w.String(t.str(f));
    w.EndArray();
    w.Field("dialect", t.str(s.dialect));
    w.Key("rank");
    s.rank >= 0 ? w.Int(s.rank) : w.Null();
    w.Field("host", t.str(s.host));
    w.Field("time_base", TimeBaseName(s.time_base));
    w.FieldInt("base_ns", s.base_ns);
    // Distributed facts, only where a file gave them.
    if (s.world_size >= 0) w.FieldInt("world_size", s.world_size);
    if (!s.process_groups.empty()) {
      w.Key("process_groups").BeginArray();
      for (const ProcessGroupInfo& g : s.process_groups) {
        w.BeginObject();
        w.Field("name", t.str(g.name));
        w.Field("long_name", t.str(g.long_name));
        w.Field("description", t.str(g.description));
        w.Key("global_ranks").BeginArray();
        for (int32_t rank : g.global_ranks) w.Int(rank);
        w.EndArray();
        w.FieldIntOrNull("group_rank", g.group_rank);
        w.EndObject();
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("streams").BeginArray();
  for (uint32_t i = 0; i < t.track_count(); ++i) {
    const TrackInfo& s = t.track(TrackId(i));
    w.BeginObject();
    w.FieldInt("stream_id", i);
    w.FieldInt("source", s.source.value());
    w.Field("name", TrackName(t, TrackId(i)));
    w.Field("kind", TrackKindName(s.kind));
    w.FieldInt("pid", s.pid);
    w.FieldInt("tid", s.tid);
    w.Field("pid_label", t.str(s.pid_label));
    w.Field("process_name", t.str(s.process_name));
    w.Field("thread_name", t.str(s.thread_name));
    w.FieldInt("device", s.device);
    w.FieldInt("stream", s.stream);
    w.FieldDouble("clock_offset_us", s.clock_offset_ns / kNsPerUs);
    w.EndObject();
  }
  w.EndArray();
  w.Key("runs").BeginArray();
  for (uint32_t i = 0; i < t.runs().size(); ++i) {
    const RunInfo& r = t.runs()[i];
    w.BeginObject();
    w.FieldInt("run", i);
    w.Field("name", t.str(r.name));
    w.Key("source");
    r.source.valid() ? w.UInt(r.source.value()) : w.Null();
    w.FieldDouble("start_us", r.start_ns / kNsPerUs);
    w.FieldDouble("duration_us", (r.end_ns - r.start_ns) / kNsPerUs);
    w.EndObject();
  }
  w.EndArray();
  w.Key("tasks").BeginArray();
  for (uint32_t i = 0; i < t.task_count(); ++i) {
    TaskId id(i);
    w.BeginObject();
    w.FieldInt("task_id", i);
    w.Key("op_node_id");
    t.task_node(id).valid() ? w.UInt(t.task_node(id).value()) : w.Null();
    w.FieldInt("stream_id", t.task_track(id).value());
    w.Key("event_before");
    t.task_event_before(id) >= 0 ? w.Int(t.task_event_before(id)) : w.Null();
    w.Key("event_after");
    t.task_event_after(id) >= 0 ? w.Int(t.task_event_after(id)) : w.Null();
    w.Field("kernel_name", t.str(t.task_name(id)));
    w.Field("kind", TaskKindName(t.task_kind(id)));
    w.Field("category", t.str(t.task_category(id)));
    w.Field("op_type", t.str(t.task_op_type(id)));
    w.Field("node_name", t.str(t.task_node_name(id)));
    w.FieldDouble("start_us", t.task_start_ns(id) / kNsPerUs);
    w.FieldDouble("duration_us", t.task_duration_ns(id) / kNsPerUs);
    w.FieldDouble("calibrated_start_us",
                  t.task_calibrated_start_ns(id) / kNsPerUs);
    w.FieldInt("run", t.task_run(id));
    w.Key("correlation");
    t.task_correlation(id) >= 0 ? w.Int(t.task_correlation(id)) : w.Null();
    w.Key("parent_task_id");
    t.task_parent(id).valid() ? w.UInt(t.task_parent(id).value()) : w.Null();
    w.Key("launch_task_id");
    t.task_launch(id).valid() ? w.UInt(t.task_launch(id).value()) : w.Null();
    w.Key("bytes");
    t.task_bytes(id) >= 0 ? w.Int(t.task_bytes(id)) : w.Null();
    w.EndObject();
  }
  w.EndArray();
  if (!t.communication().empty()) WriteCommunication(w, t);
  w.EndObject();
  out.push_back('\n');
  return out;
}

void WriteValueShape(JsonWriter& w, const Model& m, ValueId v) {
  if (!m.value_has_shape(v)) {
    w.Null();
    return;
  }
  w.BeginArray();
  const auto& dims = m.value_dims(v);
  const auto& names = m.value_dim_names(v);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 0) {
      w.Int(dims[i]);
    } else if (names[i] != StringPool::kEmpty) {
      w.String(m.str(names[i]));
    } else {
      w.Null();
    }
  }
  w.EndArray();
}

void WriteValueLayoutFields(JsonWriter& w, const Model& m, ValueId v) {
  // Memory layouts (Ascend: NC1HWC0, FRACTAL_Z with the framework's origin
  // format and shape) only where the format says.
  if (m.value_layout(v) != StringPool::kEmpty) {
    w.Field("layout", m.str(m.value_layout(v)));
  }
  if (m.value_origin_layout(v) != StringPool::kEmpty) {
    w.Field("origin_layout", m.str(m.value_origin_layout(v)));
  }
  if (m.value_origin_shape(v) != StringPool::kEmpty) {
    w.Field("origin_shape", m.str(m.value_origin_shape(v)));
  }
}

}  // namespace mi
