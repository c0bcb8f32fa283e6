#include "analysis/timing/critical_path.h"

#include <algorithm>
#include <deque>
#include <map>
#include <unordered_set>

namespace mi::analysis {

std::string_view TaskOpLabel(const Model& model, const Trace& trace, TaskId t) {
  std::string_view op = trace.str(trace.task_op_type(t));
  if (!op.empty()) return op;
  NodeId n = trace.task_node(t);
  if (n.valid() && n.value() < model.node_count()) {
    std::string_view node_op = model.str(model.node_op_type(n));
    if (!node_op.empty()) return node_op;
  }
  return trace.str(trace.task_name(t));
}

CriticalPathReport CriticalPathOfGraph(const Model& model, const Trace& trace,
                                       const DependencyGraph& g,
                                       const TimingScope& scope) {
  CriticalPathReport report;
  report.scope = scope;
  report.graph_tasks = g.vertex_count();
  report.graph_edges = g.edge_count();
  report.edges_by_kind = g.edge_counts;
  report.dropped_data_edges = g.dropped_data_edges;
  report.wall_ns = g.end_ns - g.start_ns;
  if (g.vertex_count() == 0) return report;
  TaskClock clock(trace, scope.clock);
  std::vector<uint32_t> order = TopologicalOrder(g, &report.broken_edges);

  constexpr uint32_t kNone = UINT32_MAX;
  const size_t n = g.vertex_count();
  std::vector<int64_t> root(n);  // start of the longest chain to v
  std::vector<uint32_t> best_edge(n, kNone);
  std::vector<bool> processed(n, false);
  for (uint32_t v : order) {
    TaskId t = g.tasks[v];
    int64_t best_root = clock.start(t);
    int64_t best_release = INT64_MIN;
    uint32_t best = kNone;
    for (uint32_t e = g.pred_begin[v]; e < g.pred_begin[v + 1]; ++e) {
      uint32_t p = g.pred[e];
      if (!processed[p]) continue;  // an edge broken to undo a cycle
      int64_t r = root[p];
      if (r > best_root) continue;
      int64_t release = ReleaseTime(clock, g.tasks[p], t, g.pred_kind[e]);
      if (r < best_root || best == kNone || release > best_release) {
        best_root = r;
        best_release = release;
        best = e;
      }
    }
    root[v] = best_root;
    best_edge[v] = best;
    processed[v] = true;
  }
  // The path ends where end - root is largest; ties: the later end, then
  // a device task (the work the host's ops wrapped), then a task reached
  // through a dependency.
  auto better_end = [&](uint32_t v, uint32_t than) {
    TaskId a = g.tasks[v], b = g.tasks[than];
    int64_t la = clock.end(a) - root[v], lb = clock.end(b) - root[than];
    if (la != lb) return la > lb;
    if (clock.end(a) != clock.end(b)) return clock.end(a) > clock.end(b);
    bool da = IsDeviceTrack(trace, trace.task_track(a));
    bool db = IsDeviceTrack(trace, trace.task_track(b));
    if (da != db) return da;
    return best_edge[v] != kNone && best_edge[than] == kNone;
  };
  uint32_t last = 0;
  for (uint32_t v = 1; v < n; ++v) {
    if (better_end(v, last)) last = v;
  }
  std::vector<uint32_t> vertices;
  std::vector<uint32_t> edges;
  for (uint32_t v = last;;) {
    vertices.push_back(v);
    uint32_t e = best_edge[v];
    edges.push_back(e);
    if (e == kNone) break;
    v = g.pred[e];
  }
  std::reverse(vertices.begin(), vertices.end());
  std::reverse(edges.begin(), edges.end());

  std::map<uint32_t, int64_t> by_track;
  std::map<std::string, int64_t, std::less<>> by_op_type;
  std::map<std::string, int64_t, std::less<>> waits;
  std::unordered_set<uint32_t> seen_nodes;
  int64_t cursor = clock.start(g.tasks[vertices.front()]);
  report.start_ns = cursor;
  for (size_t i = 0; i < vertices.size(); ++i) {
    TaskId t = g.tasks[vertices[i]];
    uint32_t e = edges[i];
    DependencyKind via =
        e == kNone ? DependencyKind::kTrackOrder : g.pred_kind[e];
    int64_t wait = 0;
    if (e != kNone) {
      wait = std::max<int64_t>(
          0, clock.start(t) - ReleaseTime(clock, g.tasks[g.pred[e]], t, via));
    }
    report.tasks.push_back(t);
    report.via.push_back(via);
    report.wait_before_ns.push_back(wait);
    int64_t gap = std::max<int64_t>(0, clock.start(t) - cursor);
    if (gap > 0) waits[std::string(DependencyKindName(via))] += gap;
    int64_t ran =
        std::max<int64_t>(0, clock.end(t) - std::max(clock.start(t), cursor));
    cursor = std::max(cursor, clock.end(t));
    if (IsSyncTask(trace, t)) {
      // A wait on the path (CANN's EVENT_WAIT) is waiting, not work.
      if (ran > 0) waits[std::string(kTaskClassSync)] += ran;
    } else if (ran > 0) {
      report.busy_ns += ran;
      by_track[trace.task_track(t).value()] += ran;
      by_op_type[std::string(TaskOpLabel(model, trace, t))] += ran;
    }
    NodeId node = trace.task_node(t);
    if (node.valid() && seen_nodes.insert(node.value()).second) {
      report.nodes.push_back(node);
    }
  }
  report.end_ns = cursor;
  report.length_ns = report.end_ns - report.start_ns;
  report.share = report.wall_ns > 0
                     ? static_cast<double>(report.length_ns) / report.wall_ns
                     : 0;
  for (const auto& [track, ns] : by_track) {
    report.by_track.push_back({TrackId(track), ns});
  }
  for (const auto& [label, ns] : by_op_type) {
    report.by_op_type.push_back({label, ns});
  }
  for (const auto& [label, ns] : waits) {
    report.waits_by_kind.push_back({label, ns});
  }
  auto by_time = [](const auto& a, const auto& b) { return a.ns > b.ns; };
  std::stable_sort(report.by_track.begin(), report.by_track.end(), by_time);
  std::stable_sort(report.by_op_type.begin(), report.by_op_type.end(), by_time);
  std::stable_sort(report.waits_by_kind.begin(), report.waits_by_kind.end(),
                   by_time);
  return report;
}

CriticalPathReport ComputeCriticalPath(const Model& model, const Trace& trace,
                                       const Links& links,
                                       const TimingScope& scope,
                                       DependencyGraphCache* graphs) {
  std::shared_ptr<const DependencyGraph> graph =
      DependencyGraphOf(model, trace, links, scope, graphs);
  return CriticalPathOfGraph(model, trace, *graph, scope);
}

namespace {

std::vector<TaskId> TasksOfNodes(const Links& links,
                                 const std::vector<NodeId>& nodes) {
  std::vector<TaskId> tasks;
  for (NodeId n : nodes) {
    std::span<const TaskId> own = links.mapped_tasks.Get(n);
    if (!own.empty()) {
      tasks.insert(tasks.end(), own.begin(), own.end());
      continue;
    }
    for (NodeId c : links.fused_into.Get(n)) {
      std::span<const TaskId> fused = links.mapped_tasks.Get(c);
      tasks.insert(tasks.end(), fused.begin(), fused.end());
    }
  }
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  return tasks;
}

}  // namespace

NodePathsReport ComputeNodePaths(const Model& model, const Trace& /*trace*/,
                                 const Links& links, NodeId node) {
  NodePathsReport report;
  report.node = node;
  GraphId graph = model.node_graph(node);
  auto walk = [&](bool upstream) {
    std::vector<NodeId> found;
    std::unordered_set<uint32_t> seen{node.value()};
    std::deque<NodeId> queue{node};
    while (!queue.empty()) {
      NodeId n = queue.front();
      queue.pop_front();
      auto visit = [&](NodeId next) {
        if (!next.valid() || model.node_graph(next) != graph) return;
        if (!seen.insert(next.value()).second) return;
        found.push_back(next);
        queue.push_back(next);
      };
      if (upstream) {
        for (ValueId v : model.node_inputs(n)) {
          if (v.valid()) visit(model.value_producer(v));
        }
      } else {
        for (ValueId v : model.node_outputs(n)) {
          if (!v.valid()) continue;
          for (NodeId c : model.value_consumers(v)) visit(c);
        }
      }
    }
    std::sort(found.begin(), found.end());
    return found;
  };
  report.ancestors = walk(/*upstream=*/true);
  report.descendants = walk(/*upstream=*/false);
  report.node_tasks = TasksOfNodes(links, {node});
  report.ancestor_tasks = TasksOfNodes(links, report.ancestors);
  report.descendant_tasks = TasksOfNodes(links, report.descendants);
  return report;
}

}  // namespace mi::analysis
