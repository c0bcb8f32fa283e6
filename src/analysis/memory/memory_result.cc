// MemoryReport as the public MemoryResult (docs/reference/schemas/
// memory.schema.json): names resolved, and the allocator comparison's
// derived figures (what the reported peak is compared with) computed here.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "analysis/memory/memory.h"

namespace mi::analysis {
namespace {

std::optional<MemoryNodeRef> NodeRef(const Model& model, NodeId node) {
  if (!node.valid()) return std::nullopt;
  return MemoryNodeRef{node.value(),
                       std::string(model.str(model.node_name(node))),
                       std::string(model.str(model.node_op_type(node)))};
}

MemoryTensor Tensor(const Model& model, const TensorLifetime& t) {
  return MemoryTensor{std::string(model.str(model.value_name(t.value))),
                      model.FormatValueType(t.value),
                      t.bytes,
                      NodeRef(model, model.value_producer(t.value)),
                      t.first_step,
                      t.last_step};
}

std::optional<int64_t> Known(int64_t v) {
  return v >= 0 ? std::optional<int64_t>(v) : std::nullopt;
}

MemoryAllocator Allocator(const Model& model, const MemoryReport& report) {
  const AllocatorComparison& a = report.allocator;
  MemoryAllocator out;
  out.source = a.source;
  out.reported_peak_bytes = Known(a.reported_peak_bytes);
  // What the reported peak is compared with: ORT's arena holds activations
  // only; PyTorch's allocator (CUDA or NPU) holds the weights too.
  uint64_t estimate = report.peak_activation_bytes;
  if (a.source.find("kineto") != std::string::npos ||
      a.source.find("ascend") != std::string::npos) {
    estimate += report.weight_bytes;
  }
  out.estimated_peak_bytes = estimate;
  if (a.reported_peak_bytes > 0) {
    out.estimate_over_reported = static_cast<double>(estimate) /
                                 static_cast<double>(a.reported_peak_bytes);
  }
  if (a.source.find("onnxruntime") != std::string::npos) {
    MemoryAllocatorNodes n;
    n.compared = a.nodes_compared;
    n.output_matches = a.output_matches;
    n.unknown_estimate = a.nodes_unknown_estimate;
    n.estimated_output_bytes = a.estimated_output_bytes;
    n.reported_output_bytes = a.reported_output_bytes;
    n.estimated_parameter_bytes = a.estimated_parameter_bytes;
    n.reported_parameter_bytes = a.reported_parameter_bytes;
    n.estimated_activation_bytes = a.estimated_activation_bytes;
    n.reported_activation_bytes = a.reported_activation_bytes;
    n.reported_peak_in_use_bytes = Known(a.reported_peak_in_use_bytes);
    n.reported_baseline_bytes = Known(a.reported_baseline_bytes);
    n.estimated_runtime_peak_bytes = a.estimated_runtime_peak_bytes;
    int64_t reported_activations =
        a.reported_peak_in_use_bytes >= 0 && a.reported_baseline_bytes >= 0
            ? a.reported_peak_in_use_bytes - a.reported_baseline_bytes
            : -1;
    if (reported_activations > 0) {
      n.estimate_over_reported_activations =
          static_cast<double>(a.estimated_runtime_peak_bytes) /
          static_cast<double>(reported_activations);
    }
    for (const NodeSizeMismatch& m : a.largest_mismatches) {
      n.largest_mismatches.push_back({NodeRef(model, m.node),
                                      m.estimated_output_bytes,
                                      m.reported_output_bytes});
    }
    out.nodes = std::move(n);
  }
  for (const AllocatorDevicePeak& d : a.devices) {
    MemoryAllocatorDevice device;
    if (d.source.valid()) device.source = d.source.value();
    device.device = d.device;
    device.component = d.component;
    device.peak_allocated_bytes = Known(d.peak_allocated_bytes);
    device.peak_reserved_bytes = Known(d.peak_reserved_bytes);
    device.events = d.events;
    out.devices.push_back(std::move(device));
  }
  return out;
}

}  // namespace

MemoryResult ToMemoryResult(const Model& model, const MemoryReport& report,
                            std::string_view level) {
  MemoryResult out;
  out.level = std::string(level);
  out.graph = std::string(model.str(model.graph(report.graph).name));
  out.order = report.order;
  out.node_count = report.nodes.size();
  out.unordered_nodes = report.unordered_nodes;
  out.weight_tensors = report.weight_tensors;
  out.weight_bytes = report.weight_bytes;
  out.weight_unknown_size = report.weight_tensors_unknown_size;
  out.graph_input_tensors = report.graph_input_tensors;
  out.graph_input_bytes = report.graph_input_bytes;
  out.activation_tensors = report.tensors.size();
  out.activation_unknown_size = report.tensors_unknown_size;
  for (ValueId v : report.unknown_size_examples) {
    out.unknown_size_examples.push_back(
        {std::string(model.str(model.value_name(v))),
         model.FormatValueType(v)});
  }
  out.peak_activation_bytes = report.peak_activation_bytes;
  out.peak_total_bytes = report.peak_activation_bytes + report.weight_bytes;
  if (!report.nodes.empty()) {
    out.peak_step = report.peak_step;
    out.peak_node = NodeRef(model, report.nodes[report.peak_step].node);
  }
  out.peak_tensor_count = report.peak_tensor_count;
  for (const TensorLifetime& t : report.peak_tensors) {
    out.peak_tensors.push_back(Tensor(model, t));
  }
  for (size_t s = 0; s < report.nodes.size(); ++s) {
    const NodeFootprint& f = report.nodes[s];
    MemoryNodeFootprint n;
    n.id = f.node.value();
    n.name = std::string(model.str(model.node_name(f.node)));
    n.op_type = std::string(model.str(model.node_op_type(f.node)));
    n.step = s;
    n.live_bytes = f.live_bytes;
    n.output_bytes = f.output_bytes;
    if (f.start_ns >= 0) n.start_ns = f.start_ns;
    if (report.has_measured) {
      n.with_measured = true;
      if (f.measured_bytes >= 0) n.measured_bytes = f.measured_bytes;
      n.bytes_source = f.measured_bytes < 0 ? "estimate"
                       : f.measured_static  ? "static_op_mem"
                                            : "operator_memory";
    }
    out.nodes.push_back(std::move(n));
  }
  for (const ScopeFootprint& s : report.scopes) {
    out.scopes.push_back({std::string(model.str(model.scope_path(s.scope))),
                          s.nodes, s.peak_bytes, s.output_bytes});
  }
  if (report.has_allocator) out.allocator = Allocator(model, report);
  if (report.has_measured) {
    const MeasuredMemory& m = report.measured;
    MemoryMeasured r;
    if (m.static_op_mem) r.source = "static_op_mem";
    if (m.operator_memory) {
      r.source += r.source.empty() ? "operator_memory" : "+operator_memory";
    }
    r.nodes_measured = m.nodes_measured;
    r.static_ops = m.static_ops;
    r.static_ops_matched = m.static_ops_matched;
    r.operator_blocks = m.operator_blocks;
    r.operator_blocks_matched = m.operator_blocks_matched;
    if (m.static_planned_bytes >= 0)
      r.static_planned_bytes = m.static_planned_bytes;
    if (m.static_peak_bytes >= 0) r.static_peak_bytes = m.static_peak_bytes;
    if (m.static_planned_bytes >= 0) {
      r.peak_bytes = static_cast<uint64_t>(m.static_planned_bytes);
      r.peak_source = "static_op_mem";
    } else if (m.static_peak_bytes >= 0) {
      r.peak_bytes = static_cast<uint64_t>(m.static_peak_bytes);
      r.peak_source = "static_op_mem";
    } else {
      r.peak_bytes = report.peak_activation_bytes;
      r.peak_source = "estimate";
    }
    out.measured = std::move(r);
  }
  return out;
}

const AnalysisDescriptor& MemoryAnalysis() {
  static const AnalysisDescriptor d{
      .id = "memory",
      .title = "Memory estimate",
      .summary =
          "tensor lifetimes of one graph level in execution order, the "
          "activation peak and the tensors alive at it, per-node and "
          "per-scope footprints, and the trace's allocator figures against "
          "the estimate",
      .needs = kNeedsGraph,
      .parameters = {{"level",
                      ParameterType::kString,
                      "auto",
                      "the graph level; auto: the compiled graph when "
                      "loaded (what ran), else the framework graph",
                      {"auto", "framework", "compiled"}}},
      .in_export = false,
      .fields = {},
      .reference = "docs/reference/schemas/memory.schema.json",
      .run = [](const AnalysisContext& ctx, const ParsedParams& params)
          -> StatusOr<std::unique_ptr<AnalysisResult>> {
        std::string level = params.String("level");
        if (level == "auto") {
          level = ctx.compiled.valid() ? "compiled" : "framework";
        }
        GraphId root = level == "compiled" ? ctx.compiled : ctx.framework;
        if (!root.valid()) {
          return InvalidArgumentError(
              "analysis 'memory': parameter 'level': this run has no " + level +
              " graph");
        }
        const Trace* trace = ctx.has_trace() ? ctx.trace : nullptr;
        MemoryReport report =
            AnalyzeMemory(*ctx.model, trace, ctx.links, root, MemoryOptions{});
        return std::unique_ptr<AnalysisResult>(std::make_unique<MemoryResult>(
            ToMemoryResult(*ctx.model, report, level)));
      }};
  return d;
}

}  // namespace mi::analysis
