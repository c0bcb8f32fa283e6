#include "importers/ascend_timeline/ascend_timeline_pass.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

#include "importers/common/ascend_task_type.h"
#include "importers/common/collectives.h"

namespace mi::importers::ascend_timeline {
namespace {

using trace_event::HashCombine;
using trace_event::IdKey;
using trace_event::ParsedEvent;

constexpr int64_t kAscendNone = 4294967295;  // UINT32_MAX: "no id"
// External ids the timeline gives cpu_ops (async_npu flows), kept apart
// from the ids a source writes.
constexpr int64_t kAscendExternalIdBase = int64_t{1} << 40;

}  // namespace

AscendTimelinePass::Role AscendTimelinePass::RoleOfProcess(
    std::string_view name) {
  // process_labels are appended as "name (labels)".
  size_t paren = name.find(" (");
  if (paren != std::string_view::npos) name = name.substr(0, paren);
  if (name == "Ascend Hardware") return Role::kHardware;
  if (name == "HCCL" || name == "Communication") return Role::kCommunication;
  if (name == "CANN") return Role::kCann;
  if (name == "Overlap Analysis") return Role::kOverlap;
  return Role::kNone;
}

TrackId AscendTimelinePass::ContinuedTrack(IdKey pid, IdKey tid) {
  // Sliced msprof timelines (msprof_slice_N.json): only the first slice
  // names the processes. A thread of a process this file has not named
  // (yet: msprof writes metadata first) continues the Ascend track an
  // earlier file of the same source added for the same (pid, tid).
  const size_t first_track = builder_.first_track();
  if (first_track == 0 || pid.label != 0 || tid.label != 0 ||
      builder_.FileProcessName(pid) != StringPool::kEmpty) {
    return TrackId::Invalid();
  }
  const Trace& trace = builder_.trace();
  for (size_t i = 0; i < first_track; ++i) {
    const TrackInfo& info = trace.track(TrackId(static_cast<uint32_t>(i)));
    if (info.source == builder_.source() &&
        info.pid_label == StringPool::kEmpty && info.pid == pid.number &&
        info.tid == tid.number &&
        RoleOfProcess(trace.str(info.process_name)) != Role::kNone) {
      return TrackId(static_cast<uint32_t>(i));
    }
  }
  return TrackId::Invalid();
}

StringId AscendTimelinePass::ProcessNameOf(IdKey pid) {
  StringId own = builder_.FileProcessName(pid);
  if (own != StringPool::kEmpty) return own;
  // Sliced msprof files (msprof_slice_N.json) carry the metadata once: look
  // at the tracks earlier files of this source added for the same pid.
  const Trace& trace = builder_.trace();
  for (size_t i = 0; i < builder_.first_track(); ++i) {
    const TrackInfo& info = trace.track(TrackId(static_cast<uint32_t>(i)));
    if (info.source != builder_.source()) continue;
    bool same = pid.label != 0 ? info.pid_label.value() == pid.label
                               : info.pid_label == StringPool::kEmpty &&
                                     info.pid == pid.number;
    if (same && info.process_name != StringPool::kEmpty) {
      return info.process_name;
    }
  }
  return StringPool::kEmpty;
}

bool AscendTimelinePass::OnUncategorisedSlice(const ParsedEvent& event,
                                              TaskRow& row) {
  // msprof writes no "cat" on X events; its args name the task.
  const bool ascend_args = !event.task_type.empty() || event.task_id >= 0 ||
                           event.connection_id >= 0 || !event.item_id.empty() ||
                           event.model_id >= 0 || event.stream_id >= 0;
  if (!ascend_args) {
    // Overlap Analysis slices have no args: skip them when their process
    // is already known (msprof writes metadata first); later ones are
    // marked in Finish().
    StringId process = builder_.FileProcessName(builder_.MakeIdKey(event.pid));
    if (process != StringPool::kEmpty &&
        RoleOfProcess(builder_.trace().str(process)) == Role::kOverlap) {
      ++stats_->skipped_events;
      return false;
    }
    return true;
  }
  ++ascend_events_;
  if (!event.task_type.empty()) row.category = builder_.Intern(event.task_type);
  if (row.correlation < 0 && event.connection_id >= 0) {
    row.correlation = event.connection_id;
  }
  if (!event.item_id.empty() && event.name.starts_with("Node@")) {
    row.node_name = builder_.Intern(event.item_id);
  }
  return true;
}

void AscendTimelinePass::OnFlowEvent(const ParsedEvent& event) {
  if (!event.has_id || event.id.empty()) return;
  if (event.cat != "HostToDevice" && event.cat != "async_npu" &&
      event.cat != "async_task_queue") {
    return;
  }
  const bool start = event.ph == "s";
  IdKey pid = builder_.MakeIdKey(event.pid);
  IdKey tid = event.tid.present ? builder_.MakeIdKey(event.tid) : pid;
  flow_ends_.push_back({builder_.Intern(event.cat), builder_.Intern(event.id),
                        start, pid, tid, event.ts_ns});
}

std::string_view AscendTimelinePass::Finish() {
  std::vector<Role> roles;
  if (!AssignRoles(&roles)) return {};
  stats_->ascend = true;
  // A CANN source: its layout conversions are known by op type too.
  AddAscendOpTypeClasses(builder_.trace(), builder_.source());
  ReviseTasks(roles);
  LinkFlowsAndLaunches(roles);
  // A collective record per hcom_* op on the HCCL process (their runs are
  // given once the builder settled them).
  stats_->collectives += AddHcclCollectiveRecords(
      builder_.trace(), builder_.source(), builder_.first_task());
  return "ascend";
}

bool AscendTimelinePass::AssignRoles(std::vector<Role>* roles) {
  Trace& trace = builder_.trace();
  const size_t first_track = builder_.first_track();
  const size_t track_end = trace.track_count();
  roles->assign(track_end, Role::kNone);
  bool any_role = false;
  // Tracks of earlier files this one continues (slices) keep their role.
  for (size_t i = 0; i < first_track; ++i) {
    TrackId track(static_cast<uint32_t>(i));
    if (builder_.ThreadOfTrack(track) == nullptr) continue;
    (*roles)[i] = RoleOfProcess(trace.str(trace.track(track).process_name));
    any_role = any_role || (*roles)[i] != Role::kNone;
  }
  std::vector<std::pair<IdKey, int32_t>> device_ordinals;
  for (size_t i = first_track; i < track_end; ++i) {
    TrackId track(static_cast<uint32_t>(i));
    const std::pair<IdKey, IdKey>* keys = builder_.ThreadOfTrack(track);
    if (keys == nullptr) continue;
    Role role = RoleOfProcess(trace.str(ProcessNameOf(keys->first)));
    (*roles)[i] = role;
    if (role == Role::kNone) continue;
    any_role = true;
    TrackInfo& info = trace.mutable_track(track);
    if (role == Role::kHardware || role == Role::kCommunication) {
      info.kind = TrackKind::kDeviceStream;
      info.stream = info.tid;  // "Stream N": tid = (physical) stream id
      const IdKey& pid = keys->first;
      auto it = std::find_if(device_ordinals.begin(), device_ordinals.end(),
                             [&](const auto& p) { return p.first == pid; });
      if (it == device_ordinals.end()) {
        device_ordinals.push_back(
            {pid, static_cast<int32_t>(device_ordinals.size())});
        it = device_ordinals.end() - 1;
      }
      info.device = it->second;
    }
  }
  // Metadata-only files (trace_view_tiny.json) are Ascend too.
  for (const auto& [key, name] : builder_.file_process_names()) {
    if (RoleOfProcess(trace.str(name)) != Role::kNone) any_role = true;
  }
  return any_role || ascend_events_ > 0;
}

void AscendTimelinePass::ReviseTasks(const std::vector<Role>& roles) {
  Trace& trace = builder_.trace();
  const size_t task_end = trace.task_count();
  const StringId communication = builder_.Intern(kTaskClassCommunication);
  for (size_t i = builder_.first_task(); i < task_end; ++i) {
    TaskId t(static_cast<uint32_t>(i));
    const size_t track = trace.task_track(t).value();
    Role role = track < roles.size() ? roles[track] : Role::kNone;
    const TrackInfo& info = trace.track(trace.task_track(t));
    std::string_view thread = trace.str(info.thread_name);
    switch (role) {
      case Role::kHardware: {
        ++stats_->device_tasks;
        TaskKind kind = thread.starts_with("Step Trace") ||
                                thread.find("MSTX") != std::string_view::npos
                            ? TaskKind::kAnnotation
                            : AscendTaskKind(trace.str(trace.task_category(t)));
        trace.SetTaskKind(t, kind);
        // Device task -> GE node by op name (= Node@launch item_id).
        if (kind == TaskKind::kCompute) {
          trace.SetTaskNodeName(t, trace.task_name(t));
        } else if (kind == TaskKind::kDataMovement || kind == TaskKind::kSync) {
          // MEMCPY_ASYNC, SDMA, Notify Wait, EVENT_RECORD ...: the task is
          // its own op type (as in msprof's reports), not the framework op
          // that issued it (that one stays the task's parent).
          trace.SetTaskOpType(t, trace.task_name(t));
        }
        break;
      }
      case Role::kCommunication:
        ++stats_->device_tasks;
        // Group <n> Communication: whole collectives (hcom_allReduce_...);
        // Plane <n>: their subtasks, detail only (not counted twice).
        if (trace.task_category(t) == StringPool::kEmpty &&
            !thread.starts_with("Plane")) {
          trace.SetTaskKind(t, TaskKind::kCompute);
          trace.SetTaskCategory(t, communication);
        } else {
          trace.SetTaskKind(t, TaskKind::kOther);
        }
        break;
      case Role::kCann:
        ++stats_->host_api_tasks;
        trace.SetTaskKind(t, TaskKind::kRuntime);
        break;
      case Role::kOverlap:
        ++stats_->skipped_events;
        trace.SetTaskKind(t, TaskKind::kAnnotation);
        break;
      case Role::kNone:
        break;
    }
    if (role == Role::kHardware || role == Role::kCommunication) {
      // The accelerator (or layout conversion) the summary shows.
      StringId op = trace.task_op_type(t);
      std::string_view name = trace.str(trace.task_name(t));
      trace.SetTaskClass(t, builder_.Intern(AscendTaskClass(
                                trace.str(trace.task_category(t)),
                                op != StringPool::kEmpty ? trace.str(op) : name,
                                name, trace.task_kind(t))));
    }
  }
  if (stats_->skipped_events > 0) {
    builder_.reporter().ReportAtEnd(
        DiagnosticCode::kEventsNotModelled,
        std::to_string(stats_->skipped_events) +
            " Overlap Analysis slices and " +
            std::to_string(builder_.stats().counter_events) +
            " counter events are not modelled");
  }
}

void AscendTimelinePass::LinkFlowsAndLaunches(const std::vector<Role>& roles) {
  Trace& trace = builder_.trace();
  const size_t first_task = builder_.first_task();
  const size_t task_end = trace.task_count();
  // 3. Flows: pair s/f by (cat, id); each end is the X event at exactly the
  // same (pid, tid, ts) (what torch_npu's combine_acl_to_npu does).
  struct EndKey {
    IdKey pid;
    IdKey tid;
    int64_t ts;
    bool operator==(const EndKey&) const = default;
  };
  struct EndKeyHash {
    size_t operator()(const EndKey& k) const {
      size_t h = HashCombine(0, static_cast<uint64_t>(k.pid.number));
      h = HashCombine(h, k.pid.label);
      h = HashCombine(h, static_cast<uint64_t>(k.tid.number));
      h = HashCombine(h, k.tid.label);
      return HashCombine(h, static_cast<uint64_t>(k.ts));
    }
  };
  std::unordered_map<EndKey, TaskId, EndKeyHash> ends;
  for (const FlowEnd& f : flow_ends_) {
    ends.emplace(EndKey{f.pid, f.tid, f.ts_ns}, TaskId::Invalid());
  }
  if (!ends.empty()) {
    auto better = [&](TaskId a, TaskId b) {  // is a a better end than b?
      if (!b.valid()) return true;
      bool a_other = trace.task_kind(a) == TaskKind::kOther;
      bool b_other = trace.task_kind(b) == TaskKind::kOther;
      if (a_other != b_other) return b_other;
      // Nested ops starting together: the innermost launched the work.
      return trace.task_duration_ns(a) < trace.task_duration_ns(b);
    };
    for (size_t i = first_task; i < task_end; ++i) {
      TaskId t(static_cast<uint32_t>(i));
      const std::pair<IdKey, IdKey>* keys =
          builder_.ThreadOfTrack(trace.task_track(t));
      if (keys == nullptr) continue;
      auto it =
          ends.find(EndKey{keys->first, keys->second, trace.task_start_ns(t)});
      if (it != ends.end() && better(t, it->second)) it->second = t;
    }
  }
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> pairs;
  std::vector<uint64_t> pair_order;
  for (size_t i = 0; i < flow_ends_.size(); ++i) {
    const FlowEnd& f = flow_ends_[i];
    uint64_t key = (uint64_t{f.cat.value()} << 32) | f.id.value();
    auto [it, inserted] = pairs.try_emplace(key, std::pair{-1, -1});
    if (inserted) pair_order.push_back(key);
    int64_t& slot = f.start ? it->second.first : it->second.second;
    if (slot < 0) slot = static_cast<int64_t>(i);
  }
  const StringId host_to_device = builder_.Intern("HostToDevice");
  std::vector<std::pair<TaskId, TaskId>> flow_launch;  // (device, host)
  const StringId async_npu = builder_.Intern("async_npu");
  uint64_t unresolved = 0;
  for (uint64_t key : pair_order) {
    const auto& [s, f] = pairs[key];
    if (s < 0 || f < 0) continue;
    const FlowEnd& fs = flow_ends_[static_cast<size_t>(s)];
    const FlowEnd& ff = flow_ends_[static_cast<size_t>(f)];
    TaskId from = ends[EndKey{fs.pid, fs.tid, fs.ts_ns}];
    TaskId to = ends[EndKey{ff.pid, ff.tid, ff.ts_ns}];
    if (!from.valid() || !to.valid()) {
      if (fs.cat == host_to_device || fs.cat == async_npu) ++unresolved;
      continue;
    }
    if (fs.cat == host_to_device) {
      // Decided below, after the Node@launch with the task's own
      // connection_id (the flow often starts on the AscendCL call).
      flow_launch.emplace_back(to, from);
    } else if (fs.cat == async_npu) {
      // Framework op -> device task directly (eager single-op launches,
      // Model Id 4294967295, have no GE model in between).
      int64_t external = trace.task_external_id(from);
      if (external < 0) {
        external = kAscendExternalIdBase + from.value();
        trace.SetTaskExternalId(from, external);
      }
      if (trace.task_external_id(to) < 0) {
        trace.SetTaskExternalId(to, external);
      }
      ++stats_->framework_links_by_flow;
    }
  }
  builder_.stats().flows_unresolved += unresolved;
  if (unresolved > 0) {
    builder_.reporter().ReportAtEnd(
        DiagnosticCode::kFlowUnresolved,
        std::to_string(unresolved) +
            " HostToDevice / async_npu flows have an end at a (pid, tid, ts) "
            "with no task (level-0 data points at a process without "
            "metadata); connection_id is used instead where present");
  }

  // 4. Launches. Rule (ascend.md §1.2, §1.6): a device task's launch is
  //   a. the CANN `Node@launch` with the task's own connection_id (msprof's
  //      host_connect_device links exactly these; one launch may own many
  //      tasks, e.g. an HCCL op), else
  //   b. the start of its HostToDevice flow (AscendCL / Runtime calls:
  //      aclrtRecordEvent, aclrtMemcpyAsync, ...), else
  //   c. any other CANN call with the task's connection_id.
  // The flow is not used first: in torch_npu data it mostly starts on the
  // `AscendCL@aclnn...` call around the Node@launch. connection_ids are
  // searched in this file first, then in the files of the same source
  // loaded before it (the earlier slices of a sliced msprof timeline);
  // another source's connection_ids are another profiler's numbers.
  std::unordered_map<int64_t, TaskId> node_launch_by_connection;
  std::unordered_map<int64_t, TaskId> other_launch_by_connection;
  auto note_cann = [&](uint32_t begin, uint32_t end) {
    for (uint32_t i = begin; i < end; ++i) {
      TaskId t(i);
      if (trace.task_kind(t) != TaskKind::kRuntime ||
          trace.task_correlation(t) < 0 ||
          trace.task_source(t) != builder_.source() ||
          RoleOfProcess(trace.str(
              trace.track(trace.task_track(t)).process_name)) != Role::kCann) {
        continue;
      }
      auto& map = trace.str(trace.task_name(t)).starts_with("Node@")
                      ? node_launch_by_connection
                      : other_launch_by_connection;
      map.try_emplace(trace.task_correlation(t), t);
    }
  };
  note_cann(static_cast<uint32_t>(first_task), static_cast<uint32_t>(task_end));
  note_cann(0, static_cast<uint32_t>(first_task));
  for (const auto& [device, host] : flow_launch) {
    // Only this file's device tasks; the first flow of a task wins.
    if (trace.task_launch(device).valid()) continue;
    const int64_t connection = trace.task_correlation(device);
    if (connection >= 0 && connection != kAscendNone &&
        node_launch_by_connection.count(connection) > 0) {
      continue;  // rule a below
    }
    trace.SetTaskLaunch(device, host);
    if (connection < 0 && trace.task_correlation(host) >= 0) {
      trace.SetTaskCorrelation(device, trace.task_correlation(host));
    }
    ++stats_->launch_links_by_flow;
  }
  for (size_t i = first_task; i < task_end; ++i) {
    TaskId t(static_cast<uint32_t>(i));
    const size_t track = trace.task_track(t).value();
    Role role = track < roles.size() ? roles[track] : Role::kNone;
    if (role != Role::kHardware && role != Role::kCommunication) continue;
    const int64_t connection = trace.task_correlation(t);
    if (connection < 0 || connection == kAscendNone) continue;
    if (auto it = node_launch_by_connection.find(connection);
        it != node_launch_by_connection.end()) {
      trace.SetTaskLaunch(t, it->second);
      ++stats_->launch_links_by_node_launch;
      continue;
    }
    if (trace.task_launch(t).valid()) continue;  // rule b
    if (auto it = other_launch_by_connection.find(connection);
        it != other_launch_by_connection.end()) {
      trace.SetTaskLaunch(t, it->second);
      ++stats_->launch_links_by_connection_id;
    }
  }
}

}  // namespace mi::importers::ascend_timeline
