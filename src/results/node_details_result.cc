// Write() of a node's details (docs/reference/http-api.md "nodes").

#include "model_inspector/results/node_details.h"

#include <utility>

namespace mi {
namespace {

// tensor_stats' fields (docs/reference/probe-store.md); unknown: null.
void WriteTensorStats(ResultWriter& w, const TensorStats& s) {
  w.BeginObject();
  auto count = [&](std::string_view key, int64_t v) {
    w.Key(key);
    v >= 0 ? w.Int(v) : w.Null();
  };
  auto real = [&](std::string_view key, const std::optional<double>& v) {
    w.Key(key);
    v ? w.Double(*v) : w.Null();
  };
  count("count", s.count);
  count("nan", s.nan);
  count("pos_inf", s.pos_inf);
  count("neg_inf", s.neg_inf);
  count("zero", s.zero);
  real("min", s.min);
  real("max", s.max);
  real("mean", s.mean);
  real("std", s.std);
  real("l2", s.l2);
  real("abs_max", s.abs_max);
  w.Field("dtype", s.dtype);
  w.Key("shape").BeginArray();
  for (int64_t d : s.shape) w.Int(d);
  w.EndArray();
  w.EndObject();
}

void WriteNodeRef(ResultWriter& w, const NodeRefInfo& n) {
  w.BeginObject();
  w.FieldUInt("id", n.id);
  w.Field("name", n.name);
  w.Field("op_type", n.op_type);
  w.Field("level", n.level);
  w.EndObject();
}

void WriteValue(ResultWriter& w, const NodeValueInfo& v) {
  w.BeginObject();
  if (!v.present) {
    w.Field("name", "").Key("dtype").Null().Key("shape").Null();
    w.Field("type", "").Key("producer").Null();
    w.EndObject();
    return;
  }
  w.Field("name", v.name);
  w.Key("dtype");
  v.dtype ? w.String(*v.dtype) : w.Null();
  w.Key("shape");
  if (v.shape) {
    w.BeginArray();
    for (const NodeValueInfo::Dim& d : *v.shape) {
      if (d.size) {
        w.Int(*d.size);
      } else if (!d.symbol.empty()) {
        w.String(d.symbol);
      } else {
        w.Null();
      }
    }
    w.EndArray();
  } else {
    w.Null();
  }
  w.Field("type", v.type);
  if (!v.layout.empty()) w.Field("layout", v.layout);
  if (!v.origin_layout.empty()) w.Field("origin_layout", v.origin_layout);
  if (!v.origin_shape.empty()) w.Field("origin_shape", v.origin_shape);
  w.FieldOptional("producer", v.producer);
  w.FieldBool("graph_input", v.graph_input);
  w.FieldBool("graph_output", v.graph_output);
  w.FieldBool("initializer", v.initializer);
  if (v.missing) w.FieldBool("missing", true);
  if (v.consumers) {
    w.Key("consumers").BeginArray();
    for (uint32_t c : *v.consumers) w.UInt(c);
    w.EndArray();
  }
  w.EndObject();
}

}  // namespace

void NodeDetailsResult::Write(ResultWriter& w) const {
  w.BeginObject();
  w.FieldUInt("id", id);
  w.Field("name", name);
  w.Field("op_type", op_type);
  w.Field("domain", domain);
  w.Key("doc");
  if (doc) {
    w.BeginObject();
    w.Field("domain", doc->domain);
    w.FieldInt("since_version", doc->since_version);
    w.Field("summary", doc->summary);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Field("level", level);
  w.FieldUInt("graph_id", graph_id);
  w.Field("scope", scope);
  w.Key("attributes").BeginArray();
  for (const NodeAttributeInfo& a : attributes) {
    w.BeginObject();
    w.Field("name", a.name);
    w.Field("type", a.type);
    w.Key("value");
    if (a.type == "int") {
      w.Int(a.int_value);
    } else if (a.type == "float") {
      w.Double(a.float_value);
    } else {
      w.String(a.text);
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("inputs").BeginArray();
  for (const NodeValueInfo& v : inputs) WriteValue(w, v);
  w.EndArray();
  w.Key("outputs").BeginArray();
  for (const NodeValueInfo& v : outputs) WriteValue(w, v);
  w.EndArray();
  w.Field("status", status);
  w.Field("match_kind", match_kind);
  w.Key("fused_from").BeginArray();
  for (const NodeRefInfo& f : fused_from) WriteNodeRef(w, f);
  w.EndArray();
  w.Key("fused_into");
  if (fused_into) {
    WriteNodeRef(w, *fused_into);
  } else {
    w.Null();
  }
  w.FieldInt("fused_into_count", fused_into_count);
  w.FieldInt("task_count", task_count);
  w.FieldInt("task_total_ns", task_total_ns);
  w.Key("tasks").BeginArray();
  for (const NodeTaskInfo& t : tasks) {
    w.BeginObject();
    w.FieldUInt("id", t.id);
    w.Field("name", t.name);
    w.Field("kind", t.kind);
    w.FieldInt("start_ns", t.start_ns);
    w.FieldInt("duration_ns", t.duration_ns);
    w.FieldUInt("track", t.track);
    w.Field("track_name", t.track_name);
    w.FieldUInt("run", t.run);
    w.EndObject();
  }
  w.EndArray();
  if (l2_tasks > 0) {
    w.FieldInt("l2_tasks", l2_tasks);
    for (auto [key, rate] : {std::pair{"l2_hit_rate", l2_hit_rate},
                             std::pair{"l2_victim_rate", l2_victim_rate}}) {
      w.Key(key);
      if (rate) {
        w.Double(*rate);
      } else {
        w.Null();
      }
    }
  }
  if (measured_memory_bytes) {
    w.FieldInt("measured_memory_bytes", *measured_memory_bytes);
    w.Field("measured_memory_source", measured_memory_source);
  }
  if (probes_run) {
    w.Key("probes").BeginObject();
    w.Key("run");
    *probes_run > 0 ? w.Int(*probes_run) : w.Null();
    w.Key("probes").BeginArray();
    for (const NodeProbeInfo& p : probes) {
      w.BeginObject();
      w.Field("probe", p.probe);
      w.Field("kind", p.kind);
      w.FieldInt("index", p.index);
      w.Key("stats");
      WriteTensorStats(w, p.stats);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndObject();
}

}  // namespace mi
