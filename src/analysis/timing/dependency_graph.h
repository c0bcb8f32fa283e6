#pragma once

// The dependency graph of one run (what the critical path follows): which task
// had to wait for which. Vertices are the work tasks in scope (annotations
// excluded); an edge p -> t says t could not start (or, for host waits, end)
// before p:
//  - track order: on one stream or thread, the task that ended last at or
//    before t started (consecutive kernels on a stream; on a host thread the
//    previous op, nesting-aware: a nested call follows the previous call,
//    not its still-running parent);
//  - launch: the host call that launched a device task (CANN launch, the
//    runtime call with the same correlation id, or the linker's host op);
//  - event: the task recording an event -> the task waiting on it
//    (Trace::task_event_after / task_event_before);
//  - data: the last task of a graph node -> the first task of each node
//    consuming one of its outputs (per run; dropped when the times say the
//    consumer started first, which means the link is not a dependency);
//  - host wait: the last device task that finished inside a host
//    synchronize call -> that call (the host was blocked on it);
//  - nesting: on a host thread, the innermost op still open when a call
//    starts -> that call (the call cannot start before the op started), so
//    that a path through a runtime call reaches back to the op that made
//    it; a recorded end past the op's (whole-microsecond timestamps) does
//    not make the call a sibling.
// Built in O(tasks log tasks + edges).

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/timing/timing_common.h"
#include "linker/links.h"
#include "model/model.h"
#include "trace/trace.h"

namespace mi::analysis {

enum class DependencyKind : uint8_t {
  kTrackOrder,
  kLaunch,
  kEvent,
  kData,
  kHostWait,
  kNesting,
};
inline constexpr size_t kDependencyKindCount = 6;
std::string_view DependencyKindName(DependencyKind kind);

struct DependencyGraph {
  static constexpr uint32_t kNoVertex = UINT32_MAX;
  // Vertices: work tasks in scope, by start time (ties: longer first).
  std::vector<TaskId> tasks;
  // Per task id: its vertex, or kNoVertex when out of scope.
  std::vector<uint32_t> vertex_of_task;
  // Predecessors of vertex v: [pred_begin[v], pred_begin[v + 1]).
  std::vector<uint32_t> pred_begin;
  std::vector<uint32_t> pred;
  std::vector<DependencyKind> pred_kind;
  std::array<uint64_t, kDependencyKindCount> edge_counts{};
  // Data edges whose consumer started before its producer ended.
  uint64_t dropped_data_edges = 0;
  int64_t start_ns = 0;  // extent of the vertices on the scope's clock
  int64_t end_ns = 0;

  size_t vertex_count() const { return tasks.size(); }
  size_t edge_count() const { return pred.size(); }
};

DependencyGraph BuildDependencyGraph(const Model& model, const Trace& trace,
                                     const Links& links,
                                     const TimingScope& scope);

// The dependency graphs of one run, built once per scope and shared by every
// analysis that follows them (critical path, idle/overlap, the timing
// rules): `summary` asks for the whole-trace graph four times. Safe to use
// from several threads (the server's); a graph is built under the lock, so
// a second caller waits for the first one's graph instead of building its
// own. The run's trace must not change while the cache holds graphs of it.
class DependencyGraphCache {
 public:
  std::shared_ptr<const DependencyGraph> Get(const Model& model,
                                             const Trace& trace,
                                             const Links& links,
                                             const TimingScope& scope);
  size_t MemoryUsage() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<int, int>, std::shared_ptr<const DependencyGraph>>
      graphs_;  // by (run, clock)
};

// The graph of `scope` from `cache`, or built here when `cache` is null.
std::shared_ptr<const DependencyGraph> DependencyGraphOf(
    const Model& model, const Trace& trace, const Links& links,
    const TimingScope& scope, DependencyGraphCache* cache);

// When the dependency from -> to was satisfied: the end of `from`, except
// for a launch, which releases its task at the latest when the task starts
// (a kernel may start before its launch call returns), and nesting, which
// releases the nested call when the enclosing op starts.
int64_t ReleaseTime(const TaskClock& clock, TaskId from, TaskId to,
                    DependencyKind kind);

// A topological order of the vertices (Kahn, ready vertices by start time).
// Real dependencies never form cycles, but edges derived from skewed or
// mislinked data could: a cycle is broken by releasing its earliest vertex
// regardless of its unprocessed predecessors, counted in `broken_edges`.
std::vector<uint32_t> TopologicalOrder(const DependencyGraph& graph,
                                       uint64_t* broken_edges);

}  // namespace mi::analysis
