#include "importers/ascend_csv/ascend_csv_importer.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "base/strings.h"
#include "diag/diagnostic_codes.h"
#include "importers/common/ascend_task_type.h"
#include "importers/common/collectives.h"

namespace mi::importers {
namespace {

// Cell value: surrounding blanks and tabs trimmed (times end in "\t"), and
// "N/A" = absent.
std::string_view Clean(std::string_view v) {
  v = TrimRight(TrimLeft(v, " \t"), " \t\r");
  if (v == "N/A") return {};
  return v;
}

// Shapes are written """a,b;c""": after CSV unquoting the value keeps a
// literal quote at each end.
std::string_view StripQuotes(std::string_view v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
    v = v.substr(1, v.size() - 2);
  }
  return v;
}

// A non-negative decimal integer (ids, stream and device numbers).
std::optional<int64_t> ParseInt(std::string_view v) {
  if (v.starts_with('-')) return std::nullopt;
  return ParseInteger<int64_t>(v);
}

// "1736408883704643.212" µs -> ns exactly (no double); digits beyond the
// ns are truncated. nullopt when not a non-negative decimal or too big.
std::optional<int64_t> ParseMicrosToNs(std::string_view v) {
  if (v.empty()) return std::nullopt;
  size_t dot = v.find('.');
  std::string_view whole = v.substr(0, dot);
  std::string_view frac =
      dot == std::string_view::npos ? std::string_view() : v.substr(dot + 1);
  // int64 ns holds up to 9223372036854775 µs (16 digits).
  if (whole.empty() || whole.size() > 16 ||
      (whole.size() == 16 && whole > "9223372036854774")) {
    return std::nullopt;
  }
  int64_t us = 0;
  for (char c : whole) {
    if (c < '0' || c > '9') return std::nullopt;
    us = us * 10 + (c - '0');
  }
  int64_t ns = 0;
  for (size_t i = 0; i < frac.size(); ++i) {
    char c = frac[i];
    if (c < '0' || c > '9') return std::nullopt;
    if (i < 3) ns = ns * 10 + (c - '0');
  }
  for (size_t i = frac.size(); i < 3; ++i) ns *= 10;
  return us * 1000 + ns;
}

// Task Type / Accelerator Core / kernel_type -> task kind: the mapping the
// timeline uses too (importers/common/ascend_task_type.h). A row with no
// type (level-0 kernel_details writes N/A) is still a kernel.
TaskKind KindOfTaskType(std::string_view t) {
  return t.empty() ? TaskKind::kCompute : AscendTaskKind(t);
}

// Timeline and CSV start times of one task may differ by rounding (HCCL
// ops: 1 ns); a join accepts up to this much.
constexpr int64_t kJoinToleranceNs = 1000;

// The CANN tables by file name (msprof `<table>_<timestamp>.csv`, torch_npu
// `<table>.csv`), with the header the name promises: an empty or headerless
// file named so is told what its name says it should hold.
struct NamedTable {
  std::string_view prefix;
  std::string_view what;
  std::string_view header;
  std::string_view note = {};  // after the header, for people
};
constexpr NamedTable kNamedTables[] = {
    {"op_summary", "msprof op summary",
     "Device_id,Model Name,...,Op Name,OP Type,Task Type,Task Start "
     "Time(us),Task Duration(us),..."},
    {"kernel_details", "torch_npu kernel details",
     "Step Id,...,Name,Type,Accelerator Core,Start Time(us),Duration(us),..."},
    {"task_time", "msprof task time",
     "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),"
     "task_start(us),task_stop(us)"},
    {"op_statistic", "CANN op statistics",
     "[Device_id,]OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg "
     "Time(us),Max Time(us),Ratio(%)"},
    {"api_statistic", "CANN API statistics",
     "[Device_id,]Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),"
     "Variance",
     " (msprof api_statistic_*.csv starts with Device_id; torch_npu's "
     "api_statistic.csv has none)"},
    {"l2_cache", "CANN L2 cache",
     "[Device_id,]Stream Id,Task Id,Hit Rate,Victim Rate,Op Name"},
    {"memory_record", "CANN memory record",
     "[Device_id,]Component,Timestamp(us),Total Allocated(MB|KB),Total "
     "Reserved(MB|KB),..."},
    {"operator_memory", "CANN operator memory",
     "Name,Size(KB),Allocation Time(us),Release Time(us),...,Duration(us),..."},
    {"npu_module_mem", "CANN NPU module memory",
     "[Device_id,]Component,Timestamp(us),Total Reserved(MB|KB),Device"},
    {"static_op_mem", "msprof static op memory",
     "Device_id,Op Name,Model Name,Graph ID,Node Index Start,Node Index "
     "End,Size(KB)"},
};

const NamedTable* NamedTableOf(std::string_view path) {
  std::string_view name = FileNameOf(path);
  if (name.ends_with(".gz")) name.remove_suffix(3);
  if (!name.ends_with(".csv")) return nullptr;
  for (const NamedTable& t : kNamedTables) {
    if (name.starts_with(t.prefix)) return &t;
  }
  return nullptr;
}

bool IsAscendTableName(std::string_view path) {
  return NamedTableOf(path) != nullptr;
}

// "NPU:3", "3" -> 3; "host", "" or anything else -> -1.
int32_t DeviceOfCell(std::string_view cell) {
  size_t colon = cell.find(':');
  if (colon != std::string_view::npos) cell = cell.substr(colon + 1);
  std::optional<int64_t> id = ParseInt(cell);
  if (!id || *id > (1 << 20)) return -1;
  return static_cast<int32_t>(*id);
}

// kMemoryRecord: memory_record.csv, the allocator's totals over time per
// component (APP, PTA, GE, PTA+GE), kept as Trace allocator samples.
// kModuleMemory: npu_module_mem.csv, memory reserved per CANN module over
// time (Total Reserved only), kept as per-module allocator samples.
enum class Table : uint8_t {
  kUnknown,
  kTasks,
  kTaskTime,
  kStatistic,
  kMemoryRecord,
  kModuleMemory,
  // api_statistic.csv: CANN API time per API (ProfileTables).
  kApiStatistic,
  // l2_cache.csv: L2 hit / victim rate per device task, joined to tasks.
  kCacheRates,
  // operator_memory.csv: one block an operator allocated per row.
  kOperatorMemory,
  // static_op_mem.csv: GE's static memory per op of a compiled graph.
  kStaticOpMemory
};

struct Columns {
  Table table = Table::kUnknown;
  int name = -1, type = -1, core = -1, start = -1, dur = -1, stream = -1,
      task = -1, device = -1, in_shapes = -1, out_shapes = -1;
  // memory_record: sizes in MB (torch_npu) or KB (msprof), by the header.
  int component = -1, timestamp = -1, allocated = -1, reserved = -1;
  int64_t allocated_unit = 0, reserved_unit = 0;
  // api_statistic / l2_cache / operator_memory / static_op_mem.
  int level = -1, time = -1, count = -1, avg = -1, min = -1, max = -1,
      variance = -1, hit = -1, victim = -1, size = -1, release = -1, model = -1,
      graph = -1, index_start = -1, index_end = -1;
  int64_t size_unit = 0;
};

int Find(const std::vector<std::string>& header,
         std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (Clean(header[i]) == n) return static_cast<int>(i);
    }
  }
  return -1;
}

// The column named `prefix` + "(MB)" or "(KB)", with its unit in bytes.
int FindSized(const std::vector<std::string>& header, std::string_view prefix,
              int64_t* unit) {
  std::string mb = std::string(prefix) + "(MB)";
  std::string kb = std::string(prefix) + "(KB)";
  int col = Find(header, {mb});
  *unit = int64_t{1} << 20;
  if (col < 0) {
    col = Find(header, {kb});
    *unit = int64_t{1} << 10;
  }
  return col;
}

// "954.3701171875" (a decimal size in some unit) -> bytes; nullopt when
// empty, not a number, negative or out of range.
std::optional<int64_t> ParseSize(std::string_view v, int64_t unit) {
  std::optional<double> value = ParseDouble(v);
  if (!value || !(*value >= 0) || *value * static_cast<double>(unit) > 9.0e18) {
    return std::nullopt;
  }
  return static_cast<int64_t>(*value * static_cast<double>(unit) + 0.5);
}

Columns MapHeader(const std::vector<std::string>& h) {
  Columns c;
  c.name = Find(h, {"Op Name", "Name", "kernel_name"});
  c.type = Find(h, {"OP Type", "Type", "kernel_type"});
  c.core = Find(h, {"Task Type", "Accelerator Core"});
  c.start = Find(h, {"Task Start Time(us)", "Start Time(us)", "Task Start Time",
                     "task_start(us)"});
  c.dur = Find(h, {"Task Duration(us)", "Duration(us)", "task_time(us)"});
  c.stream = Find(h, {"Stream ID", "stream_id"});
  c.task = Find(h, {"Task ID", "task_id"});
  c.device = Find(h, {"Device_id"});
  c.in_shapes = Find(h, {"Input Shapes"});
  c.out_shapes = Find(h, {"Output Shapes"});
  if (c.name >= 0 && c.start >= 0 && c.dur >= 0) {
    c.table = Find(h, {"kernel_name"}) >= 0 ? Table::kTaskTime : Table::kTasks;
    if (c.table == Table::kTaskTime) {
      // kernel_type (KERNEL_AICORE, MEMCPY_ASYNC) is the task type; the op
      // type is not in this table.
      c.core = c.type;
      c.type = -1;
    }
  } else if (Find(h, {"OP Type"}) >= 0 && Find(h, {"Core Type"}) >= 0 &&
             Find(h, {"Total Time(us)"}) >= 0) {
    c.table = Table::kStatistic;
  } else if (Find(h, {"Op Name"}) >= 0 && Find(h, {"Waiting(us)"}) >= 0) {
    c.table = Table::kStatistic;  // old runtime.db task_time: aggregates
  } else if (Find(h, {"API Name"}) >= 0 && Find(h, {"Time(us)"}) >= 0 &&
             Find(h, {"Count"}) >= 0) {
    c.table = Table::kApiStatistic;
    c.level = Find(h, {"Level"});
    c.name = Find(h, {"API Name"});
    c.time = Find(h, {"Time(us)"});
    c.count = Find(h, {"Count"});
    c.avg = Find(h, {"Avg(us)"});
    c.min = Find(h, {"Min(us)"});
    c.max = Find(h, {"Max(us)"});
    c.variance = Find(h, {"Variance"});
  } else if (Find(h, {"Hit Rate"}) >= 0 && Find(h, {"Victim Rate"}) >= 0) {
    c.table = Table::kCacheRates;
    c.hit = Find(h, {"Hit Rate"});
    c.victim = Find(h, {"Victim Rate"});
    c.name = Find(h, {"Op Name"});
    c.stream = Find(h, {"Stream Id", "Stream ID"});
    c.task = Find(h, {"Task Id", "Task ID"});
  } else if (Find(h, {"Op Name"}) >= 0 && Find(h, {"Node Index Start"}) >= 0 &&
             FindSized(h, "Size", &c.size_unit) >= 0) {
    c.table = Table::kStaticOpMemory;
    c.name = Find(h, {"Op Name"});
    c.size = FindSized(h, "Size", &c.size_unit);
    c.model = Find(h, {"Model Name"});
    c.graph = Find(h, {"Graph ID"});
    c.index_start = Find(h, {"Node Index Start"});
    c.index_end = Find(h, {"Node Index End"});
  } else if (Find(h, {"Name"}) >= 0 && Find(h, {"Allocation Time(us)"}) >= 0 &&
             FindSized(h, "Size", &c.size_unit) >= 0) {
    c.table = Table::kOperatorMemory;
    c.name = Find(h, {"Name"});
    c.size = FindSized(h, "Size", &c.size_unit);
    c.timestamp = Find(h, {"Allocation Time(us)"});
    c.release = Find(h, {"Release Time(us)"});
    c.dur = Find(h, {"Duration(us)"});
    c.device = Find(h, {"Device Type", "Device"});
  } else if (Find(h, {"Component"}) >= 0 && Find(h, {"Timestamp(us)"}) >= 0 &&
             FindSized(h, "Total Allocated", &c.allocated_unit) >= 0) {
    c.table = Table::kMemoryRecord;
    c.component = Find(h, {"Component"});
    c.timestamp = Find(h, {"Timestamp(us)"});
    c.allocated = FindSized(h, "Total Allocated", &c.allocated_unit);
    c.reserved = FindSized(h, "Total Reserved", &c.reserved_unit);
    c.device = Find(h, {"Device Type", "Device"});
  } else if (Find(h, {"Component"}) >= 0 && Find(h, {"Timestamp(us)"}) >= 0 &&
             FindSized(h, "Total Reserved", &c.reserved_unit) >= 0) {
    c.table = Table::kModuleMemory;
    c.component = Find(h, {"Component"});
    c.timestamp = Find(h, {"Timestamp(us)"});
    c.reserved = FindSized(h, "Total Reserved", &c.reserved_unit);
    c.device = Find(h, {"Device", "Device Type"});
  }
  return c;
}

// RFC 4180 records from chunks: quoted fields with "" escapes and newlines
// inside quotes, CRLF or LF. A record is handed out with the line it
// started on.
class CsvReader : public Reader {
 public:
  explicit CsvReader(ImportContext& ctx)
      : ctx_(ctx),
        source_(EnsureSource(ctx)),
        first_task_(ctx.trace->task_count()) {}

  Status Parse(std::string_view chunk) override {
    for (char c : chunk) {
      if (c == '\n') ++line_;
      if (in_quotes_) {
        if (quote_pending_) {
          quote_pending_ = false;
          if (c == '"') {
            field_.push_back('"');
            continue;
          }
          in_quotes_ = false;  // closing quote; fall through
        } else if (c == '"') {
          quote_pending_ = true;
          continue;
        } else {
          field_.push_back(c);
          if (field_.size() > kMaxField) {
            return MalformedInputError(
                Where(quote_line_) +
                "quoted field longer than 16 MiB (its quote opens on this "
                "line and is not closed); expected a CANN profiler CSV table");
          }
          continue;
        }
      }
      if (c == '"' && field_.empty() && !field_started_) {
        in_quotes_ = true;
        field_started_ = true;
        quote_line_ = line_;
      } else if (c == ',') {
        EndField();
        if (++record_fields_ > kMaxFields) {
          return MalformedInputError(
              Where(record_line_) + "row with more than " +
              std::to_string(kMaxFields) +
              " fields; expected a CANN profiler CSV table");
        }
      } else if (c == '\n') {
        EndField();
        MI_RETURN_IF_ERROR(EndRecord(record_line_));
        record_line_ = line_;
      } else if (c == '\r') {
        // CRLF: dropped; a lone CR inside an unquoted field is too.
      } else {
        field_.push_back(c);
        field_started_ = true;
      }
      if (field_.size() > kMaxField) {
        return MalformedInputError(Where(record_line_) +
                                   "field longer than 16 MiB; expected a "
                                   "CANN profiler CSV table");
      }
    }
    return Status::Ok();
  }

  // The row being read and the rows waiting for their device's tie.
  size_t MemoryUsage() const override {
    return field_.capacity() + record_bytes_ +
           pending_.capacity() * sizeof(PendingRow);
  }

  Status NotifyEndOfFile() override {
    if (quote_pending_) {
      quote_pending_ = false;
      in_quotes_ = false;
    }
    if (in_quotes_) {
      return MalformedInputError(
          Where(quote_line_) +
          "quoted field never closed; expected a closing '\"' before the end "
          "of the file (is the file truncated?)");
    }
    if (field_started_ || !fields_.empty()) {
      EndField();
      MI_RETURN_IF_ERROR(EndRecord(record_line_));
    }
    if (!have_header_) {
      if (const NamedTable* named = NamedTableOf(ctx_.path)) {
        return MalformedInputError(ctx_.path + ":1: empty file; expected the " +
                                   std::string(named->what) + " header '" +
                                   std::string(named->header) + "'" +
                                   std::string(named->note) + " and its rows");
      }
      return MalformedInputError(ctx_.path +
                                 ":1: empty file; expected a CANN profiler "
                                 "CSV table (op_summary / kernel_details) "
                                 "starting with its header line");
    }
    // Rows that could have joined tasks of more than one device of the
    // source before the CSV's device ids were tied to the timeline's
    // devices: now, with every tie the other rows made.
    for (const PendingRow& row : pending_) JoinRow(row, /*final=*/true);
    pending_.clear();
    if (join_missed_ > kMaxJoinMissLog) {
      ctx_.diagnostics->Report(
          DiagnosticCode::kCsvRowSkipped, {ctx_.path},
          std::to_string(join_missed_) +
              " rows in all matched no timeline task (the first " +
              std::to_string(kMaxJoinMissLog) + " are listed)");
    }
    SourceInfo& source = ctx_.trace->mutable_source(source_);
    if (tasks_added_ > 0 && source.dialect == StringPool::kEmpty) {
      source.dialect = ctx_.trace->strings().Intern("ascend");
      ctx_.trace->AddRun({ctx_.trace->strings().Intern("whole trace"),
                          first_start_, last_end_, source_});
    }
    if (tasks_added_ > 0) {
      // Without a timeline the table's HCCL rows are the collectives.
      const size_t first_record =
          ctx_.trace->communication().collectives.size();
      AddHcclCollectiveRecords(*ctx_.trace, source_, first_task_);
      SetCollectiveRuns(*ctx_.trace, source_, first_record);
    }
    if ((tasks_added_ > 0 || joined_ > 0) &&
        ctx_.trace->str(source.dialect) == "ascend") {
      AddAscendOpTypeClasses(*ctx_.trace, source_);
    }
    // CANN tables write epoch microseconds (msprof and torch_npu alike).
    if (tasks_added_ > 0 || joined_ > 0 || memory_rows_ > 0 ||
        table_rows_ > 0) {
      if (source.time_base == TimeBase::kUnknown) {
        source.time_base = TimeBase::kEpoch;
      }
    }
    return Status::Ok();
  }

 private:
  // Fixed caps, far above any CANN table's: one field (also inside quotes,
  // where a quote that never closes would otherwise take the rest of the
  // file) and the fields of one row (each an empty std::string at least).
  static constexpr size_t kMaxField = size_t{16} << 20;
  static constexpr size_t kMaxFields = size_t{1} << 16;

  std::string Where(uint64_t line) const {
    return ctx_.path + ":" + std::to_string(line) + ": ";
  }
  void EndField() {
    record_bytes_ += sizeof(std::string) + field_.capacity();
    fields_.push_back(std::move(field_));
    field_.clear();
    field_started_ = false;
  }
  Status EndRecord(uint64_t line) {
    std::vector<std::string> record = std::move(fields_);
    fields_.clear();
    record_fields_ = 0;
    record_bytes_ = 0;
    if (record.size() == 1 && Clean(record[0]).empty()) return Status::Ok();
    if (!have_header_) {
      have_header_ = true;
      header_size_ = record.size();
      cols_ = MapHeader(record);
      const NamedTable* named = NamedTableOf(ctx_.path);
      if (cols_.table == Table::kUnknown && named != nullptr) {
        // A file named like one CANN table: say what its name promises.
        std::string found;
        for (size_t i = 0; i < record.size() && found.size() < 60; ++i) {
          if (i > 0) found += ',';
          found += record[i];
        }
        return MalformedInputError(
            Where(line) + "no " + std::string(named->what) +
            " header; expected the " + std::string(named->what) + " header '" +
            std::string(named->header) + "'" + std::string(named->note) +
            " as the first line, found '" + found.substr(0, 60) + "'");
      }
      if (cols_.table == Table::kUnknown) {
        return MalformedInputError(
            Where(line) +
            "header names no task columns; expected op_summary (Op Name, "
            "Task Start Time(us), Task Duration(us)), kernel_details (Name, "
            "Start Time(us), Duration(us)), task_time, op_statistic, "
            "memory_record or npu_module_mem columns, found '" +
            (record.empty() ? std::string() : record[0].substr(0, 40)) + "'");
      }
      PrepareJoin();
      return Status::Ok();
    }
    // Short rows (a real op_summary sample drops its last empty cell) are
    // padded: missing cells are absent values.
    if (record.size() < header_size_) record.resize(header_size_);
    if (record.size() != header_size_) {
      return MalformedInputError(
          Where(line) + "row has " + std::to_string(record.size()) +
          " fields; expected " + std::to_string(header_size_) +
          " as in the header (an unquoted ',' inside a value?)");
    }
    if (cols_.table == Table::kMemoryRecord ||
        cols_.table == Table::kModuleMemory) {
      return AddMemoryRow(record, line);
    }
    switch (cols_.table) {
      case Table::kApiStatistic:
        return AddApiStatisticRow(record, line);
      case Table::kCacheRates:
        return AddCacheRow(record, line);
      case Table::kOperatorMemory:
        return AddOperatorMemoryRow(record, line);
      case Table::kStaticOpMemory:
        return AddStaticOpMemoryRow(record, line);
      default:
        break;
    }
    if (cols_.table != Table::kTasks && cols_.table != Table::kTaskTime) {
      return Status::Ok();  // statistics: recognised, no tasks
    }
    return AddRow(record, line);
  }

  std::string_view Cell(const std::vector<std::string>& r, int col) const {
    return col < 0 ? std::string_view() : Clean(r[static_cast<size_t>(col)]);
  }

  void PrepareJoin() {
    // Join mode when this file's source (the profiler output folder it
    // came from) already has Ascend timeline device tasks: per task name,
    // that name's device tasks by start time. Another source's tasks are
    // another run's: never joined.
    Trace& trace = *ctx_.trace;
    if (trace.str(trace.source(source_).dialect) != "ascend") return;
    for (uint32_t i = 0; i < trace.task_count(); ++i) {
      TaskId t(i);
      const TrackInfo& info = trace.track(trace.task_track(t));
      if (info.kind != TrackKind::kDeviceStream || info.source != source_) {
        continue;
      }
      join_[trace.task_name(t).value()].push_back(
          {trace.task_start_ns(t), info.stream, info.device, t});
    }
    for (auto& [name, list] : join_) {
      std::stable_sort(list.begin(), list.end(),
                       [](const JoinEntry& a, const JoinEntry& b) {
                         return a.start_ns < b.start_ns;
                       });
    }
    join_mode_ = !join_.empty();
  }

  // The timeline names no device id (its pids encode one differently in
  // every msprof / torch_npu version and are never decoded; devices are
  // numbered by process), so the join learns which timeline device each
  // CSV Device_id is: a row that joins a task ties the task's device to
  // the row's Device_id. A device tied to one id never takes rows of
  // another; one id may own several timeline devices (the Ascend Hardware
  // and the HCCL process of one NPU).
  bool DeviceAllowed(int32_t timeline_device, int64_t csv_device) const {
    if (csv_device < 0) return true;  // the table has no Device_id column
    auto it = device_tie_.find(timeline_device);
    return it == device_tie_.end() || it->second == csv_device;
  }

  // The not yet joined timeline task with this name (and stream, when the
  // row has one; HCCL rows write N/A; and device, see DeviceAllowed) whose
  // start is nearest, within kJoinToleranceNs. Invalid when none; also
  // Invalid with *ambiguous set when, unless `final`, tasks on more than
  // one device not yet tied could take the row (decided at the end of the
  // file, when the other rows have tied the devices).
  TaskId FindJoin(std::string_view name, int64_t stream, int64_t start,
                  int64_t device, bool final, bool* ambiguous) {
    *ambiguous = false;
    const Trace& trace = *ctx_.trace;
    StringId id = trace.strings().Find(name);
    if (!id.valid()) return TaskId::Invalid();
    auto it = join_.find(id.value());
    if (it == join_.end()) return TaskId::Invalid();
    std::vector<JoinEntry>& list = it->second;
    auto lo = std::lower_bound(
        list.begin(), list.end(), start - kJoinToleranceNs,
        [](const JoinEntry& e, int64_t v) { return e.start_ns < v; });
    JoinEntry* best = nullptr;
    int64_t best_delta = INT64_MAX;
    int32_t untied_device = INT32_MIN;
    for (auto e = lo;
         e != list.end() && e->start_ns <= start + kJoinToleranceNs; ++e) {
      if (e->joined || (stream >= 0 && e->stream != stream) ||
          !DeviceAllowed(e->device, device)) {
        continue;
      }
      if (device >= 0 && device_tie_.count(e->device) == 0) {
        if (untied_device != INT32_MIN && untied_device != e->device) {
          *ambiguous = true;
        }
        untied_device = e->device;
      }
      int64_t delta =
          e->start_ns > start ? e->start_ns - start : start - e->start_ns;
      if (delta < best_delta) {
        best = &*e;
        best_delta = delta;
      }
    }
    if (best == nullptr || (*ambiguous && !final)) return TaskId::Invalid();
    best->joined = true;
    if (device >= 0) device_tie_.try_emplace(best->device, device);
    return best->task;
  }

  // One allocator sample per row with a time and a Total Allocated (APP
  // rows carry only Total Reserved: kept with allocated unknown). Device
  // "NPU:3" -> 3; the component is kept so each allocator is its own curve.
  // A row whose time or size is not a number (an empty size is no value) is
  // skipped with a diagnostic naming its line and cell.
  Status AddMemoryRow(const std::vector<std::string>& r, uint64_t line) {
    std::string_view time_cell = Cell(r, cols_.timestamp);
    std::optional<int64_t> time = ParseMicrosToNs(time_cell);
    if (!time) {
      ctx_.diagnostics->Report(
          DiagnosticCode::kCsvRowSkipped, {ctx_.path, line, 0},
          "memory row skipped: Timestamp(us) is not a number; expected "
          "microseconds such as 1736408883573957.920",
          std::string(time_cell.substr(0, 80)));
      return Status::Ok();
    }
    std::optional<int64_t> allocated, reserved;
    for (auto [col, unit, out, what] :
         {std::tuple(cols_.allocated, cols_.allocated_unit, &allocated,
                     "Total Allocated"),
          std::tuple(cols_.reserved, cols_.reserved_unit, &reserved,
                     "Total Reserved")}) {
      std::string_view cell = Cell(r, col);
      if (col < 0 || cell.empty()) continue;
      *out = ParseSize(cell, unit);
      if (!*out) {
        ctx_.diagnostics->Report(
            DiagnosticCode::kCsvRowSkipped, {ctx_.path, line, 0},
            std::string("memory row skipped: ") + what +
                " is not a size; expected a non-negative number of " +
                (unit == (int64_t{1} << 20) ? "MB" : "KB"),
            std::string(cell.substr(0, 80)));
        return Status::Ok();
      }
    }
    if (!allocated && !reserved) return Status::Ok();
    AllocatorSample sample;
    sample.time_ns = *time;
    sample.total_allocated_bytes = allocated.value_or(-1);
    sample.total_reserved_bytes = reserved.value_or(-1);
    std::string_view device = Cell(r, cols_.device);
    size_t colon = device.find(':');
    if (colon != std::string_view::npos) {
      sample.device = static_cast<int32_t>(std::clamp<int64_t>(
          ParseInt(device.substr(colon + 1)).value_or(-1), -1, 1 << 20));
    }
    sample.component = ctx_.trace->strings().Intern(Cell(r, cols_.component));
    sample.source = source_;
    sample.per_module = cols_.table == Table::kModuleMemory;
    ctx_.trace->AddAllocatorSample(sample);
    ++memory_rows_;
    return Status::Ok();
  }

  void SkipRow(uint64_t line, std::string_view column, std::string_view cell,
               std::string_view expected) {
    ctx_.diagnostics->Report(DiagnosticCode::kCsvRowSkipped,
                             {ctx_.path, line, 0},
                             "row skipped: " + std::string(column) +
                                 " is not " + std::string(expected),
                             std::string(cell.substr(0, 80)));
  }

  // api_statistic.csv: times are µs; a row without a numeric Time(us) or
  // Count is skipped with a diagnostic.
  Status AddApiStatisticRow(const std::vector<std::string>& r, uint64_t line) {
    ApiStatisticRow row;
    row.source = source_;
    row.line = line;
    std::string_view time = Cell(r, cols_.time);
    std::optional<int64_t> total = ParseMicrosToNs(time);
    if (!total) {
      SkipRow(line, "Time(us)", time, "a number of microseconds");
      return Status::Ok();
    }
    std::string_view count = Cell(r, cols_.count);
    std::optional<int64_t> n = ParseInt(count);
    if (!n) {
      SkipRow(line, "Count", count, "a call count");
      return Status::Ok();
    }
    row.total_ns = *total;
    row.count = static_cast<uint64_t>(*n);
    row.avg_ns = ParseMicrosToNs(Cell(r, cols_.avg)).value_or(-1);
    row.min_ns = ParseMicrosToNs(Cell(r, cols_.min)).value_or(-1);
    row.max_ns = ParseMicrosToNs(Cell(r, cols_.max)).value_or(-1);
    row.variance = ParseDouble(Cell(r, cols_.variance)).value_or(-1);
    row.device = DeviceOfCell(Cell(r, cols_.device));
    row.level = ctx_.trace->strings().Intern(Cell(r, cols_.level));
    row.name = ctx_.trace->strings().Intern(Cell(r, cols_.name));
    ctx_.trace->mutable_profile_tables().api_statistics.push_back(row);
    ++table_rows_;
    return Status::Ok();
  }

  // l2_cache.csv: rates are fractions (N/A: unknown). Each row joins the
  // earliest not yet joined device task of the source with its op name, on
  // its stream: the profiler writes one row per task in launch order.
  Status AddCacheRow(const std::vector<std::string>& r, uint64_t line) {
    CacheRateRow row;
    row.source = source_;
    for (auto [col, out, what] :
         {std::tuple(cols_.hit, &row.hit_rate, "Hit Rate"),
          std::tuple(cols_.victim, &row.victim_rate, "Victim Rate")}) {
      std::string_view cell = Cell(r, col);
      if (cell.empty()) continue;  // N/A
      std::optional<double> v = ParseDouble(cell);
      if (!v || !(*v >= 0)) {
        SkipRow(line, what, cell, "a rate (a number from 0 to 1, or N/A)");
        return Status::Ok();
      }
      *out = *v;
    }
    std::string_view name = Cell(r, cols_.name);
    row.op_name = ctx_.trace->strings().Intern(name);
    row.stream = ParseInt(Cell(r, cols_.stream)).value_or(-1);
    row.task_id = ParseInt(Cell(r, cols_.task)).value_or(-1);
    std::string_view device_cell = Cell(r, cols_.device);
    int64_t device = device_cell.empty() ? -1 : DeviceOfCell(device_cell);
    row.device = static_cast<int32_t>(device);
    if (join_mode_ && !name.empty()) {
      row.task = FindInOrder(name, row.stream, device);
      if (row.task.valid()) {
        ++cache_joined_;
      } else if (++join_missed_ <= kMaxJoinMissLog) {
        ctx_.diagnostics->Report(
            DiagnosticCode::kCsvRowSkipped, {ctx_.path, line, 0},
            "L2 cache row matched no device task of the run with this op "
            "name on this stream; kept without a task",
            std::string(name.substr(0, 80)));
      }
    }
    ctx_.trace->mutable_profile_tables().cache_rates.push_back(row);
    ++table_rows_;
    return Status::Ok();
  }

  // The earliest not yet joined task named `name` (on `stream` when both
  // say one; on a device DeviceAllowed for `device`).
  TaskId FindInOrder(std::string_view name, int64_t stream, int64_t device) {
    StringId id = ctx_.trace->strings().Find(name);
    if (!id.valid()) return TaskId::Invalid();
    auto it = join_.find(id.value());
    if (it == join_.end()) return TaskId::Invalid();
    // Rows come in launch order: start past the entries already joined
    // instead of from the first (quadratic for an op launched thousands of
    // times).
    std::vector<JoinEntry>& list = it->second;
    size_t& first = in_order_cursor_[id.value()];
    while (first < list.size() && list[first].joined) ++first;
    for (size_t i = first; i < list.size(); ++i) {
      JoinEntry& e = list[i];
      if (e.joined || (stream >= 0 && e.stream >= 0 && e.stream != stream) ||
          !DeviceAllowed(e.device, device)) {
        continue;
      }
      e.joined = true;
      if (device >= 0) device_tie_.try_emplace(e.device, device);
      return e.task;
    }
    return TaskId::Invalid();
  }

  std::optional<int64_t> SizeCell(const std::vector<std::string>& r,
                                  uint64_t line) {
    std::string_view cell = Cell(r, cols_.size);
    std::optional<int64_t> bytes = ParseSize(cell, cols_.size_unit);
    if (!bytes) {
      SkipRow(line,
              cols_.size_unit == (int64_t{1} << 20) ? "Size(MB)" : "Size(KB)",
              cell, "a non-negative size");
    }
    return bytes;
  }

  // operator_memory.csv: one allocated block per row.
  Status AddOperatorMemoryRow(const std::vector<std::string>& r,
                              uint64_t line) {
    std::optional<int64_t> bytes = SizeCell(r, line);
    if (!bytes) return Status::Ok();
    OperatorMemoryRow row;
    row.source = source_;
    row.name = ctx_.trace->strings().Intern(Cell(r, cols_.name));
    row.size_bytes = *bytes;
    row.allocation_ns = ParseMicrosToNs(Cell(r, cols_.timestamp)).value_or(-1);
    row.release_ns = ParseMicrosToNs(Cell(r, cols_.release)).value_or(-1);
    row.duration_ns = ParseMicrosToNs(Cell(r, cols_.dur)).value_or(-1);
    // msprof's table has no Release Time(us): a block with a Duration(us)
    // was released that long after its allocation.
    if (row.release_ns < 0 && cols_.release < 0 && row.duration_ns >= 0 &&
        row.allocation_ns >= 0) {
      row.release_ns = row.allocation_ns + row.duration_ns;
    }
    row.device = DeviceOfCell(Cell(r, cols_.device));
    ctx_.trace->mutable_profile_tables().operator_memory.push_back(row);
    ++table_rows_;
    return Status::Ok();
  }

  // static_op_mem.csv: one op's static memory per row.
  Status AddStaticOpMemoryRow(const std::vector<std::string>& r,
                              uint64_t line) {
    std::optional<int64_t> bytes = SizeCell(r, line);
    if (!bytes) return Status::Ok();
    StaticOpMemoryRow row;
    row.source = source_;
    row.op_name = ctx_.trace->strings().Intern(Cell(r, cols_.name));
    row.model_name = ctx_.trace->strings().Intern(Cell(r, cols_.model));
    row.graph_id = ParseInt(Cell(r, cols_.graph)).value_or(-1);
    row.node_index_start = ParseInt(Cell(r, cols_.index_start)).value_or(-1);
    row.node_index_end = ParseInt(Cell(r, cols_.index_end)).value_or(-1);
    row.size_bytes = *bytes;
    row.device = DeviceOfCell(Cell(r, cols_.device));
    ctx_.trace->mutable_profile_tables().static_op_memory.push_back(row);
    ++table_rows_;
    return Status::Ok();
  }

  // A CSV row waiting to be joined (kept only while its device is open).
  struct PendingRow {
    std::string name;
    int64_t stream;
    int64_t start_ns;
    int64_t device;  // Device_id, -1 when the table has none
    std::string type;
    std::string in_shapes;
    std::string out_shapes;
    uint64_t line;
    std::string core;  // Task Type / Accelerator Core ("AI_CORE")
  };

  void JoinRow(const PendingRow& row, bool final) {
    Trace& trace = *ctx_.trace;
    StringPool& strings = trace.strings();
    bool ambiguous = false;
    TaskId t = FindJoin(row.name, row.stream, row.start_ns, row.device, final,
                        &ambiguous);
    if (ambiguous && !final) {
      pending_.push_back(row);
      return;
    }
    if (!t.valid()) {
      ++join_missed_;
      if (join_missed_ <= kMaxJoinMissLog) {
        ctx_.diagnostics->Report(
            DiagnosticCode::kCsvRowSkipped, {ctx_.path, row.line, 0},
            "row matched no timeline task of the same device with the same "
            "name and stream starting within 1 us; its details were not "
            "joined",
            row.name.substr(0, 80));
      }
      return;
    }
    ++joined_;
    // A timeline that did not say what ran (torch_npu 2024 trace_view
    // writes Task Type "Other" for AI Core kernels) learns it from the
    // table's accelerator: the kernel is compute like any other.
    if (trace.task_kind(t) == TaskKind::kOther && !row.core.empty() &&
        EqualsIgnoringCase(trace.str(trace.task_category(t)), "Other")) {
      const TaskKind kind = KindOfTaskType(row.core);
      if (kind != TaskKind::kOther) {
        trace.SetTaskKind(t, kind);
        trace.SetTaskCategory(t, strings.Intern(row.core));
        if (kind == TaskKind::kCompute) {
          trace.SetTaskNodeName(t, trace.task_name(t));
        }
        trace.SetTaskClass(
            t, strings.Intern(AscendTaskClass(
                   row.core, row.type.empty() ? row.name : row.type, row.name,
                   kind)));
      }
    }
    if (!row.type.empty()) {
      trace.SetTaskOpType(t, strings.Intern(row.type));
      // The op type may make the task a layout conversion.
      std::string_view name = trace.str(trace.task_name(t));
      trace.SetTaskClass(t, strings.Intern(AscendTaskClass(
                                trace.str(trace.task_category(t)), row.type,
                                name, trace.task_kind(t))));
    }
    if (!row.in_shapes.empty()) {
      trace.SetTaskShapes(t, strings.Intern(row.in_shapes));
    }
    if (!row.out_shapes.empty()) {
      trace.SetTaskOutputShapes(t, strings.Intern(row.out_shapes));
    }
  }

  Status AddRow(const std::vector<std::string>& r, uint64_t line) {
    Trace& trace = *ctx_.trace;
    StringPool& strings = trace.strings();
    std::string_view name = Cell(r, cols_.name);
    std::optional<int64_t> start = ParseMicrosToNs(Cell(r, cols_.start));
    std::optional<int64_t> dur = ParseMicrosToNs(Cell(r, cols_.dur));
    if (!start || !dur) {
      ctx_.diagnostics->Report(
          DiagnosticCode::kCsvRowSkipped, {ctx_.path, line, 0},
          "row without a numeric start time or duration skipped",
          std::string(name.substr(0, 80)));
      return Status::Ok();
    }
    int64_t end_ns = 0;
    if (__builtin_add_overflow(*start, *dur, &end_ns)) {
      ctx_.diagnostics->Report(
          DiagnosticCode::kCsvRowSkipped, {ctx_.path, line, 0},
          "row skipped: start time plus duration is past the clock's range "
          "(expected both within about 292 years in ns)",
          std::string(name.substr(0, 80)));
      return Status::Ok();
    }
    std::string_view type = Cell(r, cols_.type);
    std::string_view core = Cell(r, cols_.core);
    // task_time writes kernel_name N/A for non-kernel tasks (MEMCPY_ASYNC,
    // EVENT_RECORD): they are named by their type, as on the timeline.
    if (name.empty()) name = !core.empty() ? core : type;
    int64_t stream = ParseInt(Cell(r, cols_.stream)).value_or(-1);
    std::string_view in_shapes = StripQuotes(Cell(r, cols_.in_shapes));
    std::string_view out_shapes = StripQuotes(Cell(r, cols_.out_shapes));
    if (join_mode_) {
      PendingRow row{std::string(name),
                     stream,
                     *start,
                     ParseInt(Cell(r, cols_.device)).value_or(-1),
                     std::string(type),
                     std::string(in_shapes),
                     std::string(out_shapes),
                     line,
                     std::string(core)};
      JoinRow(row, /*final=*/false);
      return Status::Ok();
    }
    int64_t device = ParseInt(Cell(r, cols_.device)).value_or(0);
    // Rows without a stream (HCCL rows write N/A; level-0 kernel_details
    // has no Stream ID column): one track for collectives, one for the rest.
    const bool communication = IsAscendCommunicationType(core);
    auto key = std::tuple{device, stream, stream < 0 && communication};
    auto track_it = tracks_.find(key);
    if (track_it == tracks_.end()) {
      TrackInfo info;
      info.kind = TrackKind::kDeviceStream;
      info.source = source_;
      info.device =
          static_cast<int32_t>(std::clamp<int64_t>(device, 0, 1 << 20));
      info.stream = stream;
      info.tid = stream;
      info.process_name = strings.Intern("Ascend Hardware");
      info.thread_name =
          strings.Intern(stream >= 0     ? "Stream " + std::to_string(stream)
                         : communication ? std::string("Communication")
                                         : std::string("Stream N/A"));
      track_it = tracks_.emplace(key, trace.AddTrack(info)).first;
    }
    TaskRow row;
    row.name = strings.Intern(name);
    row.category = strings.Intern(core);
    row.kind = KindOfTaskType(core);
    row.track = track_it->second;
    row.start_ns = *start;
    row.duration_ns = *dur;
    if (!type.empty()) row.op_type = strings.Intern(type);
    // The accelerator (or layout conversion) the summary shows.
    row.task_class = strings.Intern(
        AscendTaskClass(core, type.empty() ? name : type, name, row.kind));
    if (row.kind == TaskKind::kCompute && !name.empty()) {
      row.node_name = row.name;  // op name = GE node name
    }
    if (!in_shapes.empty()) row.shapes = strings.Intern(in_shapes);
    if (!out_shapes.empty()) row.output_shapes = strings.Intern(out_shapes);
    row.correlation = ParseInt(Cell(r, cols_.task)).value_or(-1);
    trace.AddTask(row);
    if (tasks_added_++ == 0) {
      first_start_ = *start;
      last_end_ = end_ns;
    }
    first_start_ = std::min(first_start_, *start);
    last_end_ = std::max(last_end_, end_ns);
    return Status::Ok();
  }

  ImportContext& ctx_;
  SourceId source_;
  uint64_t line_ = 1;
  uint64_t record_line_ = 1;
  uint64_t quote_line_ = 1;
  bool in_quotes_ = false;
  bool quote_pending_ = false;
  bool field_started_ = false;
  std::string field_;
  std::vector<std::string> fields_;
  size_t record_fields_ = 0;
  size_t record_bytes_ = 0;  // of fields_
  bool have_header_ = false;
  size_t header_size_ = 0;
  Columns cols_;
  std::map<std::tuple<int64_t, int64_t, bool>, TrackId> tracks_;
  struct JoinEntry {
    int64_t start_ns;
    int64_t stream;
    int32_t device;  // the timeline's device (ordinal of its process)
    TaskId task;
    bool joined = false;
  };
  static constexpr uint64_t kMaxJoinMissLog = 20;
  bool join_mode_ = false;
  std::unordered_map<uint32_t, std::vector<JoinEntry>> join_;  // by name
  // Per name: the first entry of join_ FindInOrder has not yet joined.
  std::unordered_map<uint32_t, size_t> in_order_cursor_;
  uint64_t joined_ = 0;
  uint64_t join_missed_ = 0;
  uint64_t memory_rows_ = 0;
  uint64_t table_rows_ = 0;  // api_statistic, l2_cache, operator/static mem
  uint64_t cache_joined_ = 0;
  // Timeline device -> the CSV Device_id whose rows it took (DeviceAllowed).
  std::unordered_map<int32_t, int64_t> device_tie_;
  std::vector<PendingRow> pending_;
  uint64_t tasks_added_ = 0;
  int64_t first_start_ = 0;
  int64_t last_end_ = 0;
  size_t first_task_ = 0;  // tasks before this file's
};

class AscendCsvImporter : public Importer {
 public:
  const ImporterDescriptor& descriptor() const override {
    static const ImporterDescriptor d{
        "ascend_csv",
        {".csv"},
        5,
        ContentKind::kTrace,
        "a CANN profiler table (op_summary, kernel_details, task_time, "
        "op_statistic, memory_record, npu_module_mem, api_statistic, "
        "l2_cache, operator_memory, static_op_mem CSV)"};
    return d;
  }
  int Sniff(std::string_view head, std::string_view path) const override {
    std::string_view first = head.substr(0, head.find('\n'));
    if (first.starts_with("\xEF\xBB\xBF")) first.remove_prefix(3);
    bool tasks =
        (Contains(first, "Op Name") || Contains(first, "Name,")) &&
        (Contains(first, "Start Time") || Contains(first, "task_start")) &&
        (Contains(first, "Duration(us)") || Contains(first, "task_time"));
    bool stats = Contains(first, "OP Type,Core Type,Count,Total Time(us)");
    bool task_time = Contains(first, "kernel_name,kernel_type,stream_id");
    bool memory = Contains(first, "Component,Timestamp(us),Total Allocated(") ||
                  Contains(first, "Component,Timestamp(us),Total Reserved(");
    // api_statistic, l2_cache, operator_memory, static_op_mem.
    bool tables =
        Contains(first, "Level,API Name,Time(us),Count") ||
        Contains(first, "Stream Id,Task Id,Hit Rate,Victim Rate") ||
        (Contains(first, "Name,Size(") &&
         Contains(first, "Allocation Time(us)")) ||
        Contains(first, "Op Name,Model Name,Graph ID,Node Index Start");
    if (tasks || stats || task_time || memory || tables) return 90;
    // A file named like a CANN table (op_summary_*.csv, kernel_details.csv,
    // task_time_*.csv, op_statistic*.csv) whose header is not one we know,
    // or that is empty: claim it weakly, so the error names the header.
    return IsAscendTableName(path) ? 30 : 0;
  }

 protected:
  std::unique_ptr<Reader> CreateReader(ImportContext& ctx) const override {
    return std::make_unique<CsvReader>(ctx);
  }
};

}  // namespace

std::unique_ptr<Importer> CreateAscendCsvImporter() {
  return std::make_unique<AscendCsvImporter>();
}

Status ImportAscendCsvFromBuffer(std::string_view data, ImportContext& ctx,
                                 size_t chunk_size) {
  if (ctx.path.empty()) ctx.path = "<buffer>";
  CsvReader reader(ctx);
  if (chunk_size == 0) chunk_size = std::max<size_t>(1, data.size() / 3 + 1);
  for (size_t i = 0; i < data.size(); i += chunk_size) {
    MI_RETURN_IF_ERROR(reader.Parse(data.substr(i, chunk_size)));
  }
  return reader.NotifyEndOfFile();
}

}  // namespace mi::importers
