#include "trace/trace.h"

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
  return SourceId(static_cast<uint32_t>(sources_.size() - 1));
}

TrackId Trace::AddTrack(const TrackInfo& info) {
  tracks_.push_back(info);
  return TrackId(static_cast<uint32_t>(tracks_.size() - 1));
}

void Trace::Reserve(size_t n) {
  name_.reserve(n);
  category_.reserve(n);
  kind_.reserve(n);
  track_.reserve(n);
  start_ns_.reserve(n);
  duration_ns_.reserve(n);
  op_type_.reserve(n);
  node_name_.reserve(n);
  op_node_.reserve(n);
  correlation_.reserve(n);
  external_id_.reserve(n);
  event_before_.reserve(n);
  event_after_.reserve(n);
  bytes_.reserve(n);
  shapes_.reserve(n);
  output_shapes_.reserve(n);
  run_.reserve(n);
  parent_.reserve(n);
  launch_.reserve(n);
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
  constexpr size_t kPerTask = sizeof(StringId) * 6 + sizeof(TaskKind) +
                              sizeof(TrackId) + sizeof(int64_t) * 5 +
                              sizeof(NodeId) + sizeof(int32_t) * 2 +
                              sizeof(uint32_t) + sizeof(TaskId) * 2;
  return start_ns_.capacity() * kPerTask +
         tracks_.capacity() * sizeof(TrackInfo) +
         runs_.capacity() * sizeof(RunInfo) +
         task_memory_.capacity() * sizeof(TaskMemoryRecord) +
         allocator_samples_.capacity() * sizeof(AllocatorSample);
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
  while (!label.empty() && label.back() == ' ') label.pop_back();
  return label;
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

}  // namespace mi
