#pragma once

// Profiler tables that are neither tasks nor allocator samples, kept beside
// the tasks for the analyses and views that show them: CANN API time per
// call (api_statistic.csv), L2 cache hit rates per task (l2_cache.csv),
// memory an operator allocated (operator_memory.csv) and the static memory
// GE planned per op (static_op_mem.csv). Importers append; nothing else in
// the trace depends on them. Sizes are bytes, times ns; -1 where the file
// did not say.

#include <cstdint>
#include <vector>

#include "base/ids.h"
#include "base/string_pool.h"

namespace mi {

class Trace;

// One row of api_statistic.csv: one CANN API (or acl / runtime / node /
// hccl level entry) summed over the calls the profiler saw.
struct ApiStatisticRow {
  SourceId source;
  int32_t device = -1;  // msprof Device_id; -1 for host rows or none
  StringId level = StringPool::kEmpty;  // acl, runtime, node, model, hccl
  StringId name = StringPool::kEmpty;
  int64_t total_ns = 0;
  uint64_t count = 0;
  int64_t avg_ns = -1;
  int64_t min_ns = -1;
  int64_t max_ns = -1;
  double variance = -1;  // as written (us^2)
  uint64_t line = 0;     // in its file, for messages
};

// One row of l2_cache.csv: the L2 cache hit and victim rates of one device
// task, joined to the task when the run has it.
struct CacheRateRow {
  SourceId source;
  TaskId task;  // Invalid when no task of the source matched
  StringId op_name = StringPool::kEmpty;
  int64_t stream = -1;
  int64_t task_id = -1;
  int32_t device = -1;
  double hit_rate = -1;  // 0..1; -1 when the profiler wrote N/A
  double victim_rate = -1;
};

// One row of operator_memory.csv: a block an operator allocated.
struct OperatorMemoryRow {
  SourceId source;
  StringId name = StringPool::kEmpty;  // the operator ("aten::add")
  int64_t size_bytes = 0;
  int64_t allocation_ns = -1;
  int64_t release_ns = -1;  // -1: not released while profiled
  int64_t duration_ns = -1;
  int32_t device = -1;
};

// One row of static_op_mem.csv: the static memory GE planned for an op of
// a compiled graph, alive from node index start to end (0xFFFFFFFF: to
// the end of the graph).
struct StaticOpMemoryRow {
  SourceId source;
  StringId op_name = StringPool::kEmpty;
  StringId model_name = StringPool::kEmpty;
  int64_t graph_id = -1;
  int64_t node_index_start = -1;
  int64_t node_index_end = -1;
  int64_t size_bytes = 0;
  int32_t device = -1;  // -1 when Device_id is "host" or absent
};

struct ProfileTables {
  std::vector<ApiStatisticRow> api_statistics;
  std::vector<CacheRateRow> cache_rates;
  std::vector<OperatorMemoryRow> operator_memory;
  std::vector<StaticOpMemoryRow> static_op_memory;
  bool empty() const {
    return api_statistics.empty() && cache_rates.empty() &&
           operator_memory.empty() && static_op_memory.empty();
  }
};

// static_op_mem.csv writes one row per graph named TOTAL: the static
// memory GE planned for the graph (reuse included), not an op.
bool IsStaticTotalRow(const Trace& trace, const StaticOpMemoryRow& row);

// The largest sum of the static_op_mem sizes of one graph alive at one node
// index; rows live over [start, end], end 0xFFFFFFFF meaning the last index
// any row names.
int64_t StaticMemoryPeak(const std::vector<const StaticOpMemoryRow*>& rows);

// For each block of `rows`, the host op (a host-op task of the block's
// source with the block's name) whose interval holds the block's
// allocation time, the shortest when nested; Invalid when none. One pass
// over the tasks, then each block looks only at the ops of its name.
std::vector<TaskId> HostOpsOfBlocks(const Trace& trace,
                                    const std::vector<OperatorMemoryRow>& rows);

}  // namespace mi
