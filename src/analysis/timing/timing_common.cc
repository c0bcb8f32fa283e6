#include "analysis/timing/timing_common.h"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

namespace mi::analysis {

std::string_view ClockName(Clock clock) {
  return clock == Clock::kRaw ? "raw" : "calibrated";
}

DeviceKey DeviceKeyOf(const TrackInfo& track) {
  DeviceKey key;
  key.source = track.source.valid() ? track.source.value() : kNoSource;
  if (track.device >= 0) {
    key.id = track.device;
  } else {
    key.by_process = true;
    key.id = track.pid;
    key.pid_label = track.pid_label.value();
  }
  return key;
}

bool IsWorkTask(const Trace& trace, TaskId t) {
  if (trace.task_kind(t) == TaskKind::kAnnotation) return false;
  // On a device stream only kernels, copies and syncs are work; markers
  // such as CANN's PROFILING_ENABLE / PROFILING_DISABLE would chain the
  // start of the trace to its end.
  if (IsDeviceTrack(trace, trace.task_track(t))) {
    return IsExecutionKind(trace.task_kind(t)) &&
           !IsHostTimedSyncRecord(trace, t);
  }
  if (trace.task_kind(t) != TaskKind::kOther) return true;
  std::string_view category = trace.str(trace.task_category(t));
  return category != "python_function" && category != "cuda_profiler_range";
}

bool IsHostSynchronizeCall(const Trace& trace, TaskId t) {
  if (IsDeviceTrack(trace, trace.task_track(t))) return false;
  TaskKind kind = trace.task_kind(t);
  if (kind == TaskKind::kAnnotation || kind == TaskKind::kCompute ||
      kind == TaskKind::kDataMovement) {
    return false;
  }
  std::string_view name = trace.str(trace.task_name(t));
  return name.find("ynchronize") != std::string_view::npos;
}

SyncKind HostSyncKind(const Trace& trace, TaskId call) {
  std::string_view name = trace.str(trace.task_name(call));
  auto has = [&](std::string_view part) {
    return name.find(part) != std::string_view::npos;
  };
  if (has("DeviceSynchronize") || has("CtxSynchronize") ||
      has("ThreadSynchronize") || has("SynchronizeDevice") ||
      has("SynchronizeContext")) {
    return SyncKind::kDevice;
  }
  if (has("StreamSynchronize") || has("SynchronizeStream")) {
    return SyncKind::kStream;
  }
  if (has("EventSynchronize") || has("SynchronizeEvent")) {
    return SyncKind::kEvent;
  }
  return SyncKind::kOther;
}

bool IsHostTimedSyncRecord(const Trace& trace, TaskId t) {
  return IsDeviceTrack(trace, trace.task_track(t)) &&
         trace.str(trace.task_category(t)) == "cuda_sync";
}

HostSyncIndex::HostSyncIndex(const Trace& trace) : trace_(trace) {
  std::unordered_map<uint32_t, std::vector<DeviceKey>> devices;
  for (uint32_t i = 0; i < trace.track_count(); ++i) {
    const TrackInfo& info = trace.track(TrackId(i));
    if (info.kind != TrackKind::kDeviceStream) continue;
    DeviceKey key = DeviceKeyOf(info);
    streams_by_source_[key.source].push_back(TrackId(i));
    std::vector<DeviceKey>& list = devices[key.source];
    if (std::find(list.begin(), list.end(), key) == list.end()) {
      list.push_back(key);
    }
  }
  for (const auto& [source, list] : devices) {
    devices_by_source_[source] = static_cast<uint32_t>(list.size());
  }
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    if (trace.task_correlation(t) < 0 || !IsHostTimedSyncRecord(trace, t)) {
      continue;
    }
    std::string_view name = trace.str(trace.task_name(t));
    if (name != "Stream Sync" && name != "Context Sync") continue;
    record_by_call_.emplace(
        SourceIdKey{TaskSource(trace, t), trace.task_correlation(t)}, t);
  }
}

HostSyncIndex::Targets HostSyncIndex::TargetsOf(TaskId call) const {
  Targets targets;
  targets.source = TaskSource(trace_, call);
  if (trace_.task_correlation(call) >= 0 && !record_by_call_.empty()) {
    auto it = record_by_call_.find(
        SourceIdKey{targets.source, trace_.task_correlation(call)});
    if (it != record_by_call_.end()) {
      TrackId track = trace_.task_track(it->second);
      if (trace_.str(trace_.task_name(it->second)) == "Stream Sync") {
        targets.scope = Targets::Scope::kStream;
        targets.stream = track;
      } else {
        targets.scope = Targets::Scope::kDevice;
        targets.device = DeviceKeyOf(trace_.track(track));
      }
      targets.certain = true;
      return targets;
    }
  }
  auto devices = devices_by_source_.find(targets.source);
  targets.certain = HostSyncKind(trace_, call) == SyncKind::kDevice &&
                    devices != devices_by_source_.end() && devices->second == 1;
  return targets;
}

bool HostSyncIndex::Covers(const Targets& targets, TrackId track) const {
  const TrackInfo& info = trace_.track(track);
  if (info.kind != TrackKind::kDeviceStream) return false;
  switch (targets.scope) {
    case Targets::Scope::kStream:
      return track == targets.stream;
    case Targets::Scope::kDevice:
      return DeviceKeyOf(info) == targets.device;
    case Targets::Scope::kSource:
      return TrackSource(trace_, track) == targets.source;
  }
  return false;
}

std::vector<TrackId> HostSyncIndex::Streams(const Targets& targets) const {
  std::vector<TrackId> out;
  auto it = streams_by_source_.find(targets.source);
  if (it == streams_by_source_.end()) return out;
  for (TrackId track : it->second) {
    if (Covers(targets, track)) out.push_back(track);
  }
  return out;
}

LaunchIndex::LaunchIndex(const Trace& trace) : trace_(trace) {
  size_t runtime_calls = 0;
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    runtime_calls += trace.task_kind(TaskId(i)) == TaskKind::kRuntime;
  }
  runtime_by_correlation_.reserve(runtime_calls);
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    if (trace.task_kind(t) != TaskKind::kRuntime ||
        trace.task_correlation(t) < 0 ||
        IsDeviceTrack(trace, trace.task_track(t))) {
      continue;
    }
    runtime_by_correlation_.emplace(
        SourceIdKey{TaskSource(trace, t), trace.task_correlation(t)}, t);
  }
}

TaskId LaunchIndex::RuntimeCall(uint32_t source, int64_t correlation) const {
  if (correlation < 0) return TaskId::Invalid();
  auto it = runtime_by_correlation_.find(SourceIdKey{source, correlation});
  return it == runtime_by_correlation_.end() ? TaskId::Invalid() : it->second;
}

TaskId LaunchIndex::LaunchOf(TaskId t) const {
  if (trace_.task_launch(t).valid()) return trace_.task_launch(t);
  TaskId call = RuntimeCall(TaskSource(trace_, t), trace_.task_correlation(t));
  if (call.valid() && call != t) return call;
  TaskId parent = trace_.task_parent(t);
  if (parent.valid() && !IsDeviceTrack(trace_, trace_.task_track(parent))) {
    return parent;
  }
  return TaskId::Invalid();
}

IntervalSet::IntervalSet(std::vector<std::pair<int64_t, int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  for (const auto& [a, b] : intervals) {
    if (b <= a) continue;
    if (!merged_.empty() && a <= merged_.back().second) {
      merged_.back().second = std::max(merged_.back().second, b);
    } else {
      merged_.emplace_back(a, b);
    }
  }
  prefix_.reserve(merged_.size());
  int64_t sum = 0;
  for (const auto& [a, b] : merged_) {
    sum += b - a;
    prefix_.push_back(sum);
  }
}

int64_t IntervalSet::Covered(int64_t a, int64_t b) const {
  if (b <= a || merged_.empty()) return 0;
  // Covered length of (-inf, x).
  auto before = [this](int64_t x) -> int64_t {
    // First interval starting at or after x.
    auto it = std::lower_bound(merged_.begin(), merged_.end(), x,
                               [](const std::pair<int64_t, int64_t>& iv,
                                  int64_t v) { return iv.first < v; });
    size_t i = static_cast<size_t>(it - merged_.begin());
    int64_t sum = i == 0 ? 0 : prefix_[i - 1];
    if (i > 0 && merged_[i - 1].second > x) sum -= merged_[i - 1].second - x;
    return sum;
  };
  return before(b) - before(a);
}

int64_t IntervalSet::Intersection(const IntervalSet& other) const {
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < merged_.size() && j < other.merged_.size()) {
    int64_t a = std::max(merged_[i].first, other.merged_[j].first);
    int64_t b = std::min(merged_[i].second, other.merged_[j].second);
    if (b > a) total += b - a;
    if (merged_[i].second < other.merged_[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

int64_t IntervalSet::NextBusyAtOrAfter(int64_t t) const {
  auto it =
      std::upper_bound(merged_.begin(), merged_.end(), t,
                       [](int64_t v, const std::pair<int64_t, int64_t>& iv) {
                         return v < iv.second;
                       });
  if (it == merged_.end()) return INT64_MAX;
  return std::max(it->first, t);
}

}  // namespace mi::analysis
