#pragma once

// The critical path of a run, and a node's ancestors / descendants.
//
// The critical path is the longest path through the dependency graph
// (dependency_graph.h) where, as in HTA's critical-path analysis, every
// edge weighs the time between its ends: a path's length is the time from
// the start of its first task to the end of its last. The longest path
// ends at the last task to finish and reaches back to the earliest task
// that chain depends on; among equally long ways back (they all span the
// same time) it follows the binding dependency, the one released last.
// Computed in one pass over a topological order: O(tasks + edges).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/timing/dependency_graph.h"
#include "analysis/timing/timing_common.h"
#include "linker/links.h"
#include "model/model.h"
#include "trace/trace.h"

namespace mi::analysis {

struct CriticalPathReport {
  TimingScope scope;
  // Path tasks in time order, and for each the dependency that led to it
  // from the previous one (the first task's entry is kTrackOrder and
  // meaningless) and the time the path waited before it (start minus the
  // previous task's release, 0 when it started at once).
  std::vector<TaskId> tasks;
  std::vector<DependencyKind> via;
  std::vector<int64_t> wait_before_ns;
  // Distinct graph nodes of the path tasks, in path order.
  std::vector<NodeId> nodes;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t length_ns = 0;  // end - start
  int64_t wall_ns = 0;    // extent of all tasks in scope
  double share = 0;       // length / wall
  int64_t busy_ns = 0;    // part of the length some path work task ran
  // Path time per track and per op type (each instant counted once, for
  // the first path task that covers it), and the path's waits by the kind
  // of dependency they waited on ("launch": the device waited for the
  // host to launch; "track_order": queue overhead between tasks, ...;
  // "sync": time a path task that is a sync or wait (IsSyncTask: CANN's
  // EVENT_WAIT) ran, which is neither busy time nor any op type's).
  struct TrackTime {
    TrackId track;
    int64_t ns = 0;
  };
  struct LabelTime {
    std::string label;
    int64_t ns = 0;
  };
  std::vector<TrackTime> by_track;
  std::vector<LabelTime> by_op_type;
  std::vector<LabelTime> waits_by_kind;
  // Graph size, for reports.
  uint64_t graph_tasks = 0;
  uint64_t graph_edges = 0;
  std::array<uint64_t, kDependencyKindCount> edges_by_kind{};
  uint64_t broken_edges = 0;
  uint64_t dropped_data_edges = 0;
};

// `graphs`: the run's cache of dependency graphs (null: built here).
CriticalPathReport ComputeCriticalPath(const Model& model, const Trace& trace,
                                       const Links& links,
                                       const TimingScope& scope,
                                       DependencyGraphCache* graphs = nullptr);
// The same from an already built graph (the benchmark times both steps).
CriticalPathReport CriticalPathOfGraph(const Model& model, const Trace& trace,
                                       const DependencyGraph& graph,
                                       const TimingScope& scope);

// A node's ancestors and descendants in its own graph (every node on a
// path from the graph inputs to it, and from it to the outputs), and the
// tasks that executed them (for a framework node without tasks of its own:
// the tasks of the compiled nodes it was fused into). Sorted ids.
struct NodePathsReport {
  NodeId node;
  std::vector<NodeId> ancestors;
  std::vector<NodeId> descendants;
  std::vector<TaskId> node_tasks;
  std::vector<TaskId> ancestor_tasks;
  std::vector<TaskId> descendant_tasks;
};
NodePathsReport ComputeNodePaths(const Model& model, const Trace& trace,
                                 const Links& links, NodeId node);

// The label a task's time is filed under: its op type, else its node's op
// type, else its name.
std::string_view TaskOpLabel(const Model& model, const Trace& trace, TaskId t);

}  // namespace mi::analysis
