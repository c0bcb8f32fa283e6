#pragma once

// Result types of `summary` (per-op-type, stream, node and run tables), shared
// by the CLI, the server and summary.json. Plain data: no ids or internal types
// leak out.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model_inspector/analysis_result.h"
#include "model_inspector/diagnosis.h"

namespace mi {

// Which clock task times are read in: the trace's own (raw), or raw + the
// track's clock offset (calibrated; the same as raw until calibration ran).
enum class TraceClock : uint8_t { kRaw, kCalibrated };

struct SummaryOptions {
  int top_nodes = 20;  // rows of the per-node table
  int run = -1;        // only this run (index into runs), -1 = all runs
  // Only the time range [from_ns, to_ns) in `clock`: a task counts when it
  // overlaps the range, with the part of it inside the range (stream busy
  // and span are clipped too; the linked / unlinked counts stay those of
  // the whole trace, as the linker found them). The default is the whole
  // trace.
  int64_t from_ns = std::numeric_limits<int64_t>::min();
  int64_t to_ns = std::numeric_limits<int64_t>::max();
  TraceClock clock = TraceClock::kRaw;
  bool has_window() const {
    return from_ns != std::numeric_limits<int64_t>::min() ||
           to_ns != std::numeric_limits<int64_t>::max();
  }
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
  // Device streams, whole-trace summaries: idle time (span - busy) by what
  // the stream waited for (src/analysis/timing/idle_overlap.h): a late host
  // launch, another stream (an event wait), or neither. Negative = not
  // computed (host threads, time-range summaries).
  double idle_us = -1;
  double idle_waiting_host_us = -1;
  double idle_waiting_other_stream_us = -1;
  double idle_other_us = -1;
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

// The longest dependency chain of the run (the critical path), on calibrated
// times.
struct CriticalPathSummary {
  double length_us = 0;  // first start to last end of the path
  double wall_us = 0;    // first task start to last task end
  double share = 0;      // length / wall
  uint64_t tasks = 0;
  // Time on the path per op type, largest first (at most 5).
  std::vector<std::pair<std::string, double>> top_op_types_us;
};

// Data movement that ran while compute ran, per device.
struct OverlapRow {
  std::string device;  // "device 0"
  double compute_us = 0;
  double data_movement_us = 0;
  double overlap_us = 0;
  double overlap_share = 0;  // overlap / data movement
};

// Host calls that blocked on the device (cudaStreamSynchronize, ...).
struct HostSyncSummary {
  uint64_t calls = 0;
  double total_us = 0;
  double device_idle_us = 0;  // device idle while the host waited
};

// The estimated memory peak of the executed level.
struct MemorySummary {
  std::string level;  // "compiled" | "framework"
  std::string order;  // "trace" | "topological"
  uint64_t peak_activation_bytes = 0;
  uint64_t weight_bytes = 0;
  // The allocator's own peak when the trace reports one, else -1.
  int64_t reported_peak_bytes = -1;
};

// summary.json (docs/reference/schemas/summary.schema.json) is its Write.
struct SummaryReport : AnalysisResult {
  // What the time figures are made of: "execution tasks" (kernels, copies,
  // syncs), or "host ops (self time)" for CPU-only traces.
  std::string basis;
  // The trace's dialects, one per kind of source, joined by ","
  // ("pytorch", "onnxruntime,pytorch"); empty without a trace.
  std::string dialect;
  double total_us = 0;  // sum over op_types
  uint64_t tasks = 0;   // tasks counted
  // Of those, syncs and waits: counted apart, never in total_us.
  uint64_t sync_tasks = 0;
  uint64_t linked_tasks = 0;
  uint64_t unlinked_tasks = 0;
  // Why the unlinked ones are: they name no node (copies, waits,
  // collectives), name a node the loaded graphs lack, or no graph is loaded.
  uint64_t unlinked_without_node_name = 0;
  uint64_t unlinked_unknown_node = 0;
  // ... or name a node several nodes share, and their op type does not
  // tell which (diagnostic duplicate_node_name).
  uint64_t unlinked_ambiguous_node = 0;
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
  // Whole-trace analyses (critical path, overlap, host synchronize calls,
  // memory, findings), left out of time-range summaries:
  // has_analyses says whether they were computed.
  bool has_analyses = false;
  bool has_critical_path = false;
  CriticalPathSummary critical_path;
  std::vector<OverlapRow> overlap;
  HostSyncSummary host_sync;
  bool has_memory = false;
  MemorySummary memory;
  // Diagnosis findings with default thresholds, most severe first.
  std::vector<FindingInfo> findings;

  std::string_view analysis_id() const override { return "summary"; }
  void Write(ResultWriter& w) const override;
};

// One reason why tasks stayed unlinked, in the words the CLI's summary and
// the UI both use ("2 name a node the graphs lack").
struct UnlinkedReason {
  std::string code;  // the summary.json unlinked_reasons key: "unknown_node"
  uint64_t count = 0;
  std::string text;  // "name a node the graphs lack"
};

// The reasons that apply to a summary, in a fixed order (no name, unknown
// node, ambiguous node, no graph); reasons with a count of 0 are left out.
std::vector<UnlinkedReason> UnlinkedReasons(const SummaryReport& report);

}  // namespace mi
