#include "analysis/summary/summary.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

namespace mi::analysis {
namespace {

constexpr double kNsPerUs = 1000.0;

bool IsDataMovementOpType(std::string_view op) {
  return op == "MemcpyToHost" || op == "MemcpyFromHost" || op == "Memcpy" ||
         op == "MemcpyAsync";
}

// Union length of [starts[i], ends[i]) over `indices`.
int64_t UnionOfIntervals(const std::vector<int64_t>& starts,
                         const std::vector<int64_t>& ends,
                         std::vector<size_t> indices) {
  std::sort(indices.begin(), indices.end(),
            [&](size_t a, size_t b) { return starts[a] < starts[b]; });
  int64_t total = 0;
  int64_t cur_start = 0;
  int64_t cur_end = 0;
  bool open = false;
  for (size_t i : indices) {
    int64_t s = starts[i];
    int64_t e = ends[i];
    if (!open || s > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
      open = true;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

// Exclusive time of each interval [starts[i], ends[i]) on tracks[i]: its
// length minus the parts covered by intervals nested inside it. Ties in
// start put the longer first, then the longer original task (`order_hint`,
// so that a parent and a child clipped to the same range keep their roles).
std::vector<int64_t> SelfTimesOfIntervals(
    const std::vector<uint32_t>& tracks, const std::vector<int64_t>& starts,
    const std::vector<int64_t>& ends, const std::vector<int64_t>& order_hint) {
  std::vector<int64_t> self(starts.size());
  // Per track, walk intervals by start keeping a stack of open ancestors;
  // each interval's length is subtracted from its parent.
  std::map<uint32_t, std::vector<uint32_t>> by_track;
  for (uint32_t i = 0; i < starts.size(); ++i) {
    self[i] = ends[i] - starts[i];
    by_track[tracks[i]].push_back(i);
  }
  for (auto& [track, indices] : by_track) {
    std::stable_sort(indices.begin(), indices.end(),
                     [&](uint32_t a, uint32_t b) {
                       if (starts[a] != starts[b]) return starts[a] < starts[b];
                       int64_t la = ends[a] - starts[a];
                       int64_t lb = ends[b] - starts[b];
                       if (la != lb) return la > lb;
                       return order_hint[a] > order_hint[b];
                     });
    std::vector<uint32_t> stack;
    for (uint32_t i : indices) {
      int64_t start = starts[i];
      while (!stack.empty() && ends[stack.back()] <= start) stack.pop_back();
      if (!stack.empty()) {
        // Only the part of the child inside the parent is the parent's.
        int64_t inside = std::min(ends[i], ends[stack.back()]) - start;
        self[stack.back()] -= std::max<int64_t>(0, inside);
      }
      stack.push_back(i);
    }
  }
  for (int64_t& s : self) s = std::max<int64_t>(0, s);
  return self;
}

}  // namespace

int64_t UnionDuration(const Trace& trace, std::vector<TaskId> tasks) {
  std::vector<int64_t> starts, ends;
  std::vector<size_t> indices;
  for (TaskId t : tasks) {
    indices.push_back(starts.size());
    starts.push_back(trace.task_start_ns(t));
    ends.push_back(trace.task_end_ns(t));
  }
  return UnionOfIntervals(starts, ends, std::move(indices));
}

std::vector<int64_t> ComputeSelfTimes(const Trace& trace,
                                      const std::vector<TaskId>& tasks) {
  std::vector<uint32_t> tracks;
  std::vector<int64_t> starts, ends, durations;
  for (TaskId t : tasks) {
    tracks.push_back(trace.task_track(t).value());
    starts.push_back(trace.task_start_ns(t));
    ends.push_back(trace.task_end_ns(t));
    durations.push_back(trace.task_duration_ns(t));
  }
  return SelfTimesOfIntervals(tracks, starts, ends, durations);
}

SummaryReport Summarize(const Model& model, const Trace& trace,
                        const Links& links, const SummaryOptions& options) {
  SummaryReport report;
  report.has_trace = trace.task_count() > 0;
  report.has_graph = model.node_count() > 0;
  report.dialect = TraceDialects(trace);
  report.linked_tasks = links.linked_tasks;
  report.unlinked_tasks = links.unlinked_tasks;
  report.unlinked_without_node_name = links.unlinked_without_node_name;
  report.unlinked_unknown_node = links.unlinked_unknown_node;
  report.unlinked_ambiguous_node = links.unlinked_ambiguous_node;
  report.unlinked_no_graph = links.unlinked_no_graph;
  report.aligned_host_ops = links.aligned_host_ops;

  // Graph counts (top-level and nested graphs alike).
  GraphCounts& g = report.graph;
  for (uint32_t i = 0; i < model.node_count(); ++i) {
    NodeId n(i);
    bool framework = model.node_level(n) == LayerLevel::kFramework;
    (framework ? g.framework_nodes : g.compiled_nodes)++;
    NodeStatus status =
        i < links.status.size() ? links.status[i] : NodeStatus::kUnknown;
    if (status == NodeStatus::kFused) ++g.fused_framework_nodes;
    if (status == NodeStatus::kInserted) ++g.inserted_compiled_nodes;
    if (status == NodeStatus::kExecuted) ++g.executed_nodes;
    if (status == NodeStatus::kNotExecuted) ++g.not_executed_nodes;
  }
  g.folded_framework_nodes = links.folded.size();
  g.eliminated_framework_nodes = links.eliminated.size();
  g.unexplained_compiled_nodes = links.unexplained_compiled_nodes;

  // Task times in the requested clock; with a window, each task is clipped
  // to it.
  const bool calibrated = options.clock == TraceClock::kCalibrated;
  const bool windowed = options.has_window();
  auto start_of = [&](TaskId t) {
    return calibrated ? trace.task_calibrated_start_ns(t)
                      : trace.task_start_ns(t);
  };

  // Choose the basis: execution tasks, else host ops, else anything.
  std::vector<TaskId> tasks;
  auto select = [&](auto predicate) {
    tasks.clear();
    for (uint32_t i = 0; i < trace.task_count(); ++i) {
      TaskId t(i);
      if (options.run >= 0 &&
          trace.task_run(t) != static_cast<uint32_t>(options.run)) {
        continue;
      }
      if (!predicate(trace.task_kind(t))) continue;
      if (windowed) {
        // Overlap with [from, to); a zero-length task inside it counts.
        int64_t s = start_of(t);
        int64_t e = s + trace.task_duration_ns(t);
        bool overlaps = s == e ? s >= options.from_ns && s < options.to_ns
                               : s < options.to_ns && e > options.from_ns;
        if (!overlaps) continue;
      }
      tasks.push_back(t);
    }
  };
  bool use_self_time = false;
  select([](TaskKind k) { return IsExecutionKind(k); });
  report.basis = "execution tasks";
  if (tasks.empty()) {
    select([](TaskKind k) { return k == TaskKind::kHostOp; });
    report.basis = "host ops (self time)";
    use_self_time = true;
  }
  if (tasks.empty()) {
    select([](TaskKind k) { return k == TaskKind::kOther; });
    report.basis = "trace events (self time)";
  }
  if (tasks.empty()) report.basis = "none";
  std::vector<int64_t> begin_ns(tasks.size());
  std::vector<int64_t> end_ns(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    begin_ns[i] = start_of(tasks[i]);
    end_ns[i] = begin_ns[i] + trace.task_duration_ns(tasks[i]);
    if (windowed) {
      begin_ns[i] = std::clamp(begin_ns[i], options.from_ns, options.to_ns);
      end_ns[i] = std::clamp(end_ns[i], options.from_ns, options.to_ns);
    }
  }
  std::vector<int64_t> time(tasks.size());
  if (use_self_time || report.basis == "trace events (self time)") {
    std::vector<uint32_t> tracks(tasks.size());
    std::vector<int64_t> durations(tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i) {
      tracks[i] = trace.task_track(tasks[i]).value();
      durations[i] = trace.task_duration_ns(tasks[i]);
    }
    time = SelfTimesOfIntervals(tracks, begin_ns, end_ns, durations);
  } else {
    for (size_t i = 0; i < tasks.size(); ++i) {
      time[i] = end_ns[i] - begin_ns[i];
    }
  }
  report.tasks = tasks.size();

  // Per op type.
  struct Acc {
    std::string kind;
    uint64_t calls = 0;
    int64_t total_ns = 0;
    std::unordered_set<uint64_t> nodes;
  };
  std::map<std::string, Acc> by_op;
  struct NodeAcc {
    std::string name;
    std::string op_type;
    std::string status;
    int64_t node_id = -1;
    uint64_t calls = 0;
    int64_t total_ns = 0;
  };
  std::map<uint64_t, NodeAcc> by_node;
  int64_t total_ns = 0;
  // Syncs and waits are not work: they have rows of their own (kind sync)
  // and count in no op type's, node's, stream's or run's time, nor in the
  // total the shares are of.
  std::vector<bool> sync(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    sync[i] = IsSyncTask(trace, tasks[i]);
    if (sync[i]) ++report.sync_tasks;
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    TaskId t = tasks[i];
    TaskKind kind = trace.task_kind(t);
    NodeId node = trace.task_node(t);
    std::string op_type;
    if (sync[i]) {
      // A wait is its own kind, never the op whose launch it followed
      // (Kineto links an Event Sync to the aten::mm that issued it): one
      // [sync] row, or the task's own type (EVENT_WAIT) where its importer
      // classed it.
      const bool classed = trace.task_class(t) != StringPool::kEmpty;
      op_type = !classed ? std::string("[sync]")
                : trace.task_op_type(t) != StringPool::kEmpty
                    ? std::string(trace.str(trace.task_op_type(t)))
                    : std::string(trace.str(trace.task_name(t)));
      Acc& acc = by_op[op_type];
      acc.kind = std::string(kTaskClassSync);
      ++acc.calls;
      acc.total_ns += time[i];
      acc.nodes.insert((2ull << 32) | trace.task_name(t).value());
      continue;
    }
    if (kind == TaskKind::kHostOp) {
      // A host op is its own kind (aten::conv2d), linked or not.
      op_type = std::string(trace.str(trace.task_name(t)));
    } else if (trace.task_op_type(t) != StringPool::kEmpty) {
      op_type = std::string(trace.str(trace.task_op_type(t)));
    } else if (node.valid()) {
      op_type = std::string(model.str(model.node_op_type(node)));
    } else {
      op_type = std::string(trace.str(trace.task_name(t)));
    }
    std::string row_kind(TaskKindName(kind));
    std::string_view task_class = TaskClassOf(trace, t, op_type);
    if (!task_class.empty()) {
      // The class the task's importer gave it (trace/trace.h task_class;
      // CANN: the accelerator, layout conversions) is the row kind, and op
      // types stay apart (MEMCPY_ASYNC, SDMA, ...).
      row_kind = std::string(task_class);
    } else if (kind == TaskKind::kDataMovement ||
               IsDataMovementOpType(op_type)) {
      // Data movement is one row of its own, whatever launched it.
      op_type = "[data movement]";
      row_kind = "data_movement";
    }
    Acc& acc = by_op[op_type];
    acc.kind = row_kind;
    ++acc.calls;
    acc.total_ns += time[i];
    // Distinct nodes: the node id, else the node name, else the task name.
    uint64_t key;
    std::string display_name;
    if (node.valid()) {
      key = node.value();
      display_name = std::string(model.str(model.node_name(node)));
    } else if (trace.task_node_name(t) != StringPool::kEmpty) {
      key = (1ull << 32) | trace.task_node_name(t).value();
      display_name = std::string(trace.str(trace.task_node_name(t)));
    } else {
      key = (2ull << 32) | trace.task_name(t).value();
      display_name = std::string(trace.str(trace.task_name(t)));
    }
    acc.nodes.insert(key);
    NodeAcc& n = by_node[key];
    if (n.calls == 0) {
      n.name = display_name;
      // A node's row shows the node's op type (Conv), whatever ran for it.
      n.op_type = node.valid()
                      ? std::string(model.str(model.node_op_type(node)))
                      : op_type;
      n.node_id = node.valid() ? node.value() : -1;
      n.status = node.valid() && node.value() < links.status.size()
                     ? std::string(NodeStatusName(links.status[node.value()]))
                     : "unlinked";
    }
    ++n.calls;
    n.total_ns += time[i];
    total_ns += time[i];
  }
  report.total_us = total_ns / kNsPerUs;
  for (auto& [op, acc] : by_op) {
    OpTypeRow row;
    row.op_type = op;
    row.kind = acc.kind;
    row.nodes = acc.nodes.size();
    row.calls = acc.calls;
    row.total_us = acc.total_ns / kNsPerUs;
    row.average_us = acc.calls ? row.total_us / acc.calls : 0;
    // A wait is not part of the work total: its row has no share.
    row.share = total_ns > 0 && acc.kind != kTaskClassSync
                    ? static_cast<double>(acc.total_ns) / total_ns
                    : 0;
    report.op_types.push_back(std::move(row));
  }
  std::stable_sort(report.op_types.begin(), report.op_types.end(),
                   [](const OpTypeRow& a, const OpTypeRow& b) {
                     return a.total_us > b.total_us;
                   });
  std::vector<NodeRow> nodes;
  for (auto& [key, acc] : by_node) {
    NodeRow row;
    row.name = acc.name;
    row.op_type = acc.op_type;
    row.status = acc.status;
    row.node_id = acc.node_id;
    row.calls = acc.calls;
    row.total_us = acc.total_ns / kNsPerUs;
    row.average_us = acc.calls ? row.total_us / acc.calls : 0;
    row.share = total_ns > 0 ? static_cast<double>(acc.total_ns) / total_ns : 0;
    nodes.push_back(std::move(row));
  }
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](const NodeRow& a, const NodeRow& b) {
                     return a.total_us > b.total_us;
                   });
  if (options.top_nodes >= 0 &&
      nodes.size() > static_cast<size_t>(options.top_nodes)) {
    nodes.resize(options.top_nodes);
  }
  report.top_nodes = std::move(nodes);

  // Per stream: busy time is the union of intervals, so overlapping tasks
  // (e.g. programmatic dependent launch) are kept but counted once.
  std::map<uint32_t, std::vector<size_t>> by_track;
  for (size_t i = 0; i < tasks.size(); ++i) {
    by_track[trace.task_track(tasks[i]).value()].push_back(i);
  }
  for (auto& [track, indices] : by_track) {
    StreamRow row;
    row.stream_id = track;
    // "stream 7 (python3 (GPU 0))"; "rank 1 · GPU 0 · stream 7" when
    // several sources are loaded.
    row.name = TrackName(trace, TrackId(track));
    row.kind = std::string(TrackKindName(trace.track(TrackId(track)).kind));
    row.tasks = indices.size();
    int64_t first = INT64_MAX;
    int64_t last = INT64_MIN;
    int64_t sum = 0;
    for (size_t i : indices) {
      if (!sync[i]) sum += time[i];
      first = std::min(first, begin_ns[i]);
      last = std::max(last, end_ns[i]);
    }
    row.total_us = sum / kNsPerUs;
    std::vector<size_t> work;
    for (size_t i : indices) {
      if (!sync[i]) work.push_back(i);
    }
    row.busy_us =
        UnionOfIntervals(begin_ns, end_ns, std::move(work)) / kNsPerUs;
    row.span_us = (last - first) / kNsPerUs;
    row.utilisation = row.span_us > 0 ? row.busy_us / row.span_us : 0;
    report.streams.push_back(std::move(row));
  }

  // Per run.
  std::vector<uint64_t> run_tasks(trace.runs().size(), 0);
  std::vector<int64_t> run_time(trace.runs().size(), 0);
  for (size_t i = 0; i < tasks.size(); ++i) {
    uint32_t r = trace.task_run(tasks[i]);
    if (r < run_tasks.size()) {
      ++run_tasks[r];
      if (!sync[i]) run_time[r] += time[i];
    }
  }
  for (uint32_t r = 0; r < trace.runs().size(); ++r) {
    if (options.run >= 0 && r != static_cast<uint32_t>(options.run)) continue;
    // A time range lists the runs it reaches into.
    if (windowed && run_tasks[r] == 0) continue;
    const RunInfo& info = trace.runs()[r];
    RunRow row;
    row.index = r;
    row.name = RunName(trace, r);
    row.start_us = info.start_ns / kNsPerUs;
    row.duration_us = (info.end_ns - info.start_ns) / kNsPerUs;
    row.tasks = run_tasks[r];
    row.task_time_us = run_time[r] / kNsPerUs;
    report.runs.push_back(std::move(row));
  }
  return report;
}

}  // namespace mi::analysis
