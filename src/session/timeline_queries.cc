// Timeline queries behind the UI server's /timeline, /timeline/window,
// /tasks/{task} and /tasks?node= endpoints (docs/reference/http-api.md; the
// window's binary form is docs/reference/timeline-binary.md). The index
// (timeline_queries.h) is built once; every query after that only reads.

#include "session/timeline_queries.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analysis/steps/step_breakdown.h"
#include "base/json_writer.h"
#include "base/strings.h"
#include "linker/links.h"
#include "model/model.h"
#include "session/node_queries.h"
#include "session/session_impl.h"
#include "trace/trace.h"

namespace mi {
namespace {

constexpr uint32_t kAggregateTask = 0xFFFFFFFFu;
constexpr uint8_t kFlagAggregate = 1;
constexpr uint8_t kFlagLinked = 2;
constexpr uint32_t kBinaryVersion = 1;
constexpr size_t kTaskKindCount = 8;
// Flows listed for one task (a host op may have launched thousands).
constexpr size_t kMaxFlowsPerTask = 1000;
// Distinct labels tracked per aggregate when choosing its label; more are
// rare (one pixel column of one row) and only lose the tie-break.
constexpr size_t kAggregateLabelSlots = 8;

// Tasks of one track ordered for row assignment: by start, the longer
// first (a parent before the children that start with it), then by id.
void SortForNesting(const Trace& trace, std::vector<uint32_t>* tasks) {
  std::sort(tasks->begin(), tasks->end(), [&](uint32_t a, uint32_t b) {
    int64_t sa = trace.task_start_ns(TaskId(a));
    int64_t sb = trace.task_start_ns(TaskId(b));
    if (sa != sb) return sa < sb;
    int64_t da = trace.task_duration_ns(TaskId(a));
    int64_t db = trace.task_duration_ns(TaskId(b));
    if (da != db) return da > db;
    return a < b;
  });
}

// Rows of one track's tasks (sorted by SortForNesting). A task goes to the
// first free row below the innermost open task that contains it (row 0
// when none does); "free" = every task already in the row has ended.
std::vector<uint32_t> AssignRows(const Trace& trace,
                                 const std::vector<uint32_t>& sorted) {
  struct Open {
    int64_t end;
    uint32_t row;
  };
  std::vector<Open> open;
  std::vector<int64_t> row_end;  // end of the last task placed in each row
  std::vector<uint32_t> rows(sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    TaskId t(sorted[i]);
    int64_t start = trace.task_start_ns(t);
    int64_t end = trace.task_end_ns(t);
    std::erase_if(open, [&](const Open& o) { return o.end <= start; });
    uint32_t min_row = 0;
    for (const Open& o : open) {
      if (o.end >= end) min_row = std::max(min_row, o.row + 1);
    }
    uint32_t row = min_row;
    while (row < row_end.size() && row_end[row] > start) ++row;
    if (row >= row_end.size()) row_end.resize(row + 1, INT64_MIN);
    row_end[row] = std::max(row_end[row], end);
    rows[i] = row;
    open.push_back({end, row});
  }
  return rows;
}

struct DisplayKey {
  int group;        // 0 device streams, 1 host threads, 2 other
  uint32_t source;  // ranks side by side within each kind
  int64_t a;
  int64_t b;
  uint32_t id;
  bool operator<(const DisplayKey& o) const {
    if (group != o.group) return group < o.group;
    if (source != o.source) return source < o.source;
    if (a != o.a) return a < o.a;
    if (b != o.b) return b < o.b;
    return id < o.id;
  }
};

std::shared_ptr<const TimelineIndex> BuildIndex(const Session::Impl& run) {
  const Trace& trace = run.trace;
  auto index = std::make_shared<TimelineIndex>();
  TimelineIndex& x = *index;
  const size_t task_count = trace.task_count();
  const size_t track_count = trace.track_count();

  // Dense labels and names.
  std::unordered_map<uint32_t, uint32_t> label_of, name_of;
  std::vector<uint32_t> task_label(task_count), task_name(task_count);
  for (uint32_t i = 0; i < task_count; ++i) {
    TaskId t(i);
    StringId label = TaskLabel(run, t);
    auto [it, added] =
        label_of.try_emplace(label.value(), uint32_t(x.labels.size()));
    if (added) x.labels.push_back(label);
    task_label[i] = it->second;
    StringId name = trace.task_name(t);
    auto [jt, name_added] =
        name_of.try_emplace(name.value(), uint32_t(x.names.size()));
    if (name_added) x.names.push_back(name);
    task_name[i] = jt->second;
  }

  // Tracks in display order.
  std::vector<DisplayKey> keys;
  for (uint32_t i = 0; i < track_count; ++i) {
    const TrackInfo& info = trace.track(TrackId(i));
    const uint32_t source = info.source.value();
    switch (info.kind) {
      case TrackKind::kDeviceStream:
        keys.push_back({0, source, info.device,
                        info.stream >= 0 ? info.stream : info.tid, i});
        break;
      case TrackKind::kHostThread:
        keys.push_back({1, source, info.pid, info.tid, i});
        break;
      case TrackKind::kOther:
        keys.push_back({2, source, info.pid, info.tid, i});
        break;
    }
  }
  std::sort(keys.begin(), keys.end());
  std::vector<std::vector<uint32_t>> by_track(track_count);
  for (uint32_t i = 0; i < task_count; ++i) {
    by_track[trace.task_track(TaskId(i)).value()].push_back(i);
  }
  x.track_position.assign(track_count, 0);
  x.task_row.assign(task_count, 0);
  x.start_ns = INT64_MAX;
  x.end_ns = INT64_MIN;
  x.calibrated_start_ns = INT64_MAX;
  x.calibrated_end_ns = INT64_MIN;
  for (const DisplayKey& key : keys) {
    TrackId id(key.id);
    const int64_t offset = trace.track(id).clock_offset_ns;
    x.has_calibration = x.has_calibration || offset != 0;
    TimelineTrack track;
    track.id = key.id;
    track.name = TimelineTrackName(trace, id);
    track.group = TimelineTrackGroup(trace, id);
    std::vector<uint32_t>& tasks = by_track[key.id];
    SortForNesting(trace, &tasks);
    std::vector<uint32_t> rows = AssignRows(trace, tasks);
    uint32_t row_count = 1;
    for (uint32_t& r : rows) {
      r = std::min(r, kMaxTimelineRows - 1);
      row_count = std::max(row_count, r + 1);
    }
    track.rows = row_count;
    track.task_count = tasks.size();
    track.first_lane = static_cast<uint32_t>(x.lanes.size());
    track.lane_count = row_count;
    x.lanes.resize(x.lanes.size() + row_count);
    for (uint32_t r = 0; r < row_count; ++r) {
      x.lanes[track.first_lane + r].track = key.id;
      x.lanes[track.first_lane + r].row = static_cast<uint8_t>(r);
    }
    int64_t busy_start = 0, busy_end = 0;
    bool busy_open = false;
    for (size_t i = 0; i < tasks.size(); ++i) {
      TaskId t(tasks[i]);
      int64_t start = trace.task_start_ns(t);
      int64_t end = trace.task_end_ns(t);
      TimelineLane& lane = x.lanes[track.first_lane + rows[i]];
      lane.task.push_back(tasks[i]);
      lane.start_ns.push_back(start);
      lane.end_ns.push_back(end);
      lane.label.push_back(task_label[tasks[i]]);
      lane.name.push_back(task_name[tasks[i]]);
      lane.kind.push_back(static_cast<uint8_t>(trace.task_kind(t)));
      lane.linked.push_back(trace.task_node(t).valid() ? 1 : 0);
      x.task_row[tasks[i]] = static_cast<uint8_t>(rows[i]);
      x.start_ns = std::min(x.start_ns, start);
      x.end_ns = std::max(x.end_ns, end);
      x.calibrated_start_ns = std::min(x.calibrated_start_ns, start + offset);
      x.calibrated_end_ns = std::max(x.calibrated_end_ns, end + offset);
      if (!busy_open || start > busy_end) {
        if (busy_open) track.busy_ns += busy_end - busy_start;
        busy_start = start;
        busy_end = end;
        busy_open = true;
      } else {
        busy_end = std::max(busy_end, end);
      }
    }
    if (busy_open) track.busy_ns += busy_end - busy_start;
    // Only the shared last row can overlap; give it a searchable end.
    for (uint32_t r = 0; r < row_count; ++r) {
      TimelineLane& lane = x.lanes[track.first_lane + r];
      if (!std::is_sorted(lane.end_ns.begin(), lane.end_ns.end())) {
        lane.max_end_ns = lane.end_ns;
        for (size_t i = 1; i < lane.max_end_ns.size(); ++i) {
          lane.max_end_ns[i] =
              std::max(lane.max_end_ns[i], lane.max_end_ns[i - 1]);
        }
      }
    }
    x.track_position[key.id] = static_cast<uint32_t>(x.tracks.size());
    x.tracks.push_back(std::move(track));
  }
  if (task_count == 0) {
    x.start_ns = x.end_ns = x.calibrated_start_ns = x.calibrated_end_ns = 0;
  }

  // Launches: the trace's launch call, else the runtime call with the same
  // correlation id in the same source, on another track (Kineto
  // cudaLaunchKernel), else the parent host op the linker found.
  const CorrelationIndex runtime_calls(trace);
  x.launcher.assign(task_count, TaskId::Invalid());
  for (uint32_t i = 0; i < task_count; ++i) {
    TaskId t(i);
    TaskId launcher = trace.task_launch(t);
    if (!launcher.valid() && IsExecutionKind(trace.task_kind(t))) {
      TaskId call = runtime_calls.RuntimeCallOf(t);
      if (call.valid() && trace.task_track(call) != trace.task_track(t)) {
        launcher = call;
      }
    }
    if (!launcher.valid()) launcher = trace.task_parent(t);
    if (launcher == t) launcher = TaskId::Invalid();
    x.launcher[i] = launcher;
    if (launcher.valid())
      x.flows_by_from.push_back({launcher.value(), i, false});
  }

  // Events: a wait goes back to the latest record of the same event id
  // that started no later than the wait (calibrated time; event ids are
  // reused across iterations).
  std::unordered_map<int32_t, std::vector<std::pair<int64_t, uint32_t>>>
      records;
  for (uint32_t i = 0; i < task_count; ++i) {
    TaskId t(i);
    if (trace.task_event_after(t) >= 0) {
      records[trace.task_event_after(t)].emplace_back(
          trace.task_calibrated_start_ns(t), i);
    }
  }
  for (auto& [event, list] : records) std::sort(list.begin(), list.end());
  for (uint32_t i = 0; i < task_count; ++i) {
    TaskId t(i);
    int32_t event = trace.task_event_before(t);
    if (event < 0) continue;
    auto it = records.find(event);
    if (it == records.end()) continue;
    const auto& list = it->second;
    int64_t wait_start = trace.task_calibrated_start_ns(t);
    auto pos = std::upper_bound(list.begin(), list.end(),
                                std::make_pair(wait_start, UINT32_MAX));
    while (pos != list.begin()) {
      --pos;
      if (pos->second != i) {
        x.flows_by_from.push_back({pos->second, i, true});
        break;
      }
    }
  }
  auto by_from = [](const TimelineFlow& a, const TimelineFlow& b) {
    if (a.from != b.from) return a.from < b.from;
    return a.to < b.to;
  };
  auto by_to = [](const TimelineFlow& a, const TimelineFlow& b) {
    if (a.to != b.to) return a.to < b.to;
    return a.from < b.from;
  };
  std::sort(x.flows_by_from.begin(), x.flows_by_from.end(), by_from);
  x.flows_by_to = x.flows_by_from;
  std::sort(x.flows_by_to.begin(), x.flows_by_to.end(), by_to);
  analysis::StepBreakdownResult steps = analysis::ComputeStepBreakdown(trace);
  x.steady_start_ns = steps.steady_start_ns;
  x.steady_end_ns = steps.steady_end_ns;
  x.setup_ns = steps.setup_ns;
  x.steady_steps = steps.steady_steps;
  {
    using Key = std::tuple<bool, uint32_t, int32_t, uint32_t>;
    std::map<Key, std::vector<size_t>> groups;
    const auto& samples = trace.allocator_samples();
    for (size_t i = 0; i < samples.size(); ++i) {
      const AllocatorSample& s = samples[i];
      groups[{s.per_module, s.source.valid() ? s.source.value() : 0u, s.device,
              s.component.value()}]
          .push_back(i);
    }
    for (auto& [key, list] : groups) {
      std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
        return samples[a].time_ns < samples[b].time_ns;
      });
      TimelineIndex::CounterGroup& g = x.counter_groups.emplace_back();
      std::tie(g.per_module, g.source, g.device, g.component) = key;
      g.samples = std::move(list);
    }
  }
  return index;
}

// The window's items, columnar, as the binary format lays them out.
struct WindowItems {
  std::vector<int64_t> start_ns;  // in the requested clock
  std::vector<int64_t> end_ns;
  std::vector<uint32_t> task;
  std::vector<uint32_t> count;
  std::vector<uint32_t> track;
  std::vector<uint32_t> label;  // response string index
  std::vector<float> busy;
  std::vector<uint8_t> kind;
  std::vector<uint8_t> row;
  std::vector<uint8_t> flags;
  uint64_t total_tasks = 0;

  void Add(int64_t s, int64_t e, uint32_t t, uint32_t n, uint32_t tr,
           uint32_t l, float b, uint8_t k, uint8_t r, uint8_t f) {
    start_ns.push_back(s);
    end_ns.push_back(e);
    task.push_back(t);
    count.push_back(n);
    track.push_back(tr);
    label.push_back(l);
    busy.push_back(b);
    kind.push_back(k);
    row.push_back(r);
    flags.push_back(f);
  }
};

// The strings of one response: dense label -> string index, on demand.
class ResponseStrings {
 public:
  ResponseStrings(const Trace& trace, const TimelineIndex& index)
      : trace_(trace), index_(index), slot_(index.labels.size(), -1) {}
  uint32_t Of(uint32_t dense_label) {
    int32_t& s = slot_[dense_label];
    if (s < 0) {
      s = static_cast<int32_t>(strings_.size());
      strings_.push_back(trace_.str(index_.labels[dense_label]));
    }
    return static_cast<uint32_t>(s);
  }
  const std::vector<std::string_view>& strings() const { return strings_; }

 private:
  const Trace& trace_;
  const TimelineIndex& index_;
  std::vector<int32_t> slot_;
  std::vector<std::string_view> strings_;
};

// Narrow tasks of one pixel column of one lane, merged.
struct Aggregate {
  bool open = false;
  int64_t column = 0;
  int64_t start = 0;  // raw
  int64_t end = 0;
  uint32_t count = 0;
  uint32_t first_task = 0;
  int64_t busy_ns = 0;
  uint8_t flags = 0;
  int64_t kind_ns[kTaskKindCount] = {};
  uint8_t first_kind = 0;
  uint32_t label[kAggregateLabelSlots] = {};
  int64_t label_ns[kAggregateLabelSlots] = {};
  size_t labels = 0;

  void Start(int64_t col, int64_t s, int64_t e, uint32_t task) {
    open = true;
    column = col;
    start = s;
    end = e;
    count = 0;
    first_task = task;
    busy_ns = 0;
    flags = 0;
    std::fill(std::begin(kind_ns), std::end(kind_ns), 0);
    labels = 0;
  }
  void Add(int64_t s, int64_t e, uint32_t l, uint8_t k, bool linked) {
    if (count == 0) first_kind = k;
    ++count;
    start = std::min(start, s);
    end = std::max(end, e);
    int64_t d = e - s;
    busy_ns += d;
    kind_ns[k] += d;
    if (linked) flags |= kFlagLinked;
    for (size_t i = 0; i < labels; ++i) {
      if (label[i] == l) {
        label_ns[i] += d;
        return;
      }
    }
    if (labels < kAggregateLabelSlots) {
      label[labels] = l;
      label_ns[labels] = d;
      ++labels;
    }
  }
};

struct WindowFilter {
  std::vector<uint8_t> track;  // by track id; empty = all
  std::vector<uint8_t> label;  // by dense label; empty = all
  std::vector<uint8_t> name;   // by dense name; empty = all
  uint8_t kinds = 0xFF;        // bit per TaskKind
};

void QueryLane(const TimelineLane& lane, int64_t offset, int64_t ws, int64_t we,
               double pixel_ns, uint32_t pixels, const WindowFilter& filter,
               ResponseStrings* strings, WindowItems* out) {
  // Raw window of this track.
  const int64_t lws = ws - offset;
  const int64_t lwe = we - offset;
  const std::vector<int64_t>& ends =
      lane.max_end_ns.empty() ? lane.end_ns : lane.max_end_ns;
  // First task that may reach the window (a zero-length task at the left
  // edge counts), last that starts before its end.
  size_t lo = std::lower_bound(ends.begin(), ends.end(), lws) - ends.begin();
  size_t hi =
      std::lower_bound(lane.start_ns.begin(), lane.start_ns.end(), lwe) -
      lane.start_ns.begin();
  const bool filter_label = !filter.label.empty();
  const bool filter_name = !filter.name.empty();
  Aggregate agg;
  auto flush = [&]() {
    if (!agg.open) return;
    agg.open = false;
    if (agg.count == 1) {
      out->Add(agg.start + offset, agg.end + offset, agg.first_task, 1,
               lane.track, strings->Of(agg.label[0]), 1.0f, agg.first_kind,
               lane.row, agg.flags);
      return;
    }
    size_t best = 0;
    for (size_t i = 1; i < agg.labels; ++i) {
      if (agg.label_ns[i] > agg.label_ns[best]) best = i;
    }
    size_t best_kind = agg.first_kind;
    for (size_t k = 0; k < kTaskKindCount; ++k) {
      if (agg.kind_ns[k] > agg.kind_ns[best_kind]) best_kind = k;
    }
    int64_t extent = agg.end - agg.start;
    float busy = extent > 0 ? static_cast<float>(std::min<double>(
                                  1.0, double(agg.busy_ns) / double(extent)))
                            : 1.0f;
    out->Add(agg.start + offset, agg.end + offset, kAggregateTask, agg.count,
             lane.track, strings->Of(agg.label[best]), busy,
             static_cast<uint8_t>(best_kind), lane.row,
             static_cast<uint8_t>(agg.flags | kFlagAggregate));
  };
  const double inv_pixel = 1.0 / pixel_ns;
  const int64_t last_column = static_cast<int64_t>(pixels) - 1;
  for (size_t i = lo; i < hi; ++i) {
    const int64_t s = lane.start_ns[i];
    const int64_t e = lane.end_ns[i];
    // Overlap with [lws, lwe); a zero-length task counts inside it.
    if (e < lws || (e == lws && s != e)) continue;
    if (filter_label && !filter.label[lane.label[i]]) continue;
    if (filter_name && !filter.name[lane.name[i]]) continue;
    const uint8_t kind = lane.kind[i];
    if (((filter.kinds >> kind) & 1) == 0) continue;
    ++out->total_tasks;
    const bool linked = lane.linked[i] != 0;
    if (double(e - s) >= pixel_ns) {
      flush();
      out->Add(s + offset, e + offset, lane.task[i], 1, lane.track,
               strings->Of(lane.label[i]), 1.0f, kind, lane.row,
               linked ? kFlagLinked : 0);
      continue;
    }
    int64_t column =
        static_cast<int64_t>(std::floor(double(s - lws) * inv_pixel));
    column = std::clamp<int64_t>(column, 0, last_column);
    if (!agg.open || agg.column != column) {
      flush();
      agg.Start(column, s, e, lane.task[i]);
    }
    agg.Add(s, e, lane.label[i], kind, linked);
  }
  flush();
}

template <typename T>
void Append(std::string* out, const std::vector<T>& v) {
  while (out->size() % 8 != 0) out->push_back('\0');
  size_t at = out->size();
  out->resize(at + v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out->data() + at, v.data(), v.size() * sizeof(T));
}

template <typename T>
void AppendScalar(std::string* out, T v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out->append(bytes, sizeof(T));
}

// docs/reference/timeline-binary.md (little-endian hosts: x86, arm).
std::string EncodeBinary(const WindowItems& items,
                         const std::vector<std::string_view>& strings,
                         int64_t ws, int64_t we) {
  std::string out;
  size_t n = items.task.size();
  size_t string_bytes = 0;
  for (std::string_view s : strings) string_bytes += s.size();
  out.reserve(40 + n * 44 + 64 + strings.size() * 4 + string_bytes);
  out.append("MITW", 4);
  AppendScalar<uint32_t>(&out, kBinaryVersion);
  AppendScalar<uint32_t>(&out, static_cast<uint32_t>(n));
  AppendScalar<uint32_t>(&out, static_cast<uint32_t>(strings.size()));
  AppendScalar<double>(&out, double(ws));
  AppendScalar<double>(&out, double(we));
  AppendScalar<uint32_t>(&out, static_cast<uint32_t>(std::min<uint64_t>(
                                   items.total_tasks, UINT32_MAX)));
  AppendScalar<uint32_t>(&out, 0);  // reserved
  // f64, as the browser reads times (exact below 2^53 ns, ~104 days).
  Append(&out,
         std::vector<double>(items.start_ns.begin(), items.start_ns.end()));
  Append(&out, std::vector<double>(items.end_ns.begin(), items.end_ns.end()));
  Append(&out, items.task);
  Append(&out, items.count);
  Append(&out, items.track);
  Append(&out, items.label);
  Append(&out, items.busy);
  Append(&out, items.kind);
  Append(&out, items.row);
  Append(&out, items.flags);
  std::vector<uint32_t> lengths;
  for (std::string_view s : strings) {
    lengths.push_back(static_cast<uint32_t>(s.size()));
  }
  Append(&out, lengths);
  for (std::string_view s : strings) out.append(s);
  return out;
}

std::string EncodeJson(const WindowItems& items,
                       const std::vector<std::string_view>& strings, int64_t ws,
                       int64_t we) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.FieldInt("start_ns", ws).FieldInt("end_ns", we);
  w.FieldInt("total_tasks_in_window", static_cast<int64_t>(items.total_tasks));
  w.Key("items").BeginArray();
  for (size_t i = 0; i < items.task.size(); ++i) {
    w.BeginObject();
    w.FieldInt("start_ns", items.start_ns[i]);
    w.FieldInt("end_ns", items.end_ns[i]);
    w.Key("task");
    items.task[i] == kAggregateTask ? w.Null() : w.UInt(items.task[i]);
    w.FieldInt("count", items.count[i]);
    w.FieldInt("track", items.track[i]);
    w.Field("label", strings[items.label[i]]);
    w.FieldDouble("busy", items.busy[i]);
    w.Field("kind", TaskKindName(static_cast<TaskKind>(items.kind[i])));
    w.FieldInt("row", items.row[i]);
    w.FieldInt("flags", items.flags[i]);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

int64_t ClockOffset(const Trace& trace, TrackId track, TraceClock clock) {
  return clock == TraceClock::kCalibrated ? trace.track(track).clock_offset_ns
                                          : 0;
}

void WriteTaskRef(JsonWriter& w, const Trace& trace, TaskId t,
                  TraceClock clock) {
  int64_t offset = ClockOffset(trace, trace.task_track(t), clock);
  w.BeginObject();
  w.FieldInt("id", t.value());
  w.Field("name", trace.str(trace.task_name(t)));
  w.FieldInt("track", trace.task_track(t).value());
  w.FieldInt("start_ns", trace.task_start_ns(t) + offset);
  w.FieldInt("end_ns", trace.task_end_ns(t) + offset);
  w.EndObject();
}

void WriteFlow(JsonWriter& w, const Trace& trace, const TimelineFlow& f,
               TraceClock clock) {
  TaskId from(f.from), to(f.to);
  int64_t from_offset = ClockOffset(trace, trace.task_track(from), clock);
  int64_t to_offset = ClockOffset(trace, trace.task_track(to), clock);
  w.BeginObject();
  w.Field("kind", f.event ? "event" : "launch");
  w.FieldInt("from_task", f.from).FieldInt("to_task", f.to);
  w.FieldInt("from_track", trace.task_track(from).value());
  w.FieldInt("to_track", trace.task_track(to).value());
  // A launch leaves when the call starts; an event is recorded when the
  // recording task ends.
  w.FieldInt("from_ns",
             (f.event ? trace.task_end_ns(from) : trace.task_start_ns(from)) +
                 from_offset);
  w.FieldInt("to_ns", trace.task_start_ns(to) + to_offset);
  w.EndObject();
}

}  // namespace

std::string TimelineTrackName(const Trace& trace, TrackId id) {
  return TrackShortName(trace, id);
}

std::string TimelineTrackGroup(const Trace& trace, TrackId id) {
  return TrackGroupName(trace, id);
}

StringId TaskLabel(const Session::Impl& run, TaskId task) {
  const Trace& trace = run.trace;
  if (trace.task_op_type(task) != StringPool::kEmpty) {
    return trace.task_op_type(task);
  }
  NodeId node = trace.task_node(task);
  if (node.valid() && node.value() < run.model.node_count()) {
    return run.model.node_op_type(node);
  }
  return trace.task_name(task);
}

const TimelineIndex& GetTimelineIndex(const Session::Impl& run) {
  std::call_once(run.timeline_once,
                 [&run]() { run.timeline = BuildIndex(run); });
  return *run.timeline;
}

namespace {

// Where the timeline opens: the steady-state steps (analysis/steps: every
// step but the setup before the first marked one), clamped to the trace's
// extent; the whole trace when there are no steps or no setup to skip.
void WriteDefaultWindow(const TimelineIndex& steps, int64_t start_ns,
                        int64_t end_ns, JsonWriter* w) {
  int64_t from = start_ns, to = end_ns;
  std::string_view rule = "whole trace: no step markers";
  if (steps.steady_end_ns > steps.steady_start_ns) {
    from = std::max(start_ns, steps.steady_start_ns);
    to = std::min(end_ns, steps.steady_end_ns);
    rule = steps.setup_ns > 0 ? "steady-state steps: setup before the first "
                                "step skipped"
                              : "all steps: no setup before the first step";
    if (to <= from) {
      from = start_ns;
      to = end_ns;
      rule = "whole trace: the steps lie outside the tasks";
    }
  }
  w->Key("default_window").BeginObject();
  w->FieldInt("start_ns", from).FieldInt("end_ns", to);
  w->Field("rule", rule);
  w->FieldInt("setup_ns", steps.setup_ns);
  w->FieldInt("steady_steps", static_cast<int64_t>(steps.steady_steps));
  w->EndObject();
}

// Counter tracks: the allocator's totals over time (trace/allocator_records.h:
// Kineto [memory] events, Ascend memory_record.csv rows) and what each CANN
// module reserved (npu_module_mem.csv, group "module memory"), one series per
// (source, device, component, figure), points in time order as recorded.
// Values are bytes; a sample that does not give a figure (-1) is not a
// point of that figure's series.
//
// A series with more than `max_points` points (in the window, when one is
// given) is sent downsampled, M4-style: its time span cut into max_points / 4
// buckets, each giving its first, lowest, highest and last point in time
// order, so every peak and step edge survives at the bucket's resolution (a
// 5 GB Kineto trace holds six series of ~700K points: 21 MB of JSON sent
// whole). The UI asks for the window it shows when it zooms
// (CountersJsonOf).
struct CounterSelection {
  bool windowed = false;
  int64_t from_ns = 0;  // [from_ns, to_ns): with the last point before it
  int64_t to_ns = 0;    // and the first at or after its end
  size_t max_points = kMaxCounterPoints;
};

void WriteSeriesPoints(const std::vector<std::pair<int64_t, int64_t>>& all,
                       const CounterSelection& select, JsonWriter* w) {
  size_t begin = 0;
  size_t end = all.size();
  if (select.windowed) {
    auto before = [](const std::pair<int64_t, int64_t>& p, int64_t t) {
      return p.first < t;
    };
    begin = std::lower_bound(all.begin(), all.end(), select.from_ns, before) -
            all.begin();
    if (begin > 0) --begin;  // the value in force at the window's start
    end =
        std::lower_bound(all.begin() + begin, all.end(), select.to_ns, before) -
        all.begin();
    if (end < all.size()) ++end;  // the line reaches the window's end
  }
  const size_t n = end - begin;
  std::vector<size_t> keep;
  const size_t max_points = std::max<size_t>(select.max_points, 4);
  if (n <= max_points) {
    for (size_t i = begin; i < end; ++i) keep.push_back(i);
  } else {
    const size_t buckets = max_points / 4;
    const int64_t t0 = all[begin].first;
    const int64_t span = all[end - 1].first - t0 + 1;
    size_t i = begin;
    for (size_t b = 0; b < buckets && i < end; ++b) {
      // Bucket b: times below t0 + span * (b + 1) / buckets.
      // (span * (b + 1) / buckets without overflowing)
      const int64_t k = static_cast<int64_t>(b + 1);
      const int64_t nb = static_cast<int64_t>(buckets);
      const int64_t limit = b + 1 == buckets
                                ? std::numeric_limits<int64_t>::max()
                                : t0 + span / nb * k + span % nb * k / nb;
      if (all[i].first >= limit) continue;
      size_t first = i, lowest = i, highest = i, last = i;
      for (; i < end && all[i].first < limit; ++i) {
        if (all[i].second < all[lowest].second) lowest = i;
        if (all[i].second > all[highest].second) highest = i;
        last = i;
      }
      size_t picks[4] = {first, lowest, highest, last};
      std::sort(picks, picks + 4);
      for (size_t k = 0; k < 4; ++k) {
        if (keep.empty() || keep.back() != picks[k]) keep.push_back(picks[k]);
      }
    }
  }
  w->FieldInt("points", static_cast<int64_t>(n));
  w->FieldBool("downsampled", keep.size() < n);
  w->Key("t").BeginArray();
  for (size_t i : keep) w->Int(all[i].first);
  w->EndArray();
  w->Key("v").BeginArray();
  for (size_t i : keep) w->Int(all[i].second);
  w->EndArray();
}

void WriteCounters(const Trace& trace, const TimelineIndex& x,
                   const CounterSelection& select, JsonWriter* w) {
  const auto& samples = trace.allocator_samples();
  w->Key("counters").BeginArray();
  std::vector<std::pair<int64_t, int64_t>> points;
  for (const TimelineIndex::CounterGroup& g : x.counter_groups) {
    const bool per_module = g.per_module;
    const uint32_t source = g.source;
    const int32_t device = g.device;
    const uint32_t component = g.component;
    const std::vector<size_t>& list = g.samples;
    const std::string device_name =
        device >= 0 ? fmt::format("device {}", device) : std::string("host");
    std::string where = device_name;
    std::string_view comp = trace.str(StringId(component));
    if (!comp.empty()) where += fmt::format(" · {}", comp);
    std::string prefix =
        trace.source_count() > 0 && source < trace.source_count()
            ? SourcePrefix(trace, SourceId(source))
            : std::string();
    for (int figure = 0; figure < 2; ++figure) {
      const bool allocated = figure == 0;
      points.clear();
      for (size_t i : list) {
        const AllocatorSample& s = samples[i];
        int64_t v =
            allocated ? s.total_allocated_bytes : s.total_reserved_bytes;
        if (v >= 0) points.emplace_back(s.time_ns, v);
      }
      if (points.empty()) continue;
      w->BeginObject();
      w->Field("name",
               fmt::format("{}memory {} ({})", prefix,
                           allocated ? "allocated" : "reserved", where));
      w->Field("group", fmt::format("{}{}memory · {}", prefix,
                                    per_module ? "module " : "", device_name));
      w->FieldBool("per_module", per_module);
      w->Field("figure", allocated ? "allocated" : "reserved");
      w->Field("unit", "bytes");
      w->FieldInt("source", source);
      w->FieldInt("device", device);
      w->Field("component", comp);
      WriteSeriesPoints(points, select, w);
      w->EndObject();
    }
  }
  w->EndArray();
}

}  // namespace

StatusOr<std::string> TimelineJsonOf(const Session::Impl& run,
                                     const TimelineRequest& request) {
  const Trace& trace = run.trace;
  const TimelineIndex& x = GetTimelineIndex(run);
  const bool calibrated = request.clock == TraceClock::kCalibrated;
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.FieldInt("start_ns", calibrated ? x.calibrated_start_ns : x.start_ns);
  w.FieldInt("end_ns", calibrated ? x.calibrated_end_ns : x.end_ns);
  w.Field("clock", calibrated ? "calibrated" : "raw");
  w.FieldInt("task_count", static_cast<int64_t>(trace.task_count()));
  w.FieldBool("has_calibration", x.has_calibration);
  w.Key("tracks").BeginArray();
  for (const TimelineTrack& t : x.tracks) {
    const TrackInfo& info = trace.track(TrackId(t.id));
    w.BeginObject();
    w.FieldInt("id", t.id);
    w.Field("kind", TrackKindName(info.kind));
    w.Field("name", t.name);
    w.Field("group", t.group);
    w.FieldInt("source", info.source.value());
    w.FieldInt("device", info.device);
    w.FieldInt("stream", info.stream);
    w.FieldInt("pid", info.pid);
    w.FieldInt("tid", info.tid);
    w.FieldInt("task_count", static_cast<int64_t>(t.task_count));
    w.FieldInt("rows", t.rows);
    w.FieldInt("busy_ns", t.busy_ns);
    w.FieldInt("clock_offset_ns", info.clock_offset_ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("runs").BeginArray();
  for (size_t i = 0; i < trace.runs().size(); ++i) {
    const RunInfo& r = trace.runs()[i];
    w.BeginObject();
    w.FieldInt("index", static_cast<int64_t>(i));
    w.Field("name", RunName(trace, static_cast<uint32_t>(i)));
    w.FieldInt("start_ns", r.start_ns).FieldInt("end_ns", r.end_ns);
    w.EndObject();
  }
  w.EndArray();
  std::vector<std::string_view> labels;
  for (StringId s : x.labels) labels.push_back(trace.str(s));
  std::sort(labels.begin(), labels.end());
  w.Key("op_types").BeginArray();
  for (std::string_view l : labels) w.String(l);
  w.EndArray();
  WriteDefaultWindow(x, calibrated ? x.calibrated_start_ns : x.start_ns,
                     calibrated ? x.calibrated_end_ns : x.end_ns, &w);
  WriteCounters(trace, x, CounterSelection{}, &w);
  w.EndObject();
  return out;
}

namespace {

// A window query's bounds and width; `what` names the query in the error.
Status CheckWindow(std::string_view what, int64_t start_ns, int64_t end_ns,
                   uint32_t pixels) {
  if (end_ns <= start_ns) {
    return InvalidArgumentError(
        fmt::format("{}: start_ns ({}) must be before end_ns ({})", what,
                    start_ns, end_ns));
  }
  if (pixels < 1 || pixels > kMaxTimelinePixels) {
    return InvalidArgumentError(fmt::format("px: expected 1..{}, found {}",
                                            kMaxTimelinePixels, pixels));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> CountersJsonOf(const Session::Impl& run,
                                     const TimelineCountersRequest& request) {
  MI_RETURN_IF_ERROR(CheckWindow("counters", request.start_ns, request.end_ns,
                                 request.pixels));
  CounterSelection select;
  select.windowed = true;
  select.from_ns = request.start_ns;
  select.to_ns = request.end_ns;
  select.max_points = 4 * size_t{request.pixels};
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.FieldInt("start_ns", request.start_ns).FieldInt("end_ns", request.end_ns);
  WriteCounters(run.trace, GetTimelineIndex(run), select, &w);
  w.EndObject();
  return out;
}

StatusOr<std::string> TimelineWindowOf(const Session::Impl& run,
                                       const TimelineWindowRequest& request) {
  const Trace& trace = run.trace;
  MI_RETURN_IF_ERROR(
      CheckWindow("window", request.start_ns, request.end_ns, request.pixels));
  const TimelineIndex& x = GetTimelineIndex(run);
  WindowFilter filter;
  if (!request.tracks.empty()) {
    filter.track.assign(trace.track_count(), 0);
    for (uint32_t t : request.tracks) {
      if (t >= trace.track_count()) {
        return InvalidArgumentError(fmt::format(
            "tracks: no track {}; this trace has tracks 0..{}", t,
            trace.track_count() == 0 ? 0 : trace.track_count() - 1));
      }
      filter.track[t] = 1;
    }
  }
  if (!request.kinds.empty()) {
    filter.kinds = 0;
    for (const std::string& k : request.kinds) {
      bool known = false;
      for (size_t i = 0; i < kTaskKindCount; ++i) {
        if (TaskKindName(static_cast<TaskKind>(i)) == k) {
          filter.kinds |= static_cast<uint8_t>(1u << i);
          known = true;
        }
      }
      if (!known) {
        return InvalidArgumentError(fmt::format(
            "kind: unknown task kind '{}'; expected compute, data_movement, "
            "sync, host_op, runtime, annotation, overhead or other",
            k));
      }
    }
  }
  if (!request.labels.empty()) {
    filter.label.assign(x.labels.size(), 0);
    for (size_t i = 0; i < x.labels.size(); ++i) {
      std::string_view l = trace.str(x.labels[i]);
      for (const std::string& want : request.labels) {
        if (l == want) filter.label[i] = 1;
      }
    }
  }
  if (!request.name_contains.empty()) {
    filter.name.assign(x.names.size(), 0);
    for (size_t i = 0; i < x.names.size(); ++i) {
      filter.name[i] =
          ContainsIgnoringCase(trace.str(x.names[i]), request.name_contains)
              ? 1
              : 0;
    }
  }
  const double pixel_ns =
      double(request.end_ns - request.start_ns) / double(request.pixels);
  ResponseStrings strings(trace, x);
  WindowItems items;
  for (const TimelineTrack& track : x.tracks) {
    if (!filter.track.empty() && !filter.track[track.id]) continue;
    int64_t offset = ClockOffset(trace, TrackId(track.id), request.clock);
    for (uint32_t l = 0; l < track.lane_count; ++l) {
      QueryLane(x.lanes[track.first_lane + l], offset, request.start_ns,
                request.end_ns, pixel_ns, request.pixels, filter, &strings,
                &items);
    }
  }
  if (request.json) {
    return EncodeJson(items, strings.strings(), request.start_ns,
                      request.end_ns);
  }
  return EncodeBinary(items, strings.strings(), request.start_ns,
                      request.end_ns);
}

StatusOr<std::string> TaskDetailsJsonOf(const Session::Impl& run, uint32_t task,
                                        const TimelineRequest& request) {
  const Trace& trace = run.trace;
  const Model& m = run.model;
  if (task >= trace.task_count()) {
    return NotFoundError(fmt::format("no task {}; this trace has {} tasks",
                                     task, trace.task_count()));
  }
  const TimelineIndex& x = GetTimelineIndex(run);
  TaskId t(task);
  const TraceClock clock = request.clock;
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.FieldInt("id", task);
  w.Field("name", trace.str(trace.task_name(t)));
  w.Field("category", trace.str(trace.task_category(t)));
  w.Field("op_type", trace.str(trace.task_op_type(t)));
  w.Field("label", trace.str(TaskLabel(run, t)));
  w.Field("kind", TaskKindName(trace.task_kind(t)));
  TrackId track = trace.task_track(t);
  w.Key("track").BeginObject();
  w.FieldInt("id", track.value());
  w.Field("name", TimelineTrackName(trace, track));
  w.Field("group", TimelineTrackGroup(trace, track));
  w.EndObject();
  w.FieldInt("row", x.task_row[task]);
  int64_t offset = ClockOffset(trace, track, clock);
  w.Field("clock", clock == TraceClock::kCalibrated ? "calibrated" : "raw");
  w.FieldInt("start_ns", trace.task_start_ns(t) + offset);
  w.FieldInt("end_ns", trace.task_end_ns(t) + offset);
  w.FieldInt("duration_ns", trace.task_duration_ns(t));
  w.FieldInt("calibrated_start_ns", trace.task_calibrated_start_ns(t));
  w.FieldInt("run", trace.task_run(t));
  NodeId node = trace.task_node(t);
  w.Key("node");
  const bool has_node = node.valid() && node.value() < m.node_count();
  has_node ? WriteNodeRef(w, m, node) : (void)w.Null();
  w.Key("fused_from").BeginArray();
  if (has_node) {
    for (NodeId f : run.links.fused_from.Get(node)) WriteNodeRef(w, m, f);
  }
  w.EndArray();
  w.Key("launch");
  TaskId launcher = x.launcher[task];
  launcher.valid() ? WriteTaskRef(w, trace, launcher, clock) : (void)w.Null();
  TaskId parent = trace.task_parent(t);
  w.Key("parent");
  parent.valid() ? w.UInt(parent.value()) : w.Null();
  w.FieldIntOrNull("correlation", trace.task_correlation(t));
  w.FieldIntOrNull("external_id", trace.task_external_id(t));
  w.FieldIntOrNull("bytes", trace.task_bytes(t));
  w.FieldIntOrNull("event_before", trace.task_event_before(t));
  w.FieldIntOrNull("event_after", trace.task_event_after(t));
  w.Field("shapes", trace.str(trace.task_shapes(t)));
  w.Field("output_shapes", trace.str(trace.task_output_shapes(t)));
  // Flows into the task, then out of it.
  w.Key("flows").BeginArray();
  size_t written = 0;
  auto in = std::equal_range(
      x.flows_by_to.begin(), x.flows_by_to.end(), TimelineFlow{0, task, false},
      [](const TimelineFlow& a, const TimelineFlow& b) { return a.to < b.to; });
  for (auto it = in.first; it != in.second && written < kMaxFlowsPerTask;
       ++it, ++written) {
    WriteFlow(w, trace, *it, clock);
  }
  auto outs =
      std::equal_range(x.flows_by_from.begin(), x.flows_by_from.end(),
                       TimelineFlow{task, 0, false},
                       [](const TimelineFlow& a, const TimelineFlow& b) {
                         return a.from < b.from;
                       });
  size_t out_count = outs.second - outs.first;
  for (auto it = outs.first; it != outs.second && written < kMaxFlowsPerTask;
       ++it, ++written) {
    WriteFlow(w, trace, *it, clock);
  }
  w.EndArray();
  w.FieldInt("flow_count",
             static_cast<int64_t>((in.second - in.first) + out_count));
  w.EndObject();
  return out;
}

StatusOr<std::string> NodeTasksJsonOf(const Session::Impl& run, uint32_t node,
                                      const TimelineRequest& request) {
  const Trace& trace = run.trace;
  const Model& m = run.model;
  if (node >= m.node_count()) {
    return NotFoundError(
        fmt::format("no node {}; node ids are 0..{}", node,
                    m.node_count() == 0 ? 0 : m.node_count() - 1));
  }
  NodeId n(node);
  // A framework node fused into a compiled node ran inside the compiled
  // node's tasks.
  std::vector<NodeId> via;
  std::vector<TaskId> tasks;
  auto own = run.links.mapped_tasks.Get(n);
  if (!own.empty()) {
    via.push_back(n);
    tasks.assign(own.begin(), own.end());
  } else {
    for (NodeId c : run.links.fused_into.Get(n)) {
      auto list = run.links.mapped_tasks.Get(c);
      if (list.empty()) continue;
      via.push_back(c);
      tasks.insert(tasks.end(), list.begin(), list.end());
    }
  }
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  int64_t start = INT64_MAX, end = INT64_MIN;
  for (TaskId t : tasks) {
    int64_t offset = ClockOffset(trace, trace.task_track(t), request.clock);
    start = std::min(start, trace.task_start_ns(t) + offset);
    end = std::max(end, trace.task_end_ns(t) + offset);
  }
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.FieldInt("node", node);
  w.Key("via_nodes").BeginArray();
  for (NodeId v : via) w.UInt(v.value());
  w.EndArray();
  w.Key("tasks").BeginArray();
  for (TaskId t : tasks) w.UInt(t.value());
  w.EndArray();
  w.Key("start_ns");
  tasks.empty() ? w.Null() : w.Int(start);
  w.Key("end_ns");
  tasks.empty() ? w.Null() : w.Int(end);
  w.EndObject();
  return out;
}

StatusOr<std::string> Session::TimelineJson(
    const TimelineRequest& request) const {
  return TimelineJsonOf(*impl_, request);
}

StatusOr<std::string> Session::TimelineWindow(
    const TimelineWindowRequest& request) const {
  return TimelineWindowOf(*impl_, request);
}

StatusOr<std::string> Session::TimelineCounters(
    const TimelineCountersRequest& request) const {
  return CountersJsonOf(*impl_, request);
}

StatusOr<std::string> Session::TaskDetailsJson(
    uint32_t task, const TimelineRequest& request) const {
  return TaskDetailsJsonOf(*impl_, task, request);
}

StatusOr<std::string> Session::NodeTasksJson(
    uint32_t node, const TimelineRequest& request) const {
  return NodeTasksJsonOf(*impl_, node, request);
}

}  // namespace mi
