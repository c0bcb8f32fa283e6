#pragma once

// Idle and overlap figures of a run:
//  - per stream (every track running compute / copy / sync tasks): busy
//    time (union of its work tasks: a sync task, CANN's EVENT_WAIT, is
//    time the stream waited on another stream's event and counts as idle,
//    other_stream), idle gaps between tasks, and idle time broken down as
//    HTA does by what the next task waited for:
//      host: its launch reached the device after the stream went idle
//            (the host did not enqueue work fast enough);
//      other_stream: it waited on an event or data from a task on another
//            track that ended after the stream went idle;
//      other: neither (queueing overhead, unknown dependencies);
//    gaps at or above a threshold are listed;
//  - per device: copy/compute overlap (data movement time during which
//    some compute ran on the same device);
//  - host synchronize calls: how long each blocked the host, and how long
//    the devices sat idle from the call's start until device work resumed
//    after it (the pipeline drain a sync causes).

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/timing/dependency_graph.h"
#include "analysis/timing/timing_common.h"
#include "linker/links.h"
#include "model/model.h"
#include "trace/trace.h"

namespace mi::analysis {

struct IdleOptions {
  TimingScope scope;
  int64_t gap_threshold_ns = 100'000;  // list gaps of 100 us and more
  size_t max_gaps = 100;               // longest first
  size_t max_sync_waits = 100;         // most device idle first
};

enum class IdleReason : uint8_t { kHost, kOtherStream, kOther };
std::string_view IdleReasonName(IdleReason reason);

struct StreamIdle {
  TrackId track;
  uint64_t tasks = 0;
  int64_t start_ns = 0;  // first task start .. last task end
  int64_t end_ns = 0;
  int64_t busy_ns = 0;
  int64_t idle_ns = 0;  // end - start - busy
  int64_t idle_host_ns = 0;
  int64_t idle_other_stream_ns = 0;
  int64_t idle_other_ns = 0;
  uint64_t gaps = 0;
};

struct IdleGap {
  TrackId track;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  IdleReason reason = IdleReason::kOther;
  TaskId before;  // the task the stream finished
  TaskId after;   // the task that ended the gap
  TaskId cause;   // its late launch / the other track's task, if known
};

struct DeviceOverlap {
  std::string device;  // "device 0"
  int64_t compute_ns = 0;
  int64_t data_movement_ns = 0;
  int64_t overlap_ns = 0;    // data movement during compute
  double overlap_share = 0;  // overlap / data movement (0 without copies)
  // The copies that ran (partly) alone, longest exposed time first.
  std::vector<TaskId> exposed_copies;
};

struct SyncWait {
  TaskId task;
  int64_t duration_ns = 0;
  // Device idle (no device stream busy) between the call's start and the
  // first device task after its end.
  int64_t device_idle_ns = 0;
  TaskId device_before;  // last device task that ended in the call
  TaskId device_after;   // first device task after it
};

struct IdleOverlapReport {
  TimingScope scope;
  int64_t gap_threshold_ns = 0;
  std::vector<StreamIdle> streams;
  std::vector<IdleGap> gaps;  // at or above the threshold, longest first
  uint64_t gaps_over_threshold = 0;
  std::vector<DeviceOverlap> devices;
  uint64_t sync_calls = 0;
  int64_t sync_ns = 0;
  int64_t sync_device_idle_ns = 0;
  std::vector<SyncWait> sync_waits;  // most device idle first
};

// `graphs`: the run's cache of dependency graphs (null: built here).
IdleOverlapReport ComputeIdleOverlap(const Model& model, const Trace& trace,
                                     const Links& links,
                                     const IdleOptions& options,
                                     DependencyGraphCache* graphs = nullptr);

}  // namespace mi::analysis
