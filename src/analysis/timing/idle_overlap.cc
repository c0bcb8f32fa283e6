#include "analysis/timing/idle_overlap.h"

#include <algorithm>
#include <climits>
#include <map>

#include "analysis/timing/dependency_graph.h"

namespace mi::analysis {
namespace {

constexpr size_t kMaxExposedCopies = 20;

// Why a stream sat idle from `gap_start` until `after` began: the
// cross-track dependency of `after` released last, if it was released
// inside the gap.
void ClassifyGap(const Trace& trace, const TaskClock& clock,
                 const DependencyGraph& g, TaskId after, int64_t gap_start,
                 IdleGap* gap) {
  gap->reason = IdleReason::kOther;
  uint32_t v = g.vertex_of_task[after.value()];
  if (v == DependencyGraph::kNoVertex) return;
  int64_t latest = gap_start;
  for (uint32_t e = g.pred_begin[v]; e < g.pred_begin[v + 1]; ++e) {
    DependencyKind kind = g.pred_kind[e];
    if (kind == DependencyKind::kTrackOrder) continue;
    TaskId from = g.tasks[g.pred[e]];
    int64_t release = ReleaseTime(clock, from, after, kind);
    if (release <= latest) continue;
    latest = release;
    gap->cause = from;
    bool from_host = !IsDeviceTrack(trace, trace.task_track(from));
    gap->reason = kind == DependencyKind::kLaunch || from_host
                      ? IdleReason::kHost
                      : IdleReason::kOtherStream;
  }
}

}  // namespace

std::string_view IdleReasonName(IdleReason reason) {
  switch (reason) {
    case IdleReason::kHost:
      return "host";
    case IdleReason::kOtherStream:
      return "other_stream";
    case IdleReason::kOther:
      return "other";
  }
  return "other";
}

IdleOverlapReport ComputeIdleOverlap(const Model& model, const Trace& trace,
                                     const Links& links,
                                     const IdleOptions& options,
                                     DependencyGraphCache* graphs) {
  IdleOverlapReport report;
  report.scope = options.scope;
  report.gap_threshold_ns = options.gap_threshold_ns;
  TaskClock clock(trace, options.scope.clock);
  std::shared_ptr<const DependencyGraph> graph_holder =
      DependencyGraphOf(model, trace, links, options.scope, graphs);
  const DependencyGraph& graph = *graph_holder;

  // Execution tasks per track, in start order.
  std::vector<std::vector<TaskId>> by_track(trace.track_count());
  for (TaskId t : graph.tasks) {  // start order already
    if (IsExecutionKind(trace.task_kind(t))) {
      by_track[trace.task_track(t).value()].push_back(t);
    }
  }
  std::vector<IdleGap> gaps;
  for (uint32_t track = 0; track < trace.track_count(); ++track) {
    const std::vector<TaskId>& tasks = by_track[track];
    if (tasks.empty()) continue;
    StreamIdle s;
    s.track = TrackId(track);
    s.tasks = tasks.size();
    s.start_ns = clock.start(tasks.front());
    TaskId last = tasks.front();
    int64_t cursor = clock.end(last);
    // A stream inside a sync task (CANN's EVENT_WAIT, Notify Wait) waits on
    // an event of another stream: idle, not busy.
    auto add_ran = [&](TaskId t, int64_t ran) {
      (IsSyncTask(trace, t) ? s.idle_other_stream_ns : s.busy_ns) += ran;
    };
    add_ran(last, clock.duration(last));
    for (size_t i = 1; i < tasks.size(); ++i) {
      TaskId t = tasks[i];
      int64_t start = clock.start(t);
      if (start > cursor) {
        IdleGap gap;
        gap.track = s.track;
        gap.start_ns = cursor;
        gap.end_ns = start;
        gap.before = last;
        gap.after = t;
        ClassifyGap(trace, clock, graph, t, cursor, &gap);
        int64_t len = start - cursor;
        ++s.gaps;
        switch (gap.reason) {
          case IdleReason::kHost:
            s.idle_host_ns += len;
            break;
          case IdleReason::kOtherStream:
            s.idle_other_stream_ns += len;
            break;
          case IdleReason::kOther:
            s.idle_other_ns += len;
            break;
        }
        if (len >= options.gap_threshold_ns) gaps.push_back(gap);
      }
      int64_t end = clock.end(t);
      add_ran(t, std::max<int64_t>(0, end - std::max(start, cursor)));
      if (end >= cursor) {
        cursor = end;
        last = t;
      }
    }
    s.end_ns = cursor;
    s.idle_ns = s.end_ns - s.start_ns - s.busy_ns;
    report.streams.push_back(s);
  }
  report.gaps_over_threshold = gaps.size();
  std::stable_sort(gaps.begin(), gaps.end(),
                   [](const IdleGap& a, const IdleGap& b) {
                     return a.end_ns - a.start_ns > b.end_ns - b.start_ns;
                   });
  if (gaps.size() > options.max_gaps) gaps.resize(options.max_gaps);
  report.gaps = std::move(gaps);

  // Copy / compute overlap per device: (source, device index).
  struct DeviceTasks {
    std::string name;
    std::vector<std::pair<int64_t, int64_t>> compute;
    std::vector<TaskId> copies;
  };
  std::map<DeviceKey, DeviceTasks> devices;
  for (uint32_t track = 0; track < trace.track_count(); ++track) {
    const TrackInfo& info = trace.track(TrackId(track));
    if (info.kind != TrackKind::kDeviceStream || by_track[track].empty()) {
      continue;
    }
    DeviceTasks& d = devices[DeviceKeyOf(info)];
    if (d.name.empty()) d.name = DeviceIndexName(trace, TrackId(track));
    for (TaskId t : by_track[track]) {
      if (trace.task_kind(t) == TaskKind::kCompute) {
        d.compute.emplace_back(clock.start(t), clock.end(t));
      } else if (trace.task_kind(t) == TaskKind::kDataMovement) {
        d.copies.push_back(t);
      }
    }
  }
  for (auto& [key, d] : devices) {
    DeviceOverlap o;
    o.device = d.name;
    IntervalSet compute(std::move(d.compute));
    std::vector<std::pair<int64_t, int64_t>> copy_intervals;
    std::vector<std::pair<int64_t, TaskId>> exposed;
    for (TaskId t : d.copies) {
      copy_intervals.emplace_back(clock.start(t), clock.end(t));
      int64_t alone =
          clock.duration(t) - compute.Covered(clock.start(t), clock.end(t));
      if (alone > 0) exposed.emplace_back(alone, t);
    }
    IntervalSet copies(std::move(copy_intervals));
    o.compute_ns = compute.Total();
    o.data_movement_ns = copies.Total();
    o.overlap_ns = copies.Intersection(compute);
    o.overlap_share = o.data_movement_ns > 0
                          ? static_cast<double>(o.overlap_ns) /
                                static_cast<double>(o.data_movement_ns)
                          : 0;
    std::stable_sort(
        exposed.begin(), exposed.end(),
        [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t i = 0; i < exposed.size() && i < kMaxExposedCopies; ++i) {
      o.exposed_copies.push_back(exposed[i].second);
    }
    report.devices.push_back(std::move(o));
  }

  // Host synchronize calls (outermost only: a sync API nested in another
  // is the same wait). The device idle of a call counts only the streams
  // it waited for (HostSyncIndex: the stream or device the trace names,
  // else every device of the call's own source): another process's device
  // neither kept it waiting nor was drained by it.
  struct Timeline {
    IntervalSet busy;
    std::vector<std::pair<int64_t, TaskId>> by_start, by_end;
  };
  std::map<std::vector<TrackId>, Timeline> timelines;
  auto timeline_of = [&](std::vector<TrackId> streams) -> const Timeline& {
    auto it = timelines.find(streams);
    if (it != timelines.end()) return it->second;
    Timeline tl;
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (TrackId s : streams) {
      for (TaskId t : by_track[s.value()]) {
        busy.emplace_back(clock.start(t), clock.end(t));
        tl.by_start.emplace_back(clock.start(t), t);
        tl.by_end.emplace_back(clock.end(t), t);
      }
    }
    tl.busy = IntervalSet(std::move(busy));
    std::sort(tl.by_start.begin(), tl.by_start.end());
    std::sort(tl.by_end.begin(), tl.by_end.end());
    return timelines.emplace(std::move(streams), std::move(tl)).first->second;
  };
  HostSyncIndex sync_index(trace);
  std::vector<int64_t> covered_until(trace.track_count(), INT64_MIN);
  std::vector<SyncWait> waits;
  for (TaskId t : graph.tasks) {
    if (!IsHostSynchronizeCall(trace, t)) continue;
    uint32_t track = trace.task_track(t).value();
    if (clock.start(t) < covered_until[track]) continue;
    covered_until[track] = clock.end(t);
    ++report.sync_calls;
    report.sync_ns += clock.duration(t);
    const Timeline& tl =
        timeline_of(sync_index.Streams(sync_index.TargetsOf(t)));
    if (tl.busy.intervals().empty()) continue;
    SyncWait w;
    w.task = t;
    w.duration_ns = clock.duration(t);
    int64_t resume = tl.busy.NextBusyAtOrAfter(clock.end(t));
    if (resume == INT64_MAX) resume = clock.end(t);
    w.device_idle_ns =
        (resume - clock.start(t)) - tl.busy.Covered(clock.start(t), resume);
    auto before = std::upper_bound(
        tl.by_end.begin(), tl.by_end.end(),
        std::pair<int64_t, TaskId>(clock.end(t), TaskId(UINT32_MAX - 1)));
    if (before != tl.by_end.begin() && (before - 1)->first > clock.start(t)) {
      w.device_before = (before - 1)->second;
    }
    auto after =
        std::lower_bound(tl.by_start.begin(), tl.by_start.end(),
                         std::pair<int64_t, TaskId>(clock.end(t), TaskId(0)));
    if (after != tl.by_start.end()) w.device_after = after->second;
    report.sync_device_idle_ns += w.device_idle_ns;
    waits.push_back(w);
  }
  std::stable_sort(waits.begin(), waits.end(),
                   [](const SyncWait& a, const SyncWait& b) {
                     return a.device_idle_ns > b.device_idle_ns;
                   });
  if (waits.size() > options.max_sync_waits) {
    waits.resize(options.max_sync_waits);
  }
  report.sync_waits = std::move(waits);
  return report;
}

}  // namespace mi::analysis
