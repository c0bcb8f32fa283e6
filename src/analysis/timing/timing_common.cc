#include "analysis/timing/timing_common.h"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

namespace mi::analysis {

std::string_view ClockName(Clock clock) {
  return clock == Clock::kRaw ? "raw" : "calibrated";
}

int64_t DeviceKey(const TrackInfo& track) {
  return track.device >= 0 ? track.device : track.pid;
}

bool IsWorkTask(const Trace& trace, TaskId t) {
  if (trace.task_kind(t) == TaskKind::kAnnotation) return false;
  // On a device stream only kernels, copies and syncs are work; markers
  // such as CANN's PROFILING_ENABLE / PROFILING_DISABLE would chain the
  // start of the trace to its end.
  if (IsDeviceTrack(trace, trace.task_track(t))) {
    return IsExecutionKind(trace.task_kind(t));
  }
  if (trace.task_kind(t) != TaskKind::kOther) return true;
  std::string_view category = trace.str(trace.task_category(t));
  return category != "python_function" && category != "cuda_profiler_range";
}

std::string TrackLabel(const Trace& trace, TrackId track) {
  const TrackInfo& info = trace.track(track);
  if (info.kind == TrackKind::kDeviceStream) {
    if (info.device >= 0) {
      return fmt::format("stream {} (device {})", info.stream, info.device);
    }
    return fmt::format("stream {}", info.stream);
  }
  std::string_view name = trace.str(info.thread_name);
  if (!name.empty()) return std::string(name);
  return fmt::format("thread {}", info.tid);
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

LaunchIndex::LaunchIndex(const Trace& trace) : trace_(trace) {
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    if (trace.task_kind(t) != TaskKind::kRuntime ||
        trace.task_correlation(t) < 0 ||
        IsDeviceTrack(trace, trace.task_track(t))) {
      continue;
    }
    runtime_by_correlation_.emplace(trace.task_correlation(t), t);
  }
}

TaskId LaunchIndex::LaunchOf(TaskId t) const {
  if (trace_.task_launch(t).valid()) return trace_.task_launch(t);
  if (trace_.task_correlation(t) >= 0) {
    auto it = runtime_by_correlation_.find(trace_.task_correlation(t));
    if (it != runtime_by_correlation_.end() && it->second != t) {
      return it->second;
    }
  }
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
