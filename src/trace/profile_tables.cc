#include "trace/profile_tables.h"

#include <algorithm>
#include <map>
#include <unordered_map>

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

std::vector<TaskId> HostOpsOfBlocks(
    const Trace& trace, const std::vector<OperatorMemoryRow>& rows) {
  std::vector<TaskId> hosts(rows.size(), TaskId::Invalid());
  std::unordered_map<uint32_t, std::vector<TaskId>> ops_by_name;
  for (const OperatorMemoryRow& row : rows) ops_by_name[row.name.value()];
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    if (trace.task_kind(t) != TaskKind::kHostOp) continue;
    auto it = ops_by_name.find(trace.task_name(t).value());
    if (it != ops_by_name.end()) it->second.push_back(t);
  }
  for (size_t b = 0; b < rows.size(); ++b) {
    const OperatorMemoryRow& row = rows[b];
    if (row.allocation_ns < 0) continue;
    int64_t best_duration = INT64_MAX;
    for (TaskId t : ops_by_name[row.name.value()]) {
      if (row.source.valid() && trace.task_source(t) != row.source) continue;
      int64_t start = trace.task_start_ns(t);
      int64_t duration = trace.task_duration_ns(t);
      if (start <= row.allocation_ns && row.allocation_ns <= start + duration &&
          duration < best_duration) {
        hosts[b] = t;
        best_duration = duration;
      }
    }
  }
  return hosts;
}

}  // namespace mi
