#pragma once

// Building blocks shared by the timing analyses (calibration, dependency
// graph, critical path, idle/overlap, timing rules): which clock to read,
// which tasks are in scope, which host call launched a device task, which
// host calls block on the device, and merged interval sets.

#include <compare>
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

// Sources (trace/trace.h SourceInfo): correlation ids, event ids, node
// executions and clocks are only comparable within one. A track without a
// source (traces built by hand, importers that name none) belongs to one
// unnamed source, kNoSource.
inline constexpr uint32_t kNoSource = UINT32_MAX;
inline uint32_t TrackSource(const Trace& trace, TrackId track) {
  SourceId s = trace.track_source(track);
  return s.valid() ? s.value() : kNoSource;
}
inline uint32_t TaskSource(const Trace& trace, TaskId t) {
  return TrackSource(trace, trace.task_track(t));
}

// A key for (source, id) hash maps: correlation and event ids are only
// unique within a source.
struct SourceIdKey {
  uint32_t source = kNoSource;
  int64_t id = 0;
  friend bool operator==(const SourceIdKey&, const SourceIdKey&) = default;
};
struct SourceIdKeyHash {
  size_t operator()(const SourceIdKey& k) const noexcept {
    return std::hash<int64_t>()(k.id) * 31 + k.source;
  }
};

// Tracks sharing one physical clock: the streams of one device (GPU global
// timer, NPU system counter), keyed by (source, device index). Two ranks'
// "device 0" are two devices; a process id never identifies a numbered
// device (ranks reuse them). A stream whose device the trace does not
// number (device -1: a generic trace's device process) is keyed by its
// process within its source, (source, pid), in a space apart from device
// indexes: two processes' unnumbered devices are never one clock.
struct DeviceKey {
  uint32_t source = kNoSource;
  // false: `id` is the device index; true: the device is unnumbered and
  // (`id`, `pid_label`) is its process (pid, StringId value of a string pid).
  bool by_process = false;
  int64_t id = -1;
  uint32_t pid_label = 0;
  friend auto operator<=>(const DeviceKey&, const DeviceKey&) = default;
};
DeviceKey DeviceKeyOf(const TrackInfo& track);

// A host call that blocks until device work finishes: cudaDeviceSynchronize,
// cudaStreamSynchronize, cudaEventSynchronize, aclrtSynchronizeStream,
// rtStreamSynchronize, hipDeviceSynchronize, ... (by name: "ynchronize").
bool IsHostSynchronizeCall(const Trace& trace, TaskId t);

// What a host synchronize call waits for, by its name: a whole device
// (cudaDeviceSynchronize, cudaCtxSynchronize, hipDeviceSynchronize,
// aclrtSynchronizeDevice), one stream (cudaStreamSynchronize,
// aclrtSynchronizeStream, rtStreamSynchronize), one event
// (cudaEventSynchronize, aclrtSynchronizeEvent), or something else.
enum class SyncKind : uint8_t { kDevice, kStream, kEvent, kOther };
SyncKind HostSyncKind(const Trace& trace, TaskId call);

// Kineto's cuda_sync records (Stream Sync, Context Sync, Event Sync, Stream
// Wait Event): CUPTI times them as the host API call they record and puts
// them on the device stream they concern, so they are not device work.
bool IsHostTimedSyncRecord(const Trace& trace, TaskId t);

// The device streams a host synchronize call waited for, within the call's
// own source: the stream the trace names (a Kineto cuda_sync "Stream Sync"
// record with the call's correlation id), the device it names ("Context
// Sync"), else every device stream of the source. `certain` says the set
// is what the call waited for: named by the trace, or a device synchronize
// in a source with a single device.
class HostSyncIndex {
 public:
  explicit HostSyncIndex(const Trace& trace);
  struct Targets {
    enum class Scope : uint8_t { kStream, kDevice, kSource };
    Scope scope = Scope::kSource;
    TrackId stream;    // kStream
    DeviceKey device;  // kDevice
    uint32_t source = kNoSource;
    bool certain = false;
  };
  Targets TargetsOf(TaskId call) const;
  // Whether device stream `track` is among the targets.
  bool Covers(const Targets& targets, TrackId track) const;
  // The device streams of the targets, in track order.
  std::vector<TrackId> Streams(const Targets& targets) const;

 private:
  const Trace& trace_;
  // (source, correlation) -> the cuda_sync record of that call.
  std::unordered_map<SourceIdKey, TaskId, SourceIdKeyHash> record_by_call_;
  std::unordered_map<uint32_t, std::vector<TrackId>> streams_by_source_;
  std::unordered_map<uint32_t, uint32_t> devices_by_source_;
};

// The host task that launched a device task: the importer's launch link
// (CANN Node@launch, flows), else the runtime call of the same source with
// the same correlation id on a host thread (Kineto cudaLaunchKernel), else
// the host op the linker named as parent. Invalid when unknown.
class LaunchIndex {
 public:
  explicit LaunchIndex(const Trace& trace);
  TaskId LaunchOf(TaskId device_task) const;
  // The runtime call of `source` with this correlation id, if any.
  TaskId RuntimeCall(uint32_t source, int64_t correlation) const;

 private:
  const Trace& trace_;
  std::unordered_map<SourceIdKey, TaskId, SourceIdKeyHash>
      runtime_by_correlation_;
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
