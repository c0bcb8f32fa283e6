#pragma once

// The execution data model: tasks (kernels, copies, syncs, host ops) on
// tracks (device streams, host threads), and runs (iterations). Columnar:
// one vector per field, ~90 bytes per task. Times are int64 nanoseconds
// relative to the source's own base (never absolute-epoch doubles, which
// lose precision). Calibration is a per-track offset: calibrated time =
// raw time + track clock offset, so both are always available.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/ids.h"
#include "base/string_pool.h"
#include "trace/allocator_records.h"
#include "trace/collectives.h"
#include "trace/profile_tables.h"

namespace mi {

enum class TaskKind : uint8_t {
  kCompute,       // a kernel / an operator's execution on a device or EP
  kDataMovement,  // H2D/D2H/D2D copies, memset
  kSync,          // synchronisation, event waits
  kHostOp,        // framework op on a host thread (cpu_op)
  kRuntime,       // runtime API call (cudaLaunchKernel, ...)
  kAnnotation,    // user ranges, ProfilerStep#N, sessions
  kOverhead,      // runtime bookkeeping around kernels (ORT fences)
  kOther,
};
std::string_view TaskKindName(TaskKind kind);
// Tasks that make up "where the time went" on the execution side.
inline bool IsExecutionKind(TaskKind k) {
  return k == TaskKind::kCompute || k == TaskKind::kDataMovement ||
         k == TaskKind::kSync;
}

enum class TrackKind : uint8_t { kDeviceStream, kHostThread, kOther };
std::string_view TrackKindName(TrackKind kind);

// What time 0 of a source's raw clock is.
enum class TimeBase : uint8_t {
  kUnknown,
  kEpoch,         // Unix epoch (Kineto, msprof, torch_npu)
  kSessionStart,  // the profiled session's start (ONNX Runtime)
};
std::string_view TimeBaseName(TimeBase base);

// One profiled run of one process (a rank): everything whose ids and clocks
// were assigned by one profiler instance. Correlation / External / flow /
// event ids, host clocks and the dialect are per source; two sources never
// share them, even when their numbers collide. A source is one trace file,
// or the files of one profiler output folder read together (an Ascend
// run's timeline slices and CSVs), grouped by `key`.
struct SourceInfo {
  // What groups files into this source: the file path, or the profiler
  // output folder. Unique per source.
  StringId key = StringPool::kEmpty;
  // The files read into it, in load order.
  std::vector<StringId> files;
  // Where the trace came from: "onnxruntime", "pytorch", "ascend",
  // "chrome" (empty until an importer knows).
  StringId dialect = StringPool::kEmpty;
  // Distributed rank when the source says (Kineto distributedInfo.rank,
  // torch_npu profiler_info_<rank>.json), else -1.
  int32_t rank = -1;
  // Ranks in the job when the source says (Kineto distributedInfo.world_size,
  // torch_npu distributed_args.world_size), else -1.
  int32_t world_size = -1;
  // Process groups (communicators) the source describes (collectives.h).
  std::vector<ProcessGroupInfo> process_groups;
  // Host name when the source says, else empty (none of the formats read
  // today names the host in its trace files).
  StringId host = StringPool::kEmpty;
  TimeBase time_base = TimeBase::kUnknown;
  // Raw time 0 in `time_base`, in ns: Kineto writes ts relative to its
  // baseTimeNanoseconds; 0 when the times count from the base itself.
  int64_t base_ns = 0;
  // Task classes (TaskRow::task_class) by op type, filled by the importer
  // for op types whose class its format knows (CANN: TransData ->
  // layout_conversion): they apply whatever gave the task its op type, the
  // task itself or the graph node it linked to (TaskClassOf).
  std::vector<std::pair<StringId, StringId>> op_type_classes;
};

// Task classes the analyses read (TaskRow::task_class); importers may use
// others (the CANN accelerators ai_core, ai_vector, ai_cpu, dsa).
inline constexpr std::string_view kTaskClassLayoutConversion =
    "layout_conversion";
inline constexpr std::string_view kTaskClassCommunication = "communication";
inline constexpr std::string_view kTaskClassDataMovement = "data_movement";
inline constexpr std::string_view kTaskClassSync = "sync";

struct TrackInfo {
  TrackKind kind = TrackKind::kOther;
  // The source the track belongs to: pid, tid, device and stream numbers
  // are only unique within it.
  SourceId source;
  int64_t pid = 0;
  int64_t tid = 0;
  // pid given as a string ("Spans"), else empty
  StringId pid_label = StringPool::kEmpty;
  // from process_name metadata
  StringId process_name = StringPool::kEmpty;
  // from thread_name metadata
  StringId thread_name = StringPool::kEmpty;
  int32_t device = -1;          // device index for device streams
  int64_t stream = -1;          // stream id for device streams
  int64_t clock_offset_ns = 0;  // clock calibration (0 until it runs)
};

// The values of one task, used to append rows.
struct TaskRow {
  // kernel name / event name
  StringId name = StringPool::kEmpty;
  // source category ("kernel", "Node", ...)
  StringId category = StringPool::kEmpty;
  TaskKind kind = TaskKind::kOther;
  TrackId track;
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  // op type when the source says (ORT op_name)
  StringId op_type = StringPool::kEmpty;
  // graph node the source names (ORT node name)
  StringId node_name = StringPool::kEmpty;
  int64_t correlation = -1;
  int64_t external_id = -1;
  // Cross-track event dependencies, ids local to the Trace (-1: none).
  // event_after: the task records event N when it ends (the last device
  // task enqueued on its stream before a cudaEventRecord). event_before:
  // the task cannot start before the latest earlier record of event N
  // ended (the first device task enqueued on a stream after a
  // cudaStreamWaitEvent). One id may be recorded many times (reused events)
  // and waited on by many tasks; consumers pair a wait with the latest
  // record of its id that started before it. Host-blocking waits
  // (cudaEventSynchronize) are not expressed here: the task whose start
  // depends on the record is what event_before names, never a call that
  // only ends after it. Filled by importers/chrome_trace from Kineto's
  // cuda_sync "Stream Wait Event" events (see its README).
  int32_t event_before = -1;  // event waited on before the task
  int32_t event_after = -1;   // event recorded after the task
  int64_t bytes = -1;         // copies: bytes moved
  // Input / output shapes as the source writes them (ORT input_type_shape
  // and output_type_shape, Kineto "Input Dims").
  StringId shapes = StringPool::kEmpty;
  StringId output_shapes = StringPool::kEmpty;
  uint32_t run = 0;  // run / iteration index (see Trace::runs)
  // How the task's importer classifies it for people, when its format says
  // more than the kind: the unit that ran it (CANN: ai_core, ai_vector,
  // ai_cpu, dsa, communication) or what it does when that is what users of
  // the format look for first (layout_conversion, data_movement, sync).
  // The summary's row kind; empty: the format says nothing (kind decides).
  StringId task_class = StringPool::kEmpty;
};

struct RunInfo {
  // "model_run", "ProfilerStep#3", "whole trace"
  StringId name = StringPool::kEmpty;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  // The source whose steps these are (two ranks each have a
  // "ProfilerStep#3"); Invalid for runs added by hand (tests).
  SourceId source;
};

class Trace {
 public:
  Trace() = default;
  explicit Trace(StringPool* strings) : strings_(strings) {}
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;
  Trace(Trace&&) = default;
  Trace& operator=(Trace&&) = default;

  StringPool& strings() const { return *strings_; }
  std::string_view str(StringId id) const { return strings_->Get(id); }

  // Whether an interned task name names a collective kernel or op (NCCL,
  // HCCL, hcom_*; IsCommunicationTask below), answered once per distinct
  // name: every analysis asks it of every task, and kernel names run to
  // hundreds of characters. Safe from several threads.
  bool IsCommunicationName(StringId name) const;

  // Sources (SourceInfo): FindOrAddSource returns the source with this key,
  // adding it when new. Every track belongs to one: AddTrack gives a track
  // without a source the unnamed default source (key empty), so traces
  // built by hand (tests) need not name one.
  SourceId FindOrAddSource(StringId key);

  size_t source_count() const { return sources_.size(); }
  const SourceInfo& source(SourceId s) const { return sources_[s.value()]; }
  SourceInfo& mutable_source(SourceId s) { return sources_[s.value()]; }
  SourceId track_source(TrackId t) const { return tracks_[t.value()].source; }
  SourceId task_source(TaskId t) const {
    return tracks_[track_[t.value()].value()].source;
  }
  // Tracks that belong to source `s`.
  uint32_t source_track_count(SourceId s) const {
    return source_tracks_[s.value()];
  }
  // Sources that own at least one track: with more than one, names for
  // people carry the source (TrackName, TrackGroupName below).
  size_t sources_with_tracks() const { return sources_with_tracks_; }

  TrackId AddTrack(const TrackInfo& info);
  size_t track_count() const { return tracks_.size(); }
  const TrackInfo& track(TrackId t) const { return tracks_[t.value()]; }
  TrackInfo& mutable_track(TrackId t) { return tracks_[t.value()]; }

  void Reserve(size_t tasks);
  TaskId AddTask(const TaskRow& row);
  size_t task_count() const { return start_ns_.size(); }

  StringId task_name(TaskId t) const { return name_[t.value()]; }
  StringId task_category(TaskId t) const { return category_[t.value()]; }
  TaskKind task_kind(TaskId t) const { return kind_[t.value()]; }
  TrackId task_track(TaskId t) const { return track_[t.value()]; }
  int64_t task_start_ns(TaskId t) const { return start_ns_[t.value()]; }
  int64_t task_duration_ns(TaskId t) const { return duration_ns_[t.value()]; }
  int64_t task_end_ns(TaskId t) const {
    return start_ns_[t.value()] + duration_ns_[t.value()];
  }
  int64_t task_calibrated_start_ns(TaskId t) const {
    return start_ns_[t.value()] +
           tracks_[track_[t.value()].value()].clock_offset_ns;
  }
  StringId task_op_type(TaskId t) const { return op_type_[t.value()]; }
  StringId task_node_name(TaskId t) const { return node_name_[t.value()]; }
  NodeId task_node(TaskId t) const { return op_node_[t.value()]; }
  int64_t task_correlation(TaskId t) const { return correlation_[t.value()]; }
  int64_t task_external_id(TaskId t) const { return external_id_[t.value()]; }
  int32_t task_event_before(TaskId t) const { return event_before_[t.value()]; }
  int32_t task_event_after(TaskId t) const { return event_after_[t.value()]; }
  int64_t task_bytes(TaskId t) const { return bytes_[t.value()]; }
  StringId task_shapes(TaskId t) const { return shapes_[t.value()]; }
  StringId task_output_shapes(TaskId t) const {
    return output_shapes_[t.value()];
  }
  StringId task_class(TaskId t) const { return class_[t.value()]; }
  uint32_t task_run(TaskId t) const { return run_[t.value()]; }
  // The host task that launched this one (Kineto: cpu_op of the runtime
  // call), set by the linker; Invalid when unknown.
  TaskId task_parent(TaskId t) const { return parent_[t.value()]; }
  // The host API call that launched this device task (CANN Node@launch /
  // AscendCL call, joined by a HostToDevice flow or connection_id), set by
  // the importer; Invalid when unknown.
  TaskId task_launch(TaskId t) const { return launch_[t.value()]; }

  void SetTaskNode(TaskId t, NodeId n) { op_node_[t.value()] = n; }
  void SetTaskOpType(TaskId t, StringId s) { op_type_[t.value()] = s; }
  void SetTaskParent(TaskId t, TaskId p) { parent_[t.value()] = p; }
  void SetTaskRun(TaskId t, uint32_t run) { run_[t.value()] = run; }
  void SetTaskLaunch(TaskId t, TaskId l) { launch_[t.value()] = l; }
  // Importers that learn a task's meaning only at the end of a file (the
  // Ascend dialect: processes are known from metadata) or from a second
  // file (CSV details joined onto timeline tasks) revise these.
  void SetTaskKind(TaskId t, TaskKind k) { kind_[t.value()] = k; }
  void SetTaskCategory(TaskId t, StringId s) { category_[t.value()] = s; }
  void SetTaskNodeName(TaskId t, StringId s) { node_name_[t.value()] = s; }
  void SetTaskCorrelation(TaskId t, int64_t c) { correlation_[t.value()] = c; }
  // Event links are known only once both ends of a wait were read (Kineto
  // writes device activities after host ones, in buffer order).
  void SetTaskEventBefore(TaskId t, int32_t e) { event_before_[t.value()] = e; }
  void SetTaskEventAfter(TaskId t, int32_t e) { event_after_[t.value()] = e; }
  void SetTaskExternalId(TaskId t, int64_t e) { external_id_[t.value()] = e; }
  void SetTaskShapes(TaskId t, StringId s) { shapes_[t.value()] = s; }
  void SetTaskOutputShapes(TaskId t, StringId s) {
    output_shapes_[t.value()] = s;
  }
  void SetTaskClass(TaskId t, StringId s) { class_[t.value()] = s; }

  uint32_t AddRun(const RunInfo& run);
  const std::vector<RunInfo>& runs() const { return runs_; }

  // Allocator data (allocator_records.h), for the memory analysis.
  void AddTaskMemory(const TaskMemoryRecord& r) { task_memory_.push_back(r); }
  const std::vector<TaskMemoryRecord>& task_memory() const {
    return task_memory_;
  }
  void AddAllocatorSample(const AllocatorSample& s) {
    allocator_samples_.push_back(s);
  }
  const std::vector<AllocatorSample>& allocator_samples() const {
    return allocator_samples_;
  }

  // Collectives and communication tables (collectives.h).
  const CommunicationTables& communication() const { return communication_; }
  CommunicationTables& mutable_communication() { return communication_; }

  // Profiler tables beside the tasks (profile_tables.h).
  const ProfileTables& profile_tables() const { return profile_tables_; }
  ProfileTables& mutable_profile_tables() { return profile_tables_; }

  size_t MemoryUsage() const;

 private:
  // IsCommunicationName's answers by StringId value (0 unknown, 1 no,
  // 2 yes), sized to the pool when first asked; later strings are answered
  // without the memo. Behind a pointer so that Trace stays movable.
  struct NameMemo {
    std::once_flag sized;
    std::unique_ptr<std::atomic<uint8_t>[]> flags;
    size_t size = 0;
  };
  std::unique_ptr<NameMemo> communication_names_ = std::make_unique<NameMemo>();

  StringPool* strings_ = nullptr;
  std::vector<SourceInfo> sources_;
  std::vector<uint32_t> source_tracks_;  // per source
  size_t sources_with_tracks_ = 0;
  std::vector<TrackInfo> tracks_;
  std::vector<RunInfo> runs_;

  std::vector<StringId> name_;
  std::vector<StringId> category_;
  std::vector<TaskKind> kind_;
  std::vector<TrackId> track_;
  std::vector<int64_t> start_ns_;
  std::vector<int64_t> duration_ns_;
  std::vector<StringId> op_type_;
  std::vector<StringId> node_name_;
  std::vector<NodeId> op_node_;
  std::vector<int64_t> correlation_;
  std::vector<int64_t> external_id_;
  std::vector<int32_t> event_before_;
  std::vector<int32_t> event_after_;
  std::vector<int64_t> bytes_;
  std::vector<StringId> shapes_;
  std::vector<StringId> output_shapes_;
  std::vector<StringId> class_;
  std::vector<uint32_t> run_;
  std::vector<TaskId> parent_;
  std::vector<TaskId> launch_;
  std::vector<TaskMemoryRecord> task_memory_;
  std::vector<AllocatorSample> allocator_samples_;
  ProfileTables profile_tables_;
  CommunicationTables communication_;
};

// Runtime calls (Kineto cudaLaunchKernel, CANN calls with a connection_id)
// by (source, correlation id): the call a device task's correlation names.
// Correlation ids are numbered per profiler process, so they are looked up
// within the task's source only. The first call with an id is kept.
class CorrelationIndex {
 public:
  explicit CorrelationIndex(const Trace& trace);
  // The runtime call with the correlation id of `task` in its source (never
  // `task` itself); Invalid when none or the task has no correlation id.
  TaskId RuntimeCallOf(TaskId task) const;

 private:
  struct Key {
    uint32_t source;
    int64_t correlation;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<int64_t>()(k.correlation) * 31 + k.source;
    }
  };
  const Trace& trace_;
  std::unordered_map<Key, TaskId, KeyHash> runtime_;
};

// The dialects of the trace's sources, distinct, in source order, joined by
// "," ("pytorch"; "onnxruntime,pytorch"); empty when no importer named one.
std::string TraceDialects(const Trace& trace);
// The dialect of the source task `t` belongs to ("ascend", ...).
std::string_view TaskDialect(const Trace& trace, TaskId t);

// The class of task `t` (TaskRow::task_class) when its op type is
// `op_type` (the task's own, or the op type of the node it linked to): the
// class its source gives that op type (SourceInfo::op_type_classes), else
// the task's own; empty when neither says.
std::string_view TaskClassOf(const Trace& trace, TaskId t,
                             std::string_view op_type);

// A collective communication task: one its importer classed as
// communication (CANN's HCCL tasks), one whose category says so
// ("communication", "hccl"), or by name an NCCL / HCCL kernel or an Ascend
// hcom_* op (Kineto gives NCCL kernels no class). The one rule every
// analysis uses (diagnosis, load balance, step breakdown).
bool IsCommunicationTask(const Trace& trace, TaskId t);

// A synchronisation or wait on a device stream: Kineto's cuda_sync records
// ("Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync"), CANN's
// EVENT_RECORD / EVENT_WAIT / Notify Wait / STREAM_WAIT tasks (kind sync or
// class sync), never a communication task. Time a stream spends waiting is
// not work: every analysis keeps it apart from compute and data movement
// (the summary's [sync] row, busy time, shares, critical path, step
// breakdown, load balance, diagnosis), whatever op launched the wait.
bool IsSyncTask(const Trace& trace, TaskId t);
// Work on a device or EP: an execution task (IsExecutionKind) that is not a
// sync (kernels, communication, copies, memsets).
bool IsExecutionWork(const Trace& trace, TaskId t);

// Names for people, shared by every report and view (summary stream rows,
// the timeline's tracks and groups, task details, dumps, the timing
// analyses' clock domains, devices and messages). With tracks of one source
// they are the names the trace itself gives; with tracks of several sources
// every name carries its source in front ("rank 1 · ..."), so that two
// ranks' "stream 7" on "GPU 0" never look alike.
//
// The source's name: "rank N" when the source says its rank (and no other
// source has the same rank), else the base name of its file or folder,
// extended by parent folders until it differs from every other source's.
std::string SourceName(const Trace& trace, SourceId source);
// "rank 1 · " with tracks of several sources, else "": what names of
// things that belong to one source (a device, a track) start with.
std::string SourcePrefix(const Trace& trace, SourceId source);
// A run's name for people: "ProfilerStep#3"; "rank 1 · ProfilerStep#3"
// with tracks of several sources.
std::string RunName(const Trace& trace, uint32_t run);
// The thread name the source gave, else "stream N" (device streams) or
// "thread N", without trailing blanks (Kineto writes "stream 7 "). Unique
// within its group (TrackGroupName), never across sources.
std::string TrackShortName(const Trace& trace, TrackId track);
// The process the track belongs to: its process name, else the string pid,
// else "device N" (device streams of a known device), else "pid N".
std::string TrackProcessName(const Trace& trace, TrackId track);
// The device a device stream belongs to, for people: "GPU N" (PyTorch and
// ONNX Runtime dialects), "device N" (others); empty when the device is
// unknown, the track is not a device stream, or the source is an Ascend
// one (its timeline numbers devices by process, not by device id: its
// tracks are named by their process, "Ascend Hardware (NPU)").
std::string TrackDeviceName(const Trace& trace, TrackId track);
// What a track is grouped under (the timeline's track groups): the process
// name, else the string pid, else "GPU N" (device streams of a known
// device), else "host pid N"; with several sources prefixed by the source
// ("rank 1 · python3 (GPU 0)").
std::string TrackGroupName(const Trace& trace, TrackId track);
// The full name of a track (summary stream rows, task details): with one
// source "stream 7 (python3 (GPU 0))" (short name and process); with
// several "rank 1 · GPU 0 · stream 7" (source, device or process, short
// name).
std::string TrackName(const Trace& trace, TrackId track);
// A track as the timing analyses' results and findings mention it: with
// one source "stream 7 (device 0)" (a device stream: its stream number and
// device index; "stream 7" when the device is unknown), the thread name the
// source gave, else "thread N"; with several sources its TrackName
// ("rank 1 · GPU 0 · stream 7"), as the summary's stream rows read.
std::string TrackMentionName(const Trace& trace, TrackId track);
// The device of a device stream by its index, whatever the dialect calls
// it (the timing analyses' clock domains and copy/compute overlap rows):
// "device 0"; "device (unknown)" when the trace does not number it, or
// "device (unknown, <process>)" when several processes of the source have
// unnumbered devices (each is a device of its own); with several sources
// after the source ("rank 1 · device 0").
std::string DeviceIndexName(const Trace& trace, TrackId track);
// A source's host clock (its host threads): "host"; with several sources
// "rank 0 · host".
std::string HostClockName(const Trace& trace, SourceId source);

}  // namespace mi
