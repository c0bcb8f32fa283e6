#include "trace/trace.h"

#include <algorithm>

#include "base/huge_pages.h"
#include "base/strings.h"

namespace mi {

std::string_view TaskKindName(TaskKind kind) {
  switch (kind) {
    case TaskKind::kCompute:
      return "compute";
    case TaskKind::kDataMovement:
      return "data_movement";
    case TaskKind::kSync:
      return "sync";
    case TaskKind::kHostOp:
      return "host_op";
    case TaskKind::kRuntime:
      return "runtime";
    case TaskKind::kAnnotation:
      return "annotation";
    case TaskKind::kOverhead:
      return "overhead";
    case TaskKind::kOther:
      return "other";
  }
  return "other";
}

std::string_view TrackKindName(TrackKind kind) {
  switch (kind) {
    case TrackKind::kDeviceStream:
      return "device_stream";
    case TrackKind::kHostThread:
      return "host_thread";
    case TrackKind::kOther:
      return "other";
  }
  return "other";
}

std::string_view TimeBaseName(TimeBase base) {
  switch (base) {
    case TimeBase::kUnknown:
      return "unknown";
    case TimeBase::kEpoch:
      return "epoch";
    case TimeBase::kSessionStart:
      return "session_start";
  }
  return "unknown";
}

SourceId Trace::FindOrAddSource(StringId key) {
  for (size_t i = 0; i < sources_.size(); ++i) {
    if (sources_[i].key == key) return SourceId(static_cast<uint32_t>(i));
  }
  SourceInfo info;
  info.key = key;
  sources_.push_back(std::move(info));
  source_tracks_.push_back(0);
  return SourceId(static_cast<uint32_t>(sources_.size() - 1));
}

TrackId Trace::AddTrack(const TrackInfo& info) {
  tracks_.push_back(info);
  TrackInfo& added = tracks_.back();
  if (!added.source.valid() || added.source.value() >= sources_.size()) {
    added.source = FindOrAddSource(StringPool::kEmpty);
  }
  if (source_tracks_[added.source.value()]++ == 0) ++sources_with_tracks_;
  return TrackId(static_cast<uint32_t>(tracks_.size() - 1));
}

void Trace::Reserve(size_t n) {
  ReserveWithHugePages(name_, n);
  ReserveWithHugePages(category_, n);
  ReserveWithHugePages(kind_, n);
  ReserveWithHugePages(track_, n);
  ReserveWithHugePages(start_ns_, n);
  ReserveWithHugePages(duration_ns_, n);
  ReserveWithHugePages(op_type_, n);
  ReserveWithHugePages(node_name_, n);
  ReserveWithHugePages(op_node_, n);
  ReserveWithHugePages(correlation_, n);
  ReserveWithHugePages(external_id_, n);
  ReserveWithHugePages(event_before_, n);
  ReserveWithHugePages(event_after_, n);
  ReserveWithHugePages(bytes_, n);
  ReserveWithHugePages(shapes_, n);
  ReserveWithHugePages(output_shapes_, n);
  ReserveWithHugePages(class_, n);
  ReserveWithHugePages(run_, n);
  ReserveWithHugePages(parent_, n);
  ReserveWithHugePages(launch_, n);
}

TaskId Trace::AddTask(const TaskRow& row) {
  TaskId id(static_cast<uint32_t>(start_ns_.size()));
  name_.push_back(row.name);
  category_.push_back(row.category);
  kind_.push_back(row.kind);
  track_.push_back(row.track);
  start_ns_.push_back(row.start_ns);
  duration_ns_.push_back(row.duration_ns);
  op_type_.push_back(row.op_type);
  node_name_.push_back(row.node_name);
  op_node_.push_back(NodeId::Invalid());
  correlation_.push_back(row.correlation);
  external_id_.push_back(row.external_id);
  event_before_.push_back(row.event_before);
  event_after_.push_back(row.event_after);
  bytes_.push_back(row.bytes);
  shapes_.push_back(row.shapes);
  output_shapes_.push_back(row.output_shapes);
  class_.push_back(row.task_class);
  run_.push_back(row.run);
  parent_.push_back(TaskId::Invalid());
  launch_.push_back(TaskId::Invalid());
  return id;
}

uint32_t Trace::AddRun(const RunInfo& run) {
  runs_.push_back(run);
  return static_cast<uint32_t>(runs_.size() - 1);
}

size_t Trace::MemoryUsage() const {
  constexpr size_t kPerTask = sizeof(StringId) * 7 + sizeof(TaskKind) +
                              sizeof(TrackId) + sizeof(int64_t) * 5 +
                              sizeof(NodeId) + sizeof(int32_t) * 2 +
                              sizeof(uint32_t) + sizeof(TaskId) * 2;
  return start_ns_.capacity() * kPerTask +
         sources_.capacity() * sizeof(SourceInfo) +
         tracks_.capacity() * sizeof(TrackInfo) +
         runs_.capacity() * sizeof(RunInfo) +
         task_memory_.capacity() * sizeof(TaskMemoryRecord) +
         allocator_samples_.capacity() * sizeof(AllocatorSample) +
         communication_.collectives.capacity() * sizeof(CollectiveRecord) +
         communication_.bandwidth.capacity() *
             sizeof(CommunicationBandwidthRow) +
         communication_.links.capacity() * sizeof(CommunicationLinkRow) +
         communication_.step_trace.capacity() * sizeof(StepTraceRow) +
         communication_.cluster_communication.capacity() *
             sizeof(ClusterCommunicationRow);
}

CorrelationIndex::CorrelationIndex(const Trace& trace) : trace_(trace) {
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    if (trace.task_kind(t) == TaskKind::kRuntime &&
        trace.task_correlation(t) >= 0) {
      runtime_.try_emplace(
          Key{trace.task_source(t).value(), trace.task_correlation(t)}, t);
    }
  }
}

TaskId CorrelationIndex::RuntimeCallOf(TaskId task) const {
  if (trace_.task_correlation(task) < 0) return TaskId::Invalid();
  auto it = runtime_.find(
      Key{trace_.task_source(task).value(), trace_.task_correlation(task)});
  if (it == runtime_.end() || it->second == task) return TaskId::Invalid();
  return it->second;
}

std::string TraceDialects(const Trace& trace) {
  std::vector<StringId> seen;
  std::string out;
  for (uint32_t i = 0; i < trace.source_count(); ++i) {
    StringId d = trace.source(SourceId(i)).dialect;
    if (d == StringPool::kEmpty ||
        std::find(seen.begin(), seen.end(), d) != seen.end()) {
      continue;
    }
    seen.push_back(d);
    if (!out.empty()) out += ',';
    out += trace.str(d);
  }
  return out;
}

std::string_view TaskDialect(const Trace& trace, TaskId t) {
  return trace.str(trace.source(trace.task_source(t)).dialect);
}

std::string_view TaskClassOf(const Trace& trace, TaskId t,
                             std::string_view op_type) {
  for (const auto& [op, task_class] :
       trace.source(trace.task_source(t)).op_type_classes) {
    if (trace.str(op) == op_type) return trace.str(task_class);
  }
  return trace.str(trace.task_class(t));
}

bool IsCommunicationTask(const Trace& trace, TaskId t) {
  if (trace.str(trace.task_class(t)) == kTaskClassCommunication) return true;
  std::string_view category = trace.str(trace.task_category(t));
  if (EqualsIgnoringCase(category, "communication") ||
      EqualsIgnoringCase(category, "hccl")) {
    return true;
  }
  return trace.IsCommunicationName(trace.task_name(t));
}

namespace {
bool NamesCommunication(std::string_view name) {
  return ContainsIgnoringCase(name, "nccl") ||
         ContainsIgnoringCase(name, "hccl") ||
         StartsWithIgnoringCase(name, "hcom_");
}
}  // namespace

bool Trace::IsCommunicationName(StringId name) const {
  NameMemo& memo = *communication_names_;
  std::call_once(memo.sized, [&] {
    memo.size = strings_ != nullptr ? strings_->size() : 0;
    memo.flags = std::make_unique<std::atomic<uint8_t>[]>(memo.size);
    for (size_t i = 0; i < memo.size; ++i) {
      memo.flags[i].store(0, std::memory_order_relaxed);
    }
  });
  const size_t i = name.value();
  if (i >= memo.size) return NamesCommunication(str(name));
  uint8_t known = memo.flags[i].load(std::memory_order_relaxed);
  if (known == 0) {
    known = NamesCommunication(str(name)) ? 2 : 1;
    memo.flags[i].store(known, std::memory_order_relaxed);
  }
  return known == 2;
}

bool IsSyncTask(const Trace& trace, TaskId t) {
  if (trace.task_kind(t) != TaskKind::kSync &&
      trace.str(trace.task_class(t)) != kTaskClassSync) {
    return false;
  }
  return !IsCommunicationTask(trace, t);
}

bool IsExecutionWork(const Trace& trace, TaskId t) {
  return IsExecutionKind(trace.task_kind(t)) && !IsSyncTask(trace, t);
}

namespace {

constexpr std::string_view kNameSeparator = " · ";

// The last `parts` components of a path ("a/b/c", 2 -> "b/c"); the whole
// path when it has fewer.
std::string_view PathTail(std::string_view path, size_t parts) {
  while (path.size() > 1 && (path.back() == '/' || path.back() == '\\')) {
    path.remove_suffix(1);
  }
  size_t end = path.size();
  for (size_t i = 0; i < parts; ++i) {
    size_t slash = path.find_last_of("/\\", end == 0 ? 0 : end - 1);
    if (slash == std::string_view::npos || end == 0) return path;
    if (i + 1 == parts) return path.substr(slash + 1);
    end = slash;
  }
  return path;
}

std::string FileOrFolderName(const Trace& trace, SourceId s, size_t parts) {
  std::string_view key = trace.str(trace.source(s).key);
  if (key.empty()) return "source " + std::to_string(s.value());
  return std::string(PathTail(key, parts));
}

}  // namespace

std::string SourceName(const Trace& trace, SourceId source) {
  const SourceInfo& info = trace.source(source);
  // Only sources that own tracks are ever named side by side.
  auto named = [&](SourceId s) {
    return s != source && trace.source_track_count(s) > 0;
  };
  bool rank_shared = false;
  if (info.rank >= 0) {
    for (uint32_t i = 0; i < trace.source_count(); ++i) {
      if (named(SourceId(i)) && trace.source(SourceId(i)).rank == info.rank) {
        rank_shared = true;
      }
    }
    if (!rank_shared) return "rank " + std::to_string(info.rank);
  }
  // The base name, with as many parent folders as it takes to differ from
  // every other source's (keys are unique, so the whole key always does).
  std::string name;
  for (size_t parts = 1;; ++parts) {
    name = FileOrFolderName(trace, source, parts);
    bool collides = false;
    for (uint32_t i = 0; i < trace.source_count() && !collides; ++i) {
      collides = named(SourceId(i)) &&
                 FileOrFolderName(trace, SourceId(i), parts) == name;
    }
    if (!collides || name.size() >= trace.str(info.key).size()) break;
  }
  // Two runs of one rank: the file tells them apart.
  if (rank_shared)
    return "rank " + std::to_string(info.rank) + " (" + name + ")";
  return name;
}

std::string SourcePrefix(const Trace& trace, SourceId source) {
  if (trace.sources_with_tracks() <= 1) return {};
  return SourceName(trace, source) + std::string(kNameSeparator);
}

std::string TrackShortName(const Trace& trace, TrackId track) {
  const TrackInfo& t = trace.track(track);
  std::string label;
  if (t.thread_name != StringPool::kEmpty) {
    label = std::string(trace.str(t.thread_name));
  } else if (t.kind == TrackKind::kDeviceStream) {
    label = "stream " + std::to_string(t.stream >= 0 ? t.stream : t.tid);
  } else {
    label = "thread " + std::to_string(t.tid);
  }
  return std::string(TrimRight(label, " "));
}

std::string TrackProcessName(const Trace& trace, TrackId track) {
  const TrackInfo& t = trace.track(track);
  if (t.process_name != StringPool::kEmpty) {
    return std::string(trace.str(t.process_name));
  }
  if (t.pid_label != StringPool::kEmpty) {
    return std::string(trace.str(t.pid_label));
  }
  if (t.kind == TrackKind::kDeviceStream && t.device >= 0) {
    return "device " + std::to_string(t.device);
  }
  return "pid " + std::to_string(t.pid);
}

std::string RunName(const Trace& trace, uint32_t run) {
  const RunInfo& info = trace.runs()[run];
  std::string name(trace.str(info.name));
  if (!info.source.valid() || info.source.value() >= trace.source_count()) {
    return name;
  }
  return SourcePrefix(trace, info.source) + name;
}

std::string TrackDeviceName(const Trace& trace, TrackId track) {
  const TrackInfo& t = trace.track(track);
  if (t.kind != TrackKind::kDeviceStream || t.device < 0) return {};
  std::string_view dialect = trace.str(trace.source(t.source).dialect);
  // Ascend timelines number devices by process (the Ascend Hardware and
  // the HCCL process are two), not by device id: no device name.
  if (dialect == "ascend") return {};
  std::string_view word =
      dialect == "pytorch" || dialect == "onnxruntime" ? "GPU" : "device";
  return std::string(word) + " " + std::to_string(t.device);
}

std::string TrackGroupName(const Trace& trace, TrackId track) {
  const TrackInfo& t = trace.track(track);
  std::string group;
  if (t.process_name != StringPool::kEmpty) {
    group = trace.str(t.process_name);
  } else if (t.pid_label != StringPool::kEmpty) {
    group = trace.str(t.pid_label);
  } else if (t.kind == TrackKind::kDeviceStream && t.device >= 0) {
    group = "GPU " + std::to_string(t.device);
  } else {
    group = "host pid " + std::to_string(t.pid);
  }
  return SourcePrefix(trace, t.source) + group;
}

std::string TrackName(const Trace& trace, TrackId track) {
  const TrackInfo& t = trace.track(track);
  if (trace.sources_with_tracks() <= 1) {
    return TrackShortName(trace, track) + " (" +
           TrackProcessName(trace, track) + ")";
  }
  std::string owner = TrackDeviceName(trace, track);
  if (owner.empty()) owner = TrackProcessName(trace, track);
  return SourceName(trace, t.source) + std::string(kNameSeparator) + owner +
         std::string(kNameSeparator) + TrackShortName(trace, track);
}

std::string TrackMentionName(const Trace& trace, TrackId track) {
  if (trace.sources_with_tracks() > 1) return TrackName(trace, track);
  const TrackInfo& t = trace.track(track);
  if (t.kind == TrackKind::kDeviceStream) {
    std::string name = "stream " + std::to_string(t.stream);
    if (t.device >= 0) name += " (device " + std::to_string(t.device) + ")";
    return name;
  }
  std::string_view thread_name = trace.str(t.thread_name);
  if (!thread_name.empty()) return std::string(thread_name);
  return "thread " + std::to_string(t.tid);
}

std::string DeviceIndexName(const Trace& trace, TrackId track) {
  const TrackInfo& t = trace.track(track);
  std::string name;
  if (t.device >= 0) {
    name = "device " + std::to_string(t.device);
  } else {
    name = "device (unknown)";
    for (uint32_t i = 0; i < trace.track_count(); ++i) {
      const TrackInfo& other = trace.track(TrackId(i));
      if (other.kind == TrackKind::kDeviceStream && other.device < 0 &&
          other.source == t.source &&
          (other.pid != t.pid || other.pid_label != t.pid_label)) {
        name = "device (unknown, " + TrackProcessName(trace, track) + ")";
        break;
      }
    }
  }
  return SourcePrefix(trace, t.source) + name;
}

std::string HostClockName(const Trace& trace, SourceId source) {
  return SourcePrefix(trace, source) + "host";
}

}  // namespace mi
