// JSON form of MemoryReport (docs/reference/schemas/memory.schema.json).

#include <string>
#include <string_view>

#include "analysis/memory/memory.h"
#include "base/json_writer.h"

namespace mi::analysis {
namespace {

void WriteNodeRef(JsonWriter& w, const Model& model, NodeId node) {
  if (!node.valid()) {
    w.Null();
    return;
  }
  w.BeginObject()
      .FieldInt("id", node.value())
      .Field("name", model.str(model.node_name(node)))
      .Field("op_type", model.str(model.node_op_type(node)))
      .EndObject();
}

void WriteTensor(JsonWriter& w, const Model& model, const TensorLifetime& t) {
  w.BeginObject()
      .Field("name", model.str(model.value_name(t.value)))
      .Field("type", model.FormatValueType(t.value))
      .Key("bytes")
      .UInt(t.bytes);
  w.Key("producer");
  WriteNodeRef(w, model, model.value_producer(t.value));
  w.FieldInt("first_step", t.first_step)
      .FieldInt("last_step", t.last_step)
      .EndObject();
}

void WriteAllocator(JsonWriter& w, const Model& model,
                    const MemoryReport& report) {
  const AllocatorComparison& a = report.allocator;
  w.BeginObject().Field("source", a.source);
  w.Key("reported_peak_bytes");
  if (a.reported_peak_bytes >= 0) {
    w.Int(a.reported_peak_bytes);
  } else {
    w.Null();
  }
  // What the reported peak is compared with: ORT's arena holds activations
  // only; PyTorch's allocator (CUDA or NPU) holds the weights too.
  uint64_t estimate = report.peak_activation_bytes;
  if (a.source.find("kineto") != std::string::npos ||
      a.source.find("ascend") != std::string::npos) {
    estimate += report.weight_bytes;
  }
  w.Key("estimated_peak_bytes").UInt(estimate);
  w.Key("estimate_over_reported");
  if (a.reported_peak_bytes > 0) {
    w.Double(static_cast<double>(estimate) /
             static_cast<double>(a.reported_peak_bytes));
  } else {
    w.Null();
  }
  if (a.source.find("onnxruntime") != std::string::npos) {
    w.Key("nodes").BeginObject();
    w.FieldInt("compared", a.nodes_compared)
        .FieldInt("output_matches", a.output_matches)
        .FieldInt("unknown_estimate", a.nodes_unknown_estimate);
    w.Key("estimated_output_bytes").UInt(a.estimated_output_bytes);
    w.Key("reported_output_bytes").UInt(a.reported_output_bytes);
    w.Key("estimated_parameter_bytes").UInt(a.estimated_parameter_bytes);
    w.Key("reported_parameter_bytes").UInt(a.reported_parameter_bytes);
    w.Key("estimated_activation_bytes").UInt(a.estimated_activation_bytes);
    w.Key("reported_activation_bytes").UInt(a.reported_activation_bytes);
    auto int_or_null = [&w](std::string_view key, int64_t v) {
      w.Key(key);
      if (v >= 0) {
        w.Int(v);
      } else {
        w.Null();
      }
    };
    int_or_null("reported_peak_in_use_bytes", a.reported_peak_in_use_bytes);
    int_or_null("reported_baseline_bytes", a.reported_baseline_bytes);
    w.Key("estimated_runtime_peak_bytes").UInt(a.estimated_runtime_peak_bytes);
    w.Key("estimate_over_reported_activations");
    int64_t reported_activations =
        a.reported_peak_in_use_bytes >= 0 && a.reported_baseline_bytes >= 0
            ? a.reported_peak_in_use_bytes - a.reported_baseline_bytes
            : -1;
    if (reported_activations > 0) {
      w.Double(static_cast<double>(a.estimated_runtime_peak_bytes) /
               static_cast<double>(reported_activations));
    } else {
      w.Null();
    }
    w.Key("largest_mismatches").BeginArray();
    for (const NodeSizeMismatch& m : a.largest_mismatches) {
      w.BeginObject().Key("node");
      WriteNodeRef(w, model, m.node);
      w.FieldInt("estimated_output_bytes", m.estimated_output_bytes)
          .FieldInt("reported_output_bytes", m.reported_output_bytes)
          .EndObject();
    }
    w.EndArray().EndObject();
  }
  if (!a.devices.empty()) {
    w.Key("devices").BeginArray();
    for (const AllocatorDevicePeak& d : a.devices) {
      w.BeginObject();
      w.Key("source");
      d.source.valid() ? w.UInt(d.source.value()) : w.Null();
      w.FieldInt("device", d.device);
      w.Field("component", d.component);
      w.Key("peak_allocated_bytes");
      if (d.peak_allocated_bytes >= 0) {
        w.Int(d.peak_allocated_bytes);
      } else {
        w.Null();
      }
      w.Key("peak_reserved_bytes");
      if (d.peak_reserved_bytes >= 0) {
        w.Int(d.peak_reserved_bytes);
      } else {
        w.Null();
      }
      w.Key("events").UInt(d.events);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

}  // namespace

std::string MemoryReportJson(const Model& model, const MemoryReport& report,
                             std::string_view level) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject()
      .Field("schema", "model-inspector/memory/1")
      .Field("level", level)
      .Field("graph", model.str(model.graph(report.graph).name))
      .Field("order", report.order)
      .Key("node_count")
      .UInt(report.nodes.size())
      .FieldInt("unordered_nodes", report.unordered_nodes);
  w.Key("weights")
      .BeginObject()
      .FieldInt("tensors", report.weight_tensors)
      .Key("bytes")
      .UInt(report.weight_bytes)
      .FieldInt("unknown_size", report.weight_tensors_unknown_size)
      .EndObject();
  w.Key("graph_inputs")
      .BeginObject()
      .FieldInt("tensors", report.graph_input_tensors)
      .Key("bytes")
      .UInt(report.graph_input_bytes)
      .EndObject();
  w.Key("activations")
      .BeginObject()
      .Key("tensors")
      .UInt(report.tensors.size())
      .FieldInt("unknown_size", report.tensors_unknown_size)
      .Key("unknown_size_examples")
      .BeginArray();
  for (ValueId v : report.unknown_size_examples) {
    w.BeginObject()
        .Field("name", model.str(model.value_name(v)))
        .Field("type", model.FormatValueType(v))
        .EndObject();
  }
  w.EndArray().EndObject();

  w.Key("peak").BeginObject();
  w.Key("activation_bytes").UInt(report.peak_activation_bytes);
  w.Key("total_bytes").UInt(report.peak_activation_bytes + report.weight_bytes);
  w.Key("step");
  if (report.nodes.empty()) {
    w.Null().Key("node").Null();
  } else {
    w.Int(report.peak_step).Key("node");
    WriteNodeRef(w, model, report.nodes[report.peak_step].node);
  }
  w.FieldInt("tensor_count", report.peak_tensor_count).Key("tensors");
  w.BeginArray();
  for (const TensorLifetime& t : report.peak_tensors) WriteTensor(w, model, t);
  w.EndArray().EndObject();

  w.Key("nodes").BeginArray();
  for (size_t s = 0; s < report.nodes.size(); ++s) {
    const NodeFootprint& f = report.nodes[s];
    w.BeginObject()
        .FieldInt("id", f.node.value())
        .Field("name", model.str(model.node_name(f.node)))
        .Field("op_type", model.str(model.node_op_type(f.node)))
        .Key("step")
        .UInt(s)
        .Key("live_bytes")
        .UInt(f.live_bytes)
        .Key("output_bytes")
        .UInt(f.output_bytes)
        .Key("start_ns");
    if (f.start_ns >= 0) {
      w.Int(f.start_ns);
    } else {
      w.Null();
    }
    w.EndObject();
  }
  w.EndArray();

  w.Key("scopes").BeginArray();
  for (const ScopeFootprint& s : report.scopes) {
    w.BeginObject()
        .Field("path", model.str(model.scope_path(s.scope)))
        .FieldInt("nodes", s.nodes)
        .Key("peak_bytes")
        .UInt(s.peak_bytes)
        .Key("output_bytes")
        .UInt(s.output_bytes)
        .EndObject();
  }
  w.EndArray();

  w.Key("allocator");
  if (report.has_allocator) {
    WriteAllocator(w, model, report);
  } else {
    w.Null();
  }
  w.EndObject();
  return out;
}

}  // namespace mi::analysis
