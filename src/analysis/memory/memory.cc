#include "analysis/memory/memory.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mi::analysis {
namespace {

constexpr uint32_t kNoStep = UINT32_MAX;

// The node of `root` that `node` lies in: itself, or the If/Loop/Scan node
// owning the body it belongs to. Invalid when it lies in another graph.
NodeId NodeInRoot(const Model& model, NodeId node, GraphId root) {
  for (int depth = 0; node.valid() && depth < 256; ++depth) {
    GraphId graph = model.node_graph(node);
    if (graph == root) return node;
    node = model.graph(graph).parent_node;
  }
  return NodeId::Invalid();
}

// Earliest (calibrated) start among the tasks linked to `node`; for a node
// fused into compiled nodes, among theirs. INT64_MIN when none.
int64_t FirstStart(const Trace& trace, const Links& links, NodeId node) {
  int64_t first = INT64_MAX;
  for (TaskId t : links.mapped_tasks.Get(node)) {
    first = std::min(first, trace.task_calibrated_start_ns(t));
  }
  if (first == INT64_MAX) {
    for (NodeId compiled : links.fused_into.Get(node)) {
      for (TaskId t : links.mapped_tasks.Get(compiled)) {
        first = std::min(first, trace.task_calibrated_start_ns(t));
      }
    }
  }
  return first == INT64_MAX ? INT64_MIN : first;
}

// Kahn's algorithm over the root graph's data dependencies, taking among
// the ready nodes the one with the earliest start (file order breaks ties).
// A node without tasks inherits the latest start of its producers, so it
// is placed right after what it waits for. Returns file indexes in order.
std::vector<uint32_t> ExecutionOrder(const Model& model, GraphId root,
                                     const std::vector<int64_t>& own_start,
                                     const std::vector<uint32_t>& file_index,
                                     uint32_t* unordered) {
  std::span<const NodeId> nodes = model.graph_nodes(root);
  const size_t n = nodes.size();
  std::vector<std::vector<uint32_t>> successors(n);
  std::vector<uint32_t> indegree(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (ValueId out : model.node_outputs(nodes[i])) {
      if (!out.valid()) continue;
      for (NodeId consumer : model.value_consumers(out)) {
        NodeId c = NodeInRoot(model, consumer, root);
        if (!c.valid()) continue;
        uint32_t j = file_index[c.value()];
        if (j == kNoStep || j == i) continue;
        successors[i].push_back(j);
        ++indegree[j];
      }
    }
  }
  std::vector<int64_t> key(own_start);
  using Item = std::pair<int64_t, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (uint32_t i = 0; i < n; ++i) {
    if (indegree[i] == 0) ready.push({key[i], i});
  }
  std::vector<uint32_t> order;
  order.reserve(n);
  std::vector<bool> placed(n, false);
  while (!ready.empty()) {
    uint32_t i = ready.top().second;
    ready.pop();
    order.push_back(i);
    placed[i] = true;
    for (uint32_t j : successors[i]) {
      if (own_start[j] == INT64_MIN) key[j] = std::max(key[j], key[i]);
      if (--indegree[j] == 0) ready.push({key[j], j});
    }
  }
  *unordered = static_cast<uint32_t>(n - order.size());
  for (uint32_t i = 0; i < n; ++i) {
    if (!placed[i]) order.push_back(i);
  }
  return order;
}

void CompareWithOnnxRuntime(const Model& model, const Trace& trace,
                            GraphId root, const std::vector<uint32_t>& step_of,
                            const std::vector<int64_t>& runtime_live,
                            const MemoryOptions& options,
                            AllocatorComparison* out) {
  // First record per node of this level (the first run).
  std::unordered_map<uint32_t, const TaskMemoryRecord*> first;
  for (const TaskMemoryRecord& r : trace.task_memory()) {
    out->reported_peak_bytes =
        std::max(out->reported_peak_bytes, r.in_use_peak_bytes);
    NodeId node = trace.task_node(r.task);
    if (!node.valid() || model.node_graph(node) != root ||
        step_of[node.value()] == kNoStep) {
      continue;
    }
    auto [it, inserted] = first.try_emplace(node.value(), &r);
    if (!inserted &&
        trace.task_start_ns(r.task) < trace.task_start_ns(it->second->task)) {
      it->second = &r;
    }
  }
  std::vector<std::pair<uint32_t, const TaskMemoryRecord*>> records(
      first.begin(), first.end());
  std::sort(records.begin(), records.end(), [&](const auto& a, const auto& b) {
    return step_of[a.first] < step_of[b.first];
  });
  for (const auto& [node_value, record] : records) {
    NodeId node(node_value);
    int64_t outputs = 0, parameters = 0, activations = 0;
    bool known = true;
    for (ValueId v : model.node_outputs(node)) {
      if (!v.valid()) continue;
      int64_t bytes = TensorBytes(model, v);
      if (bytes < 0) known = false;
      outputs += bytes;
    }
    for (ValueId v : model.node_inputs(node)) {
      if (!v.valid()) continue;
      int64_t bytes = TensorBytes(model, v);
      if (bytes < 0) known = false;
      if (model.value_flags(v) & kValueInitializer) {
        parameters += bytes;
      } else {
        activations += bytes;
      }
    }
    if (!known) {
      ++out->nodes_unknown_estimate;
      continue;
    }
    if (record->in_use_bytes >= 0) {
      out->reported_peak_in_use_bytes =
          std::max(out->reported_peak_in_use_bytes, record->in_use_bytes);
      int64_t gap = record->in_use_bytes - runtime_live[step_of[node_value]];
      gap = std::max<int64_t>(gap, 0);
      if (out->reported_baseline_bytes < 0 ||
          gap < out->reported_baseline_bytes) {
        out->reported_baseline_bytes = gap;
      }
    }
    ++out->nodes_compared;
    out->estimated_output_bytes += static_cast<uint64_t>(outputs);
    out->estimated_parameter_bytes += static_cast<uint64_t>(parameters);
    out->estimated_activation_bytes += static_cast<uint64_t>(activations);
    out->reported_output_bytes +=
        static_cast<uint64_t>(std::max<int64_t>(0, record->output_bytes));
    out->reported_parameter_bytes +=
        static_cast<uint64_t>(std::max<int64_t>(0, record->parameter_bytes));
    out->reported_activation_bytes +=
        static_cast<uint64_t>(std::max<int64_t>(0, record->activation_bytes));
    if (record->output_bytes == outputs) {
      ++out->output_matches;
    } else {
      out->largest_mismatches.push_back({node, outputs, record->output_bytes});
    }
  }
  auto gap = [](const NodeSizeMismatch& m) {
    return std::abs(m.estimated_output_bytes - m.reported_output_bytes);
  };
  std::stable_sort(
      out->largest_mismatches.begin(), out->largest_mismatches.end(),
      [&](const auto& a, const auto& b) { return gap(a) > gap(b); });
  if (out->largest_mismatches.size() > options.top_mismatches) {
    out->largest_mismatches.resize(options.top_mismatches);
  }
}

// Kineto [memory] events and Ascend memory_record rows: the peak of Total
// Allocated per device and allocator component (or of the running sum of
// Bytes when the totals are missing). The reported peak is the framework
// allocator's: Kineto's, or Ascend's PTA+GE (else PTA, else any component).
std::string CompareWithAllocatorSamples(const Trace& trace,
                                        AllocatorComparison* out) {
  std::vector<AllocatorDevicePeak> devices;
  // Per (source, device, component): each process's allocator is its own,
  // even when two ranks number their devices alike.
  std::map<std::tuple<uint32_t, int32_t, uint32_t>, size_t> index;
  std::vector<int64_t> running;
  bool kineto = false, ascend = false;
  for (const AllocatorSample& s : trace.allocator_samples()) {
    if (s.per_module) continue;  // a module's reservation, not an allocator
    auto [it, inserted] = index.try_emplace(
        {s.source.value(), s.device, s.component.value()}, devices.size());
    if (inserted) {
      devices.push_back(
          {s.source, s.device, std::string(trace.str(s.component)), -1, -1, 0});
      running.push_back(0);
    }
    (s.component == StringPool::kEmpty ? kineto : ascend) = true;
    AllocatorDevicePeak& d = devices[it->second];
    running[it->second] += s.delta_bytes;
    int64_t allocated = s.total_allocated_bytes;
    if (allocated < 0 && s.delta_bytes != 0) allocated = running[it->second];
    d.peak_allocated_bytes = std::max(d.peak_allocated_bytes, allocated);
    d.peak_reserved_bytes =
        std::max(d.peak_reserved_bytes, s.total_reserved_bytes);
    ++d.events;
  }
  std::sort(devices.begin(), devices.end(), [](const auto& a, const auto& b) {
    return std::tuple(a.source.value(), a.device, a.component) <
           std::tuple(b.source.value(), b.device, b.component);
  });
  auto rank = [](const std::string& component) {
    if (component.empty() || component == "PTA+GE") return 0;
    return component == "PTA" ? 1 : 2;
  };
  int best = 3;
  for (const AllocatorDevicePeak& d : devices) {
    if (d.peak_allocated_bytes >= 0) best = std::min(best, rank(d.component));
  }
  for (const AllocatorDevicePeak& d : devices) {
    if (rank(d.component) == best) {
      out->reported_peak_bytes =
          std::max(out->reported_peak_bytes, d.peak_allocated_bytes);
    }
  }
  out->devices = std::move(devices);
  std::string source = kineto ? "kineto" : "";
  if (ascend) source += source.empty() ? "ascend" : "+ascend";
  return source;
}

// static_op_mem rows naming a node of the level, and operator_memory blocks
// allocated inside a host op linked to one (MeasuredMemory).
void AddMeasuredMemory(const Model& model, const Trace& trace,
                       std::vector<NodeFootprint>& nodes,
                       MemoryReport* report) {
  const ProfileTables& tables = trace.profile_tables();
  if (tables.static_op_memory.empty() && tables.operator_memory.empty()) {
    return;
  }
  report->has_measured = true;
  MeasuredMemory& m = report->measured;
  m.static_op_mem = !tables.static_op_memory.empty();
  m.operator_memory = !tables.operator_memory.empty();
  std::unordered_map<std::string_view, size_t> step_by_name;
  std::unordered_map<uint32_t, size_t> step_by_node;
  for (size_t s = 0; s < nodes.size(); ++s) {
    step_by_name.try_emplace(model.str(model.node_name(nodes[s].node)), s);
    step_by_node.emplace(nodes[s].node.value(), s);
  }
  // Static memory: per graph (source, model, graph id) the matched rows,
  // and its TOTAL row.
  std::map<std::tuple<uint32_t, uint32_t, int64_t>,
           std::vector<const StaticOpMemoryRow*>>
      matched;
  std::map<std::tuple<uint32_t, uint32_t, int64_t>, int64_t> totals;
  for (const StaticOpMemoryRow& r : tables.static_op_memory) {
    std::tuple key{r.source.valid() ? r.source.value() : 0,
                   r.model_name.value(), r.graph_id};
    if (IsStaticTotalRow(trace, r)) {
      totals[key] = r.size_bytes;
      continue;
    }
    ++m.static_ops;
    auto it = step_by_name.find(trace.str(r.op_name));
    if (it == step_by_name.end()) continue;
    ++m.static_ops_matched;
    matched[key].push_back(&r);
    NodeFootprint& f = nodes[it->second];
    f.measured_bytes = std::max<int64_t>(f.measured_bytes, 0) + r.size_bytes;
    f.measured_static = true;
  }
  for (const auto& [key, rows] : matched) {
    m.static_peak_bytes = std::max(m.static_peak_bytes, StaticMemoryPeak(rows));
    auto total = totals.find(key);
    if (total != totals.end()) {
      m.static_planned_bytes =
          std::max<int64_t>(m.static_planned_bytes, 0) + total->second;
    }
  }
  // Operator blocks, through the host op that allocated them.
  const std::vector<TaskId> hosts =
      HostOpsOfBlocks(trace, tables.operator_memory);
  for (size_t b = 0; b < tables.operator_memory.size(); ++b) {
    const OperatorMemoryRow& r = tables.operator_memory[b];
    ++m.operator_blocks;
    TaskId host = hosts[b];
    if (!host.valid()) continue;
    NodeId node = trace.task_node(host);
    auto it =
        node.valid() ? step_by_node.find(node.value()) : step_by_node.end();
    if (it == step_by_node.end()) continue;
    ++m.operator_blocks_matched;
    NodeFootprint& f = nodes[it->second];
    if (f.measured_static) continue;  // GE's static figure comes first
    f.measured_bytes = std::max<int64_t>(f.measured_bytes, 0) + r.size_bytes;
  }
  for (const NodeFootprint& f : nodes) {
    if (f.measured_bytes >= 0) ++m.nodes_measured;
  }
}

}  // namespace

int64_t TensorBytes(const Model& model, ValueId value) {
  if (!value.valid() || !model.value_has_shape(value)) return -1;
  uint32_t element = DataTypeSize(model.value_dtype(value));
  if (element == 0) return -1;
  // Far above any real tensor (256 TiB); larger is a corrupt shape.
  constexpr int64_t kLimit = int64_t{1} << 48;
  int64_t bytes = element;
  for (int64_t dim : model.value_dims(value)) {
    if (dim < 0) return -1;
    if (dim != 0 && bytes > kLimit / dim) return -1;
    bytes *= dim;
  }
  return bytes;
}

MemoryReport AnalyzeMemory(const Model& model, const Trace* trace,
                           const Links* links, GraphId root,
                           const MemoryOptions& options) {
  MemoryReport report;
  report.graph = root;
  std::span<const NodeId> nodes = model.graph_nodes(root);
  const uint32_t n = static_cast<uint32_t>(nodes.size());

  // Execution order.
  std::vector<uint32_t> file_index(model.node_count(), kNoStep);
  for (uint32_t i = 0; i < n; ++i) file_index[nodes[i].value()] = i;
  std::vector<int64_t> own_start(n, INT64_MIN);
  bool executed = false;
  if (trace != nullptr && links != nullptr && links->mapped_tasks.total() > 0) {
    for (uint32_t i = 0; i < n; ++i) {
      own_start[i] = FirstStart(*trace, *links, nodes[i]);
      executed |= own_start[i] != INT64_MIN;
    }
  }
  if (!executed) std::fill(own_start.begin(), own_start.end(), INT64_MIN);
  report.order = executed ? "trace" : "topological";
  std::vector<uint32_t> order = ExecutionOrder(
      model, root, own_start, file_index, &report.unordered_nodes);
  std::vector<uint32_t> step_of(model.node_count(), kNoStep);
  report.nodes.resize(n);
  for (uint32_t s = 0; s < n; ++s) {
    NodeId node = nodes[order[s]];
    step_of[node.value()] = s;
    report.nodes[s].node = node;
    report.nodes[s].start_ns =
        own_start[order[s]] == INT64_MIN ? -1 : own_start[order[s]];
  }

  // Tensors and their lifetimes.
  const uint32_t last_step = n == 0 ? 0 : n - 1;
  for (size_t i = 0; i < model.value_count(); ++i) {
    ValueId v(static_cast<uint32_t>(i));
    if (model.value_graph(v) != root) continue;
    uint8_t flags = model.value_flags(v);
    if (flags & kValueInitializer) {
      ++report.weight_tensors;
      int64_t bytes = TensorBytes(model, v);
      if (bytes < 0 && model.value_data_bytes(v) > 0) {
        bytes = static_cast<int64_t>(model.value_data_bytes(v));
      }
      if (bytes < 0) {
        ++report.weight_tensors_unknown_size;
      } else {
        report.weight_bytes += static_cast<uint64_t>(bytes);
      }
      continue;
    }
    const bool graph_input = flags & kValueGraphInput;
    NodeId producer = model.value_producer(v);
    uint32_t first;
    if (graph_input) {
      first = 0;
    } else if (producer.valid() && step_of[producer.value()] != kNoStep) {
      first = step_of[producer.value()];
    } else {
      continue;  // dangling or unused: nothing holds it
    }
    uint32_t last = first;
    for (NodeId consumer : model.value_consumers(v)) {
      NodeId c = NodeInRoot(model, consumer, root);
      if (c.valid() && step_of[c.value()] != kNoStep) {
        last = std::max(last, step_of[c.value()]);
      }
    }
    if (flags & kValueGraphOutput) last = last_step;
    if (n == 0) continue;
    int64_t bytes = TensorBytes(model, v);
    if (graph_input) {
      ++report.graph_input_tensors;
      if (bytes >= 0) report.graph_input_bytes += static_cast<uint64_t>(bytes);
    }
    if (bytes < 0) {
      ++report.tensors_unknown_size;
      if (report.unknown_size_examples.size() < options.unknown_examples) {
        report.unknown_size_examples.push_back(v);
      }
      continue;
    }
    report.tensors.push_back({v, static_cast<uint64_t>(bytes), first, last});
  }

  // Live bytes per step. Unsigned: the prefix sums are exact modulo 2^64
  // and never undefined, whatever sizes a hostile file declares.
  std::vector<uint64_t> delta(static_cast<size_t>(n) + 1, 0);
  for (const TensorLifetime& t : report.tensors) {
    delta[t.first_step] += t.bytes;
    delta[t.last_step + 1] -= t.bytes;
  }
  // The same without graph inputs: the caller owns those buffers, so a
  // runtime's allocator never holds them (compared with ORT's arena).
  std::vector<uint64_t> input_delta(static_cast<size_t>(n) + 1, 0);
  for (const TensorLifetime& t : report.tensors) {
    if (!(model.value_flags(t.value) & kValueGraphInput)) continue;
    input_delta[t.first_step] += t.bytes;
    input_delta[t.last_step + 1] -= t.bytes;
  }
  std::vector<int64_t> runtime_live(n, 0);
  uint64_t live = 0, input_live = 0;
  for (uint32_t s = 0; s < n; ++s) {
    live += delta[s];
    input_live += input_delta[s];
    uint64_t runtime = live - input_live;
    runtime_live[s] = static_cast<int64_t>(
        std::min<uint64_t>(runtime, static_cast<uint64_t>(INT64_MAX)));
    report.allocator.estimated_runtime_peak_bytes =
        std::max(report.allocator.estimated_runtime_peak_bytes, runtime);
    report.nodes[s].live_bytes = live;
    if (report.nodes[s].live_bytes > report.peak_activation_bytes) {
      report.peak_activation_bytes = report.nodes[s].live_bytes;
      report.peak_step = s;
    }
  }
  for (const TensorLifetime& t : report.tensors) {
    report.nodes[t.first_step].output_bytes +=
        model.value_flags(t.value) & kValueGraphInput ? 0 : t.bytes;
    if (n > 0 && t.first_step <= report.peak_step &&
        report.peak_step <= t.last_step) {
      report.peak_tensors.push_back(t);
    }
  }
  report.peak_tensor_count = static_cast<uint32_t>(report.peak_tensors.size());
  std::stable_sort(
      report.peak_tensors.begin(), report.peak_tensors.end(),
      [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  if (report.peak_tensors.size() > options.top_tensors) {
    report.peak_tensors.resize(options.top_tensors);
  }

  // Scopes: a node counts in its scope and every enclosing one.
  std::unordered_map<uint32_t, size_t> scope_index;
  for (const NodeFootprint& f : report.nodes) {
    for (ScopeId s = model.node_scope(f.node); s.valid();
         s = model.scope_parent(s)) {
      if (model.str(model.scope_path(s)).empty()) continue;
      auto [it, inserted] =
          scope_index.try_emplace(s.value(), report.scopes.size());
      if (inserted) report.scopes.push_back({s, 0, 0, 0});
      ScopeFootprint& scope = report.scopes[it->second];
      ++scope.nodes;
      scope.peak_bytes = std::max(scope.peak_bytes, f.live_bytes);
      scope.output_bytes += f.output_bytes;
    }
  }
  std::stable_sort(report.scopes.begin(), report.scopes.end(),
                   [&](const auto& a, const auto& b) {
                     if (a.peak_bytes != b.peak_bytes) {
                       return a.peak_bytes > b.peak_bytes;
                     }
                     return model.str(model.scope_path(a.scope)) <
                            model.str(model.scope_path(b.scope));
                   });

  // Allocator data.
  if (trace != nullptr) {
    std::string source;
    if (!trace->task_memory().empty()) {
      CompareWithOnnxRuntime(model, *trace, root, step_of, runtime_live,
                             options, &report.allocator);
      source = "onnxruntime";
    }
    if (!trace->allocator_samples().empty()) {
      std::string samples =
          CompareWithAllocatorSamples(*trace, &report.allocator);
      source += (source.empty() ? "" : "+") + samples;
    }
    report.has_allocator = !source.empty();
    report.allocator.source = std::move(source);
    AddMeasuredMemory(model, *trace, report.nodes, &report);
  }
  return report;
}

}  // namespace mi::analysis
