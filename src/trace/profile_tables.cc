#include "trace/profile_tables.h"

#include <algorithm>
#include <map>

#include "trace/trace.h"

namespace mi {
namespace {

constexpr int64_t kToGraphEnd = 4294967295;

}  // namespace

bool IsStaticTotalRow(const Trace& trace, const StaticOpMemoryRow& row) {
  return trace.str(row.op_name) == "TOTAL";
}

int64_t StaticMemoryPeak(const std::vector<const StaticOpMemoryRow*>& rows) {
  int64_t last = 0;
  for (const StaticOpMemoryRow* r : rows) {
    last = std::max(last, std::max<int64_t>(r->node_index_start, 0));
    if (r->node_index_end != kToGraphEnd) {
      last = std::max(last, r->node_index_end);
    }
  }
  // +size at start, -size after end.
  std::map<int64_t, int64_t> delta;
  for (const StaticOpMemoryRow* r : rows) {
    int64_t start = std::max<int64_t>(r->node_index_start, 0);
    int64_t end = r->node_index_end == kToGraphEnd || r->node_index_end < 0
                      ? last
                      : r->node_index_end;
    if (end < start) end = start;
    delta[start] += r->size_bytes;
    delta[end + 1] -= r->size_bytes;
  }
  int64_t live = 0, peak = 0;
  for (const auto& [index, d] : delta) {
    live += d;
    peak = std::max(peak, live);
  }
  return peak;
}

TaskId HostOpOfBlock(const Trace& trace, const OperatorMemoryRow& row) {
  if (row.allocation_ns < 0) return TaskId::Invalid();
  TaskId best = TaskId::Invalid();
  int64_t best_duration = INT64_MAX;
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    if (trace.task_kind(t) != TaskKind::kHostOp ||
        trace.task_name(t) != row.name ||
        (row.source.valid() && trace.task_source(t) != row.source)) {
      continue;
    }
    int64_t start = trace.task_start_ns(t);
    int64_t end = start + trace.task_duration_ns(t);
    if (start <= row.allocation_ns && row.allocation_ns <= end &&
        trace.task_duration_ns(t) < best_duration) {
      best = t;
      best_duration = trace.task_duration_ns(t);
    }
  }
  return best;
}

}  // namespace mi
