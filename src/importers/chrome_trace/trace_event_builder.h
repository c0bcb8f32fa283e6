#pragma once

// Maps parsed trace events onto the execution data model (trace/trace.h):
// tasks on tracks, runs, dialect. One builder per imported file. The mapping
// is decided per event from `cat`, `name` and `ph`, so it works whether the
// Kineto top-level keys come before or after traceEvents; the dialect label
// and the runs are settled in Finish(). See README.md for the table.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "diag/diagnostic_codes.h"
#include "importers/chrome_trace/chrome_trace_importer.h"
#include "importers/chrome_trace/json_trace_parser.h"
#include "importers/chrome_trace/json_trace_tokenizer.h"
#include "trace/trace.h"

namespace mi::importers::chrome_trace {

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

  // Tracks are added to `source` (trace/trace.h SourceInfo); Finish() fills
  // its dialect, time base and rank.
  TraceEventBuilder(Trace* trace, SourceId source, ChromeTraceStats* stats,
                    Reporter* reporter);

  void set_container(TraceContainer container) { container_ = container; }
  void AddEvent(const ParsedEvent& event);
  // Closes open B slices, applies metadata names, adds runs and assigns
  // every task of this file to one, sets the dialect.
  void Finish();

 private:
  struct IdKey {
    int64_t number = 0;
    uint32_t label = 0;  // StringId value of a string pid/tid, else 0
    bool operator==(const IdKey&) const = default;
  };
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
  struct IdPairHash {
    size_t operator()(const std::pair<IdKey, IdKey>& k) const;
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

  // Ascend dialect (msprof_*.json, torch_npu trace_view.json): the meaning
  // of an event depends on its process, known from process_name metadata
  // that may come after the events, so tasks are revised in Finish().
  struct FlowEnd {
    StringId cat;
    StringId id;
    bool start;  // 's' (else 'f')
    IdKey pid;
    IdKey tid;
    int64_t ts_ns;
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
  void AddFlowEvent(const ParsedEvent& event);
  bool NoteAscendEvent(const ParsedEvent& event, TaskRow& row);
  void ApplyAscend();
  StringId ProcessNameOf(IdKey pid);
  TrackId EarlierSliceTrack(TrackKind kind, IdKey pid, IdKey tid);

  IdKey MakeIdKey(const EventThreadId& id);
  TrackId HostTrack(const ParsedEvent& event);
  // `ort_event`: an ONNX Runtime GPU event (its pid is the host's);
  // `kineto_event`: a Kineto GPU activity (its pid is the device index).
  TrackId DeviceTrack(const ParsedEvent& event, bool ort_event,
                      bool kineto_event);
  // Earlier files of this Trace that belong to the same source (the slices
  // of one msprof timeline): only their tracks and tasks are continued.
  bool SameSourceTrack(TrackId t) const {
    return trace_->track_source(t) == source_;
  }
  TrackId GetOrAddTrack(const TrackKey& key, const TrackInfo& info, IdKey pid,
                        IdKey tid);
  TaskId AddTask(TaskRow& row);
  void AddSliceEvent(const ParsedEvent& event, bool complete);
  void AddMetadata(const ParsedEvent& event);
  void AssignRuns();
  StringId Intern(std::string_view s) { return trace_->strings().Intern(s); }

  Trace* trace_;
  SourceId source_;
  ChromeTraceStats* stats_;
  Reporter* reporter_;
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
  uint64_t ascend_events_ = 0;
  std::vector<FlowEnd> flow_ends_;
  std::vector<StreamWait> stream_waits_;
  size_t first_track_ = 0;
  StringId last_cat_text_id_;
  std::string last_cat_text_;
};

}  // namespace mi::importers::chrome_trace
