#pragma once

// Memory of one graph level (src/analysis/memory): tensor lifetimes in
// execution order, the peak and the tensors alive at it, per-node and
// per-scope footprints, and the trace's allocator figures against the
// estimate (docs/reference/schemas/memory.schema.json).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/analysis_result.h"

namespace mi {

struct MemoryNodeRef {
  uint32_t id = 0;
  std::string name;
  std::string op_type;
};

struct MemoryTensor {
  std::string name;
  std::string type;  // "float32[1,64,56,56]"
  uint64_t bytes = 0;
  std::optional<MemoryNodeRef> producer;
  int64_t first_step = 0;
  int64_t last_step = 0;
};

struct MemoryNodeFootprint {
  uint32_t id = 0;
  std::string name;
  std::string op_type;
  uint64_t step = 0;
  uint64_t live_bytes = 0;
  uint64_t output_bytes = 0;
  std::optional<int64_t> start_ns;
  // What the profiler measured for the node (static_op_mem.csv: GE's static
  // memory for the op; operator_memory.csv: blocks its host ops allocated),
  // written only when the run holds either table: measured_bytes is absent
  // and bytes_source "estimate" for a node they do not name.
  bool with_measured = false;
  std::optional<int64_t> measured_bytes;
  std::string bytes_source;  // "static_op_mem" | "operator_memory" | "estimate"
};

// The profiler's measured memory for the level (written only when the run
// holds static_op_mem.csv or operator_memory.csv).
struct MemoryMeasured {
  std::string source;  // "static_op_mem", "operator_memory", joined by '+'
  uint64_t nodes_measured = 0;
  uint64_t static_ops = 0;          // static_op_mem rows (TOTAL excluded)
  uint64_t static_ops_matched = 0;  // naming a node of the level
  uint64_t operator_blocks = 0;
  uint64_t operator_blocks_matched = 0;  // allocated by a host op of a node
  // The peak the memory view shows: GE's planned static memory (the TOTAL
  // rows of the graphs whose ops name nodes of the level), else the most
  // static memory alive at one node index, else the estimate.
  uint64_t peak_bytes = 0;
  std::string peak_source;  // "static_op_mem" | "estimate"
  std::optional<int64_t> static_planned_bytes;
  std::optional<int64_t> static_peak_bytes;
};

struct MemoryScopeFootprint {
  std::string path;
  int64_t nodes = 0;
  uint64_t peak_bytes = 0;
  uint64_t output_bytes = 0;
};

struct MemorySizeMismatch {
  std::optional<MemoryNodeRef> node;
  int64_t estimated_output_bytes = 0;
  int64_t reported_output_bytes = 0;
};

// ONNX Runtime's per-node figures against the estimate.
struct MemoryAllocatorNodes {
  int64_t compared = 0;
  int64_t output_matches = 0;
  int64_t unknown_estimate = 0;
  uint64_t estimated_output_bytes = 0;
  uint64_t reported_output_bytes = 0;
  uint64_t estimated_parameter_bytes = 0;
  uint64_t reported_parameter_bytes = 0;
  uint64_t estimated_activation_bytes = 0;
  uint64_t reported_activation_bytes = 0;
  std::optional<int64_t> reported_peak_in_use_bytes;
  std::optional<int64_t> reported_baseline_bytes;
  uint64_t estimated_runtime_peak_bytes = 0;
  std::optional<double> estimate_over_reported_activations;
  std::vector<MemorySizeMismatch> largest_mismatches;
};

struct MemoryAllocatorDevice {
  std::optional<uint32_t> source;
  int64_t device = -1;
  std::string component;
  std::optional<int64_t> peak_allocated_bytes;
  std::optional<int64_t> peak_reserved_bytes;
  uint64_t events = 0;
};

struct MemoryAllocator {
  std::string source;  // "onnxruntime", "kineto", "ascend", joined by '+'
  std::optional<int64_t> reported_peak_bytes;
  uint64_t estimated_peak_bytes = 0;
  std::optional<double> estimate_over_reported;
  std::optional<MemoryAllocatorNodes> nodes;   // onnxruntime
  std::vector<MemoryAllocatorDevice> devices;  // kineto, ascend
};

struct MemoryResult : AnalysisResult {
  std::string level;
  std::string graph;
  std::string order;  // "trace" | "topological"
  uint64_t node_count = 0;
  int64_t unordered_nodes = 0;
  int64_t weight_tensors = 0;
  uint64_t weight_bytes = 0;
  int64_t weight_unknown_size = 0;
  int64_t graph_input_tensors = 0;
  uint64_t graph_input_bytes = 0;
  uint64_t activation_tensors = 0;
  int64_t activation_unknown_size = 0;
  struct UnknownTensor {
    std::string name;
    std::string type;
  };
  std::vector<UnknownTensor> unknown_size_examples;
  uint64_t peak_activation_bytes = 0;
  uint64_t peak_total_bytes = 0;
  std::optional<int64_t> peak_step;  // absent when the level has no nodes
  std::optional<MemoryNodeRef> peak_node;
  int64_t peak_tensor_count = 0;
  std::vector<MemoryTensor> peak_tensors;
  std::vector<MemoryNodeFootprint> nodes;
  std::vector<MemoryScopeFootprint> scopes;
  std::optional<MemoryAllocator> allocator;
  std::optional<MemoryMeasured> measured;

  std::string_view analysis_id() const override { return "memory"; }
  void Write(ResultWriter& w) const override;
};

}  // namespace mi
