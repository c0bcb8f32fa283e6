#include "analysis/timing/dependency_graph.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace mi::analysis {
namespace {

struct Edge {
  uint32_t to;
  uint32_t from;
  DependencyKind kind;
};

// Track order: per track, each task's predecessor is the task that ended
// last at or before it started, among the tasks before it in start order
// (ties in end time: the longer one, i.e. the enclosing op).
// Nesting: a thread runs one call stack, so a task starting while an op on
// its thread is still open was called from the innermost such op, even
// when its recorded end is past the op's: profilers writing whole
// microseconds truncate ts and dur separately, which puts a callee's end up
// to 1 us after its caller's (the legacy autograd profiler's aten::conv2d
// [3876, 4499) us and its aten::convolution [3877, 4500) us).
void AddTrackOrderEdges(const Trace& trace, const TaskClock& clock,
                        const DependencyGraph& g, std::vector<Edge>* edges) {
  std::vector<std::vector<uint32_t>> by_track(trace.track_count());
  for (uint32_t v = 0; v < g.tasks.size(); ++v) {
    by_track[trace.task_track(g.tasks[v]).value()].push_back(v);
  }
  using Entry = std::pair<int64_t, uint32_t>;  // end, vertex
  for (const std::vector<uint32_t>& vertices : by_track) {
    // Vertices are already in start order (ties: longer first).
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> open;
    uint32_t best = DependencyGraph::kNoVertex;
    int64_t best_end = INT64_MIN;
    int64_t best_duration = -1;
    // Open tasks enclosing the current one, outermost first (host threads).
    std::vector<uint32_t> enclosing;
    for (uint32_t v : vertices) {
      TaskId t = g.tasks[v];
      int64_t start = clock.start(t);
      if (!IsDeviceTrack(trace, trace.task_track(t))) {
        while (!enclosing.empty() &&
               clock.end(g.tasks[enclosing.back()]) <= start) {
          enclosing.pop_back();
        }
        if (!enclosing.empty()) {
          edges->push_back({v, enclosing.back(), DependencyKind::kNesting});
        }
        enclosing.push_back(v);
      }
      while (!open.empty() && open.top().first <= start) {
        uint32_t done = open.top().second;
        open.pop();
        int64_t end = clock.end(g.tasks[done]);
        int64_t duration = clock.duration(g.tasks[done]);
        if (end > best_end || (end == best_end && duration > best_duration)) {
          best = done;
          best_end = end;
          best_duration = duration;
        }
      }
      if (best != DependencyGraph::kNoVertex) {
        edges->push_back({v, best, DependencyKind::kTrackOrder});
      }
      open.emplace(clock.end(t), v);
    }
  }
}

void AddLaunchEdges(const Trace& trace, const DependencyGraph& g,
                    std::vector<Edge>* edges) {
  LaunchIndex launches(trace);
  for (uint32_t v = 0; v < g.tasks.size(); ++v) {
    TaskId t = g.tasks[v];
    if (!IsDeviceTrack(trace, trace.task_track(t))) continue;
    TaskId launch = launches.LaunchOf(t);
    if (!launch.valid()) continue;
    uint32_t from = g.vertex_of_task[launch.value()];
    if (from == DependencyGraph::kNoVertex || from == v) continue;
    edges->push_back({v, from, DependencyKind::kLaunch});
  }
}

// An event id may be recorded many times; a wait pairs with the latest
// record that started before the waiting task.
void AddEventEdges(const Trace& trace, const TaskClock& clock,
                   const DependencyGraph& g, std::vector<Edge>* edges) {
  std::unordered_map<SourceIdKey, std::vector<uint32_t>, SourceIdKeyHash>
      recorders;
  bool any_wait = false;
  for (uint32_t v = 0; v < g.tasks.size(); ++v) {
    TaskId t = g.tasks[v];
    if (trace.task_event_after(t) >= 0) {
      recorders[SourceIdKey{TaskSource(trace, t), trace.task_event_after(t)}]
          .push_back(v);  // in start order
    }
    any_wait = any_wait || trace.task_event_before(t) >= 0;
  }
  if (!any_wait) return;
  for (uint32_t v = 0; v < g.tasks.size(); ++v) {
    TaskId t = g.tasks[v];
    if (trace.task_event_before(t) < 0) continue;
    auto it = recorders.find(
        SourceIdKey{TaskSource(trace, t), trace.task_event_before(t)});
    if (it == recorders.end()) continue;
    const std::vector<uint32_t>& list = it->second;
    int64_t start = clock.start(t);
    auto after = std::upper_bound(
        list.begin(), list.end(), start,
        [&](int64_t s, uint32_t r) { return s < clock.start(g.tasks[r]); });
    uint32_t from = after == list.begin() ? list.front() : *(after - 1);
    if (from == v) continue;
    edges->push_back({v, from, DependencyKind::kEvent});
  }
}

void AddDataEdges(const Model& model, const Trace& trace,
                  const TaskClock& clock, DependencyGraph* g,
                  std::vector<Edge>* edges) {
  // Per (source, node, run): the first-starting and the last-ending task.
  // Two sources' executions of one node (two ranks) are not one execution.
  struct Span {
    uint32_t first = DependencyGraph::kNoVertex;
    uint32_t last = DependencyGraph::kNoVertex;
  };
  std::unordered_map<SourceIdKey, Span, SourceIdKeyHash> spans;
  auto key = [](uint32_t source, NodeId n, uint32_t run) {
    return SourceIdKey{
        source,
        static_cast<int64_t>((static_cast<uint64_t>(n.value()) << 32) | run)};
  };
  for (uint32_t v = 0; v < g->tasks.size(); ++v) {
    TaskId t = g->tasks[v];
    NodeId n = trace.task_node(t);
    if (!n.valid() || n.value() >= model.node_count()) continue;
    Span& s = spans[key(TaskSource(trace, t), n, trace.task_run(t))];
    if (s.first == DependencyGraph::kNoVertex) s.first = v;  // start order
    if (s.last == DependencyGraph::kNoVertex ||
        clock.end(t) > clock.end(g->tasks[s.last])) {
      s.last = v;
    }
  }
  if (spans.empty()) return;
  for (const auto& [k, producer] : spans) {
    uint64_t packed = static_cast<uint64_t>(k.id);
    NodeId n(static_cast<uint32_t>(packed >> 32));
    uint32_t run = static_cast<uint32_t>(packed & 0xffffffffu);
    TaskId last = g->tasks[producer.last];
    for (ValueId out : model.node_outputs(n)) {
      if (!out.valid()) continue;
      for (NodeId c : model.value_consumers(out)) {
        if (c == n) continue;
        auto it = spans.find(key(k.source, c, run));
        if (it == spans.end()) continue;
        uint32_t first = it->second.first;
        if (first == producer.last) continue;
        if (clock.end(last) > clock.start(g->tasks[first])) {
          ++g->dropped_data_edges;
          continue;
        }
        edges->push_back({first, producer.last, DependencyKind::kData});
      }
    }
  }
}

// The device task a synchronize call waited for: of the streams it waited
// on (HostSyncIndex: the stream or device the trace names, else the
// devices of the call's own source), the task that ended last inside the
// call and was still running when the call began.
void AddHostWaitEdges(const Trace& trace, const TaskClock& clock,
                      const DependencyGraph& g, std::vector<Edge>* edges) {
  std::vector<uint32_t> syncs;
  std::vector<std::vector<std::pair<int64_t, uint32_t>>> by_end(
      trace.track_count());  // per device stream: (end, vertex)
  for (uint32_t v = 0; v < g.tasks.size(); ++v) {
    TaskId t = g.tasks[v];
    if (IsHostSynchronizeCall(trace, t)) {
      syncs.push_back(v);
    } else if (IsDeviceTrack(trace, trace.task_track(t)) &&
               IsExecutionKind(trace.task_kind(t))) {
      by_end[trace.task_track(t).value()].emplace_back(clock.end(t), v);
    }
  }
  if (syncs.empty()) return;
  for (auto& list : by_end) std::sort(list.begin(), list.end());
  HostSyncIndex index(trace);
  for (uint32_t s : syncs) {
    TaskId call = g.tasks[s];
    int64_t end = clock.end(call);
    std::pair<int64_t, uint32_t> best(INT64_MIN, DependencyGraph::kNoVertex);
    for (TrackId stream : index.Streams(index.TargetsOf(call))) {
      const auto& list = by_end[stream.value()];
      auto it = std::upper_bound(list.begin(), list.end(),
                                 std::pair<int64_t, uint32_t>(end, UINT32_MAX));
      if (it == list.begin()) continue;
      best = std::max(best, *(it - 1));
    }
    if (best.second == DependencyGraph::kNoVertex) continue;
    // Only when the host actually waited: the device task was still
    // running when the call began.
    if (best.first <= clock.start(call)) continue;
    edges->push_back({s, best.second, DependencyKind::kHostWait});
  }
}

}  // namespace

std::string_view DependencyKindName(DependencyKind kind) {
  switch (kind) {
    case DependencyKind::kTrackOrder:
      return "track_order";
    case DependencyKind::kLaunch:
      return "launch";
    case DependencyKind::kEvent:
      return "event";
    case DependencyKind::kData:
      return "data";
    case DependencyKind::kHostWait:
      return "host_wait";
    case DependencyKind::kNesting:
      return "nesting";
  }
  return "track_order";
}

int64_t ReleaseTime(const TaskClock& clock, TaskId from, TaskId to,
                    DependencyKind kind) {
  if (kind == DependencyKind::kLaunch) {
    return std::min(clock.end(from), clock.start(to));
  }
  if (kind == DependencyKind::kNesting) return clock.start(from);
  return clock.end(from);
}

DependencyGraph BuildDependencyGraph(const Model& model, const Trace& trace,
                                     const Links& /*links*/,
                                     const TimingScope& scope) {
  TaskClock clock(trace, scope.clock);
  DependencyGraph g;
  g.vertex_of_task.assign(trace.task_count(), DependencyGraph::kNoVertex);
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    if (IsWorkTask(trace, t) && InScope(trace, t, scope)) g.tasks.push_back(t);
  }
  std::sort(g.tasks.begin(), g.tasks.end(), [&](TaskId a, TaskId b) {
    int64_t sa = clock.start(a), sb = clock.start(b);
    if (sa != sb) return sa < sb;
    int64_t da = clock.duration(a), db = clock.duration(b);
    if (da != db) return da > db;
    return a < b;
  });
  g.start_ns = g.tasks.empty() ? 0 : INT64_MAX;
  g.end_ns = g.tasks.empty() ? 0 : INT64_MIN;
  for (uint32_t v = 0; v < g.tasks.size(); ++v) {
    g.vertex_of_task[g.tasks[v].value()] = v;
    g.start_ns = std::min(g.start_ns, clock.start(g.tasks[v]));
    g.end_ns = std::max(g.end_ns, clock.end(g.tasks[v]));
  }
  std::vector<Edge> edges;
  edges.reserve(g.tasks.size() * 2);
  AddTrackOrderEdges(trace, clock, g, &edges);
  AddLaunchEdges(trace, g, &edges);
  AddEventEdges(trace, clock, g, &edges);
  AddDataEdges(model, trace, clock, &g, &edges);
  AddHostWaitEdges(trace, clock, g, &edges);

  // CSR by target vertex; duplicates (same pair, same kind) removed. A
  // counting sort by target (linear: a comparison sort of every edge was
  // half of `summary`'s time on large traces), then each vertex's few
  // predecessors sorted by (from, kind) in place.
  const uint32_t n = static_cast<uint32_t>(g.tasks.size());
  g.pred_begin.assign(n + 1, 0);
  for (const Edge& e : edges) ++g.pred_begin[e.to + 1];
  for (uint32_t v = 0; v < n; ++v) g.pred_begin[v + 1] += g.pred_begin[v];
  std::vector<std::pair<uint32_t, DependencyKind>> bucketed(edges.size());
  {
    std::vector<uint32_t> fill(g.pred_begin.begin(), g.pred_begin.end() - 1);
    for (const Edge& e : edges) bucketed[fill[e.to]++] = {e.from, e.kind};
  }
  std::vector<Edge>().swap(edges);
  g.pred.reserve(bucketed.size());
  g.pred_kind.reserve(bucketed.size());
  uint32_t kept_begin = 0;
  for (uint32_t v = 0; v < n; ++v) {
    auto first = bucketed.begin() + g.pred_begin[v];
    auto last = bucketed.begin() + g.pred_begin[v + 1];
    std::sort(first, last);
    g.pred_begin[v] = kept_begin;
    for (auto it = first; it != last; ++it) {
      if (it != first && *it == *(it - 1)) continue;
      g.pred.push_back(it->first);
      g.pred_kind.push_back(it->second);
      ++g.edge_counts[static_cast<size_t>(it->second)];
      ++kept_begin;
    }
  }
  g.pred_begin[n] = kept_begin;
  return g;
}

std::shared_ptr<const DependencyGraph> DependencyGraphCache::Get(
    const Model& model, const Trace& trace, const Links& links,
    const TimingScope& scope) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<const DependencyGraph>& slot =
      graphs_[{scope.run, static_cast<int>(scope.clock)}];
  if (slot == nullptr) {
    slot = std::make_shared<const DependencyGraph>(
        BuildDependencyGraph(model, trace, links, scope));
  }
  return slot;
}

size_t DependencyGraphCache::MemoryUsage() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t bytes = 0;
  for (const auto& [key, g] : graphs_) {
    bytes += g->tasks.capacity() * sizeof(TaskId) +
             g->vertex_of_task.capacity() * sizeof(uint32_t) +
             g->pred_begin.capacity() * sizeof(uint32_t) +
             g->pred.capacity() * sizeof(uint32_t) +
             g->pred_kind.capacity() * sizeof(DependencyKind);
  }
  return bytes;
}

std::shared_ptr<const DependencyGraph> DependencyGraphOf(
    const Model& model, const Trace& trace, const Links& links,
    const TimingScope& scope, DependencyGraphCache* cache) {
  if (cache != nullptr) return cache->Get(model, trace, links, scope);
  return std::make_shared<const DependencyGraph>(
      BuildDependencyGraph(model, trace, links, scope));
}

std::vector<uint32_t> TopologicalOrder(const DependencyGraph& g,
                                       uint64_t* broken_edges) {
  const uint32_t n = static_cast<uint32_t>(g.vertex_count());
  std::vector<uint32_t> remaining(n);
  std::vector<uint32_t> succ_begin(n + 1, 0);
  for (uint32_t v = 0; v < n; ++v) {
    remaining[v] = g.pred_begin[v + 1] - g.pred_begin[v];
    for (uint32_t e = g.pred_begin[v]; e < g.pred_begin[v + 1]; ++e) {
      ++succ_begin[g.pred[e] + 1];
    }
  }
  for (uint32_t v = 0; v < n; ++v) succ_begin[v + 1] += succ_begin[v];
  std::vector<uint32_t> succ(g.pred.size());
  {
    std::vector<uint32_t> fill(succ_begin.begin(), succ_begin.end() - 1);
    for (uint32_t v = 0; v < n; ++v) {
      for (uint32_t e = g.pred_begin[v]; e < g.pred_begin[v + 1]; ++e) {
        succ[fill[g.pred[e]]++] = v;
      }
    }
  }
  std::vector<uint32_t> order;
  order.reserve(n);
  std::vector<bool> done(n, false);
  // Vertex index is start order: the smallest ready index first keeps the
  // order as close to time order as the edges allow.
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>>
      ready;
  for (uint32_t v = 0; v < n; ++v) {
    if (remaining[v] == 0) ready.push(v);
  }
  uint32_t earliest_unprocessed = 0;
  uint64_t broken = 0;
  while (order.size() < n) {
    if (ready.empty()) {
      while (done[earliest_unprocessed]) ++earliest_unprocessed;
      broken += remaining[earliest_unprocessed];
      remaining[earliest_unprocessed] = 0;
      ready.push(earliest_unprocessed);
    }
    uint32_t v = ready.top();
    ready.pop();
    if (done[v]) continue;
    done[v] = true;
    order.push_back(v);
    for (uint32_t i = succ_begin[v]; i < succ_begin[v + 1]; ++i) {
      uint32_t s = succ[i];
      if (done[s] || remaining[s] == 0) continue;
      if (--remaining[s] == 0) ready.push(s);
    }
  }
  if (broken_edges != nullptr) *broken_edges = broken;
  return order;
}

}  // namespace mi::analysis
