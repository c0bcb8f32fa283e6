// The mapping table behind the UI server's /mapping endpoint
// (docs/reference/http-api.md): one row per compiled node (per framework
// node when the run has no compiled graph) with the framework ops it
// replaced and its tasks, plus one row per distinct unlinked task name.
// The rows are built once (kept beside the timeline index); each request
// filters, sorts and pages them, so the UI's table can virtualise.

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "base/json_writer.h"
#include "base/strings.h"
#include "linker/links.h"
#include "model/model.h"
#include "session/node_queries.h"
#include "session/session_impl.h"
#include "session/timeline_queries.h"
#include "trace/trace.h"

namespace mi {
namespace {

constexpr size_t kMaxKernelNames = 5;
constexpr std::string_view kSortKeys[] = {"total_ns", "task_count", "name",
                                          "op_type",  "status",     "streams"};
constexpr std::string_view kStatuses[] = {"executed", "fused",   "not_executed",
                                          "inserted", "unknown", "unlinked"};

// Adds a task's figures to a row.
void AddTask(const Trace& trace, TaskId t, MappingRow* row) {
  ++row->task_count;
  row->total_ns += trace.task_duration_ns(t);
  uint32_t track = trace.task_track(t).value();
  auto pos = std::lower_bound(row->streams.begin(), row->streams.end(), track);
  if (pos == row->streams.end() || *pos != track) {
    row->streams.insert(pos, track);
  }
  std::string_view name = trace.str(trace.task_name(t));
  if (row->kernels.size() < kMaxKernelNames &&
      std::find(row->kernels.begin(), row->kernels.end(), name) ==
          row->kernels.end()) {
    row->kernels.push_back(name);
  }
  if (!row->first_task.valid() ||
      trace.task_start_ns(t) < trace.task_start_ns(row->first_task)) {
    row->first_task = t;
  }
}

void BuildRows(const Session::Impl& run, const TimelineIndex& index) {
  const Model& m = run.model;
  const Trace& trace = run.trace;
  const Links& links = run.links;
  GraphId root = run.compiled.valid() ? run.compiled : run.framework;
  index.mapping_level = run.compiled.valid() ? "compiled" : "framework";
  std::vector<MappingRow>& rows = index.mapping_rows;
  if (root.valid()) {
    for (uint32_t i = 0; i < m.node_count(); ++i) {
      NodeId n(i);
      if (m.RootOf(m.node_graph(n)) != root) continue;
      MappingRow row;
      row.node = n;
      row.name = m.str(m.node_name(n));
      row.op_type = m.str(m.node_op_type(n));
      row.status = NodeStatusName(
          i < links.status.size() ? links.status[i] : NodeStatus::kUnknown);
      for (TaskId t : links.mapped_tasks.Get(n)) AddTask(trace, t, &row);
      rows.push_back(std::move(row));
    }
  }
  // Unlinked tasks of the tasks the summary counts: execution tasks, or
  // host ops in a host-only trace.
  bool any_execution = false;
  for (uint32_t i = 0; i < trace.task_count() && !any_execution; ++i) {
    any_execution = IsExecutionKind(trace.task_kind(TaskId(i)));
  }
  std::unordered_map<uint32_t, size_t> row_of_name;
  for (uint32_t i = 0; i < trace.task_count(); ++i) {
    TaskId t(i);
    TaskKind kind = trace.task_kind(t);
    bool counted =
        any_execution ? IsExecutionKind(kind) : kind == TaskKind::kHostOp;
    if (!counted || trace.task_node(t).valid()) continue;
    auto [it, added] =
        row_of_name.try_emplace(trace.task_name(t).value(), rows.size());
    if (added) {
      MappingRow row;
      row.unlinked = true;
      row.name = trace.str(trace.task_name(t));
      row.op_type = trace.str(trace.task_op_type(t));
      row.status = "unlinked";
      rows.push_back(std::move(row));
    }
    AddTask(trace, t, &rows[it->second]);
  }
}

bool Matches(const Model& m, const Links& links, const MappingRow& row,
             std::string_view q) {
  if (q.empty()) return true;
  if (ContainsIgnoringCase(row.name, q) ||
      ContainsIgnoringCase(row.op_type, q)) {
    return true;
  }
  for (std::string_view k : row.kernels) {
    if (ContainsIgnoringCase(k, q)) return true;
  }
  if (!row.unlinked) {
    for (NodeId f : links.fused_from.Get(row.node)) {
      if (ContainsIgnoringCase(m.str(m.node_name(f)), q)) return true;
    }
  }
  return false;
}

// Whether `row` holds framework or compiled node `node`: its own row, or
// the row of a compiled node it was fused into.
bool HoldsNode(const Links& links, const MappingRow& row, NodeId node) {
  if (row.unlinked) return false;
  if (row.node == node) return true;
  for (NodeId f : links.fused_from.Get(row.node)) {
    if (f == node) return true;
  }
  return false;
}

// Index in `kept` of the first row holding the node or task `request`
// asks for, -1 when none (an absent id, a row the filters dropped).
int64_t FoundIndex(const Session::Impl& run,
                   const std::vector<const MappingRow*>& kept,
                   const MappingRequest& request) {
  const Trace& trace = run.trace;
  NodeId node;
  std::string_view unlinked_name;
  if (request.find_node >= 0) {
    if (static_cast<uint64_t>(request.find_node) >= run.model.node_count()) {
      return -1;
    }
    node = NodeId(static_cast<uint32_t>(request.find_node));
  } else {
    if (static_cast<uint64_t>(request.find_task) >= trace.task_count()) {
      return -1;
    }
    TaskId t(static_cast<uint32_t>(request.find_task));
    node = trace.task_node(t);
    if (!node.valid()) unlinked_name = trace.str(trace.task_name(t));
  }
  for (size_t i = 0; i < kept.size(); ++i) {
    const MappingRow& row = *kept[i];
    bool holds = node.valid() ? HoldsNode(run.links, row, node)
                              : row.unlinked && row.name == unlinked_name;
    if (holds) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace

StatusOr<std::string> MappingJsonOf(const Session::Impl& run,
                                    const MappingRequest& request) {
  const Model& m = run.model;
  if (std::find(std::begin(kSortKeys), std::end(kSortKeys), request.sort) ==
      std::end(kSortKeys)) {
    return InvalidArgumentError(fmt::format(
        "sort: unknown column '{}'; expected total_ns, task_count, name, "
        "op_type, status or streams",
        request.sort));
  }
  for (const std::string& s : request.statuses) {
    if (std::find(std::begin(kStatuses), std::end(kStatuses), s) ==
        std::end(kStatuses)) {
      return InvalidArgumentError(
          fmt::format("status: unknown status '{}'; expected executed, fused, "
                      "not_executed, inserted, unknown or unlinked",
                      s));
    }
  }
  if (request.find_node >= 0 && request.find_task >= 0) {
    return InvalidArgumentError(
        "find_node, find_task: give one row to find, not both");
  }
  const TimelineIndex& index = GetTimelineIndex(run);
  std::call_once(index.mapping_once, [&]() { BuildRows(run, index); });
  const std::vector<MappingRow>& rows = index.mapping_rows;

  std::vector<const MappingRow*> kept;
  for (const MappingRow& row : rows) {
    if (!request.statuses.empty() &&
        std::find(request.statuses.begin(), request.statuses.end(),
                  row.status) == request.statuses.end()) {
      continue;
    }
    if (!Matches(m, run.links, row, request.query)) continue;
    kept.push_back(&row);
  }
  // Primary key in the requested direction; ties by name, then node order.
  auto compare = [&](const MappingRow* a, const MappingRow* b) -> int {
    auto three_way = [](auto x, auto y) {
      return x < y ? -1 : (y < x ? 1 : 0);
    };
    const std::string& key = request.sort;
    if (key == "total_ns") return three_way(a->total_ns, b->total_ns);
    if (key == "task_count") return three_way(a->task_count, b->task_count);
    if (key == "name") return three_way(a->name, b->name);
    if (key == "op_type") return three_way(a->op_type, b->op_type);
    if (key == "status") return three_way(a->status, b->status);
    // "streams": how many, then which.
    if (a->streams.size() != b->streams.size()) {
      return three_way(a->streams.size(), b->streams.size());
    }
    return three_way(a->streams, b->streams);
  };
  std::stable_sort(kept.begin(), kept.end(),
                   [&](const MappingRow* a, const MappingRow* b) {
                     int c = compare(a, b);
                     if (c != 0) return request.descending ? c > 0 : c < 0;
                     return a->name < b->name;
                   });

  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.FieldInt("total", static_cast<int64_t>(kept.size()));
  w.Field("level", index.mapping_level);
  w.FieldInt("offset", static_cast<int64_t>(request.offset));
  if (request.find_node >= 0 || request.find_task >= 0) {
    w.FieldInt("found_index", FoundIndex(run, kept, request));
  }
  w.Key("rows").BeginArray();
  for (size_t i = request.offset;
       i < kept.size() && i - request.offset < request.limit; ++i) {
    const MappingRow& row = *kept[i];
    w.BeginObject();
    w.Field("kind", row.unlinked ? "unlinked" : "node");
    w.Key("node");
    row.unlinked ? (void)w.Null() : WriteNodeRef(w, m, row.node);
    w.Field("name", row.name);
    w.Field("op_type", row.op_type);
    w.Field("status", row.status);
    w.Key("fused_from").BeginArray();
    if (!row.unlinked) {
      for (NodeId f : run.links.fused_from.Get(row.node)) WriteNodeRef(w, m, f);
    }
    w.EndArray();
    w.FieldInt("task_count", static_cast<int64_t>(row.task_count));
    w.FieldInt("total_ns", row.total_ns);
    w.Key("streams").BeginArray();
    for (uint32_t s : row.streams) w.UInt(s);
    w.EndArray();
    w.Key("kernels").BeginArray();
    for (std::string_view k : row.kernels) w.String(k);
    w.EndArray();
    w.Key("first_task");
    row.first_task.valid() ? w.UInt(row.first_task.value()) : w.Null();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

StatusOr<std::string> Session::MappingJson(
    const MappingRequest& request) const {
  return MappingJsonOf(*impl_, request);
}

}  // namespace mi
