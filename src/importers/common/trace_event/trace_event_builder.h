#pragma once

// Maps parsed trace events onto the execution data model (trace/trace.h):
// tasks on tracks, runs, dialect. One builder per imported file. The mapping
// is decided per event from `cat`, `name` and `ph`, so it works whether the
// Kineto top-level keys come before or after traceEvents; the dialect label
// and the runs are settled in Finish(). See importers/chrome_trace/README.md
// for the table. A format that writes trace events with meanings of its own
// (the CANN timeline, importers/ascend_timeline) adds them through an
// Extension instead of a branch here.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "diag/diagnostic_codes.h"
#include "importers/common/trace_event/json_trace_parser.h"
#include "importers/common/trace_event/json_trace_tokenizer.h"
#include "importers/common/trace_event/trace_event_stats.h"
#include "trace/trace.h"

namespace mi::importers::trace_event {

inline size_t HashCombine(size_t seed, uint64_t value) {
  return seed ^ (std::hash<uint64_t>()(value) + 0x9e3779b97f4a7c15ULL +
                 (seed << 6) + (seed >> 2));
}

// A pid or tid as the builder keys it: a number, or the interned label of
// a string pid / tid.
struct IdKey {
  int64_t number = 0;
  uint32_t label = 0;  // StringId value of a string pid/tid, else 0
  bool operator==(const IdKey&) const = default;
};
struct IdPairHash {
  size_t operator()(const std::pair<IdKey, IdKey>& k) const;
};

class TraceEventBuilder {
 public:
  // Reports a recoverable problem located at the current event.
  class Reporter {
   public:
    virtual ~Reporter() = default;
    virtual void ReportAtCurrentEvent(DiagnosticCode code,
                                      std::string message) = 0;
    virtual void ReportAtEnd(DiagnosticCode code, std::string message) = 0;
  };

  // What a format adds to the generic mapping (one per imported file). The
  // builder calls it as events arrive and once at the end; it reads the
  // builder's state through the accessors below.
  class Extension {
   public:
    virtual ~Extension() = default;
    // A slice ('X' or 'B') without a category, about to become `row`: may
    // revise the row; false drops the event.
    virtual bool OnUncategorisedSlice(const ParsedEvent& event,
                                      TaskRow& row) = 0;
    // A flow start or end ('s' / 'f').
    virtual void OnFlowEvent(const ParsedEvent& event) = 0;
    // A host thread this file has not added a track for: the track of an
    // earlier file of the same source it continues, or Invalid for a new one.
    virtual TrackId ContinuedTrack(IdKey pid, IdKey tid) = 0;
    // Called at the end, after the metadata names are applied and before
    // stream waits and runs are settled. Returns the dialect this file
    // turned out to be ("ascend"), or empty when it is none of the
    // extension's; such a dialect's times are epoch times.
    virtual std::string_view Finish() = 0;
  };

  // Tracks are added to `source` (trace/trace.h SourceInfo); Finish() fills
  // its dialect, time base and rank.
  TraceEventBuilder(Trace* trace, SourceId source, ChromeTraceStats* stats,
                    Reporter* reporter);

  // Kineto's distributedInfo (world_size, pg_config): given to the source
  // at Finish() unless an earlier file of the source named them.
  struct ProcessGroupConfig {
    std::string name;         // pg_name
    std::string description;  // pg_desc
    std::vector<int32_t> ranks;
  };
  struct DistributedInfo {
    int64_t world_size = -1;
    std::vector<ProcessGroupConfig> groups;
  };
  void set_distributed_info(DistributedInfo info) {
    distributed_ = std::move(info);
  }

  void set_container(TraceContainer container) { container_ = container; }
  // Not owned; must outlive the builder's Finish().
  void set_extension(Extension* extension) { extension_ = extension; }
  void AddEvent(const ParsedEvent& event);
  // Closes open B slices, applies metadata names, adds runs and assigns
  // every task of this file to one, sets the dialect.
  void Finish();

  // For extensions.
  Trace& trace() { return *trace_; }
  SourceId source() const { return source_; }
  ChromeTraceStats& stats() { return *stats_; }
  Reporter& reporter() { return *reporter_; }
  // Tasks and tracks before these were added by earlier files.
  size_t first_task() const { return first_task_; }
  size_t first_track() const { return first_track_; }
  IdKey MakeIdKey(const EventThreadId& id);
  StringId Intern(std::string_view s) { return trace_->strings().Intern(s); }
  // The (pid, tid) of the first event on a track this file used; nullptr
  // for tracks it did not use.
  const std::pair<IdKey, IdKey>* ThreadOfTrack(TrackId track) const;
  // This file's process_name metadata (kEmpty when it names none), and all
  // of them.
  StringId FileProcessName(IdKey pid) const;
  const std::unordered_map<std::pair<IdKey, IdKey>, StringId, IdPairHash>&
  file_process_names() const {
    return process_names_;
  }
  // What the builder holds besides the trace (its maps, 'B' events waiting
  // for their 'E'), estimated for the memory budget.
  size_t MemoryUsage() const;

 private:
  struct TrackKey {
    TrackKind kind;
    IdKey a;  // host: pid; device: (device, 0), or the pid when by_pid
    IdKey b;  // host: tid; device: (stream, 0)
    // Device streams of an unknown device (generic Chrome traces): keyed by
    // the process, never by a device index, so a pid can never pose as one.
    bool by_pid = false;
    bool operator==(const TrackKey&) const = default;
  };
  struct TrackKeyHash {
    size_t operator()(const TrackKey& k) const;
  };
  struct RunMarker {
    int64_t start_ns;
    int64_t end_ns;
    StringId name;
    bool numbered;  // ORT model_run: named "model_run #k" in start order
  };
  struct OpenSlice {
    TaskRow row;
  };

  // Kineto cuda_sync "Stream Wait Event": the stream `track` waits for the
  // event the cudaEventRecord call `record_correlation` recorded on stream
  // `record_stream` (same device); `wait_correlation` is the
  // cudaStreamWaitEvent call's. Linked in LinkStreamWaits().
  struct StreamWait {
    TrackId track;
    int64_t record_stream;
    int64_t record_correlation;
    int64_t wait_correlation;
  };
  void LinkStreamWaits();

  // Collectives (trace/collectives.h): a record per NCCL kernel, with the
  // collective args of the kernel or, when it has none, of the
  // record_param_comms cpu_op with its External id; the groups they name.
  struct CommArgs {
    StringId collective;
    int64_t in_elements = -1;
    int64_t out_elements = -1;
    int64_t group_size = -1;
    StringId dtype;
    StringId group;
    StringId group_description;
    StringId group_ranks;
    int64_t seq = -1;
    bool any() const {
      return collective.valid() || in_elements >= 0 || out_elements >= 0 ||
             group.valid();
    }
  };
  CommArgs ReadCommArgs(const ParsedEvent& event);
  void AddNcclRecord(const ParsedEvent& event, TaskId task);
  void FinishCollectives();

  TrackId HostTrack(const ParsedEvent& event);
  // `ort_event`: an ONNX Runtime GPU event (its pid is the host's);
  // `kineto_event`: a Kineto GPU activity (its pid is the device index).
  TrackId DeviceTrack(const ParsedEvent& event, bool ort_event,
                      bool kineto_event);
  TrackId GetOrAddTrack(const TrackKey& key, const TrackInfo& info, IdKey pid,
                        IdKey tid);
  TaskId AddTask(TaskRow& row);
  void AddSliceEvent(const ParsedEvent& event, bool complete);
  void AddMetadata(const ParsedEvent& event);
  void AssignRuns();

  Trace* trace_;
  SourceId source_;
  ChromeTraceStats* stats_;
  Reporter* reporter_;
  Extension* extension_ = nullptr;
  TraceContainer container_ = TraceContainer::kUnknown;
  size_t first_task_ = 0;

  std::unordered_map<TrackKey, TrackId, TrackKeyHash> tracks_;
  TrackKey last_track_key_{};
  TrackId last_track_;
  // Per track: the (pid, tid) of its first event, to apply metadata.
  std::unordered_map<uint32_t, std::pair<IdKey, IdKey>> track_thread_keys_;
  // Open 'B' slices per (pid, tid): B/E nest per thread.
  std::unordered_map<std::pair<IdKey, IdKey>, std::vector<OpenSlice>,
                     IdPairHash>
      open_slices_;
  std::vector<RunMarker> run_markers_;
  std::unordered_map<std::pair<IdKey, IdKey>, StringId, IdPairHash>
      thread_names_;
  std::unordered_map<std::pair<IdKey, IdKey>, StringId, IdPairHash>
      process_names_;  // second element unused
  std::unordered_map<std::pair<IdKey, IdKey>, std::string, IdPairHash>
      process_labels_;
  int64_t max_ts_ns_ = INT64_MIN;
  uint64_t ort_events_ = 0;
  uint64_t kineto_events_ = 0;
  // Events of the legacy autograd profiler (no categories): PyTorch, but
  // times relative to the profiler's start, not the epoch.
  uint64_t legacy_events_ = 0;
  std::vector<StreamWait> stream_waits_;
  DistributedInfo distributed_;
  size_t first_collective_ = 0;
  // record_param_comms args by External id (one per collective call).
  std::unordered_map<int64_t, CommArgs> param_comms_;
  // Args of this file's NCCL kernels, parallel to the collective records
  // from first_collective_ on (the group's description and ranks).
  std::vector<CommArgs> kernel_comm_args_;
  size_t open_slice_count_ = 0;  // over open_slices_
  size_t first_track_ = 0;
  StringId last_cat_text_id_;
  std::string last_cat_text_;
};

}  // namespace mi::importers::trace_event
