// Write() of the memory result (docs/reference/schemas/memory.schema.json).

#include <optional>
#include <string_view>

#include "model_inspector/results/memory.h"

namespace mi {
namespace {

void WriteNodeRef(ResultWriter& w, const std::optional<MemoryNodeRef>& node) {
  if (!node) {
    w.Null();
    return;
  }
  w.BeginObject()
      .FieldUInt("id", node->id)
      .Field("name", node->name)
      .Field("op_type", node->op_type)
      .EndObject();
}

void WriteTensor(ResultWriter& w, const MemoryTensor& t) {
  w.BeginObject()
      .Field("name", t.name)
      .Field("type", t.type)
      .FieldUInt("bytes", t.bytes);
  w.Key("producer");
  WriteNodeRef(w, t.producer);
  w.FieldInt("first_step", t.first_step)
      .FieldInt("last_step", t.last_step)
      .EndObject();
}

void WriteOptionalDouble(ResultWriter& w, std::string_view key,
                         const std::optional<double>& v) {
  w.Key(key);
  v ? w.Double(*v) : w.Null();
}

void WriteAllocatorNodes(ResultWriter& w, const MemoryAllocatorNodes& n) {
  w.Key("nodes").BeginObject();
  w.FieldInt("compared", n.compared)
      .FieldInt("output_matches", n.output_matches)
      .FieldInt("unknown_estimate", n.unknown_estimate);
  w.FieldUInt("estimated_output_bytes", n.estimated_output_bytes);
  w.FieldUInt("reported_output_bytes", n.reported_output_bytes);
  w.FieldUInt("estimated_parameter_bytes", n.estimated_parameter_bytes);
  w.FieldUInt("reported_parameter_bytes", n.reported_parameter_bytes);
  w.FieldUInt("estimated_activation_bytes", n.estimated_activation_bytes);
  w.FieldUInt("reported_activation_bytes", n.reported_activation_bytes);
  w.FieldOptional("reported_peak_in_use_bytes", n.reported_peak_in_use_bytes);
  w.FieldOptional("reported_baseline_bytes", n.reported_baseline_bytes);
  w.FieldUInt("estimated_runtime_peak_bytes", n.estimated_runtime_peak_bytes);
  WriteOptionalDouble(w, "estimate_over_reported_activations",
                      n.estimate_over_reported_activations);
  w.Key("largest_mismatches").BeginArray();
  for (const MemorySizeMismatch& m : n.largest_mismatches) {
    w.BeginObject().Key("node");
    WriteNodeRef(w, m.node);
    w.FieldInt("estimated_output_bytes", m.estimated_output_bytes)
        .FieldInt("reported_output_bytes", m.reported_output_bytes)
        .EndObject();
  }
  w.EndArray().EndObject();
}

void WriteAllocator(ResultWriter& w, const MemoryAllocator& a) {
  w.BeginObject().Field("source", a.source);
  w.FieldOptional("reported_peak_bytes", a.reported_peak_bytes);
  w.FieldUInt("estimated_peak_bytes", a.estimated_peak_bytes);
  WriteOptionalDouble(w, "estimate_over_reported", a.estimate_over_reported);
  if (a.nodes) WriteAllocatorNodes(w, *a.nodes);
  if (!a.devices.empty()) {
    w.Key("devices").BeginArray();
    for (const MemoryAllocatorDevice& d : a.devices) {
      w.BeginObject();
      w.FieldOptional("source", d.source);
      w.FieldInt("device", d.device);
      w.Field("component", d.component);
      w.FieldOptional("peak_allocated_bytes", d.peak_allocated_bytes);
      w.FieldOptional("peak_reserved_bytes", d.peak_reserved_bytes);
      w.FieldUInt("events", d.events);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

}  // namespace

void MemoryResult::Write(ResultWriter& w) const {
  w.BeginObject()
      .Field("schema", "model-inspector/memory/1")
      .Field("level", level)
      .Field("graph", graph)
      .Field("order", order)
      .FieldUInt("node_count", node_count)
      .FieldInt("unordered_nodes", unordered_nodes);
  w.Key("weights")
      .BeginObject()
      .FieldInt("tensors", weight_tensors)
      .FieldUInt("bytes", weight_bytes)
      .FieldInt("unknown_size", weight_unknown_size)
      .EndObject();
  w.Key("graph_inputs")
      .BeginObject()
      .FieldInt("tensors", graph_input_tensors)
      .FieldUInt("bytes", graph_input_bytes)
      .EndObject();
  w.Key("activations")
      .BeginObject()
      .FieldUInt("tensors", activation_tensors)
      .FieldInt("unknown_size", activation_unknown_size)
      .Key("unknown_size_examples")
      .BeginArray();
  for (const UnknownTensor& t : unknown_size_examples) {
    w.BeginObject().Field("name", t.name).Field("type", t.type).EndObject();
  }
  w.EndArray().EndObject();

  w.Key("peak").BeginObject();
  w.FieldUInt("activation_bytes", peak_activation_bytes);
  w.FieldUInt("total_bytes", peak_total_bytes);
  w.FieldOptional("step", peak_step);
  w.Key("node");
  WriteNodeRef(w, peak_node);
  w.FieldInt("tensor_count", peak_tensor_count).Key("tensors");
  w.BeginArray();
  for (const MemoryTensor& t : peak_tensors) WriteTensor(w, t);
  w.EndArray().EndObject();

  w.Key("nodes").BeginArray();
  for (const MemoryNodeFootprint& f : nodes) {
    w.BeginObject()
        .FieldUInt("id", f.id)
        .Field("name", f.name)
        .Field("op_type", f.op_type)
        .FieldUInt("step", f.step)
        .FieldUInt("live_bytes", f.live_bytes)
        .FieldUInt("output_bytes", f.output_bytes)
        .FieldOptional("start_ns", f.start_ns);
    if (f.with_measured) {
      if (f.measured_bytes) w.FieldInt("measured_bytes", *f.measured_bytes);
      w.Field("bytes_source", f.bytes_source);
    }
    w.EndObject();
  }
  w.EndArray();

  w.Key("scopes").BeginArray();
  for (const MemoryScopeFootprint& s : scopes) {
    w.BeginObject()
        .Field("path", s.path)
        .FieldInt("nodes", s.nodes)
        .FieldUInt("peak_bytes", s.peak_bytes)
        .FieldUInt("output_bytes", s.output_bytes)
        .EndObject();
  }
  w.EndArray();

  w.Key("allocator");
  if (allocator) {
    WriteAllocator(w, *allocator);
  } else {
    w.Null();
  }
  if (measured) {
    const MemoryMeasured& m = *measured;
    w.Key("measured").BeginObject();
    w.Field("source", m.source);
    w.FieldUInt("nodes_measured", m.nodes_measured);
    w.FieldUInt("static_ops", m.static_ops);
    w.FieldUInt("static_ops_matched", m.static_ops_matched);
    w.FieldUInt("operator_blocks", m.operator_blocks);
    w.FieldUInt("operator_blocks_matched", m.operator_blocks_matched);
    w.FieldUInt("peak_bytes", m.peak_bytes);
    w.Field("peak_source", m.peak_source);
    if (m.static_planned_bytes) {
      w.FieldInt("static_planned_bytes", *m.static_planned_bytes);
    }
    if (m.static_peak_bytes) {
      w.FieldInt("static_peak_bytes", *m.static_peak_bytes);
    }
    w.EndObject();
  }
  w.EndObject();
}

}  // namespace mi
