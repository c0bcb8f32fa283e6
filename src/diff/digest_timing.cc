// The timing half of a run's digest (docs/design/diff.md "Timing"): per run
// (iteration) of the trace, the wall time and, per op type, stream, node and
// unlinked task name, the time, the task count and the part of the time
// that overlapped work on another stream of the same device; and per stream
// pair of one device their overlap.
//
// Runs are the trace's runs (ProfilerStep#N, model_run), without the setup
// before the first one ("before ..."), as the step breakdown counts steady
// steps, and without runs that hold no task; with several sources (ranks)
// the k-th steady run of each source is run k of the digest. A trace
// without runs is one run, "whole trace".
// Times are on the calibrated clock. What counts is what the summary
// counts: execution tasks without syncs (kernels, copies, collectives; a
// task's duration), else host ops (self time), else any event (self time).

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/summary/summary.h"
#include "analysis/timing/timing_common.h"
#include "base/intervals.h"
#include "diff/diff_internal.h"

namespace mi::diff {
namespace {

using analysis::DeviceKey;

bool IsSetupRun(std::string_view name) { return name.starts_with("before "); }

// "ProfilerStep#3" -> "ProfilerStep", "model_run #2" -> "model_run".
std::string RunFamily(std::string_view name) {
  size_t hash = name.find('#');
  if (hash != std::string_view::npos) name = name.substr(0, hash);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  return std::string(name);
}

// What the summary calls a task's op type (analysis/summary/summary.cc):
// a host op's name, the type the trace gives, the linked node's, the name;
// data movement without a class of its own is one key.
std::string OpTypeKey(const Model& model, const Trace& trace, TaskId t) {
  const TaskKind kind = trace.task_kind(t);
  std::string op_type;
  if (kind == TaskKind::kHostOp) {
    op_type = std::string(trace.str(trace.task_name(t)));
  } else if (trace.task_op_type(t) != StringPool::kEmpty) {
    op_type = std::string(trace.str(trace.task_op_type(t)));
  } else if (trace.task_node(t).valid()) {
    op_type = std::string(model.str(model.node_op_type(trace.task_node(t))));
  } else {
    op_type = std::string(trace.str(trace.task_name(t)));
  }
  if (TaskClassOf(trace, t, op_type).empty() &&
      (kind == TaskKind::kDataMovement || op_type == "MemcpyToHost" ||
       op_type == "MemcpyFromHost" || op_type == "Memcpy" ||
       op_type == "MemcpyAsync")) {
    return "[data movement]";
  }
  return op_type;
}

// Per key, per run: time, overlapped time, tasks.
struct SeriesAcc {
  std::vector<int64_t> run_ns, overlapped_ns, count;
  void Init(size_t runs) {
    if (!run_ns.empty()) return;
    run_ns.assign(runs, 0);
    overlapped_ns.assign(runs, 0);
    count.assign(runs, 0);
  }
  void Add(size_t run, size_t runs, int64_t time, int64_t overlapped) {
    Init(runs);
    run_ns[run] += time;
    overlapped_ns[run] += overlapped;
    ++count[run];
  }
};

DigestSeries ToSeries(std::string key, SeriesAcc acc) {
  DigestSeries s;
  s.key = std::move(key);
  s.run_ns = std::move(acc.run_ns);
  s.overlapped_ns = std::move(acc.overlapped_ns);
  s.count = std::move(acc.count);
  return s;
}

// Intervals covered by at least two of the given merged interval lists
// (one per stream): where some stream's work ran beside another's.
Intervals MultiBusy(const std::vector<const Intervals*>& streams) {
  std::vector<std::pair<int64_t, int>> edges;
  for (const Intervals* s : streams) {
    for (const auto& [a, b] : *s) {
      edges.emplace_back(a, +1);
      edges.emplace_back(b, -1);
    }
  }
  // Ends before starts at one instant: touching intervals do not overlap.
  std::sort(edges.begin(), edges.end());
  Intervals out;
  int depth = 0;
  int64_t open = 0;
  for (const auto& [t, d] : edges) {
    const int before = depth;
    depth += d;
    if (before < 2 && depth >= 2) open = t;
    if (before >= 2 && depth < 2 && t > open) out.emplace_back(open, t);
  }
  return out;
}

// The stream key: stable across two runs of a model, so never a process or
// thread id. Device streams: "device 0 · stream 7" (the device and stream
// numbers the trace gives). Host threads and other tracks: "host thread #k"
// (k-th by work time in the trace, 1 = the busiest; "the main thread" of a
// CPU run is #1 however the OS numbered it). With several sources the
// source's rank goes in front ("rank 1 · device 0 · stream 7"), or its
// place in load order ("source 2 · ...") when it names no rank.
std::vector<std::string> StreamKeys(const Trace& trace,
                                    const std::vector<int64_t>& track_work) {
  const size_t tracks = trace.track_count();
  std::vector<std::string> keys(tracks);
  std::map<uint32_t, std::vector<uint32_t>> host_by_source;
  for (uint32_t i = 0; i < tracks; ++i) {
    const TrackInfo& info = trace.track(TrackId(i));
    if (info.kind == TrackKind::kDeviceStream && info.stream >= 0) {
      keys[i] = info.device >= 0
                    ? "device " + std::to_string(info.device) +
                          " \u00b7 stream " + std::to_string(info.stream)
                    : "stream " + std::to_string(info.stream);
    } else if (info.kind == TrackKind::kDeviceStream) {
      keys[i] = TrackShortName(trace, TrackId(i));
    } else {
      host_by_source[analysis::TrackSource(trace, TrackId(i))].push_back(i);
    }
  }
  for (auto& [source, list] : host_by_source) {
    std::stable_sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      return track_work[a] > track_work[b];
    });
    for (size_t k = 0; k < list.size(); ++k) {
      keys[list[k]] = "host thread #" + std::to_string(k + 1);
    }
  }
  if (trace.sources_with_tracks() > 1) {
    for (uint32_t i = 0; i < tracks; ++i) {
      SourceId s = trace.track_source(TrackId(i));
      if (!s.valid()) continue;
      const int32_t rank = trace.source(s).rank;
      keys[i] = (rank >= 0 ? "rank " + std::to_string(rank)
                           : "source " + std::to_string(s.value() + 1)) +
                " \u00b7 " + keys[i];
    }
  }
  return keys;
}

}  // namespace

void DigestTiming(const analysis::AnalysisContext& run, RunDigest* digest) {
  if (!run.has_trace() || run.model == nullptr || run.links == nullptr) return;
  const Trace& trace = *run.trace;
  const Model& model = *run.model;
  const Links& links = *run.links;
  const analysis::TaskClock clock(trace, analysis::Clock::kCalibrated);

  // Digest runs: per source, its steady runs that hold tasks, in start
  // order.
  const auto& runs = trace.runs();
  std::vector<bool> has_tasks(runs.size(), false);
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    const uint32_t r = trace.task_run(TaskId(i));
    if (r < runs.size()) has_tasks[r] = true;
  }
  std::vector<int32_t> digest_run_of(runs.size(), -1);
  std::map<uint32_t, std::vector<uint32_t>> by_source;
  for (uint32_t r = 0; r < runs.size(); ++r) {
    if (IsSetupRun(trace.str(runs[r].name)) || !has_tasks[r]) continue;
    by_source[runs[r].source.valid() ? runs[r].source.value() : 0].push_back(r);
  }
  size_t run_count = 0;
  std::string family;
  for (auto& [source, list] : by_source) {
    std::stable_sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      return runs[a].start_ns < runs[b].start_ns;
    });
    for (size_t k = 0; k < list.size(); ++k) {
      digest_run_of[list[k]] = static_cast<int32_t>(k);
    }
    run_count = std::max(run_count, list.size());
    if (family.empty() && !list.empty()) {
      family = RunFamily(trace.str(runs[list.front()].name));
    }
  }
  const bool whole_trace = runs.empty();
  if (whole_trace) {
    run_count = 1;
    family = "whole trace";
  }
  if (run_count == 0) return;
  auto run_of = [&](TaskId t) -> int32_t {
    if (whole_trace) return 0;
    const uint32_t r = trace.task_run(t);
    return r < digest_run_of.size() ? digest_run_of[r] : -1;
  };

  // The basis, as the summary chooses it, restricted to the digest's runs.
  std::vector<TaskId> tasks;
  auto select = [&](auto predicate) {
    tasks.clear();
    for (uint32_t i = 0; i < trace.task_count(); ++i) {
      TaskId t(i);
      if (run_of(t) < 0 || !predicate(t)) continue;
      tasks.push_back(t);
    }
  };
  bool self_time = false;
  select([&](TaskId t) { return IsExecutionWork(trace, t); });
  if (tasks.empty()) {
    select([&](TaskId t) {
      return trace.task_kind(t) == TaskKind::kHostOp && !IsSyncTask(trace, t);
    });
    self_time = true;
  }
  if (tasks.empty()) {
    select([&](TaskId t) {
      return trace.task_kind(t) == TaskKind::kOther && !IsSyncTask(trace, t);
    });
  }
  std::vector<int64_t> time(tasks.size());
  if (self_time ||
      (!tasks.empty() && trace.task_kind(tasks[0]) == TaskKind::kOther)) {
    time = analysis::ComputeSelfTimes(trace, tasks);
  } else {
    for (size_t i = 0; i < tasks.size(); ++i) {
      time[i] = trace.task_duration_ns(tasks[i]);
    }
  }

  // Per run and track: the merged busy intervals.
  const size_t tracks = trace.track_count();
  std::vector<int64_t> track_work(tracks, 0);
  std::map<std::pair<int32_t, uint32_t>, Intervals> busy;  // (run, track)
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskId t = tasks[i];
    const uint32_t track = trace.task_track(t).value();
    track_work[track] += time[i];
    busy[{run_of(t), track}].emplace_back(clock.start(t), clock.end(t));
  }
  for (auto& [key, v] : busy) v = MergeIntervals(std::move(v));
  const std::vector<std::string> stream_keys = StreamKeys(trace, track_work);

  // Per run and device: where two or more of its streams were busy at once;
  // and the pairs of streams that overlapped.
  std::map<std::pair<int32_t, DeviceKey>, std::vector<uint32_t>> device_tracks;
  for (const auto& [key, v] : busy) {
    device_tracks[{key.first,
                   analysis::DeviceKeyOf(trace.track(TrackId(key.second)))}]
        .push_back(key.second);
  }
  std::map<std::pair<int32_t, DeviceKey>, Intervals> multi;
  std::map<std::pair<std::string, std::string>, std::vector<int64_t>> pairs;
  for (const auto& [key, list] : device_tracks) {
    if (list.size() < 2) continue;
    std::vector<const Intervals*> lists;
    for (uint32_t track : list) lists.push_back(&busy[{key.first, track}]);
    multi[key] = MultiBusy(lists);
    for (size_t a = 0; a < list.size(); ++a) {
      analysis::IntervalSet set_a(*lists[a]);
      for (size_t b = a + 1; b < list.size(); ++b) {
        const int64_t overlap =
            set_a.Intersection(analysis::IntervalSet(*lists[b]));
        if (overlap <= 0) continue;
        std::string ka = stream_keys[list[a]];
        std::string kb = stream_keys[list[b]];
        if (kb < ka) std::swap(ka, kb);
        std::vector<int64_t>& v = pairs[{ka, kb}];
        if (v.empty()) v.assign(run_count, 0);
        v[key.first] += overlap;
      }
    }
  }
  auto overlapped = [&](int32_t r, TaskId t, int64_t task_time) -> int64_t {
    auto it = multi.find(
        {r, analysis::DeviceKeyOf(trace.track(trace.task_track(t)))});
    if (it == multi.end()) return 0;
    return std::min(task_time,
                    CoveredIn(it->second, clock.start(t), clock.end(t)));
  };

  // Per task: its run and overlapped time; op types and unlinked names.
  std::vector<int64_t> task_overlap(tasks.size());
  std::vector<int32_t> task_run(tasks.size());
  std::vector<int32_t> index_of(trace.task_count(), -1);
  std::map<std::string, SeriesAcc> op_types;
  std::map<std::string, SeriesAcc> unlinked;
  SeriesAcc total;
  total.Init(run_count);
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskId t = tasks[i];
    const int32_t r = run_of(t);
    task_run[i] = r;
    index_of[t.value()] = static_cast<int32_t>(i);
    task_overlap[i] = overlapped(r, t, time[i]);
    op_types[OpTypeKey(model, trace, t)].Add(r, run_count, time[i],
                                             task_overlap[i]);
    if (!trace.task_node(t).valid()) {
      unlinked[std::string(trace.str(trace.task_name(t)))].Add(
          r, run_count, time[i], task_overlap[i]);
    }
    ++total.count[r];
  }

  // Per stream: busy (union) time and the part of it beside other streams.
  std::map<std::string, SeriesAcc> streams;
  for (size_t i = 0; i < tasks.size(); ++i) {
    SeriesAcc& acc = streams[stream_keys[trace.task_track(tasks[i]).value()]];
    acc.Init(run_count);
    ++acc.count[task_run[i]];
  }
  for (const auto& [key, v] : busy) {
    SeriesAcc& acc = streams[stream_keys[key.second]];
    int64_t length = 0;
    for (const auto& [a, b] : v) length += b - a;
    acc.run_ns[key.first] += length;
    auto it = multi.find(
        {key.first, analysis::DeviceKeyOf(trace.track(TrackId(key.second)))});
    if (it == multi.end()) continue;
    for (const auto& [a, b] : v) {
      acc.overlapped_ns[key.first] += CoveredIn(it->second, a, b);
    }
  }

  // Total: per run, first work task start to last work task end (host work
  // included: the data loading and launches of a step are part of it); the
  // overlapped time is where two streams of a device ran at once.
  std::vector<int64_t> first(run_count, INT64_MAX);
  std::vector<int64_t> last(run_count, INT64_MIN);
  // Per source separately: sources (ranks) do not share a clock.
  std::map<std::pair<uint32_t, int32_t>, std::pair<int64_t, int64_t>> extent;
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    const int32_t r = run_of(t);
    if (r < 0 || !analysis::IsWorkTask(trace, t)) continue;
    auto [it, added] =
        extent.try_emplace({analysis::TaskSource(trace, t), r},
                           std::pair<int64_t, int64_t>{INT64_MAX, INT64_MIN});
    it->second.first = std::min(it->second.first, clock.start(t));
    it->second.second = std::max(it->second.second, clock.end(t));
  }
  for (const auto& [key, span] : extent) {
    // The slowest source's span is the run's wall time.
    total.run_ns[key.second] =
        std::max(total.run_ns[key.second], span.second - span.first);
  }
  for (const auto& [key, v] : multi) {
    for (const auto& [a, b] : v) total.overlapped_ns[key.first] += b - a;
  }

  digest->runs_from = family;
  digest->run_count = static_cast<int64_t>(run_count);
  digest->total = ToSeries("total", std::move(total));
  digest->op_types.clear();
  for (auto& [key, acc] : op_types) {
    digest->op_types.push_back(ToSeries(key, std::move(acc)));
  }
  digest->streams.clear();
  for (auto& [key, acc] : streams) {
    digest->streams.push_back(ToSeries(key, std::move(acc)));
  }
  digest->unlinked_tasks.clear();
  for (auto& [key, acc] : unlinked) {
    digest->unlinked_tasks.push_back(ToSeries(key, std::move(acc)));
  }
  digest->stream_pairs.clear();
  for (auto& [key, v] : pairs) {
    DigestStreamPair p;
    p.stream_a = key.first;
    p.stream_b = key.second;
    p.overlap_ns = std::move(v);
    digest->stream_pairs.push_back(std::move(p));
  }

  // Nodes: the node's linked tasks (links' mapped tasks) that are counted.
  // A task that executed several nodes of one level (a fused group seen
  // from the framework level) is shared evenly among them, so that a
  // level's node times add up to its tasks' time and a fusion undone shows
  // as time moving between nodes, not as time appearing.
  auto node_of = [&](const DigestNode& node) -> NodeId {
    if (node.node_id < 0 ||
        static_cast<size_t>(node.node_id) >= model.node_count()) {
      return NodeId();
    }
    return NodeId(static_cast<uint32_t>(node.node_id));
  };
  std::vector<int32_t> sharers(tasks.size(), 0);
  for (DigestLevel& level : digest->levels) {
    std::fill(sharers.begin(), sharers.end(), 0);
    for (const DigestNode& node : level.nodes) {
      const NodeId n = node_of(node);
      if (!n.valid()) continue;
      for (TaskId t : links.mapped_tasks.Get(n)) {
        if (t.value() < index_of.size() && index_of[t.value()] >= 0) {
          ++sharers[index_of[t.value()]];
        }
      }
    }
    for (DigestNode& node : level.nodes) {
      const NodeId n = node_of(node);
      if (!n.valid()) continue;
      std::vector<int64_t> run_ns(run_count, 0);
      std::vector<int64_t> over_ns(run_count, 0);
      std::vector<std::string> keys;
      bool any = false;
      for (TaskId t : links.mapped_tasks.Get(n)) {
        if (t.value() >= index_of.size()) continue;
        const int32_t i = index_of[t.value()];
        if (i < 0) continue;
        any = true;
        run_ns[task_run[i]] += time[i] / sharers[i];
        over_ns[task_run[i]] += task_overlap[i] / sharers[i];
        keys.push_back(stream_keys[trace.task_track(t).value()]);
      }
      if (!any) continue;
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      node.run_ns = std::move(run_ns);
      node.overlapped_ns = std::move(over_ns);
      node.streams = std::move(keys);
    }
  }
}

}  // namespace mi::diff
