#pragma once

// What a CANN timeline (msprof msprof_*.json, torch_npu trace_view.json)
// means beyond generic trace events: processes named "Ascend Hardware",
// "HCCL" / "Communication", "CANN", "Overlap Analysis" (pids are never
// decoded), msprof args on events without a category, HostToDevice /
// async_npu flows, launches by connection_id, and slices that continue the
// tracks of an earlier slice of the same source. Added to the shared
// trace-event builder as its Extension (README.md "Timeline").

#include <cstdint>
#include <vector>

#include "importers/ascend_timeline/ascend_timeline_importer.h"
#include "importers/common/trace_event/trace_event_builder.h"

namespace mi::importers::ascend_timeline {

class AscendTimelinePass : public trace_event::TraceEventBuilder::Extension {
 public:
  AscendTimelinePass(trace_event::TraceEventBuilder& builder,
                     AscendTimelineStats* stats)
      : builder_(builder), stats_(stats) {}

  bool OnUncategorisedSlice(const trace_event::ParsedEvent& event,
                            TaskRow& row) override;
  void OnFlowEvent(const trace_event::ParsedEvent& event) override;
  TrackId ContinuedTrack(trace_event::IdKey pid,
                         trace_event::IdKey tid) override;
  std::string_view Finish() override;

 private:
  // The role of a process, from its process_name only.
  enum class Role : uint8_t {
    kNone,
    kHardware,       // "Ascend Hardware": device streams ("Stream N")
    kCommunication,  // "HCCL" (2025 torch_npu) / "Communication" (msprof)
    kCann,           // "CANN": host API calls (AscendCL@, Node@launch, ...)
    kOverlap,        // "Overlap Analysis": derived slices, skipped
  };
  static Role RoleOfProcess(std::string_view name);

  struct FlowEnd {
    StringId cat;
    StringId id;
    bool start;  // 's' (else 'f')
    trace_event::IdKey pid;
    trace_event::IdKey tid;
    int64_t ts_ns;
  };

  // The process name of `pid`: this file's metadata, else (later msprof
  // slices carry none) the name an earlier file of the source gave it.
  StringId ProcessNameOf(trace_event::IdKey pid);
  // Step 1 of Finish(): each track's role; this file's Ascend Hardware and
  // HCCL threads become device streams. False when nothing is Ascend.
  bool AssignRoles(std::vector<Role>* roles);
  // Step 2: task kinds, classes and the names to link by.
  void ReviseTasks(const std::vector<Role>& roles);
  // Steps 3 and 4: flows, then launches.
  void LinkFlowsAndLaunches(const std::vector<Role>& roles);

  trace_event::TraceEventBuilder& builder_;
  AscendTimelineStats* stats_;
  uint64_t ascend_events_ = 0;
  std::vector<FlowEnd> flow_ends_;
};

}  // namespace mi::importers::ascend_timeline
