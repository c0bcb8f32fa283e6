#include "importers/ascend_db/ascend_db_importer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "importers/common/ascend_task_type.h"
#include "importers/common/collectives.h"
#include "importers/common/sqlite_db.h"
#include "importers/common/torch_npu_rank.h"

namespace mi::importers {
namespace ascend_db {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTorchNpuOutput = "ASCEND_PROFILER_OUTPUT";
constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};
constexpr int64_t kAscendNone = 4294967295;  // UINT32_MAX: "no id"
// Rows read between two charges of what was built to the memory budget.
constexpr uint64_t kChargeRows = 1 << 16;

// The tables that make a database torch_npu's, for messages.
constexpr std::string_view kProfilerTables =
    "STRING_IDS, TASK, COMPUTE_TASK_INFO, COMMUNICATION_OP, CANN_API, "
    "STEP_TIME, RANK_DEVICE_MAP";
constexpr std::string_view kAnalysisTables =
    "StepTraceTime, CommAnalyzerTime, CommAnalyzerBandwidth, "
    "CommAnalyzerMatrix";

// A table's columns, probed once (PRAGMA table_info): the DB schema drifts
// between torch_npu versions, even between the ranks of one job.
class TableColumns {
 public:
  static StatusOr<TableColumns> Probe(const SqliteDb& db,
                                      std::string_view table) {
    MI_ASSIGN_OR_RETURN(std::vector<std::string> columns, db.Columns(table));
    return TableColumns(db.path(), std::string(table), std::move(columns));
  }
  bool Has(std::string_view column) const {
    return std::find(columns_.begin(), columns_.end(), column) !=
           columns_.end();
  }
  // A malformed-input error naming the first of `needed` the table lacks.
  Status Require(std::initializer_list<std::string_view> needed) const {
    for (std::string_view column : needed) {
      if (Has(column)) continue;
      std::string expected;
      for (std::string_view n : needed) {
        expected += (expected.empty() ? "" : ", ") + std::string(n);
      }
      return MalformedInputError(path_ + ": table " + table_ +
                                 " has no column '" + std::string(column) +
                                 "'; expected the columns " + expected +
                                 " (found: " + Join(columns_, ", ") + ")");
    }
    return Status::Ok();
  }
  // The column for a SELECT list, or NULL when the table lacks it.
  std::string Select(std::string_view column, std::string_view alias) const {
    return (Has(column) ? std::string(alias) + "." + QuoteIdentifier(column)
                        : std::string("NULL"));
  }
  const std::string& table() const { return table_; }

 private:
  TableColumns(std::string path, std::string table,
               std::vector<std::string> columns)
      : path_(std::move(path)),
        table_(std::move(table)),
        columns_(std::move(columns)) {}
  static std::string Join(const std::vector<std::string>& v,
                          std::string_view sep) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0) out += sep;
      out += v[i];
    }
    return out;
  }
  std::string path_;
  std::string table_;
  std::vector<std::string> columns_;
};

int64_t MicrosToNs(double us) {
  if (!std::isfinite(us) || std::fabs(us) > 9.0e15) return -1;
  return std::llround(us * 1e3);
}
int64_t MillisToNs(double ms) {
  if (!std::isfinite(ms) || std::fabs(ms) > 9.0e12) return -1;
  return std::llround(ms * 1e6);
}
int64_t MegabytesToBytes(double mb) {
  if (!std::isfinite(mb) || std::fabs(mb) > 9.0e12) return -1;
  return std::llround(mb * 1e6);
}

// CANN_API's level, as the timeline names it before '@' (ascend.md §1.2).
std::string ApiLevel(std::string_view enum_name, int64_t type) {
  if (enum_name == "acl" || type == 20000) return "AscendCL";
  if (enum_name == "node" || type == 10000) return "Node";
  if (enum_name == "runtime" || type == 5000) return "Runtime";
  if (enum_name == "model" || type == 15000) return "Model";
  if (enum_name == "hccl" || enum_name == "communication" || type == 5500) {
    return "Hccl";
  }
  if (enum_name.empty()) return "Api";
  std::string level(enum_name);
  if (level[0] >= 'a' && level[0] <= 'z') level[0] = level[0] - 'a' + 'A';
  return level;
}

class DbReader {
 public:
  DbReader(ImportContext& ctx, const SqliteDb& db, AscendDbStats* stats)
      : ctx_(ctx),
        db_(db),
        stats_(stats),
        trace_(*ctx.trace),
        strings_(ctx.trace->strings()) {}

  Status Read() {
    const bool profiler = db_.HasTable("TASK") || db_.HasTable("STRING_IDS") ||
                          db_.HasTable("COMMUNICATION_OP");
    const bool analysis = db_.HasTable("StepTraceTime") ||
                          db_.HasTable("CommAnalyzerTime") ||
                          db_.HasTable("CommAnalyzerBandwidth") ||
                          db_.HasTable("CommAnalyzerMatrix");
    if (!profiler && !analysis) {
      std::string found;
      for (size_t i = 0; i < db_.tables().size() && i < 12; ++i) {
        found += (i ? ", " : "") + db_.tables()[i];
      }
      if (db_.tables().size() > 12) found += ", ...";
      return MalformedInputError(
          ctx_.path +
          ": an SQLite database without torch_npu's tables; expected those "
          "of ascend_pytorch_profiler_<rank>.db (" +
          std::string(kProfilerTables) + ") or of analysis.db (" +
          std::string(kAnalysisTables) + "); found " +
          (found.empty() ? std::string("no tables") : "the tables " + found));
    }
    source_ = EnsureSource(ctx_);
    SourceInfo& info = trace_.mutable_source(source_);
    info.dialect = strings_.Intern("ascend");
    // torch_npu writes epoch nanoseconds (µs in analysis.db).
    if (info.time_base == TimeBase::kUnknown) info.time_base = TimeBase::kEpoch;
    if (profiler) {
      stats_->profiler_tables = true;
      MI_RETURN_IF_ERROR(ReadProfiler());
    }
    if (analysis) {
      stats_->analysis_tables = true;
      MI_RETURN_IF_ERROR(ReadAnalysis());
    }
    if (stats_->rows_skipped > 0) {
      ctx_.diagnostics->Report(
          DiagnosticCode::kTableRowSkipped, {ctx_.path},
          std::to_string(stats_->rows_skipped) +
              " rows lacked a required value (a time, an id) and were "
              "skipped");
    }
    return Status::Ok();
  }

 private:
  // ---- profiler DB (cluster.md 1.3) ----

  Status ReadProfiler() {
    for (std::string_view table : {"STRING_IDS", "TASK"}) {
      if (!db_.HasTable(table)) {
        return MalformedInputError(ctx_.path + ": no table " +
                                   std::string(table) +
                                   "; expected the tables of torch_npu's "
                                   "ascend_pytorch_profiler_<rank>.db (" +
                                   std::string(kProfilerTables) + ")");
      }
    }
    AddAscendOpTypeClasses(trace_, source_);
    MI_RETURN_IF_ERROR(ReadStrings());
    MI_RETURN_IF_ERROR(ReadEnum("ENUM_API_TYPE", &api_types_));
    MI_RETURN_IF_ERROR(ReadEnum("ENUM_HCCL_DATA_TYPE", &data_types_));
    MI_RETURN_IF_ERROR(ReadRankAndHost());
    MI_RETURN_IF_ERROR(ReadMetaData());
    MI_RETURN_IF_ERROR(ReadSteps());
    first_task_ = trace_.task_count();
    MI_RETURN_IF_ERROR(ReadHostCalls());
    MI_RETURN_IF_ERROR(ReadDeviceTasks());
    MI_RETURN_IF_ERROR(ReadCommunicationOps());
    AssignRuns();
    return Status::Ok();
  }

  Status Charge(std::string_view table, uint64_t row) {
    if (row % kChargeRows != 0) return Status::Ok();
    return ChargeBuilt(ctx_,
                       ctx_.path + ": table " + std::string(table) + " row " +
                           std::to_string(row),
                       OwnMemory());
  }
  size_t OwnMemory() const {
    return strings_by_id_.size() * 24 + compute_info_.size() * 48 +
           hccl_sizes_.size() * 32 + hccl_task_ids_.size() * 24 +
           op_intervals_.size() * 40 + connection_node_.size() * 32 +
           connection_other_.size() * 32;
  }

  Status ReadStrings() {
    MI_ASSIGN_OR_RETURN(TableColumns cols,
                        TableColumns::Probe(db_, "STRING_IDS"));
    MI_RETURN_IF_ERROR(cols.Require({"id", "value"}));
    MI_ASSIGN_OR_RETURN(SqliteQuery q,
                        db_.Query("SELECT id, value FROM STRING_IDS",
                                  "reading table STRING_IDS"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      MI_RETURN_IF_ERROR(Charge("STRING_IDS", q.rows()));
      std::optional<int64_t> id = q.IntIfAny(0);
      if (!id) {
        ++stats_->rows_skipped;
        continue;
      }
      strings_by_id_.try_emplace(*id, strings_.Intern(q.Text(1)));
    }
    return Status::Ok();
  }

  // A STRING_IDS id as its string; the id itself when the table lacks it.
  StringId StringOf(const SqliteQuery& q, int column) {
    std::optional<int64_t> id = q.IntIfAny(column);
    if (!id) {
      return q.IsNull(column) ? StringPool::kEmpty
                              : strings_.Intern(q.Text(column));
    }
    auto it = strings_by_id_.find(*id);
    if (it != strings_by_id_.end()) return it->second;
    return strings_.Intern(std::to_string(*id));
  }

  Status ReadEnum(std::string_view table,
                  std::unordered_map<int64_t, std::string>* out) {
    if (!db_.HasTable(table)) return Status::Ok();
    MI_ASSIGN_OR_RETURN(TableColumns cols, TableColumns::Probe(db_, table));
    MI_RETURN_IF_ERROR(cols.Require({"id", "name"}));
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db_.Query("SELECT id, name FROM " + QuoteIdentifier(table),
                  "reading table " + std::string(table)));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      if (std::optional<int64_t> id = q.IntIfAny(0)) {
        out->try_emplace(*id, std::string(q.Text(1)));
      }
    }
    return Status::Ok();
  }

  Status ReadRankAndHost() {
    if (db_.HasTable("RANK_DEVICE_MAP")) {
      MI_ASSIGN_OR_RETURN(TableColumns cols,
                          TableColumns::Probe(db_, "RANK_DEVICE_MAP"));
      MI_RETURN_IF_ERROR(cols.Require({"rankId", "deviceId"}));
      MI_ASSIGN_OR_RETURN(
          SqliteQuery q,
          db_.Query("SELECT rankId, deviceId FROM RANK_DEVICE_MAP",
                    "reading table RANK_DEVICE_MAP"));
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (row) {
        std::optional<int64_t> rank = q.IntIfAny(0);
        std::optional<int64_t> device = q.IntIfAny(1);
        if (device && *device >= 0 && *device <= INT32_MAX) {
          rank_device_ = static_cast<int32_t>(*device);
        }
        // torch.distributed not initialised: rankId -1.
        if (rank && *rank >= 0 && *rank <= INT32_MAX) {
          SourceInfo& info = trace_.mutable_source(source_);
          const int32_t db_rank = static_cast<int32_t>(*rank);
          if (info.rank < 0) {
            info.rank = db_rank;
          } else if (info.rank != db_rank) {
            ctx_.diagnostics->Report(
                DiagnosticCode::kRankMismatch, {ctx_.path},
                "RANK_DEVICE_MAP says rank " + std::to_string(db_rank) +
                    " but the output folder (profiler_info_<rank>.json) "
                    "says rank " +
                    std::to_string(info.rank) + "; rank " +
                    std::to_string(info.rank) + " is kept");
          }
        }
      }
    }
    if (db_.HasTable("HOST_INFO")) {
      MI_ASSIGN_OR_RETURN(TableColumns cols,
                          TableColumns::Probe(db_, "HOST_INFO"));
      MI_RETURN_IF_ERROR(cols.Require({"hostName"}));
      MI_ASSIGN_OR_RETURN(SqliteQuery q,
                          db_.Query("SELECT hostName FROM HOST_INFO",
                                    "reading table HOST_INFO"));
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (row && !q.Text(0).empty()) {
        trace_.mutable_source(source_).host = strings_.Intern(q.Text(0));
      }
    }
    return Status::Ok();
  }

  // META_DATA: parallel_group_info (the process groups with their global
  // ranks) and distributed_args.world_size, JSON as in
  // profiler_metadata.json (cluster.md 1.1).
  Status ReadMetaData() {
    if (!db_.HasTable("META_DATA")) return Status::Ok();
    MI_ASSIGN_OR_RETURN(TableColumns cols,
                        TableColumns::Probe(db_, "META_DATA"));
    MI_RETURN_IF_ERROR(cols.Require({"name", "value"}));
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db_.Query("SELECT name, value FROM META_DATA WHERE name IN "
                  "('parallel_group_info', 'distributed_args')",
                  "reading table META_DATA"));
    SourceInfo& info = trace_.mutable_source(source_);
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      const std::string_view name = q.Text(0);
      nlohmann::json doc = nlohmann::json::parse(q.Text(1), nullptr, false);
      if (!doc.is_object()) {
        ctx_.diagnostics->Report(DiagnosticCode::kTableRowSkipped, {ctx_.path},
                                 "table META_DATA: the value of '" +
                                     std::string(name) +
                                     "' is not a JSON object; ignored");
        continue;
      }
      if (name == "distributed_args") {
        auto ws = doc.find("world_size");
        if (ws != doc.end() && ws->is_number_integer() &&
            ws->get<int64_t>() > 0 && ws->get<int64_t>() <= INT32_MAX) {
          info.world_size = static_cast<int32_t>(ws->get<int64_t>());
        }
        continue;
      }
      for (const auto& [hccl_name, group] : doc.items()) {
        if (!group.is_object()) continue;
        ProcessGroupInfo pg;
        pg.name = strings_.Intern(HcclGroupKey(hccl_name));
        pg.long_name = strings_.Intern(hccl_name);
        auto role = group.find("group_name");
        if (role != group.end() && role->is_string()) {
          pg.description = strings_.Intern(role->get<std::string>());
        }
        auto group_rank = group.find("group_rank");
        if (group_rank != group.end() && group_rank->is_number_integer() &&
            group_rank->get<int64_t>() >= 0 &&
            group_rank->get<int64_t>() <= INT32_MAX) {
          pg.group_rank = static_cast<int32_t>(group_rank->get<int64_t>());
        }
        auto ranks = group.find("global_ranks");
        if (ranks != group.end() && ranks->is_array()) {
          for (const nlohmann::json& r : *ranks) {
            if (r.is_number_integer() && r.get<int64_t>() >= 0 &&
                r.get<int64_t>() <= INT32_MAX) {
              pg.global_ranks.push_back(static_cast<int32_t>(r.get<int64_t>()));
            }
          }
        }
        GroupOf(pg.name, pg.long_name) = std::move(pg);
      }
    }
    return Status::Ok();
  }

  // The source's process group called `name` (added when new).
  ProcessGroupInfo& GroupOf(StringId name, StringId long_name) {
    std::vector<ProcessGroupInfo>& groups =
        trace_.mutable_source(source_).process_groups;
    for (ProcessGroupInfo& g : groups) {
      if (g.name == name) {
        if (g.long_name == StringPool::kEmpty) g.long_name = long_name;
        return g;
      }
    }
    ProcessGroupInfo& g = groups.emplace_back();
    g.name = name;
    g.long_name = long_name;
    return g;
  }

  Status ReadSteps() {
    if (!db_.HasTable("STEP_TIME")) return Status::Ok();
    MI_ASSIGN_OR_RETURN(TableColumns cols,
                        TableColumns::Probe(db_, "STEP_TIME"));
    MI_RETURN_IF_ERROR(cols.Require({"id", "startNs", "endNs"}));
    MI_ASSIGN_OR_RETURN(SqliteQuery q,
                        db_.Query("SELECT id, startNs, endNs FROM STEP_TIME",
                                  "reading table STEP_TIME"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      std::optional<int64_t> id = q.IntIfAny(0);
      std::optional<int64_t> start = q.IntIfAny(1);
      std::optional<int64_t> end = q.IntIfAny(2);
      if (!id || !start || !end) {
        ++stats_->rows_skipped;
        continue;
      }
      steps_.push_back({*id, *start, std::max(*start, *end)});
    }
    std::stable_sort(
        steps_.begin(), steps_.end(),
        [](const Step& a, const Step& b) { return a.start_ns < b.start_ns; });
    stats_->steps = steps_.size();
    return Status::Ok();
  }

  // Host API calls (CANN_API) on host threads: globalTid = pid << 32 | tid.
  Status ReadHostCalls() {
    if (!db_.HasTable("CANN_API")) return Status::Ok();
    MI_ASSIGN_OR_RETURN(TableColumns cols,
                        TableColumns::Probe(db_, "CANN_API"));
    MI_RETURN_IF_ERROR(cols.Require({"startNs", "endNs", "name"}));
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db_.Query("SELECT c.startNs, c.endNs, " + cols.Select("type", "c") +
                      ", " + cols.Select("globalTid", "c") + ", " +
                      cols.Select("connectionId", "c") +
                      ", c.name FROM CANN_API c",
                  "reading table CANN_API"));
    std::unordered_map<int64_t, TrackId> tracks;
    std::unordered_map<int64_t, StringId> levels;
    const StringId cann = strings_.Intern("CANN");
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      MI_RETURN_IF_ERROR(Charge("CANN_API", q.rows()));
      std::optional<int64_t> start = q.IntIfAny(0);
      std::optional<int64_t> end = q.IntIfAny(1);
      if (!start || !end) {
        ++stats_->rows_skipped;
        continue;
      }
      const int64_t gtid = q.IntIfAny(3).value_or(0);
      auto [t, inserted] = tracks.try_emplace(gtid, TrackId::Invalid());
      if (inserted) {
        TrackInfo info;
        info.kind = TrackKind::kHostThread;
        info.source = source_;
        info.pid = static_cast<int64_t>(static_cast<uint64_t>(gtid) >> 32);
        info.tid = gtid & 0xffffffff;
        info.process_name = cann;
        info.thread_name =
            strings_.Intern("Thread " + std::to_string(info.tid));
        t->second = trace_.AddTrack(info);
      }
      const int64_t type = q.IntIfAny(2).value_or(-1);
      auto level = levels.find(type);
      if (level == levels.end()) {
        auto e = api_types_.find(type);
        level =
            levels
                .emplace(type, strings_.Intern(ApiLevel(e == api_types_.end()
                                                            ? std::string_view()
                                                            : e->second,
                                                        type)))
                .first;
      }
      TaskRow r;
      r.name = strings_.Intern(std::string(strings_.Get(level->second)) + "@" +
                               std::string(strings_.Get(StringOf(q, 5))));
      r.kind = TaskKind::kRuntime;
      r.track = t->second;
      r.start_ns = *start;
      r.duration_ns = DurationOf(*start, *end);
      std::optional<int64_t> connection = q.IntIfAny(4);
      if (connection && *connection >= 0 && *connection != kAscendNone) {
        r.correlation = *connection;
      }
      TaskId id = trace_.AddTask(r);
      ++stats_->host_api_calls;
      if (r.correlation >= 0) {
        // A device task's launch: the node-level API with its
        // connectionId (Node@launch), else any other call with it
        // (ascend.md §1.2, §1.6; the ascend_timeline importer's rule).
        auto& map = strings_.Get(level->second) == "Node" ? connection_node_
                                                          : connection_other_;
        map.try_emplace(r.correlation, id);
      }
    }
    return Status::Ok();
  }

  int64_t DurationOf(int64_t start, int64_t end) {
    int64_t duration = 0;
    if (end >= start && !__builtin_sub_overflow(end, start, &duration)) {
      return duration;
    }
    ++negative_durations_;
    if (negative_durations_ == 1) {
      ctx_.diagnostics->Report(DiagnosticCode::kNegativeDuration, {ctx_.path},
                               "a row ends before it starts (endNs < "
                               "startNs); its duration is taken as 0");
    } else {
      ctx_.diagnostics->Count(DiagnosticCode::kNegativeDuration);
    }
    return 0;
  }

  struct ComputeInfo {
    StringId name;
    StringId task_type;  // the accelerator: AI_CORE, AI_VECTOR_CORE ...
    StringId op_type;
  };

  Status ReadComputeInfo() {
    if (!db_.HasTable("COMPUTE_TASK_INFO")) return Status::Ok();
    MI_ASSIGN_OR_RETURN(TableColumns cols,
                        TableColumns::Probe(db_, "COMPUTE_TASK_INFO"));
    MI_RETURN_IF_ERROR(cols.Require({"name", "globalTaskId"}));
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db_.Query("SELECT c.globalTaskId, c.name, " +
                      cols.Select("taskType", "c") + ", " +
                      cols.Select("opType", "c") + " FROM COMPUTE_TASK_INFO c",
                  "reading table COMPUTE_TASK_INFO"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      MI_RETURN_IF_ERROR(Charge("COMPUTE_TASK_INFO", q.rows()));
      std::optional<int64_t> id = q.IntIfAny(0);
      if (!id) continue;
      compute_info_.try_emplace(
          *id, ComputeInfo{StringOf(q, 1), StringOf(q, 2), StringOf(q, 3)});
    }
    return Status::Ok();
  }

  // HCCL sub-tasks' sizes (COMMUNICATION_TASK_INFO.size, bytes).
  Status ReadHcclTaskSizes() {
    if (!db_.HasTable("COMMUNICATION_TASK_INFO")) return Status::Ok();
    MI_ASSIGN_OR_RETURN(TableColumns cols,
                        TableColumns::Probe(db_, "COMMUNICATION_TASK_INFO"));
    MI_RETURN_IF_ERROR(cols.Require({"globalTaskId"}));
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db_.Query("SELECT c.globalTaskId, " + cols.Select("size", "c") +
                      " FROM COMMUNICATION_TASK_INFO c",
                  "reading table COMMUNICATION_TASK_INFO"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      MI_RETURN_IF_ERROR(Charge("COMMUNICATION_TASK_INFO", q.rows()));
      std::optional<int64_t> id = q.IntIfAny(0);
      if (!id) continue;
      hccl_task_ids_.insert(*id);
      std::optional<int64_t> size = q.IntIfAny(1);
      if (size && *size >= 0) hccl_sizes_.try_emplace(*id, *size);
    }
    return Status::Ok();
  }

  // The intervals of the HCCL ops by connectionId, to know the TASK rows
  // that are an op itself (below).
  Status ReadOpIntervals() {
    if (!db_.HasTable("COMMUNICATION_OP")) return Status::Ok();
    MI_ASSIGN_OR_RETURN(TableColumns cols,
                        TableColumns::Probe(db_, "COMMUNICATION_OP"));
    if (!cols.Has("connectionId") || !cols.Has("startNs") ||
        !cols.Has("endNs")) {
      return Status::Ok();  // ReadCommunicationOps says what is missing
    }
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db_.Query("SELECT connectionId, startNs, endNs FROM COMMUNICATION_OP",
                  "reading table COMMUNICATION_OP"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      std::optional<int64_t> c = q.IntIfAny(0);
      std::optional<int64_t> start = q.IntIfAny(1);
      std::optional<int64_t> end = q.IntIfAny(2);
      if (c && start && end) op_intervals_.emplace(*c, std::pair{*start, *end});
    }
    return Status::Ok();
  }

  // A TASK row that is an HCCL op itself, not one of its sub-tasks: no
  // COMPUTE_TASK_INFO nor COMMUNICATION_TASK_INFO row, the connectionId of
  // a COMMUNICATION_OP row and an interval holding the op's (2025 exports
  // write one such AI_CORE row per op on the HCCL stream; the timeline has
  // none). Read as the op on the HCCL track only, never as a kernel too.
  bool IsOpItself(int64_t connection, int64_t start, int64_t end) const {
    auto [begin, stop] = op_intervals_.equal_range(connection);
    for (auto it = begin; it != stop; ++it) {
      if (start <= it->second.first && end >= it->second.second) return true;
    }
    return false;
  }

  // Device tasks (TASK) on one track per (device, stream), named as the
  // timeline names them: the op (COMPUTE_TASK_INFO.name) for compute
  // tasks, else the task type (MEMCPY_ASYNC, Notify Wait, SDMA ...).
  Status ReadDeviceTasks() {
    MI_RETURN_IF_ERROR(ReadComputeInfo());
    MI_RETURN_IF_ERROR(ReadHcclTaskSizes());
    MI_RETURN_IF_ERROR(ReadOpIntervals());
    MI_ASSIGN_OR_RETURN(TableColumns cols, TableColumns::Probe(db_, "TASK"));
    MI_RETURN_IF_ERROR(
        cols.Require({"startNs", "endNs", "deviceId", "streamId", "taskType"}));
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db_.Query("SELECT t.startNs, t.endNs, t.deviceId, t.streamId, "
                  "t.taskType, " +
                      cols.Select("connectionId", "t") + ", " +
                      cols.Select("globalTaskId", "t") + " FROM TASK t",
                  "reading table TASK"));
    const StringId hardware = strings_.Intern("Ascend Hardware");
    std::map<std::pair<int64_t, int64_t>, TrackId> tracks;
    std::unordered_map<uint32_t, StringId> classes;
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      MI_RETURN_IF_ERROR(Charge("TASK", q.rows()));
      std::optional<int64_t> start = q.IntIfAny(0);
      std::optional<int64_t> end = q.IntIfAny(1);
      if (!start || !end) {
        ++stats_->rows_skipped;
        continue;
      }
      const int64_t device = q.IntIfAny(2).value_or(-1);
      const int64_t stream = q.IntIfAny(3).value_or(-1);
      auto [t, inserted] =
          tracks.try_emplace({device, stream}, TrackId::Invalid());
      if (inserted) {
        TrackInfo info;
        info.kind = TrackKind::kDeviceStream;
        info.source = source_;
        info.pid = device;
        info.tid = stream;
        info.device = device >= 0 && device <= INT32_MAX
                          ? static_cast<int32_t>(device)
                          : -1;
        info.stream = stream;
        info.process_name = hardware;
        info.thread_name = strings_.Intern("Stream " + std::to_string(stream));
        t->second = trace_.AddTrack(info);
        if (info.device >= 0) devices_.push_back(info.device);
      }
      const StringId task_type = StringOf(q, 4);
      std::optional<int64_t> global_task = q.IntIfAny(6);
      const ComputeInfo* compute = nullptr;
      if (global_task) {
        auto it = compute_info_.find(*global_task);
        if (it != compute_info_.end()) compute = &it->second;
      }
      std::optional<int64_t> connection = q.IntIfAny(5);
      if (compute == nullptr && connection && !op_intervals_.empty() &&
          (!global_task || hccl_task_ids_.count(*global_task) == 0) &&
          IsOpItself(*connection, *start, *end)) {
        ++stats_->op_rows;
        ++stats_->device_tasks;
        continue;
      }
      TaskRow r;
      r.track = t->second;
      r.start_ns = *start;
      r.duration_ns = DurationOf(*start, *end);
      // The accelerator type (COMPUTE_TASK_INFO.taskType) is what the
      // timeline's "Task Type" says; TASK.taskType is the host's
      // (KERNEL_AIVEC, Notify Wait, ...).
      const StringId type =
          compute != nullptr && compute->task_type != StringPool::kEmpty
              ? compute->task_type
              : task_type;
      r.category = type;
      r.kind = AscendTaskKind(strings_.Get(type));
      if (r.kind == TaskKind::kOther && compute != nullptr) {
        r.kind = AscendTaskKind(strings_.Get(task_type));
      }
      r.name = compute != nullptr && compute->name != StringPool::kEmpty
                   ? compute->name
                   : task_type;
      if (compute != nullptr) r.op_type = compute->op_type;
      if (r.kind == TaskKind::kCompute) {
        r.node_name = r.name;  // device task -> GE node by op name
      } else if (r.kind == TaskKind::kDataMovement ||
                 r.kind == TaskKind::kSync) {
        // MEMCPY_ASYNC, SDMA, Notify Wait ...: the task is its own op
        // type, as in msprof's reports and the timeline.
        r.op_type = r.name;
        if (r.kind == TaskKind::kDataMovement && global_task) {
          auto size = hccl_sizes_.find(*global_task);
          if (size != hccl_sizes_.end()) r.bytes = size->second;
        }
      }
      if (connection && *connection >= 0 && *connection != kAscendNone) {
        r.correlation = *connection;
      }
      const StringId op = r.op_type != StringPool::kEmpty ? r.op_type : r.name;
      r.task_class = strings_.Intern(AscendTaskClass(
          strings_.Get(type), strings_.Get(op), strings_.Get(r.name), r.kind));
      TaskId id = trace_.AddTask(r);
      ++stats_->device_tasks;
      Launch(id, r.correlation);
    }
    std::sort(devices_.begin(), devices_.end());
    devices_.erase(std::unique(devices_.begin(), devices_.end()),
                   devices_.end());
    return Status::Ok();
  }

  void Launch(TaskId task, int64_t connection) {
    if (connection < 0) return;
    auto it = connection_node_.find(connection);
    if (it == connection_node_.end()) {
      it = connection_other_.find(connection);
      if (it == connection_other_.end()) return;
    }
    trace_.SetTaskLaunch(task, it->second);
    ++stats_->launches;
  }

  // The device the HCCL ops ran on: RANK_DEVICE_MAP's, else the only
  // device of the tasks.
  int32_t HcclDevice() const {
    if (rank_device_ >= 0) return rank_device_;
    return devices_.size() == 1 ? devices_[0] : -1;
  }

  // HCCL ops (COMMUNICATION_OP) as communication tasks on an HCCL track
  // per (device, group), like trace_view's HCCL process, and one
  // CollectiveRecord each.
  Status ReadCommunicationOps() {
    if (!db_.HasTable("COMMUNICATION_OP")) return Status::Ok();
    MI_ASSIGN_OR_RETURN(TableColumns cols,
                        TableColumns::Probe(db_, "COMMUNICATION_OP"));
    MI_RETURN_IF_ERROR(
        cols.Require({"opName", "startNs", "endNs", "groupName", "opType"}));
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db_.Query("SELECT o.opName, o.startNs, o.endNs, o.groupName, "
                  "o.opType, " +
                      cols.Select("connectionId", "o") + ", " +
                      cols.Select("dataType", "o") + ", " +
                      cols.Select("algType", "o") + ", " +
                      cols.Select("count", "o") + ", " +
                      cols.Select("waitNs", "o") + ", " +
                      cols.Select("deviceId", "o") +
                      " FROM COMMUNICATION_OP o ORDER BY o.startNs",
                  "reading table COMMUNICATION_OP"));
    const StringId hccl = strings_.Intern("HCCL");
    const StringId communication = strings_.Intern(kTaskClassCommunication);
    std::map<std::pair<int64_t, uint32_t>, TrackId> tracks;
    std::vector<StringId> group_order;
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      MI_RETURN_IF_ERROR(Charge("COMMUNICATION_OP", q.rows()));
      std::optional<int64_t> start = q.IntIfAny(1);
      std::optional<int64_t> end = q.IntIfAny(2);
      if (!start || !end) {
        ++stats_->rows_skipped;
        continue;
      }
      // The group as written: the HCCL group name (2025) or already its
      // hash (2024); records carry the hash, communication.json's key.
      const StringId written_group = StringOf(q, 3);
      const std::string_view group_text = strings_.Get(written_group);
      const StringId group = strings_.Intern(HcclGroupKey(group_text));
      ProcessGroupInfo& pg =
          GroupOf(group, IsHcclGroupHash(group_text) ? StringPool::kEmpty
                                                     : written_group);
      const int32_t group_size =
          pg.global_ranks.empty()
              ? -1
              : static_cast<int32_t>(pg.global_ranks.size());
      std::optional<int64_t> device_column = q.IntIfAny(10);
      const int64_t device = device_column ? *device_column : HcclDevice();
      size_t group_index =
          std::find(group_order.begin(), group_order.end(), group) -
          group_order.begin();
      if (group_index == group_order.size()) group_order.push_back(group);
      auto [t, inserted] = tracks.try_emplace(
          {device, static_cast<uint32_t>(group_index)}, TrackId::Invalid());
      if (inserted) {
        TrackInfo info;
        info.kind = TrackKind::kDeviceStream;
        info.source = source_;
        info.pid = device;
        info.tid = static_cast<int64_t>(group_index);
        info.device = device >= 0 && device <= INT32_MAX
                          ? static_cast<int32_t>(device)
                          : -1;
        info.stream = info.tid;
        info.process_name = hccl;
        info.thread_name = strings_.Intern(
            "Group " + std::to_string(group_index) + " Communication");
        t->second = trace_.AddTrack(info);
      }

      const StringId name = StringOf(q, 0);
      const StringId op_type = StringOf(q, 4);
      CollectiveRecord c;
      c.source = source_;
      c.name = name;
      c.type = CollectiveTypeOfName(strings_.Get(op_type));
      if (c.type == CollectiveType::kUnknown) {
        c.type = CollectiveTypeOfName(strings_.Get(name));
      }
      c.group = group;
      c.group_size = group_size;
      c.sequence = HcclSequenceOf(strings_.Get(name));
      c.start_ns = *start;
      c.end_ns = *start + DurationOf(*start, *end);
      if (std::optional<int64_t> data_type = q.IntIfAny(6)) {
        auto e = data_types_.find(*data_type);
        if (e != data_types_.end()) {
          c.dtype = strings_.Intern(e->second);
        } else if (*data_type >= 0 && *data_type < 13) {
          // ENUM_HCCL_DATA_TYPE's fixed ids, when the DB lacks the table.
          static constexpr std::string_view kTypes[] = {
              "INT8",  "INT16",  "INT32",  "FP16", "FP32",  "INT64", "UINT64",
              "UINT8", "UINT16", "UINT32", "FP64", "BFP16", "INT128"};
          c.dtype = strings_.Intern(kTypes[*data_type]);
        }
      }
      if (!q.IsNull(7)) c.algorithm = StringOf(q, 7);
      std::optional<int64_t> count = q.IntIfAny(8);
      const int64_t element = DtypeSize(strings_.Get(c.dtype));
      if (count && *count >= 0) {
        // HCCL's count is per rank: the send count of an all-gather, the
        // receive count of a reduce-scatter (their whole array, the size
        // nccl-tests calls S, is group size x count), the buffer of the
        // others.
        const int64_t n = count.value();
        const bool gather = c.type == CollectiveType::kAllGather;
        const bool scatter = c.type == CollectiveType::kReduceScatter;
        if (gather || scatter) {
          const int64_t whole = group_size > 0 && n <= INT64_MAX / group_size
                                    ? n * group_size
                                    : -1;
          c.in_elements = gather ? n : whole;
          c.out_elements = gather ? whole : n;
          if (whole >= 0 && element > 0 && whole <= INT64_MAX / element) {
            c.bytes = whole * element;
          }
        } else {
          c.in_elements = c.out_elements = n;
          if (element > 0 && n <= INT64_MAX / element) c.bytes = n * element;
        }
      }
      if (std::optional<int64_t> wait = q.IntIfAny(9); wait && *wait >= 0) {
        c.wait_ns = *wait;
      }

      TaskRow r;
      r.name = name;
      r.category = communication;
      r.kind = TaskKind::kCompute;
      r.task_class = communication;
      r.op_type = op_type;
      r.track = t->second;
      r.start_ns = c.start_ns;
      r.duration_ns = c.end_ns - c.start_ns;
      r.bytes = c.bytes;
      std::optional<int64_t> connection = q.IntIfAny(5);
      if (connection && *connection >= 0 && *connection != kAscendNone) {
        r.correlation = *connection;
      }
      c.task = trace_.AddTask(r);
      Launch(c.task, r.correlation);
      ++stats_->communication_ops;
      trace_.mutable_communication().collectives.push_back(c);
    }
    return Status::Ok();
  }

  // Runs: one per STEP_TIME row ("ProfilerStep#<id>"); a task belongs to
  // the step with the latest start at or before its own (device work runs
  // past its step's host range), tasks before the first step to a run
  // "before ProfilerStep#<first>"; without steps one "whole trace". The
  // records' step label ("step<id>", analysis.db's) follows the same rule.
  void AssignRuns() {
    const size_t task_end = trace_.task_count();
    int64_t first_start = INT64_MAX;
    int64_t last_end = INT64_MIN;
    for (size_t i = first_task_; i < task_end; ++i) {
      TaskId t(static_cast<uint32_t>(i));
      first_start = std::min(first_start, trace_.task_start_ns(t));
      last_end = std::max(last_end, trace_.task_end_ns(t));
    }
    if (first_start == INT64_MAX) first_start = last_end = 0;
    const uint32_t run_base = static_cast<uint32_t>(trace_.runs().size());
    std::vector<CollectiveRecord>& records =
        trace_.mutable_communication().collectives;
    if (steps_.empty()) {
      if (task_end == first_task_) return;
      uint32_t run = trace_.AddRun(
          {strings_.Intern("whole trace"), first_start, last_end, source_});
      for (size_t i = first_task_; i < task_end; ++i) {
        trace_.SetTaskRun(TaskId(static_cast<uint32_t>(i)), run);
      }
      const StringId label = strings_.Intern("step");
      for (CollectiveRecord& c : records) {
        if (c.source != source_ || c.run >= 0) continue;
        c.run = run;
        c.step_label = label;
      }
      return;
    }
    const bool prologue = first_start < steps_.front().start_ns;
    uint32_t step_base = run_base;
    if (prologue) {
      trace_.AddRun({strings_.Intern("before ProfilerStep#" +
                                     std::to_string(steps_.front().id)),
                     first_start, steps_.front().start_ns, source_});
      ++step_base;
    }
    std::vector<int64_t> starts;
    std::vector<StringId> labels;
    for (const Step& s : steps_) {
      trace_.AddRun({strings_.Intern("ProfilerStep#" + std::to_string(s.id)),
                     s.start_ns, s.end_ns, source_});
      starts.push_back(s.start_ns);
      labels.push_back(strings_.Intern("step" + std::to_string(s.id)));
    }
    auto step_of = [&](int64_t start) -> int64_t {
      auto it = std::upper_bound(starts.begin(), starts.end(), start);
      return it == starts.begin() ? -1 : (it - starts.begin() - 1);
    };
    for (size_t i = first_task_; i < task_end; ++i) {
      TaskId t(static_cast<uint32_t>(i));
      const int64_t step = step_of(trace_.task_start_ns(t));
      trace_.SetTaskRun(
          t, step < 0 ? run_base : step_base + static_cast<uint32_t>(step));
    }
    for (CollectiveRecord& c : records) {
      if (c.source != source_ || c.run >= 0) continue;
      const int64_t step = step_of(c.start_ns);
      c.run = step < 0 ? run_base : step_base + static_cast<uint32_t>(step);
      if (step >= 0) c.step_label = labels[static_cast<size_t>(step)];
    }
  }

  // ---- analysis.db (cluster.md 1.4) ----

  Status ReadAnalysis() {
    MI_RETURN_IF_ERROR(ReadStepTrace());
    MI_RETURN_IF_ERROR(ReadCommTime());
    MI_RETURN_IF_ERROR(ReadBandwidth());
    return ReadMatrix();
  }

  // StepTraceTime (µs) -> CommunicationTables::step_trace.
  Status ReadStepTrace() {
    if (!db_.HasTable("StepTraceTime")) return Status::Ok();
    MI_ASSIGN_OR_RETURN(TableColumns cols,
                        TableColumns::Probe(db_, "StepTraceTime"));
    MI_RETURN_IF_ERROR(cols.Require({"step"}));
    static constexpr std::string_view kValues[] = {
        "computing",  "communication_not_overlapped",
        "overlapped", "communication",
        "free",       "stage",
        "bubble",     "communication_not_overlapped_and_exclude_receive",
        "preparing"};
    std::string sql = "SELECT s.step";
    for (std::string_view v : kValues) sql += ", " + cols.Select(v, "s");
    sql += ", " + cols.Select("deviceId", "s") + " FROM StepTraceTime s";
    MI_ASSIGN_OR_RETURN(SqliteQuery q,
                        db_.Query(sql, "reading table StepTraceTime"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      MI_RETURN_IF_ERROR(Charge("StepTraceTime", q.rows()));
      StepTraceRow r;
      r.source = source_;
      r.step = strings_.Intern(q.Text(0));
      int64_t* fields[] = {&r.computing_ns,
                           &r.communication_not_overlapped_ns,
                           &r.overlapped_ns,
                           &r.communication_ns,
                           &r.free_ns,
                           &r.stage_ns,
                           &r.bubble_ns,
                           &r.communication_not_overlapped_excluding_receive_ns,
                           &r.preparing_ns};
      for (int i = 0; i < 9; ++i) {
        if (!q.IsNull(i + 1)) *fields[i] = MicrosToNs(q.Double(i + 1));
      }
      if (std::optional<int64_t> d = q.IntIfAny(10);
          d && *d >= 0 && *d <= INT32_MAX) {
        r.device = static_cast<int32_t>(*d);
      }
      r.line = q.rows();
      trace_.mutable_communication().step_trace.push_back(std::move(r));
      ++stats_->step_trace_rows;
    }
    return Status::Ok();
  }

  // CommAnalyzerTime (µs start, ms durations): HCCL's split of each op
  // into the record of the same (op name, group, step) the profiler DB
  // made, else a record only the table names.
  Status ReadCommTime() {
    if (!db_.HasTable("CommAnalyzerTime")) return Status::Ok();
    MI_ASSIGN_OR_RETURN(TableColumns cols,
                        TableColumns::Probe(db_, "CommAnalyzerTime"));
    MI_RETURN_IF_ERROR(
        cols.Require({"hccl_op_name", "group_name", "elapse_time", "step"}));
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db_.Query("SELECT t.hccl_op_name, t.group_name, t.step, "
                  "t.elapse_time, " +
                      cols.Select("start_timestamp", "t") + ", " +
                      cols.Select("transit_time", "t") + ", " +
                      cols.Select("wait_time", "t") + ", " +
                      cols.Select("synchronization_time", "t") + ", " +
                      cols.Select("idle_time", "t") +
                      " FROM CommAnalyzerTime t",
                  "reading table CommAnalyzerTime"));
    std::vector<CollectiveRecord>& records =
        trace_.mutable_communication().collectives;
    using Key = std::tuple<uint32_t, uint32_t, uint32_t>;
    std::map<Key, std::vector<size_t>> unmatched;
    for (size_t i = 0; i < records.size(); ++i) {
      const CollectiveRecord& c = records[i];
      if (c.source != source_ || !c.task.valid()) continue;
      unmatched[{c.name.value(), c.group.value(), c.step_label.value()}]
          .push_back(i);
    }
    for (auto& [key, list] : unmatched) std::reverse(list.begin(), list.end());
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      MI_RETURN_IF_ERROR(Charge("CommAnalyzerTime", q.rows()));
      if (q.IsNull(0) || q.IsNull(3)) {
        ++stats_->rows_skipped;
        continue;
      }
      const StringId name = strings_.Intern(q.Text(0));
      const StringId group = strings_.Intern(q.Text(1));
      const StringId step = strings_.Intern(q.Text(2));
      auto it = unmatched.find({name.value(), group.value(), step.value()});
      CollectiveRecord* c = nullptr;
      if (it != unmatched.end() && !it->second.empty()) {
        c = &records[it->second.back()];
        it->second.pop_back();
        ++stats_->comm_time_matched;
      } else {
        CollectiveRecord added;
        added.source = source_;
        added.name = name;
        added.type = CollectiveTypeOfName(q.Text(0));
        added.group = group;
        added.sequence = HcclSequenceOf(q.Text(0));
        added.step_label = step;
        if (!q.IsNull(4)) {
          added.start_ns = MicrosToNs(q.Double(4));
          if (__builtin_add_overflow(
                  added.start_ns, std::max<int64_t>(0, MillisToNs(q.Double(3))),
                  &added.end_ns)) {
            added.end_ns = added.start_ns;
          }
        }
        for (const ProcessGroupInfo& g :
             trace_.source(source_).process_groups) {
          if (g.name == group && !g.global_ranks.empty()) {
            added.group_size = static_cast<int32_t>(g.global_ranks.size());
          }
        }
        records.push_back(added);
        c = &records.back();
        ++stats_->comm_time_added;
      }
      if (!q.IsNull(5)) c->transit_ns = MillisToNs(q.Double(5));
      if (!q.IsNull(6)) c->wait_ns = MillisToNs(q.Double(6));
      if (!q.IsNull(7)) c->synchronization_ns = MillisToNs(q.Double(7));
      if (!q.IsNull(8)) c->idle_ns = MillisToNs(q.Double(8));
    }
    return Status::Ok();
  }

  // CommAnalyzerBandwidth: one row per (op, transport, packet size), the
  // transport's figures repeated on each; one bandwidth row per (step, op,
  // group, transport) is kept (the packet-size distribution is not).
  Status ReadBandwidth() {
    if (!db_.HasTable("CommAnalyzerBandwidth")) return Status::Ok();
    MI_ASSIGN_OR_RETURN(TableColumns cols,
                        TableColumns::Probe(db_, "CommAnalyzerBandwidth"));
    MI_RETURN_IF_ERROR(
        cols.Require({"hccl_op_name", "group_name", "transport_type", "step"}));
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db_.Query("SELECT b.hccl_op_name, b.group_name, b.transport_type, "
                  "b.step, " +
                      cols.Select("transit_size", "b") + ", " +
                      cols.Select("transit_time", "b") + ", " +
                      cols.Select("bandwidth", "b") + ", " +
                      cols.Select("large_packet_ratio", "b") + ", " +
                      cols.Select("type", "b") +
                      " FROM CommAnalyzerBandwidth b",
                  "reading table CommAnalyzerBandwidth"));
    std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, bool> seen;
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      MI_RETURN_IF_ERROR(Charge("CommAnalyzerBandwidth", q.rows()));
      CommunicationBandwidthRow r;
      r.source = source_;
      r.op_name = strings_.Intern(q.Text(0));
      r.group = strings_.Intern(q.Text(1));
      r.transport = strings_.Intern(q.Text(2));
      r.step = strings_.Intern(q.Text(3));
      if (!seen.try_emplace({r.step.value(), r.op_name.value(), r.group.value(),
                             r.transport.value()},
                            true)
               .second) {
        continue;
      }
      if (!q.IsNull(4)) r.size_bytes = MegabytesToBytes(q.Double(4));
      if (!q.IsNull(5)) r.transit_ns = MillisToNs(q.Double(5));
      if (!q.IsNull(6)) r.bandwidth_gbps = q.Double(6);
      if (!q.IsNull(7)) r.large_packet_ratio = q.Double(7);
      r.p2p = q.Text(8) == "p2p";
      trace_.mutable_communication().bandwidth.push_back(r);
      ++stats_->bandwidth_rows;
    }
    return Status::Ok();
  }

  // CommAnalyzerMatrix -> link rows (communication_matrix.json's).
  Status ReadMatrix() {
    if (!db_.HasTable("CommAnalyzerMatrix")) return Status::Ok();
    MI_ASSIGN_OR_RETURN(TableColumns cols,
                        TableColumns::Probe(db_, "CommAnalyzerMatrix"));
    MI_RETURN_IF_ERROR(cols.Require(
        {"hccl_op_name", "group_name", "src_rank", "dst_rank", "step"}));
    MI_ASSIGN_OR_RETURN(
        SqliteQuery q,
        db_.Query("SELECT m.hccl_op_name, m.group_name, m.src_rank, "
                  "m.dst_rank, m.step, " +
                      cols.Select("transport_type", "m") + ", " +
                      cols.Select("transit_size", "m") + ", " +
                      cols.Select("transit_time", "m") + ", " +
                      cols.Select("bandwidth", "m") + ", " +
                      cols.Select("type", "m") + ", " +
                      cols.Select("op_name", "m") +
                      " FROM CommAnalyzerMatrix m",
                  "reading table CommAnalyzerMatrix"));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      MI_RETURN_IF_ERROR(Charge("CommAnalyzerMatrix", q.rows()));
      std::optional<int64_t> src = q.IntIfAny(2);
      std::optional<int64_t> dst = q.IntIfAny(3);
      if (!src || !dst || *src < INT32_MIN || *src > INT32_MAX ||
          *dst < INT32_MIN || *dst > INT32_MAX) {
        ++stats_->rows_skipped;
        continue;
      }
      CommunicationLinkRow r;
      r.source = source_;
      r.statistic = strings_.Intern(q.Text(0));
      r.group = strings_.Intern(q.Text(1));
      r.src_rank = static_cast<int32_t>(*src);
      r.dst_rank = static_cast<int32_t>(*dst);
      r.step = strings_.Intern(q.Text(4));
      r.transport = strings_.Intern(q.Text(5));
      if (!q.IsNull(6)) r.size_bytes = MegabytesToBytes(q.Double(6));
      if (!q.IsNull(7)) r.transit_ns = MillisToNs(q.Double(7));
      if (!q.IsNull(8)) r.bandwidth_gbps = q.Double(8);
      r.p2p = q.Text(9) == "p2p";
      if (!q.IsNull(10)) r.op_name = strings_.Intern(q.Text(10));
      trace_.mutable_communication().links.push_back(r);
      ++stats_->link_rows;
    }
    return Status::Ok();
  }

  struct Step {
    int64_t id;
    int64_t start_ns;
    int64_t end_ns;
  };

  ImportContext& ctx_;
  const SqliteDb& db_;
  AscendDbStats* stats_;
  Trace& trace_;
  StringPool& strings_;
  SourceId source_;
  size_t first_task_ = 0;
  std::unordered_map<int64_t, StringId> strings_by_id_;
  std::unordered_map<int64_t, std::string> api_types_;
  std::unordered_map<int64_t, std::string> data_types_;
  std::unordered_map<int64_t, ComputeInfo> compute_info_;
  std::unordered_map<int64_t, int64_t> hccl_sizes_;
  std::unordered_set<int64_t> hccl_task_ids_;
  std::unordered_multimap<int64_t, std::pair<int64_t, int64_t>> op_intervals_;
  std::unordered_map<int64_t, TaskId> connection_node_;
  std::unordered_map<int64_t, TaskId> connection_other_;
  std::vector<Step> steps_;
  std::vector<int32_t> devices_;
  int32_t rank_device_ = -1;
  uint64_t negative_durations_ = 0;
};

// The source key: the output folder's parent, as the ascend_timeline
// importer keys the folder's text files.
std::string SourceKeyOf(const std::string& path) {
  fs::path folder =
      fs::path(path).parent_path().parent_path().lexically_normal();
  return folder.empty() ? std::string(".") : folder.string();
}

bool IsTextTimeline(std::string_view name) {
  return name == "trace_view.json" || name == "trace_view.json.gz";
}

class AscendDbImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor* const kDescriptor = new ImporterDescriptor{
        "ascend_db",
        {".db"},
        /*priority=*/10,
        ContentKind::kTrace,
        "a torch_npu profiler database (ascend_pytorch_profiler_<rank>.db, "
        "analysis.db; SQLite)"};
    return *kDescriptor;
  }

  void ClaimRunFiles(RunFiles& files) const override { ClaimDbFiles(files); }

  // An SQLite header (the profiler DB's schema lies beyond its first page,
  // so the tables cannot be seen here) with torch_npu's file name: 100;
  // with torch_npu's tables named in the head (analysis.db keeps its
  // schema on page 1): 90; any other SQLite file is not this format. A
  // file named as torch_npu names them without the header scores 1, so
  // that the import says what is wrong with it.
  int Sniff(std::string_view head, std::string_view path) const override {
    const std::string_view name = FileNameOf(path);
    const bool named = IsProfilerDbFileName(name) || IsAnalysisDbFileName(name);
    if (!head.starts_with(kSqliteMagic)) return named && !head.empty() ? 1 : 0;
    if (named) return 100;
    for (std::string_view mark :
         {"StepTraceTime", "CommAnalyzerTime", "COMMUNICATION_OP",
          "RANK_DEVICE_MAP", "STRING_IDS"}) {
      if (head.find(mark) != std::string_view::npos) return 90;
    }
    return 0;
  }

  Status Import(ImportContext& ctx) const override {
    return ImportAscendDb(ctx, nullptr);
  }
};

}  // namespace

bool IsProfilerDbFileName(std::string_view n) {
  if (!n.starts_with("ascend_pytorch_profiler") || !n.ends_with(".db")) {
    return false;
  }
  std::string_view rest = n.substr(23, n.size() - 23 - 3);
  return rest.empty() || (rest.size() > 1 && rest[0] == '_' &&
                          ParseInteger<uint32_t>(rest.substr(1)).has_value());
}

bool IsAnalysisDbFileName(std::string_view n) { return n == "analysis.db"; }

void ClaimDbFiles(RunFiles& files) {
  const std::vector<RunFiles::File>& list = files.files();
  // Output folders (in_run) that hold a text timeline too.
  std::vector<std::string> with_text;
  for (const RunFiles::File& file : list) {
    fs::path in_run(file.in_run);
    if (in_run.parent_path().filename() == kTorchNpuOutput &&
        IsTextTimeline(in_run.filename().string())) {
      with_text.push_back(in_run.parent_path().lexically_normal().string());
    }
  }
  std::vector<std::pair<size_t, uint32_t>> takes;
  for (size_t i = 0; i < list.size(); ++i) {
    if (files.claimed(i)) continue;
    fs::path in_run(list[i].in_run);
    if (in_run.parent_path().filename() != kTorchNpuOutput) continue;
    const std::string name = in_run.filename().string();
    const bool profiler = IsProfilerDbFileName(name);
    if (!profiler && !IsAnalysisDbFileName(name)) continue;
    const std::string folder = in_run.parent_path().lexically_normal().string();
    if (!files.named() && std::find(with_text.begin(), with_text.end(),
                                    folder) != with_text.end()) {
      files.LeaveOut(i,
                     "torch_npu's DB export of a folder whose text export "
                     "(trace_view.json) holds the same data and is read");
      continue;
    }
    takes.emplace_back(i, profiler ? 1u : 2u);
  }
  // Profiler DBs first, then analysis.db, each in path order.
  std::stable_sort(takes.begin(), takes.end(),
                   [&](const auto& a, const auto& b) {
                     if (a.second != b.second) return a.second < b.second;
                     return NaturalLess(list[a.first].path, list[b.first].path);
                   });
  for (const auto& [i, stage] : takes) {
    std::string key = SourceKeyOf(list[i].path);
    size_t source;
    if (std::optional<size_t> s = files.FindSource(key)) {
      source = *s;
    } else {
      int32_t rank = ReadTorchNpuRank(key);
      source = files.AddSource({std::move(key), rank});
    }
    files.Take(i, source, stage);
  }
}

}  // namespace ascend_db

std::unique_ptr<Importer> CreateAscendDbImporter() {
  return std::make_unique<ascend_db::AscendDbImporter>();
}

namespace {

// Opens `path`, saying what is wrong with a file that is not SQLite before
// SQLite does.
StatusOr<std::unique_ptr<SqliteDb>> OpenDb(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return NotFoundError(path + ": cannot open the file");
  char head[16];
  const size_t n = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  if (n == 0) {
    return MalformedInputError(
        path +
        ": empty file; expected an SQLite database (torch_npu's DB export: "
        "ascend_pytorch_profiler_<rank>.db or analysis.db)");
  }
  if (std::string_view(head, n) != ascend_db::kSqliteMagic) {
    return MalformedInputError(
        path +
        ": not an SQLite database (it does not start with 'SQLite format "
        "3'); expected torch_npu's DB export (ascend_pytorch_profiler_"
        "<rank>.db or analysis.db)");
  }
  return SqliteDb::Open(path, "the torch_npu DB export");
}

}  // namespace

StatusOr<DbRankDevice> ReadAscendDbRankDevice(const std::string& path) {
  MI_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, OpenDb(path));
  DbRankDevice out;
  if (!db->HasTable("RANK_DEVICE_MAP")) return out;
  MI_ASSIGN_OR_RETURN(SqliteQuery q,
                      db->Query("SELECT rankId, deviceId FROM RANK_DEVICE_MAP",
                                "reading table RANK_DEVICE_MAP"));
  MI_ASSIGN_OR_RETURN(bool row, q.Next());
  if (!row) return out;
  std::optional<int64_t> rank = q.IntIfAny(0);
  std::optional<int64_t> device = q.IntIfAny(1);
  if (rank && *rank >= 0 && *rank <= INT32_MAX) {
    out.rank = static_cast<int32_t>(*rank);
  }
  if (device && *device >= 0 && *device <= INT32_MAX) {
    out.device = static_cast<int32_t>(*device);
  }
  return out;
}

Status ImportAscendDb(ImportContext& ctx, AscendDbStats* stats) {
  AscendDbStats own;
  if (stats == nullptr) stats = &own;
  *stats = AscendDbStats();
  MI_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, OpenDb(ctx.path));
  ascend_db::DbReader reader(ctx, *db, stats);
  MI_RETURN_IF_ERROR(reader.Read());
  return ChargeBuilt(ctx, ctx.path);
}

}  // namespace mi::importers
