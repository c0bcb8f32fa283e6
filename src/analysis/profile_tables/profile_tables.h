#pragma once

// The profiler tables a CANN profile directory holds besides tasks and
// allocator totals (trace/profile_tables.h), as three analyses:
//  - api_statistics: CANN API time per API (api_statistic.csv), largest
//    total first, with totals per level (acl, runtime, node, hccl, ...);
//  - l2_cache: the L2 cache hit and victim rate of each device task
//    (l2_cache.csv), joined to the task and the node the task ran, with the
//    mean per op name and over the run;
//  - profiled_memory: memory the profiler measured: each operator's
//    allocations (operator_memory.csv, per operator name, each block joined
//    to the host op that allocated it), what each CANN module reserved over
//    time (npu_module_mem.csv, per module), and GE's static memory per op
//    (static_op_mem.csv, with its peak over the node index).
// Each is empty (not an error) when the run holds no such file.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis_descriptor.h"
#include "model_inspector/analysis_result.h"

namespace mi::analysis {

struct ApiStatisticsResult : AnalysisResult {
  struct Api {
    uint32_t source = 0;
    int32_t device = -1;  // -1: host (or the table names none)
    std::string level;
    std::string name;
    int64_t total_ns = 0;
    uint64_t count = 0;
    int64_t avg_ns = -1, min_ns = -1, max_ns = -1;
    double variance = -1;
  };
  struct Level {
    uint32_t source = 0;
    std::string level;
    uint64_t apis = 0;
    uint64_t calls = 0;
    int64_t total_ns = 0;
  };
  std::vector<Api> apis;      // largest total first
  std::vector<Level> levels;  // largest total first
  uint64_t calls = 0;
  int64_t total_ns = 0;

  std::string_view analysis_id() const override { return "api_statistics"; }
  void Write(ResultWriter& w) const override;
};

struct CacheRatesResult : AnalysisResult {
  struct Task {
    uint32_t source = 0;
    std::string op_name;
    int64_t stream = -1;
    int64_t task_id = -1;  // the profiler's task id
    int64_t task = -1;     // the joined task (trace.json tasks[]); -1 none
    int64_t node = -1;     // the node that task ran; -1 none
    std::string node_name;
    double hit_rate = -1;     // 0..1; -1: not measured (N/A)
    double victim_rate = -1;  // 0..1; -1: not measured
  };
  struct Op {
    std::string op_name;
    uint64_t tasks = 0;
    uint64_t hit_measured = 0;
    double mean_hit_rate = -1;
    uint64_t victim_measured = 0;
    double mean_victim_rate = -1;
  };
  std::vector<Task> tasks;  // file order
  std::vector<Op> ops;      // most tasks first
  uint64_t rows = 0;
  uint64_t joined = 0;
  uint64_t hit_measured = 0;
  double mean_hit_rate = -1;
  uint64_t victim_measured = 0;
  double mean_victim_rate = -1;

  std::string_view analysis_id() const override { return "cache_hit_rates"; }
  void Write(ResultWriter& w) const override;
};

struct ProfiledMemoryResult : AnalysisResult {
  // operator_memory.csv per operator name.
  struct Operator {
    std::string name;
    uint64_t blocks = 0;
    int64_t total_bytes = 0;         // sum of the blocks' sizes
    int64_t largest_bytes = 0;       // the largest block
    uint64_t released = 0;           // blocks released while profiled
    uint64_t joined = 0;             // blocks joined to a host op
    std::vector<std::string> nodes;  // nodes those host ops ran (<= 5)
  };
  // npu_module_mem.csv per (source, device, module).
  struct Module {
    uint32_t source = 0;
    int32_t device = -1;
    std::string module;
    uint64_t samples = 0;
    int64_t peak_reserved_bytes = -1;
    int64_t last_reserved_bytes = -1;
  };
  // static_op_mem.csv per row.
  struct StaticOp {
    std::string op_name;
    std::string model_name;
    int64_t graph_id = -1;
    int64_t node_index_start = -1;
    int64_t node_index_end = -1;  // 4294967295: to the end of the graph
    int64_t size_bytes = 0;
  };
  uint64_t operator_blocks = 0;
  int64_t operator_total_bytes = 0;
  std::vector<Operator> operators;  // largest total first
  uint64_t module_samples = 0;
  std::vector<Module> modules;
  // static_op_mem.csv per (model, graph): the profiler's TOTAL row (the
  // static memory GE planned for the graph, reuse included) and the ops'.
  struct StaticGraph {
    uint32_t source = 0;
    std::string model_name;
    int64_t graph_id = -1;
    uint64_t ops = 0;          // rows other than TOTAL
    int64_t op_bytes = 0;      // their sizes summed
    int64_t peak_bytes = 0;    // most alive at one node index
    int64_t total_bytes = -1;  // the TOTAL row; -1 when absent
  };
  uint64_t static_ops = 0;         // rows other than TOTAL
  int64_t static_total_bytes = 0;  // their sizes summed
  // The largest, over graphs, of the sizes alive at one node index.
  int64_t static_peak_bytes = 0;
  std::vector<StaticGraph> static_graphs;
  std::vector<StaticOp> static_op_memory;  // largest first, no TOTAL

  std::string_view analysis_id() const override { return "profiled_memory"; }
  void Write(ResultWriter& w) const override;
};

ApiStatisticsResult ComputeApiStatistics(const Trace& trace);
CacheRatesResult ComputeCacheRates(const Model* model, const Trace& trace);
ProfiledMemoryResult ComputeProfiledMemory(const Model* model,
                                           const Trace& trace);

// Registry entries (registry/builtin_analyses.cc).
const AnalysisDescriptor& ApiStatisticsAnalysis();
const AnalysisDescriptor& CacheRatesAnalysis();
const AnalysisDescriptor& ProfiledMemoryAnalysis();

}  // namespace mi::analysis
