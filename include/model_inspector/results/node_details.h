#pragma once

// One node of a level with its links (GET .../nodes/{node},
// docs/reference/http-api.md "nodes"): op type, the ONNX operator doc,
// attributes, inputs / outputs with dtypes and shapes, scope, status,
// fused_from / fused_into and linked tasks.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/analysis_result.h"
#include "model_inspector/probes.h"

namespace mi {

struct NodeRefInfo {
  uint32_t id = 0;
  std::string name;
  std::string op_type;
  std::string level;
};

// A tensor an operator reads or writes.
struct NodeValueInfo {
  // False for an omitted optional input (it keeps its position).
  bool present = true;
  std::string name;
  std::optional<std::string> dtype;
  // A dimension: its size, else its symbolic name, else unknown (null).
  struct Dim {
    std::optional<int64_t> size;
    std::string symbol;
  };
  std::optional<std::vector<Dim>> shape;
  std::string type;  // "float32[1,64,56,56]"
  // Memory layouts where the format gives them (Ascend).
  std::string layout;
  std::string origin_layout;
  std::string origin_shape;
  std::optional<uint32_t> producer;
  bool graph_input = false;
  bool graph_output = false;
  bool initializer = false;
  // Inputs only: no node, graph input or initializer provides the tensor
  // (the graph's fault, `check`'s dangling_input); written only when true.
  bool missing = false;
  // Outputs only: the consuming nodes (at most 100).
  std::optional<std::vector<uint32_t>> consumers;
};

struct NodeAttributeInfo {
  std::string name;
  std::string type;        // "int" | "float" | "string" | "ints" | ...
  int64_t int_value = 0;   // type "int"
  double float_value = 0;  // type "float"
  std::string text;        // every other type, as display text
};

struct NodeTaskInfo {
  uint32_t id = 0;
  std::string name;
  std::string kind;
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  uint32_t track = 0;
  std::string track_name;
  uint32_t run = 0;
};

// A probe on a node in the latest probe run (include/model_inspector/
// probes.h): the tensor's statistics.
struct NodeProbeInfo {
  std::string probe;
  std::string kind;
  int64_t index = 0;
  TensorStats stats;
};

struct NodeDetailsResult : AnalysisResult {
  uint32_t id = 0;
  std::string name;
  std::string op_type;
  std::string domain;
  // ONNX operator documentation (graphs with ONNX opset imports only).
  struct OpDoc {
    std::string domain;
    int64_t since_version = 0;
    std::string summary;
  };
  std::optional<OpDoc> doc;
  std::string level;
  uint32_t graph_id = 0;
  std::string scope;
  std::vector<NodeAttributeInfo> attributes;
  std::vector<NodeValueInfo> inputs;
  std::vector<NodeValueInfo> outputs;
  std::string status;
  std::string match_kind;
  std::vector<NodeRefInfo> fused_from;
  std::optional<NodeRefInfo> fused_into;  // the first when several
  int64_t fused_into_count = 0;
  int64_t task_count = 0;
  int64_t task_total_ns = 0;
  std::vector<NodeTaskInfo> tasks;  // at most 100
  // What the CANN profiler measured for the node, written only when it
  // did: the mean L2 cache hit / victim rate over its tasks' l2_cache.csv
  // rows (N/A rows left out), and its measured memory (static_op_mem.csv:
  // GE's static memory for an op of its name; else operator_memory.csv:
  // the blocks its host ops allocated).
  int64_t l2_tasks = 0;  // its tasks with an l2_cache row
  std::optional<double> l2_hit_rate;
  std::optional<double> l2_victim_rate;
  std::optional<int64_t> measured_memory_bytes;
  std::string measured_memory_source;  // "static_op_mem" | "operator_memory"
  // Tensor probes, written only when the run has a probe store: the latest
  // probe run's id (0: the store has no finished run) and the probes on
  // the node in it (series and steps: Session::NodeProbesJson).
  std::optional<int64_t> probes_run;
  std::vector<NodeProbeInfo> probes;

  std::string_view analysis_id() const override { return "node_details"; }
  void Write(ResultWriter& w) const override;
};

}  // namespace mi
