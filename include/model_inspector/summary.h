#pragma once

// Result types of `summary` (capability E5), shared by the CLI, the server
// and summary.json. Plain data: no ids or internal types leak out.

#include <cstdint>
#include <string>
#include <vector>

namespace mi {

struct SummaryOptions {
  int top_nodes = 20;  // rows of the per-node table
  int run = -1;        // only this run (index into runs), -1 = all runs
};

struct OpTypeRow {
  std::string op_type;
  std::string kind;    // "compute" | "data_movement" | "sync" | "host_op" ...
  uint64_t nodes = 0;  // distinct nodes (or names, when unlinked)
  uint64_t calls = 0;  // tasks
  double total_us = 0;
  double average_us = 0;  // per call
  double share = 0;       // of the summary total, 0..1
};

struct StreamRow {
  uint32_t stream_id = 0;  // track id in trace.json
  std::string name;        // "stream 7 (GPU 0)", "thread 1234"
  std::string kind;        // "device_stream" | "host_thread" | "other"
  uint64_t tasks = 0;
  double total_us = 0;     // sum of task durations
  double busy_us = 0;      // union of task intervals (overlaps counted once)
  double span_us = 0;      // first start to last end
  double utilisation = 0;  // busy / span
};

struct NodeRow {
  std::string name;
  std::string op_type;
  std::string status;  // node status, or "unlinked" for tasks without node
  int64_t node_id = -1;
  uint64_t calls = 0;
  double total_us = 0;
  double average_us = 0;
  double share = 0;
};

struct RunRow {
  uint32_t index = 0;
  std::string name;
  double start_us = 0;
  double duration_us = 0;
  uint64_t tasks = 0;
  double task_time_us = 0;
};

struct GraphCounts {
  uint64_t framework_nodes = 0;
  uint64_t compiled_nodes = 0;
  uint64_t fused_framework_nodes = 0;   // ran inside another node's task
  uint64_t folded_framework_nodes = 0;  // folded into constants
  uint64_t eliminated_framework_nodes = 0;
  uint64_t inserted_compiled_nodes = 0;
  uint64_t unexplained_compiled_nodes = 0;
  uint64_t executed_nodes = 0;
  uint64_t not_executed_nodes = 0;
};

struct SummaryReport {
  // What the time figures are made of: "execution tasks" (kernels, copies,
  // syncs), or "host ops (self time)" for CPU-only traces.
  std::string basis;
  std::string dialect;  // trace dialect(s)
  double total_us = 0;  // sum over op_types
  uint64_t tasks = 0;   // tasks counted
  uint64_t linked_tasks = 0;
  uint64_t unlinked_tasks = 0;
  // Why the unlinked ones are: they name no node (copies, waits,
  // collectives), name a node the loaded graphs lack, or no graph is loaded.
  uint64_t unlinked_without_node_name = 0;
  uint64_t unlinked_unknown_node = 0;
  uint64_t unlinked_no_graph = 0;
  // PyTorch host ops aligned with the nodes of an ONNX export (by op kind
  // and order; see docs/design/fusion-matching.md).
  uint64_t aligned_host_ops = 0;
  std::vector<OpTypeRow> op_types;  // by total, descending
  std::vector<StreamRow> streams;
  std::vector<NodeRow> top_nodes;
  std::vector<RunRow> runs;
  GraphCounts graph;
  bool has_trace = false;
  bool has_graph = false;
};

}  // namespace mi
