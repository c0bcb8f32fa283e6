#include "linker/host_op_alignment.h"

#include <algorithm>
#include <map>

namespace mi::linker {
namespace {

struct AtenMapping {
  std::string_view aten;  // without the "aten::" prefix
  std::vector<std::string_view> onnx;
};

const std::vector<AtenMapping>& Mappings() {
  static const std::vector<AtenMapping> kMappings = {
      {"conv1d", {"Conv"}},
      {"conv2d", {"Conv"}},
      {"conv3d", {"Conv"}},
      {"convolution", {"Conv"}},
      {"conv_transpose2d", {"ConvTranspose"}},
      {"relu", {"Relu"}},
      {"relu_", {"Relu"}},
      {"sigmoid", {"Sigmoid"}},
      {"tanh", {"Tanh"}},
      {"gelu", {"Gelu"}},
      {"max_pool1d", {"MaxPool"}},
      {"max_pool2d", {"MaxPool"}},
      {"avg_pool2d", {"AveragePool"}},
      {"adaptive_avg_pool2d", {"GlobalAveragePool", "AveragePool"}},
      {"add", {"Add"}},
      {"add_", {"Add"}},
      {"sub", {"Sub"}},
      {"mul", {"Mul"}},
      {"div", {"Div"}},
      {"flatten", {"Flatten"}},
      {"linear", {"Gemm", "MatMul"}},
      {"addmm", {"Gemm"}},
      {"matmul", {"MatMul"}},
      {"mm", {"MatMul"}},
      {"bmm", {"MatMul"}},
      {"softmax", {"Softmax"}},
      {"layer_norm", {"LayerNormalization"}},
      {"batch_norm", {"BatchNormalization"}},
      {"transpose", {"Transpose"}},
      {"permute", {"Transpose"}},
      {"reshape", {"Reshape"}},
      {"view", {"Reshape"}},
      {"cat", {"Concat"}},
      {"embedding", {"Gather"}},
      {"dropout", {"Dropout"}},
  };
  return kMappings;
}

}  // namespace

std::vector<std::string_view> OnnxOpTypesForAtenOp(std::string_view aten) {
  if (!aten.starts_with("aten::")) return {};
  aten.remove_prefix(6);
  for (const AtenMapping& m : Mappings()) {
    if (m.aten == aten) return m.onnx;
  }
  return {};
}

uint32_t AlignHostOpsToGraph(const Model& model, Trace* trace,
                             GraphId framework,
                             std::vector<std::pair<NodeId, TaskId>>* node_tasks,
                             uint64_t max_cells) {
  if (!framework.valid()) return 0;
  // The graph side: nodes in file (= export = execution) order.
  std::vector<NodeId> nodes;
  for (NodeId n : model.graph_nodes(framework)) {
    if (model.str(model.node_op_type(n)) != "Constant") nodes.push_back(n);
  }
  if (nodes.empty()) return 0;

  // The trace side, per run: outermost host ops with a known ONNX kind.
  std::map<uint32_t, std::vector<TaskId>> by_run;
  for (uint32_t i = 0; i < trace->task_count(); ++i) {
    TaskId t(i);
    if (trace->task_kind(t) == TaskKind::kHostOp &&
        !trace->task_node(t).valid()) {
      by_run[trace->task_run(t)].push_back(t);
    }
  }
  std::vector<TaskId> aligned_ops;
  for (auto& [run, tasks] : by_run) {
    std::stable_sort(tasks.begin(), tasks.end(), [&](TaskId a, TaskId b) {
      if (trace->task_track(a) != trace->task_track(b)) {
        return trace->task_track(a) < trace->task_track(b);
      }
      if (trace->task_start_ns(a) != trace->task_start_ns(b)) {
        return trace->task_start_ns(a) < trace->task_start_ns(b);
      }
      return trace->task_duration_ns(a) > trace->task_duration_ns(b);
    });
    std::vector<TaskId> ops;
    std::vector<std::vector<std::string_view>> kinds;
    std::vector<std::pair<TaskId, bool>> stack;  // (task, is mapped)
    for (TaskId t : tasks) {
      while (
          !stack.empty() &&
          (trace->task_track(stack.back().first) != trace->task_track(t) ||
           trace->task_end_ns(stack.back().first) <= trace->task_start_ns(t))) {
        stack.pop_back();
      }
      bool covered = std::any_of(stack.begin(), stack.end(),
                                 [](const auto& s) { return s.second; });
      auto types = OnnxOpTypesForAtenOp(trace->str(trace->task_name(t)));
      bool mapped = !types.empty();
      if (mapped && !covered) {
        ops.push_back(t);
        kinds.push_back(std::move(types));
      }
      stack.emplace_back(t, mapped);
    }
    if (ops.empty()) continue;
    uint64_t cells = (ops.size() + 1) * (nodes.size() + 1);
    if (cells > max_cells) continue;
    // Longest common subsequence, matching an op to a node of its kind.
    size_t n = ops.size();
    size_t m = nodes.size();
    std::vector<uint32_t> table((n + 1) * (m + 1), 0);
    auto at = [&](size_t i, size_t j) -> uint32_t& {
      return table[i * (m + 1) + j];
    };
    auto matches = [&](size_t i, size_t j) {
      std::string_view op = model.str(model.node_op_type(nodes[j]));
      return std::find(kinds[i].begin(), kinds[i].end(), op) != kinds[i].end();
    };
    for (size_t i = n; i-- > 0;) {
      for (size_t j = m; j-- > 0;) {
        at(i, j) = matches(i, j) ? at(i + 1, j + 1) + 1
                                 : std::max(at(i + 1, j), at(i, j + 1));
      }
    }
    for (size_t i = 0, j = 0; i < n && j < m;) {
      if (matches(i, j) && at(i, j) == at(i + 1, j + 1) + 1) {
        trace->SetTaskNode(ops[i], nodes[j]);
        node_tasks->emplace_back(nodes[j], ops[i]);
        aligned_ops.push_back(ops[i]);
        ++i;
        ++j;
      } else if (at(i + 1, j) >= at(i, j + 1)) {
        ++i;
      } else {
        ++j;
      }
    }
  }
  if (aligned_ops.empty()) return 0;
  // Work inside an aligned op (nested aten ops) and work it launched
  // (kernels, via the launching host op) belongs to the same node; a sync
  // or wait it issued is no node's work (trace.h IsSyncTask).
  for (uint32_t i = 0; i < trace->task_count(); ++i) {
    TaskId t(i);
    if (trace->task_node(t).valid() || IsSyncTask(*trace, t)) continue;
    TaskId parent = trace->task_parent(t);
    if (parent.valid() && trace->task_node(parent).valid()) {
      NodeId node = trace->task_node(parent);
      trace->SetTaskNode(t, node);
      node_tasks->emplace_back(node, t);
    }
  }
  // Aligned ops are outermost, so they do not overlap on a track: the only
  // candidate to contain a task is the last one starting before it.
  std::map<uint32_t, std::vector<TaskId>> aligned_by_track;
  for (TaskId t : aligned_ops) {
    aligned_by_track[trace->task_track(t).value()].push_back(t);
  }
  for (auto& [track, list] : aligned_by_track) {
    std::sort(list.begin(), list.end(), [&](TaskId a, TaskId b) {
      return trace->task_start_ns(a) < trace->task_start_ns(b);
    });
  }
  for (uint32_t i = 0; i < trace->task_count(); ++i) {
    TaskId t(i);
    if (trace->task_kind(t) != TaskKind::kHostOp ||
        trace->task_node(t).valid()) {
      continue;
    }
    auto it = aligned_by_track.find(trace->task_track(t).value());
    if (it == aligned_by_track.end()) continue;
    auto next = std::upper_bound(it->second.begin(), it->second.end(),
                                 trace->task_start_ns(t),
                                 [&](int64_t start, TaskId op) {
                                   return start < trace->task_start_ns(op);
                                 });
    if (next == it->second.begin()) continue;
    TaskId outer = *(next - 1);
    if (trace->task_end_ns(t) <= trace->task_end_ns(outer)) {
      NodeId node = trace->task_node(outer);
      trace->SetTaskNode(t, node);
      node_tasks->emplace_back(node, t);
    }
  }
  return static_cast<uint32_t>(aligned_ops.size());
}

}  // namespace mi::linker
