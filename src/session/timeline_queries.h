#pragma once

// The timeline index behind Session::TimelineJson / TimelineWindow /
// TaskDetailsJson / NodeTasksJson (timeline_queries.cc) and the mapping
// table (mapping_queries.cc). Built once per session on first use, then
// read-only, so the server's worker threads share it without locks.
//
// Per track the tasks are laid out in rows by interval nesting: a task
// inside another on the same track goes one row deeper, and a task that
// overlaps an open one without being inside it also goes to a free deeper
// row; so no two tasks of a row overlap, and a row sorted by start is
// sorted by end too. A window query binary-searches each (track, row) lane
// and walks only the tasks inside the window.
//
// Calibration is a constant offset per track, so the index is in raw time
// and a calibrated query shifts the window by each track's offset.

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/ids.h"
#include "model_inspector/session.h"

namespace mi {

class JsonWriter;
class Model;
class Trace;

// Rows deeper than this share the last row (the binary format's row is a
// u8); such a lane may overlap and is searched by its running maximum end.
inline constexpr uint32_t kMaxTimelineRows = 256;

// One (track, row): its tasks in start order, columnar.
struct TimelineLane {
  uint32_t track = 0;  // TrackId value
  uint8_t row = 0;
  std::vector<uint32_t> task;
  std::vector<int64_t> start_ns;  // raw
  std::vector<int64_t> end_ns;    // raw
  // Only for a lane whose tasks overlap (the shared last row): the running
  // maximum of end_ns, which is sorted, for the window search.
  std::vector<int64_t> max_end_ns;
  std::vector<uint32_t> label;  // dense label index (TimelineIndex::labels)
  std::vector<uint32_t> name;   // dense name index (TimelineIndex::names)
  std::vector<uint8_t> kind;    // TaskKind
  std::vector<uint8_t> linked;  // 1 when the task has a graph node
};

struct TimelineTrack {
  uint32_t id = 0;  // TrackId value
  std::string name;
  std::string group;
  uint32_t rows = 1;
  uint64_t task_count = 0;
  int64_t busy_ns = 0;  // union of its tasks' intervals
  uint32_t first_lane = 0;
  uint32_t lane_count = 0;
};

// A flow between two tasks: "launch" (host call -> the task it launched)
// or "event" (the task that recorded an event -> a task that waited on it).
struct TimelineFlow {
  uint32_t from = 0;
  uint32_t to = 0;
  bool event = false;
};

// One row of the mapping table (mapping_queries.cc).
struct MappingRow {
  bool unlinked = false;  // a distinct unlinked task name, not a node
  NodeId node;
  std::string_view name;
  std::string_view op_type;
  std::string_view status;
  uint64_t task_count = 0;
  int64_t total_ns = 0;
  std::vector<uint32_t> streams;          // track ids, ascending
  std::vector<std::string_view> kernels;  // up to 5 distinct task names
  TaskId first_task;                      // the earliest, or Invalid
};

struct TimelineIndex {
  std::vector<TimelineTrack> tracks;     // display order
  std::vector<uint32_t> track_position;  // TrackId value -> tracks index
  std::vector<TimelineLane> lanes;       // by track position, then row
  std::vector<uint8_t> task_row;         // per task
  std::vector<StringId> labels;          // dense label -> string
  std::vector<StringId> names;           // dense name -> string
  // Per task: the host call that launched it (the trace's launch, else the
  // runtime call with its correlation id, else its parent host op).
  std::vector<TaskId> launcher;
  // Flows sorted by (from, to) and the same sorted by (to, from).
  std::vector<TimelineFlow> flows_by_from;
  std::vector<TimelineFlow> flows_by_to;
  int64_t start_ns = 0;  // raw extent of all tasks
  int64_t end_ns = 0;
  int64_t calibrated_start_ns = 0;
  int64_t calibrated_end_ns = 0;
  bool has_calibration = false;
  // Where the timeline opens (analysis/steps' steady window; raw clock),
  // computed once: the step breakdown costs seconds on 10M tasks.
  int64_t steady_start_ns = 0;
  int64_t steady_end_ns = 0;
  int64_t setup_ns = 0;
  uint64_t steady_steps = 0;
  // The counter series (timeline_queries.cc WriteCounters): per (per
  // module, source, device, component), the allocator samples in time
  // order; windows binary-search them.
  struct CounterGroup {
    bool per_module = false;
    uint32_t source = 0;
    int32_t device = -1;
    uint32_t component = 0;
    std::vector<size_t> samples;
  };
  std::vector<CounterGroup> counter_groups;
  // The mapping table's rows, unsorted, built on first use.
  mutable std::once_flag mapping_once;
  mutable std::vector<MappingRow> mapping_rows;
  mutable std::string_view mapping_level;
};

// The session's index, built on the first call (thread-safe).
const TimelineIndex& GetTimelineIndex(const Session::Impl& run);

// The queries behind Session::TimelineJson, TimelineWindow,
// TaskDetailsJson, NodeTasksJson and MappingJson (include/model_inspector/
// session.h), on a session's data (the Session methods forward here; tests
// call them on hand-built data).
StatusOr<std::string> TimelineJsonOf(const Session::Impl& run,
                                     const TimelineRequest& request);
StatusOr<std::string> TimelineWindowOf(const Session::Impl& run,
                                       const TimelineWindowRequest& request);
StatusOr<std::string> CountersJsonOf(const Session::Impl& run,
                                     const TimelineCountersRequest& request);
StatusOr<std::string> TaskDetailsJsonOf(const Session::Impl& run, uint32_t task,
                                        const TimelineRequest& request);
StatusOr<std::string> NodeTasksJsonOf(const Session::Impl& run, uint32_t node,
                                      const TimelineRequest& request);
StatusOr<std::string> MappingJsonOf(const Session::Impl& run,
                                    const MappingRequest& request);

// "stream 7", "thread 1234" (trailing blanks trimmed) and its group
// ("GPU 0", "host pid 123", or the process name; prefixed by the source,
// "rank 1 · GPU 0", when several are loaded): trace/trace.h TrackShortName
// and TrackGroupName.
std::string TimelineTrackName(const Trace& trace, TrackId id);
std::string TimelineTrackGroup(const Trace& trace, TrackId id);

// The label a task is drawn and filtered by: its op type, else its node's
// op type, else its name.
StringId TaskLabel(const Session::Impl& run, TaskId task);

}  // namespace mi
