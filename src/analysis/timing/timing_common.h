#pragma once

// Building blocks shared by the timing analyses (calibration, dependency
// graph, critical path, idle/overlap, timing rules): which clock to read,
// which tasks are in scope, which host call launched a device task, which
// host calls block on the device, and merged interval sets.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model_inspector/summary.h"
#include "trace/trace.h"

namespace mi::analysis {

// Raw times as the source wrote them, or raw + the track's clock offset:
// the public TraceClock (summary.h), one enum for every front end.
using Clock = TraceClock;
std::string_view ClockName(Clock clock);

// What a timing analysis looks at: one run (Trace::runs index) or the whole
// trace (run < 0), on one clock.
struct TimingScope {
  int run = -1;
  Clock clock = Clock::kCalibrated;
};

// Task times on the chosen clock.
class TaskClock {
 public:
  TaskClock(const Trace& trace, Clock clock) : trace_(trace), clock_(clock) {}
  int64_t start(TaskId t) const {
    return clock_ == Clock::kRaw ? trace_.task_start_ns(t)
                                 : trace_.task_calibrated_start_ns(t);
  }
  int64_t end(TaskId t) const { return start(t) + trace_.task_duration_ns(t); }
  int64_t duration(TaskId t) const { return trace_.task_duration_ns(t); }

 private:
  const Trace& trace_;
  Clock clock_;
};

inline bool InScope(const Trace& trace, TaskId t, const TimingScope& scope) {
  return scope.run < 0 || trace.task_run(t) == static_cast<uint32_t>(scope.run);
}

// Annotations (ProfilerStep#N, user ranges, sessions), Python stack frames
// (Kineto python_function) and device-stream markers that are neither
// kernels, copies nor syncs group or label work but are not work: they
// never take part in dependencies (a frame spanning the whole run would
// otherwise be a path of one task).
bool IsWorkTask(const Trace& trace, TaskId t);

inline bool IsDeviceTrack(const Trace& trace, TrackId track) {
  return trace.track(track).kind == TrackKind::kDeviceStream;
}

// Tracks sharing one physical clock: the streams of one device (GPU global
// timer, NPU system counter). Device streams are keyed by device index,
// else by process id (Kineto and msprof give each device its own pid).
int64_t DeviceKey(const TrackInfo& track);

// "stream 7 (device 0)", "thread 1234", for messages.
std::string TrackLabel(const Trace& trace, TrackId track);

// A host call that blocks until device work finishes: cudaDeviceSynchronize,
// cudaStreamSynchronize, cudaEventSynchronize, aclrtSynchronizeStream,
// rtStreamSynchronize, hipDeviceSynchronize, ... (by name: "ynchronize").
bool IsHostSynchronizeCall(const Trace& trace, TaskId t);

// The host task that launched a device task: the importer's launch link
// (CANN Node@launch, flows), else the runtime call with the same
// correlation id on a host thread (Kineto cudaLaunchKernel), else the host
// op the linker named as parent. Invalid when unknown.
class LaunchIndex {
 public:
  explicit LaunchIndex(const Trace& trace);
  TaskId LaunchOf(TaskId device_task) const;

 private:
  const Trace& trace_;
  std::unordered_map<int64_t, TaskId> runtime_by_correlation_;
};

// Sorted, merged, half-open [start, end) intervals with prefix sums, for
// "how much of [a, b) is covered" queries in O(log n).
class IntervalSet {
 public:
  IntervalSet() = default;
  // Takes unsorted, possibly overlapping intervals.
  explicit IntervalSet(std::vector<std::pair<int64_t, int64_t>> intervals);
  int64_t Total() const { return prefix_.empty() ? 0 : prefix_.back(); }
  // Length of [a, b) covered by the set.
  int64_t Covered(int64_t a, int64_t b) const;
  // Length of the intersection with another set.
  int64_t Intersection(const IntervalSet& other) const;
  // Start of the first interval that ends after `t` (t itself when t is
  // inside one), or INT64_MAX.
  int64_t NextBusyAtOrAfter(int64_t t) const;
  std::span<const std::pair<int64_t, int64_t>> intervals() const {
    return merged_;
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> merged_;
  std::vector<int64_t> prefix_;  // prefix_[i] = covered length of 0..i
};

}  // namespace mi::analysis
