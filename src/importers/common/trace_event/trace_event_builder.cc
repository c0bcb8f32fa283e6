#include "importers/common/trace_event/trace_event_builder.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "base/strings.h"
#include "importers/common/collectives.h"

namespace mi::importers::trace_event {
namespace {

// How one complete event becomes a task.
struct Mapping {
  TaskKind kind = TaskKind::kOther;
  bool device_track = false;
  bool run_marker = false;
  bool ort_node = false;      // ORT Node event (host thread is its stream)
  bool ort_kernel = false;    // ORT kernel_time: node name + op type
  bool ort_event = false;     // counts towards the onnxruntime dialect
  bool kineto_event = false;  // counts towards the pytorch dialect
  bool legacy_event = false;  // legacy autograd profiler (no categories)
};

constexpr std::string_view kProfilerStepPrefix = "ProfilerStep#";

Mapping MapEvent(std::string_view cat, std::string_view name,
                 std::string_view pid_label, bool array_container) {
  Mapping m;
  const bool profiler_step = name.starts_with(kProfilerStepPrefix);
  if (cat.empty()) {
    // The legacy autograd profiler (torch.autograd.profiler's
    // export_chrome_trace, CPU-only runs of torch.profiler): no categories,
    // pid "CPU functions" / "CUDA functions".
    if (pid_label == "CUDA functions") {
      m.kind = TaskKind::kCompute;
      m.device_track = true;
      m.kineto_event = m.legacy_event = true;
      return m;
    }
    if (profiler_step || pid_label == "CPU functions" ||
        name.starts_with("aten::")) {
      m.kind = profiler_step ? TaskKind::kAnnotation : TaskKind::kHostOp;
      m.run_marker = profiler_step;
      m.kineto_event = m.legacy_event = true;
      return m;
    }
  }
  switch (cat.size()) {
    case 3:
      if (cat == "Api") {
        m.kind = TaskKind::kRuntime;
        m.ort_event = array_container;
        return m;
      }
      break;
    case 4:
      if (cat == "Node") {
        m.ort_event = m.ort_node = true;
        if (name.ends_with("_kernel_time")) {
          m.kind = TaskKind::kCompute;
          m.ort_kernel = true;
        } else if (name.ends_with("_fence_before") ||
                   name.ends_with("_fence_after")) {
          m.kind = TaskKind::kOverhead;
        }
        return m;
      }
      break;
    case 5:
      if (cat == "Trace") {
        m.kind = TaskKind::kAnnotation;
        m.kineto_event = true;
        return m;
      }
      break;
    case 6:
      if (cat == "cpu_op") {
        m.kind = profiler_step ? TaskKind::kAnnotation : TaskKind::kHostOp;
        m.run_marker = profiler_step;
        m.kineto_event = true;
        return m;
      }
      if (cat == "kernel" || cat == "Kernel") {
        m.kind = TaskKind::kCompute;
        m.device_track = true;
        m.kineto_event = cat == "kernel" || !array_container;
        m.ort_event = cat == "Kernel" && array_container;
        return m;
      }
      if (cat == "Memcpy" || cat == "Memset") {
        m.kind = TaskKind::kDataMovement;
        m.device_track = true;
        m.kineto_event = true;
        return m;
      }
      break;
    case 7:
      if (cat == "Session") {
        m.kind = TaskKind::kAnnotation;
        m.run_marker = name == "model_run";
        m.ort_event = true;
        return m;
      }
      if (cat == "Runtime") {
        m.kind = TaskKind::kRuntime;
        m.kineto_event = true;
        return m;
      }
      break;
    case 8:
      if (cat == "Operator") {
        m.kind = profiler_step ? TaskKind::kAnnotation : TaskKind::kHostOp;
        m.run_marker = profiler_step;
        m.kineto_event = true;
        return m;
      }
      if (cat == "overhead") {
        m.kind = TaskKind::kOverhead;
        m.kineto_event = true;
        return m;
      }
      break;
    default:
      break;
  }
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "xpu_runtime" ||
      cat == "privateuse1_runtime" || cat == "mtia_runtime" ||
      cat == "cuda_runtime_api") {
    m.kind = TaskKind::kRuntime;
    m.kineto_event = true;
    return m;
  }
  if (cat == "gpu_memcpy" || cat == "gpu_memset") {
    m.kind = TaskKind::kDataMovement;
    m.device_track = true;
    m.kineto_event = true;
    return m;
  }
  if (cat == "cuda_sync") {
    m.kind = TaskKind::kSync;
    m.device_track = true;
    m.kineto_event = true;
    return m;
  }
  if (cat == "user_annotation") {
    m.kind = TaskKind::kAnnotation;
    m.run_marker = profiler_step;
    m.kineto_event = true;
    return m;
  }
  if (cat == "gpu_user_annotation") {
    m.kind = TaskKind::kAnnotation;
    m.device_track = true;
    m.kineto_event = true;
    return m;
  }
  if (cat == "python_function" || cat == "cuda_profiler_range") {
    m.kind = TaskKind::kOther;
    m.kineto_event = true;
    return m;
  }
  // Generic Chrome trace: hints from the (comma-separated) category list.
  if (ContainsIgnoringCase(cat, "memcpy") ||
      ContainsIgnoringCase(cat, "memset")) {
    m.kind = TaskKind::kDataMovement;
    m.device_track = true;
  } else if (ContainsIgnoringCase(cat, "kernel") ||
             ContainsIgnoringCase(cat, "gpu")) {
    m.kind = TaskKind::kCompute;
    m.device_track = true;
  }
  return m;
}

// "stream 7 " -> 7 (Kineto thread labels of device streams).
int64_t TrailingInteger(std::string_view label) {
  label = TrimRight(label, " ");
  size_t end = label.size();
  size_t begin = end;
  while (begin > 0 && IsAsciiDigit(label[begin - 1])) --begin;
  if (begin == end || end - begin > 18) return -1;
  return ParseInteger<int64_t>(label.substr(begin)).value_or(-1);
}

}  // namespace

size_t TraceEventBuilder::TrackKeyHash::operator()(const TrackKey& k) const {
  size_t h = static_cast<size_t>(k.kind);
  h = HashCombine(h, static_cast<uint64_t>(k.a.number));
  h = HashCombine(h, k.a.label);
  h = HashCombine(h, static_cast<uint64_t>(k.b.number));
  h = HashCombine(h, k.b.label);
  return HashCombine(h, k.by_pid);
}

size_t IdPairHash::operator()(const std::pair<IdKey, IdKey>& k) const {
  size_t h = HashCombine(0, static_cast<uint64_t>(k.first.number));
  h = HashCombine(h, k.first.label);
  h = HashCombine(h, static_cast<uint64_t>(k.second.number));
  return HashCombine(h, k.second.label);
}

TraceEventBuilder::TraceEventBuilder(Trace* trace, SourceId source,
                                     ChromeTraceStats* stats,
                                     Reporter* reporter)
    : trace_(trace),
      source_(source),
      stats_(stats),
      reporter_(reporter),
      first_task_(trace->task_count()),
      first_collective_(trace->communication().collectives.size()),
      first_track_(trace->track_count()) {}

IdKey TraceEventBuilder::MakeIdKey(const EventThreadId& id) {
  IdKey key;
  if (!id.label.empty()) {
    key.label = Intern(id.label).value();
  } else {
    key.number = id.number;
  }
  return key;
}

TrackId TraceEventBuilder::GetOrAddTrack(const TrackKey& key,
                                         const TrackInfo& info, IdKey pid,
                                         IdKey tid) {
  if (last_track_.valid() && key == last_track_key_) return last_track_;
  auto [it, inserted] = tracks_.try_emplace(key, TrackId());
  if (inserted) {
    TrackId earlier =
        extension_ != nullptr && key.kind == TrackKind::kHostThread
            ? extension_->ContinuedTrack(pid, tid)
            : TrackId::Invalid();
    it->second = earlier.valid() ? earlier : trace_->AddTrack(info);
    track_thread_keys_[it->second.value()] = {pid, tid};
  }
  last_track_key_ = key;
  last_track_ = it->second;
  return it->second;
}

TrackId TraceEventBuilder::HostTrack(const ParsedEvent& event) {
  const EventThreadId& tid = event.tid.present ? event.tid : event.pid;
  TrackKey key{TrackKind::kHostThread, MakeIdKey(event.pid), MakeIdKey(tid)};
  TrackInfo info;
  info.kind = TrackKind::kHostThread;
  info.source = source_;
  info.pid = event.pid.number;
  info.tid = tid.number;
  if (!event.pid.label.empty()) info.pid_label = StringId(key.a.label);
  if (!tid.label.empty()) info.thread_name = StringId(key.b.label);
  return GetOrAddTrack(key, info, key.a, key.b);
}

TrackId TraceEventBuilder::DeviceTrack(const ParsedEvent& event, bool ort_event,
                                       bool kineto_event) {
  // The device: args.device when given. Else ORT's GPU events carry the
  // host pid (the session has one device) and the legacy profiler's
  // "CUDA functions" pid is a label: device 0. Kineto writes GPU activity
  // with pid = device index (traces.md 5.2), so there the pid is the
  // device. Any other trace's pid names a process: the device is unknown
  // and the track is keyed by that process, apart from device indexes.
  int64_t device = event.device;
  bool by_pid = false;
  if (device < 0) {
    if (ort_event || !event.pid.label.empty()) {
      device = 0;
    } else if (kineto_event) {
      device = event.pid.number;
    } else {
      by_pid = true;
    }
  }
  int64_t stream = event.stream;
  const EventThreadId& tid = event.tid.present ? event.tid : event.pid;
  if (stream < 0) {
    stream = tid.label.empty() ? tid.number : TrailingInteger(tid.label);
  }
  TrackKey key{TrackKind::kDeviceStream,
               by_pid ? MakeIdKey(event.pid) : IdKey{device, 0},
               IdKey{stream, 0}, by_pid};
  if (last_track_.valid() && key == last_track_key_) return last_track_;
  TrackInfo info;
  info.kind = TrackKind::kDeviceStream;
  info.source = source_;
  info.pid = event.pid.number;
  info.tid = tid.number;
  if (!event.pid.label.empty()) info.pid_label = Intern(event.pid.label);
  if (!tid.label.empty()) info.thread_name = Intern(tid.label);
  info.device =
      by_pid ? -1
             : static_cast<int32_t>(std::clamp<int64_t>(device, -1, INT32_MAX));
  info.stream = stream;
  return GetOrAddTrack(key, info, MakeIdKey(event.pid), MakeIdKey(tid));
}

TaskId TraceEventBuilder::AddTask(TaskRow& row) {
  if (row.duration_ns < 0) {
    reporter_->ReportAtCurrentEvent(DiagnosticCode::kNegativeDuration,
                                    "negative duration " +
                                        std::to_string(row.duration_ns) +
                                        " ns clamped to 0");
    row.duration_ns = 0;
  }
  TaskId id = trace_->AddTask(row);
  ++stats_->tasks;
  ++stats_->tasks_by_kind[static_cast<size_t>(row.kind)];
  return id;
}

void TraceEventBuilder::AddSliceEvent(const ParsedEvent& event, bool complete) {
  const bool array_container = container_ == TraceContainer::kArray;
  Mapping m = MapEvent(event.cat, event.name, event.pid.label, array_container);
  ort_events_ += m.ort_event;
  kineto_events_ += m.kineto_event;
  legacy_events_ += m.legacy_event;

  TaskRow row;
  row.name = Intern(event.name);
  if (m.ort_kernel && !event.provider.empty()) {
    std::string category(event.cat);
    category += '/';
    category += event.provider;
    row.category = Intern(category);
  } else if (event.cat == last_cat_text_ && last_cat_text_id_.valid()) {
    row.category = last_cat_text_id_;
  } else {
    row.category = Intern(event.cat);
    last_cat_text_.assign(event.cat);
    last_cat_text_id_ = row.category;
  }
  row.kind = m.kind;
  row.track = m.device_track ? DeviceTrack(event, m.ort_event, m.kineto_event)
                             : HostTrack(event);
  if (m.ort_node) {
    TrackInfo& info = trace_->mutable_track(row.track);
    if (info.stream < 0) info.stream = info.tid;
  }
  row.start_ns = event.ts_ns;
  row.duration_ns = complete ? event.dur_ns : 0;
  if (m.ort_kernel) {
    std::string_view node = event.name;
    node.remove_suffix(std::string_view("_kernel_time").size());
    row.node_name = Intern(node);
  }
  if (!event.op_name.empty()) row.op_type = Intern(event.op_name);
  if (!event.shapes.empty()) row.shapes = Intern(event.shapes);
  if (!event.output_shapes.empty()) {
    row.output_shapes = Intern(event.output_shapes);
  }
  row.correlation = event.correlation;
  row.external_id = event.external_id;
  row.bytes = event.bytes;
  if (event.cat.empty() && extension_ != nullptr &&
      !extension_->OnUncategorisedSlice(event, row)) {
    return;
  }

  if (m.run_marker) {
    run_markers_.push_back({event.ts_ns,
                            event.ts_ns + std::max<int64_t>(0, event.dur_ns),
                            row.name, event.name == "model_run"});
  }
  if (complete) {
    if (event.dur_ns > 0) {
      max_ts_ns_ = std::max(max_ts_ns_, event.ts_ns + event.dur_ns);
    }
    TaskId task = AddTask(row);
    // Collectives: only NCCL kernels and record_param_comms read their args.
    if (m.kind == TaskKind::kCompute && m.device_track && m.kineto_event &&
        IsNcclKernelName(event.name)) {
      AddNcclRecord(event, task);
    } else if (m.kind == TaskKind::kHostOp && event.external_id >= 0 &&
               event.name == "record_param_comms") {
      CommArgs args = ReadCommArgs(event);
      if (args.any()) param_comms_[event.external_id] = args;
    }
    if (m.kind == TaskKind::kSync && m.device_track &&
        event.name == "Stream Wait Event") {
      ++stats_->stream_wait_events;
      stream_waits_.push_back({row.track, event.wait_on_stream,
                               event.wait_on_record_correlation,
                               event.correlation});
    }
    if (m.ort_kernel &&
        (event.activation_size >= 0 || event.parameter_size >= 0 ||
         event.output_size >= 0 || event.mem_bytes_in_use >= 0)) {
      trace_->AddTaskMemory({task, event.activation_size, event.parameter_size,
                             event.output_size, event.mem_bytes_in_use,
                             event.mem_in_use_peak});
    }
  } else {
    IdKey pid = MakeIdKey(event.pid);
    IdKey tid = event.tid.present ? MakeIdKey(event.tid) : pid;
    open_slices_[{pid, tid}].push_back({row});
    ++open_slice_count_;
  }
}

void TraceEventBuilder::AddMetadata(const ParsedEvent& event) {
  ++stats_->metadata_events;
  IdKey pid = MakeIdKey(event.pid);
  IdKey tid = event.tid.present ? MakeIdKey(event.tid) : pid;
  if (event.name == "process_name" && !event.meta_name.empty()) {
    process_names_[{pid, IdKey{}}] = Intern(event.meta_name);
  } else if (event.name == "thread_name" && !event.meta_name.empty()) {
    thread_names_[{pid, tid}] = Intern(event.meta_name);
  } else if (event.name == "process_labels" && !event.meta_labels.empty()) {
    process_labels_[{pid, IdKey{}}] = std::string(event.meta_labels);
  }
  // process_sort_index / thread_sort_index: TrackInfo has no order field;
  // counted in metadata_events only.
}

void TraceEventBuilder::AddEvent(const ParsedEvent& event) {
  ++stats_->events;
  if (event.ph.empty()) {
    ++stats_->skipped_events;
    reporter_->ReportAtCurrentEvent(DiagnosticCode::kEventMissingField,
                                    "trace event without \"ph\" skipped");
    return;
  }
  if (event.has_bind_id) ++stats_->flow_bindings;
  const char phase = event.ph.size() == 1 ? event.ph[0] : '\0';
  if (phase == 'M') {
    AddMetadata(event);
    return;
  }
  if (!event.has_ts) {
    ++stats_->skipped_events;
    reporter_->ReportAtCurrentEvent(DiagnosticCode::kEventMissingField,
                                    "trace event without \"ts\" skipped");
    return;
  }
  max_ts_ns_ = std::max(max_ts_ns_, event.ts_ns);
  switch (phase) {
    case 'X':
      if (!event.has_dur) {
        ++stats_->skipped_events;
        reporter_->ReportAtCurrentEvent(
            DiagnosticCode::kEventMissingField,
            "complete ('X') event without \"dur\" skipped");
        return;
      }
      AddSliceEvent(event, /*complete=*/true);
      return;
    case 'B':
      AddSliceEvent(event, /*complete=*/false);
      return;
    case 'E': {
      IdKey pid = MakeIdKey(event.pid);
      IdKey tid = event.tid.present ? MakeIdKey(event.tid) : pid;
      auto it = open_slices_.find({pid, tid});
      if (it == open_slices_.end() || it->second.empty()) {
        reporter_->ReportAtCurrentEvent(
            DiagnosticCode::kUnmatchedEnd,
            "'E' event without an open 'B' on its thread");
        return;
      }
      TaskRow row = it->second.back().row;
      it->second.pop_back();
      --open_slice_count_;
      row.duration_ns = event.ts_ns - row.start_ns;
      AddTask(row);
      return;
    }
    case 'i':
    case 'I':
    case 'R':
      if (event.name == "[memory]") {
        ++stats_->memory_events;
        if (event.has_ts &&
            (event.has_memory_bytes || event.total_allocated >= 0)) {
          // Device Type 0 is the host (c10::DeviceType::CPU).
          int32_t device = event.device_type > 0 && event.device_id >= 0
                               ? static_cast<int32_t>(event.device_id)
                               : -1;
          trace_->AddAllocatorSample(
              {event.ts_ns, event.memory_bytes, event.total_allocated,
               event.total_reserved, device, StringPool::kEmpty, source_});
        }
      } else {
        ++stats_->instant_events;
      }
      return;
    case 'C':
      ++stats_->counter_events;
      return;
    case 's':
    case 't':
    case 'f':
      ++stats_->flow_events;
      if (phase != 't' && extension_ != nullptr) {
        extension_->OnFlowEvent(event);
      }
      return;
    case 'b':
    case 'e':
    case 'n':
    case 'S':
    case 'T':
    case 'p':
    case 'F':
      ++stats_->async_events;
      return;
    case 'P':
    case 'O':
    case 'N':
    case 'D':
    case 'V':
    case 'v':
    case 'c':
    case '(':
    case ')':
      ++stats_->other_phase_events;
      return;
    default:
      ++stats_->unknown_phase_events;
      reporter_->ReportAtCurrentEvent(
          DiagnosticCode::kUnknownPhase,
          "unknown phase '" + std::string(event.ph.substr(0, 8)) + "'");
      return;
  }
}

const std::pair<IdKey, IdKey>* TraceEventBuilder::ThreadOfTrack(
    TrackId track) const {
  auto it = track_thread_keys_.find(track.value());
  return it == track_thread_keys_.end() ? nullptr : &it->second;
}

StringId TraceEventBuilder::FileProcessName(IdKey pid) const {
  auto it = process_names_.find({pid, IdKey{}});
  return it == process_names_.end() ? StringPool::kEmpty : it->second;
}

void TraceEventBuilder::LinkStreamWaits() {
  if (stream_waits_.empty()) return;
  // Rule (what HTA's critical path does, by correlation instead of launch
  // time: CUPTI correlation ids count API calls in call order, so they
  // order launches on a stream even across host threads):
  //  - the event is recorded after the last kernel / copy / memset launched
  //    on the recording stream before the cudaEventRecord call;
  //  - the first kernel / copy / memset launched on the waiting stream after
  //    the cudaStreamWaitEvent call waits for it.
  // The Stream Wait Event task itself is not the waiter: CUPTI times it as
  // the host API call, so anchoring it would compare host and GPU time.
  struct Enqueued {
    int64_t correlation;
    TaskId task;
  };
  std::unordered_map<uint32_t, std::vector<Enqueued>> work;
  std::vector<TrackId> record_tracks(stream_waits_.size(), TrackId());
  for (size_t i = 0; i < stream_waits_.size(); ++i) {
    const StreamWait& w = stream_waits_[i];
    const TrackInfo& info = trace_->track(w.track);
    auto it =
        tracks_.find(TrackKey{TrackKind::kDeviceStream, IdKey{info.device, 0},
                              IdKey{w.record_stream, 0}});
    if (w.record_stream < 0 || it == tracks_.end()) continue;
    record_tracks[i] = it->second;
    work[it->second.value()];
    work[w.track.value()];
  }
  const size_t task_end = trace_->task_count();
  for (size_t i = first_task_; i < task_end; ++i) {
    TaskId t(static_cast<uint32_t>(i));
    TaskKind kind = trace_->task_kind(t);
    if ((kind != TaskKind::kCompute && kind != TaskKind::kDataMovement) ||
        trace_->task_correlation(t) < 0) {
      continue;
    }
    auto it = work.find(trace_->task_track(t).value());
    if (it != work.end())
      it->second.push_back({trace_->task_correlation(t), t});
  }
  for (auto& [track, list] : work) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Enqueued& a, const Enqueued& b) {
                       return a.correlation < b.correlation;
                     });
  }
  auto by_correlation = [](const Enqueued& e, int64_t c) {
    return e.correlation < c;
  };
  // Per waiting task, the recorder; a task after several waits keeps the
  // record that ended last (the one that actually held it back).
  std::unordered_map<uint32_t, TaskId> recorder_of;
  std::vector<TaskId> waiters;  // in first-wait order (deterministic ids)
  for (size_t i = 0; i < stream_waits_.size(); ++i) {
    const StreamWait& w = stream_waits_[i];
    if (record_tracks[i] == w.track) continue;  // stream order covers it
    if (!record_tracks[i].valid() || w.record_correlation < 0 ||
        w.wait_correlation < 0) {
      ++stats_->event_waits_unresolved;
      continue;
    }
    const std::vector<Enqueued>& recorded = work[record_tracks[i].value()];
    const std::vector<Enqueued>& waiting = work[w.track.value()];
    auto record = std::lower_bound(recorded.begin(), recorded.end(),
                                   w.record_correlation, by_correlation);
    auto wait = std::upper_bound(
        waiting.begin(), waiting.end(), w.wait_correlation,
        [](int64_t c, const Enqueued& e) { return c < e.correlation; });
    if (record == recorded.begin() || wait == waiting.end()) {
      ++stats_->event_waits_unresolved;
      continue;
    }
    TaskId recorder = std::prev(record)->task;
    TaskId waiter = wait->task;
    auto [it, inserted] = recorder_of.try_emplace(waiter.value(), recorder);
    if (inserted) {
      waiters.push_back(waiter);
    } else if (it->second != recorder) {
      ++stats_->event_waits_merged;
      if (trace_->task_end_ns(recorder) > trace_->task_end_ns(it->second)) {
        it->second = recorder;
      }
    }
  }
  if (waiters.empty()) return;
  // Ids continue after those of the files imported before this one.
  int32_t next_id = 0;
  for (size_t i = 0; i < first_task_; ++i) {
    TaskId t(static_cast<uint32_t>(i));
    next_id = std::max({next_id, trace_->task_event_before(t) + 1,
                        trace_->task_event_after(t) + 1});
  }
  for (TaskId waiter : waiters) {
    TaskId recorder = recorder_of[waiter.value()];
    int32_t id = trace_->task_event_after(recorder);
    if (id < 0) {
      if (next_id == INT32_MAX) break;
      id = next_id++;
      trace_->SetTaskEventAfter(recorder, id);
    }
    trace_->SetTaskEventBefore(waiter, id);
    ++stats_->event_links;
  }
}

void TraceEventBuilder::AssignRuns() {
  const size_t task_end = trace_->task_count();
  const uint32_t run_base = static_cast<uint32_t>(trace_->runs().size());
  int64_t first_start = INT64_MAX;
  int64_t last_end = INT64_MIN;
  for (size_t i = first_task_; i < task_end; ++i) {
    TaskId t(static_cast<uint32_t>(i));
    first_start = std::min(first_start, trace_->task_start_ns(t));
    last_end = std::max(last_end, trace_->task_end_ns(t));
  }
  if (first_start == INT64_MAX) first_start = last_end = 0;

  if (run_markers_.empty()) {
    uint32_t run =
        trace_->AddRun({Intern("whole trace"), first_start, last_end, source_});
    for (size_t i = first_task_; i < task_end; ++i) {
      trace_->SetTaskRun(TaskId(static_cast<uint32_t>(i)), run);
    }
    stats_->runs = 1;
    return;
  }
  std::stable_sort(run_markers_.begin(), run_markers_.end(),
                   [](const RunMarker& a, const RunMarker& b) {
                     return a.start_ns < b.start_ns;
                   });
  int model_run_number = 0;
  for (RunMarker& marker : run_markers_) {
    if (marker.numbered) {
      marker.name = Intern("model_run #" + std::to_string(++model_run_number));
    }
  }
  // Rule: a task belongs to the run with the latest start <= its start, so
  // work that runs past a step's CPU range (its GPU kernels) stays with that
  // step. Tasks before the first marker get a run of their own, "before
  // <first run>", which is then run `run_base` and the markers follow.
  const int64_t first_marker_start = run_markers_.front().start_ns;
  const bool has_prologue = first_start < first_marker_start;
  uint32_t marker_base = run_base;
  if (has_prologue) {
    std::string name =
        "before " + std::string(trace_->str(run_markers_.front().name));
    trace_->AddRun({Intern(name), first_start, first_marker_start, source_});
    ++marker_base;
  }
  for (const RunMarker& marker : run_markers_) {
    trace_->AddRun({marker.name, marker.start_ns, marker.end_ns, source_});
  }
  std::vector<int64_t> starts;
  starts.reserve(run_markers_.size());
  for (const RunMarker& marker : run_markers_)
    starts.push_back(marker.start_ns);
  for (size_t i = first_task_; i < task_end; ++i) {
    TaskId t(static_cast<uint32_t>(i));
    int64_t start = trace_->task_start_ns(t);
    auto it = std::upper_bound(starts.begin(), starts.end(), start);
    uint32_t run =
        it == starts.begin()
            ? run_base
            : marker_base + static_cast<uint32_t>(it - starts.begin() - 1);
    trace_->SetTaskRun(t, run);
  }
  stats_->runs = run_markers_.size() + (has_prologue ? 1 : 0);
}

void TraceEventBuilder::Finish() {
  // Unclosed B slices end at the last timestamp seen.
  // Deterministic order: by the task start of the slices.
  std::vector<TaskRow> unclosed;
  for (auto& [thread, stack] : open_slices_) {
    for (OpenSlice& open : stack) unclosed.push_back(open.row);
  }
  std::stable_sort(
      unclosed.begin(), unclosed.end(), [](const TaskRow& a, const TaskRow& b) {
        return a.start_ns != b.start_ns ? a.start_ns < b.start_ns
                                        : a.track.value() < b.track.value();
      });
  for (TaskRow& row : unclosed) {
    reporter_->ReportAtEnd(DiagnosticCode::kUnclosedBegin,
                           "'B' event '" + std::string(trace_->str(row.name)) +
                               "' never closed; it ends at the last timestamp");
    row.duration_ns = max_ts_ns_ - row.start_ns;
    AddTask(row);
  }
  open_slices_.clear();
  open_slice_count_ = 0;

  // Metadata may come after the events it names: apply it now.
  for (const auto& [track_value, keys] : track_thread_keys_) {
    TrackInfo& info = trace_->mutable_track(TrackId(track_value));
    const auto& [pid, tid] = keys;
    if (auto it = process_names_.find({pid, IdKey{}});
        it != process_names_.end()) {
      info.process_name = it->second;
    }
    if (auto it = process_labels_.find({pid, IdKey{}});
        it != process_labels_.end()) {
      std::string name(trace_->str(info.process_name));
      name += name.empty() ? it->second : " (" + it->second + ")";
      info.process_name = Intern(name);
    }
    if (auto it = thread_names_.find({pid, tid}); it != thread_names_.end()) {
      info.thread_name = it->second;
    }
  }

  const std::string_view extension_dialect =
      extension_ != nullptr ? extension_->Finish() : std::string_view();
  LinkStreamWaits();
  AssignRuns();

  const bool kineto_top_level = stats_->has_schema_version ||
                                stats_->has_device_properties ||
                                stats_->has_base_time;
  if (container_ == TraceContainer::kArray && ort_events_ > 0 &&
      kineto_events_ == 0) {
    stats_->dialect = "onnxruntime";
  } else if (!extension_dialect.empty()) {
    stats_->dialect = std::string(extension_dialect);
  } else if (kineto_top_level || kineto_events_ > 0) {
    stats_->dialect = "pytorch";
  } else {
    stats_->dialect = "chrome";
  }
  // What this file says about its source. Files of one source (the slices
  // and tables of one profiler output folder) agree; the first file that
  // names a fact keeps it.
  SourceInfo& source = trace_->mutable_source(source_);
  if (source.dialect == StringPool::kEmpty) {
    source.dialect = Intern(stats_->dialect);
  }
  if (source.time_base == TimeBase::kUnknown) {
    // ONNX Runtime counts from the session's profiling start; Kineto and
    // the extensions' dialects (msprof, torch_npu) write epoch time (Kineto
    // relative to its baseTimeNanoseconds when it gives one); the legacy
    // autograd profiler and other Chrome traces say nothing.
    if (stats_->dialect == "onnxruntime") {
      source.time_base = TimeBase::kSessionStart;
    } else if ((!extension_dialect.empty() &&
                stats_->dialect == extension_dialect) ||
               (stats_->dialect == "pytorch" &&
                (kineto_top_level || kineto_events_ > legacy_events_))) {
      source.time_base = TimeBase::kEpoch;
      if (stats_->has_base_time) source.base_ns = stats_->base_time_ns;
    }
  }
  if (source.rank < 0 && stats_->distributed_rank >= 0 &&
      stats_->distributed_rank <= INT32_MAX) {
    source.rank = static_cast<int32_t>(stats_->distributed_rank);
  }
  FinishCollectives();
}

TraceEventBuilder::CommArgs TraceEventBuilder::ReadCommArgs(
    const ParsedEvent& event) {
  CommArgs a;
  if (!event.collective_name.empty()) {
    a.collective = Intern(event.collective_name);
  }
  a.in_elements = event.in_msg_nelems;
  a.out_elements = event.out_msg_nelems;
  a.group_size = event.group_size;
  if (!event.dtype.empty()) a.dtype = Intern(event.dtype);
  if (!event.pg_name.empty()) a.group = Intern(event.pg_name);
  if (!event.pg_description.empty()) {
    a.group_description = Intern(event.pg_description);
  }
  if (!event.pg_ranks.empty()) a.group_ranks = Intern(event.pg_ranks);
  a.seq = event.seq;
  return a;
}

void TraceEventBuilder::AddNcclRecord(const ParsedEvent& event, TaskId task) {
  CollectiveRecord r;
  r.source = source_;
  r.task = task;
  r.name = trace_->task_name(task);
  r.start_ns = trace_->task_start_ns(task);
  r.end_ns = trace_->task_end_ns(task);
  NcclKernelName parts = ParseNcclKernelName(event.name);
  if (!parts.algorithm.empty()) r.algorithm = Intern(parts.algorithm);
  if (!parts.protocol.empty()) r.protocol = Intern(parts.protocol);
  r.type = CollectiveTypeOfName(parts.collective.empty() ? event.name
                                                         : parts.collective);
  trace_->mutable_communication().collectives.push_back(r);
  kernel_comm_args_.push_back(ReadCommArgs(event));
}

void TraceEventBuilder::FinishCollectives() {
  std::vector<CollectiveRecord>& records =
      trace_->mutable_communication().collectives;
  SourceInfo& source = trace_->mutable_source(source_);
  if (source.world_size < 0 && distributed_.world_size > 0 &&
      distributed_.world_size <= INT32_MAX) {
    source.world_size = static_cast<int32_t>(distributed_.world_size);
  }
  auto find_group = [&](StringId name) -> ProcessGroupInfo* {
    for (ProcessGroupInfo& g : source.process_groups) {
      if (g.name == name) return &g;
    }
    return nullptr;
  };
  const int64_t rank = source.rank;
  auto own_rank_in = [rank](const std::vector<int32_t>& ranks) {
    auto it = std::find(ranks.begin(), ranks.end(), rank);
    return it == ranks.end() ? -1 : static_cast<int32_t>(it - ranks.begin());
  };
  for (const ProcessGroupConfig& config : distributed_.groups) {
    StringId name = Intern(config.name);
    if (find_group(name) != nullptr) continue;
    ProcessGroupInfo g;
    g.name = name;
    if (!config.description.empty()) {
      g.long_name = g.description = Intern(config.description);
    }
    g.global_ranks = config.ranks;
    g.group_rank = own_rank_in(g.global_ranks);
    source.process_groups.push_back(std::move(g));
  }
  for (size_t i = first_collective_, k = 0;
       i < records.size() && k < kernel_comm_args_.size(); ++i, ++k) {
    CollectiveRecord& r = records[i];
    CommArgs args = kernel_comm_args_[k];
    if (!args.any()) {
      int64_t external = trace_->task_external_id(r.task);
      auto it = param_comms_.find(external);
      if (external >= 0 && it != param_comms_.end()) args = it->second;
    }
    if (args.collective.valid()) {
      CollectiveType type = CollectiveTypeOfName(trace_->str(args.collective));
      if (type != CollectiveType::kUnknown) r.type = type;
    }
    r.in_elements = args.in_elements;
    r.out_elements = args.out_elements;
    if (args.group_size > 0 && args.group_size <= INT32_MAX) {
      r.group_size = static_cast<int32_t>(args.group_size);
    }
    if (args.dtype.valid()) r.dtype = args.dtype;
    r.bytes = CollectiveBytes(r.in_elements, r.out_elements,
                              DtypeSize(trace_->str(r.dtype)));
    r.sequence = args.seq;
    r.group = args.group.valid() ? args.group : StringPool::kEmpty;
    if (r.group != StringPool::kEmpty && find_group(r.group) == nullptr) {
      // A group the collective names that pg_config does not list.
      ProcessGroupInfo g;
      g.name = r.group;
      if (args.group_description.valid()) {
        g.long_name = g.description = args.group_description;
      }
      if (args.group_ranks.valid()) {
        if (auto ranks = ParseRankList(trace_->str(args.group_ranks))) {
          g.global_ranks = std::move(*ranks);
          g.group_rank = own_rank_in(g.global_ranks);
        }
      }
      source.process_groups.push_back(std::move(g));
    }
  }
  SetCollectiveRuns(*trace_, source_, first_collective_);
  kernel_comm_args_.clear();
  param_comms_.clear();
}

size_t TraceEventBuilder::MemoryUsage() const {
  // A hash map entry is a node of key, value and two pointers: ~64 bytes
  // (a process label is short: held in the string itself).
  constexpr size_t kMapEntry = 64;
  size_t bytes =
      (tracks_.size() + track_thread_keys_.size() + open_slices_.size() +
       thread_names_.size() + process_names_.size() + process_labels_.size()) *
      kMapEntry;
  bytes += param_comms_.size() * (kMapEntry + sizeof(CommArgs)) +
           kernel_comm_args_.capacity() * sizeof(CommArgs);
  return bytes + open_slice_count_ * sizeof(OpenSlice) +
         run_markers_.capacity() * sizeof(RunMarker) +
         stream_waits_.capacity() * sizeof(StreamWait);
}

}  // namespace mi::importers::trace_event
