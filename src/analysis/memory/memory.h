#pragma once

// Memory of one graph level, estimated from the graph and compared with
// what the runtime's allocator reported where the trace carries it.
//
// Execution order: the linked trace's first task start per node when the
// level was executed (a topological order that prefers earlier starts, so
// data dependencies hold even across streams), else a topological order in
// file order. Each activation tensor lives from the step of its producer to
// the step of its last consumer (graph outputs to the end, graph inputs from
// the start); sizes come from shapes and dtypes. Tensors with a dynamic or
// unknown dim, or an unknown or sub-byte dtype, are never guessed: they are
// left out and counted. Initializers (weights) are counted apart from
// activations. Tensors inside subgraph bodies (If/Loop/Scan) are not
// counted; a body's reads of outer tensors count as reads by the node owning
// the body.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis_descriptor.h"
#include "base/ids.h"
#include "linker/links.h"
#include "model/model.h"
#include "model_inspector/results/memory.h"
#include "trace/trace.h"

namespace mi::analysis {

struct MemoryOptions {
  size_t top_tensors = 10;  // tensors listed as alive at the peak
  size_t top_mismatches = 10;
  size_t unknown_examples = 10;
};

// Bytes of a tensor from its shape and dtype; -1 when any dim is symbolic
// or unknown, the shape is unknown, or the dtype has no byte size.
int64_t TensorBytes(const Model& model, ValueId value);

struct TensorLifetime {
  ValueId value;
  uint64_t bytes = 0;
  // Steps in execution order (index into MemoryReport::nodes); a graph
  // input has first_step 0, a graph output last_step = the last step.
  uint32_t first_step = 0;
  uint32_t last_step = 0;
};

struct NodeFootprint {
  NodeId node;
  // Activation bytes alive while the node runs: its inputs, its outputs
  // and everything produced earlier and read later.
  uint64_t live_bytes = 0;
  uint64_t output_bytes = 0;  // outputs of known size
  int64_t start_ns = -1;      // first linked task start; -1 when none
  // The profiler's measure (MeasuredMemory); -1 when none names the node.
  int64_t measured_bytes = -1;
  bool measured_static = false;  // from static_op_mem (else operator_memory)
};

// What the profiler measured for the level: static_op_mem.csv rows whose
// Op Name is a node of the level (GE's static memory per op), and
// operator_memory.csv blocks allocated inside a host op linked to a node of
// the level. The memory view shows these where present, the estimate
// elsewhere.
struct MeasuredMemory {
  bool static_op_mem = false;    // the run holds static_op_mem rows
  bool operator_memory = false;  // the run holds operator_memory rows
  uint32_t nodes_measured = 0;
  uint64_t static_ops = 0;
  uint64_t static_ops_matched = 0;
  uint64_t operator_blocks = 0;
  uint64_t operator_blocks_matched = 0;
  // TOTAL rows of the graphs with a matched op, summed; -1 when none.
  int64_t static_planned_bytes = -1;
  // The most matched static memory alive at one node index; -1 when none.
  int64_t static_peak_bytes = -1;
};

struct ScopeFootprint {
  ScopeId scope;
  uint32_t nodes = 0;         // nodes in the scope and its sub-scopes
  uint64_t peak_bytes = 0;    // largest live_bytes while one of them runs
  uint64_t output_bytes = 0;  // activations they produce
};

// One node's sizes, estimated and as ONNX Runtime reported them.
struct NodeSizeMismatch {
  NodeId node;
  int64_t estimated_output_bytes = 0;
  int64_t reported_output_bytes = 0;
};

struct AllocatorDevicePeak {
  // The source (rank) the allocator belongs to; Invalid when the samples
  // name none.
  SourceId source;
  int32_t device = -1;    // -1: host memory
  std::string component;  // Ascend allocator ("PTA", "PTA+GE"); else empty
  int64_t peak_allocated_bytes = -1;
  int64_t peak_reserved_bytes = -1;
  uint64_t events = 0;
};

// The estimate against the trace's allocator data.
struct AllocatorComparison {
  // "onnxruntime" (per-node args), "kineto" ([memory] events), "ascend"
  // (memory_record.csv), joined by '+' when several; empty when the trace
  // carries none.
  std::string source;
  // onnxruntime: per node, the first run's figures.
  uint32_t nodes_compared = 0;
  uint32_t output_matches = 0;  // nodes whose output bytes agree exactly
  uint32_t nodes_unknown_estimate = 0;  // some output of unknown size
  uint64_t estimated_output_bytes = 0;  // over nodes with known outputs
  uint64_t reported_output_bytes = 0;
  uint64_t estimated_parameter_bytes = 0;
  uint64_t reported_parameter_bytes = 0;
  uint64_t estimated_activation_bytes = 0;  // non-weight inputs
  uint64_t reported_activation_bytes = 0;
  std::vector<NodeSizeMismatch> largest_mismatches;
  // ORT's arena holds more than activations (pre-packed weights,
  // workspaces). Over the records compared: the largest mem_bytes_in_use,
  // and the smallest gap between it and the estimated live bytes (graph
  // inputs excluded) at the same node — an estimate of what the arena holds
  // besides activations — so that (peak - baseline) is ORT's activation
  // peak. -1 when unknown.
  int64_t reported_peak_in_use_bytes = -1;
  int64_t reported_baseline_bytes = -1;
  // The estimated peak without graph inputs (caller-owned buffers that no
  // runtime allocator holds), for comparison with (peak - baseline).
  uint64_t estimated_runtime_peak_bytes = 0;
  // Allocator peak: ORT's largest mem_in_use_peak (its arena, without the
  // initializers); Kineto's largest Total Allocated over all devices;
  // Ascend's largest Total Allocated of PTA+GE (else PTA, else any).
  int64_t reported_peak_bytes = -1;
  std::vector<AllocatorDevicePeak> devices;  // kineto, ascend
};

struct MemoryReport {
  GraphId graph;
  // "trace" (ordered by linked task starts) or "topological".
  std::string order;
  std::vector<NodeFootprint> nodes;  // in execution order
  // Nodes on a cycle cannot be ordered; they are appended in file order.
  uint32_t unordered_nodes = 0;

  uint32_t weight_tensors = 0;
  uint64_t weight_bytes = 0;
  uint32_t weight_tensors_unknown_size = 0;
  uint32_t graph_input_tensors = 0;
  uint64_t graph_input_bytes = 0;

  std::vector<TensorLifetime> tensors;  // activations of known size
  uint32_t tensors_unknown_size = 0;
  std::vector<ValueId> unknown_size_examples;

  uint64_t peak_activation_bytes = 0;
  uint32_t peak_step = 0;  // index into nodes
  // Activations alive at the peak, largest first (top N).
  std::vector<TensorLifetime> peak_tensors;
  uint32_t peak_tensor_count = 0;      // all of them
  std::vector<ScopeFootprint> scopes;  // largest peak first

  bool has_allocator = false;
  AllocatorComparison allocator;

  bool has_measured = false;  // the trace holds either table
  MeasuredMemory measured;
};

// `trace` and `links` may be null (graph only). `root` is a root graph.
MemoryReport AnalyzeMemory(const Model& model, const Trace* trace,
                           const Links* links, GraphId root,
                           const MemoryOptions& options);

// The report as the public result (names resolved; its Write() is
// docs/reference/schemas/memory.schema.json). `level` names the level.
MemoryResult ToMemoryResult(const Model& model, const MemoryReport& report,
                            std::string_view level);

// Registry entry (registry/builtin_analyses.cc).
const AnalysisDescriptor& MemoryAnalysis();

}  // namespace mi::analysis
