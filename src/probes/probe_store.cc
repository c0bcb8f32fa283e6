// ProbeStore (include/model_inspector/probes.h) on SQLite plus .npy files;
// layout and tables in docs/reference/probe-store.md.
//
// A run is a row of `runs` with status "running" from BeginRun on (so that
// concurrent writers get distinct ids and its array folder has an owner);
// readers only see finished runs ("complete" / "stopped"). Its probe rows,
// plugin metrics and trigger hits are held in memory and written, with the
// new status and the pruning of old runs, in one transaction at EndRun. A
// writer that dies mid-run leaves a "running" row and maybe array files:
// both are removed by a later EndRun once the row is older than every kept
// run.

#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "model_inspector/probes.h"
#include "probes/half.h"

namespace mi {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr const char* kSchemaName = "model-inspector probe store";
constexpr int kSchemaVersion = 1;
constexpr int kBusyTimeoutMs = 30000;
constexpr const char* kFinished = "status IN ('complete', 'stopped')";

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// One prepared statement; errors name the store's file and the action.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& path, std::string what)
      : db_(db), path_(path), what_(std::move(what)) {}
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Status Prepare(const std::string& sql) {
    const int rc = sqlite3_prepare_v2(
        db_, sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr);
    return rc == SQLITE_OK ? Status::Ok() : Error(rc);
  }
  void Bind(int i, int64_t v) { Note(sqlite3_bind_int64(stmt_, i, v)); }
  void Bind(int i, double v) { Note(sqlite3_bind_double(stmt_, i, v)); }
  void Bind(int i, std::string_view v) {
    Note(sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT,
                             SQLITE_UTF8));
  }
  void BindNull(int i) { Note(sqlite3_bind_null(stmt_, i)); }
  void Bind(int i, const std::optional<double>& v) {
    if (v && std::isfinite(*v)) {
      Bind(i, *v);
    } else {
      BindNull(i);
    }
  }
  void BindCount(int i, int64_t v) {
    if (v >= 0) {
      Bind(i, v);
    } else {
      BindNull(i);
    }
  }
  StatusOr<bool> Step() {
    if (bind_error_ != 0) return Error(bind_error_);
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return Error(rc);
  }
  Status Run() {
    MI_ASSIGN_OR_RETURN(bool row, Step());
    (void)row;
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    return Status::Ok();
  }
  bool Null(int c) const {
    return sqlite3_column_type(stmt_, c) == SQLITE_NULL;
  }
  int64_t Int(int c) const { return sqlite3_column_int64(stmt_, c); }
  int64_t Count(int c) const { return Null(c) ? -1 : Int(c); }
  std::optional<double> Real(int c) const {
    if (Null(c)) return std::nullopt;
    return sqlite3_column_double(stmt_, c);
  }
  std::string Text(int c) const {
    const auto* t = sqlite3_column_text(stmt_, c);
    if (t == nullptr) return {};
    return std::string(reinterpret_cast<const char*>(t),
                       static_cast<size_t>(sqlite3_column_bytes(stmt_, c)));
  }

 private:
  void Note(int rc) {
    if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
  }
  Status Error(int rc) const {
    std::string message = sqlite3_errmsg(db_);
    const StatusCode code =
        (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB
            ? StatusCode::kMalformedInput
            : StatusCode::kIo;
    return Status(code, path_ + ": " + what_ + ": " + message);
  }
  sqlite3* db_;
  const std::string& path_;
  std::string what_;
  sqlite3_stmt* stmt_ = nullptr;
  int bind_error_ = 0;
};

Json StatsToJson(const TensorStats& s) {
  auto count = [](int64_t v) { return v < 0 ? Json() : Json(v); };
  auto real = [](const std::optional<double>& v) {
    return v && std::isfinite(*v) ? Json(*v) : Json();
  };
  Json j = Json::object();
  j["count"] = count(s.count);
  j["nan"] = count(s.nan);
  j["pos_inf"] = count(s.pos_inf);
  j["neg_inf"] = count(s.neg_inf);
  j["zero"] = count(s.zero);
  j["min"] = real(s.min);
  j["max"] = real(s.max);
  j["mean"] = real(s.mean);
  j["std"] = real(s.std);
  j["l2"] = real(s.l2);
  j["abs_max"] = real(s.abs_max);
  j["dtype"] = s.dtype;
  j["shape"] = s.shape;
  return j;
}

Json RunToJson(const ProbeRunInfo& r) {
  return Json{
      {"id", r.id},
      {"created", r.created},
      {"backend", r.backend},
      {"model", r.model},
      {"level", r.level},
      {"label", r.label},
      {"inputs", r.inputs},
      {"status", r.status},
      {"stopped_at", r.stopped_at.empty() ? Json() : Json(r.stopped_at)},
      {"elapsed_ns", r.elapsed_ns},
      {"probes", r.probe_rows}};
}

Json RecordToJson(const ProbeRecord& r) {
  Json extra = Json::parse(r.extra_json, nullptr, false);
  if (extra.is_discarded()) extra = Json::object();
  return Json{
      {"run", r.run},
      {"probe", r.probe},
      {"node", r.node},
      {"kind", r.kind},
      {"index", r.index},
      {"step", r.step ? Json(*r.step) : Json()},
      {"order", r.order},
      {"stats", StatsToJson(r.stats)},
      {"extra", extra},
      {"array", r.array_file.empty() ? Json() : Json(r.array_file)},
      {"array_dtype", r.array_dtype.empty() ? Json() : Json(r.array_dtype)},
      {"sampled", r.sampled},
      {"sample_stride", r.sample_stride}};
}

// The elements of a kept tensor as written: sampled, and as float16 or
// (bfloat16, which NumPy lacks) float32 when asked.
struct KeptArray {
  std::string bytes;
  ProbeDType dtype;
  std::vector<int64_t> shape;
  bool sampled = false;
  int64_t stride = 1;
};

float ToFloat(const char* p, ProbeDType dtype) {
  switch (dtype) {
    case ProbeDType::kFloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return probes::HalfToFloat(h);
    }
    case ProbeDType::kBFloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case ProbeDType::kFloat32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    default: {
      double d;
      std::memcpy(&d, p, 8);
      return static_cast<float>(d);
    }
  }
}

KeptArray Keep(const TensorView& t, uint64_t count, bool fp16) {
  KeptArray out;
  const size_t size = ProbeDTypeSize(t.dtype);
  const char* data = static_cast<const char*>(t.data);
  uint64_t stride = 1;
  uint64_t kept = count;
  if (count > kProbeSampleLimit) {
    stride = (count + kProbeSampleLimit - 1) / kProbeSampleLimit;
    kept = (count + stride - 1) / stride;
    out.sampled = true;
    out.shape = {static_cast<int64_t>(kept)};
  } else {
    out.shape = t.shape;
  }
  out.stride = static_cast<int64_t>(stride);
  const bool is_float = ProbeDTypeIsFloat(t.dtype);
  const bool to_half = fp16 && is_float && t.dtype != ProbeDType::kFloat16;
  const bool to_float = !fp16 && t.dtype == ProbeDType::kBFloat16;
  if (to_half) {
    out.dtype = ProbeDType::kFloat16;
    out.bytes.resize(kept * 2);
    for (uint64_t i = 0; i < kept; ++i) {
      const uint16_t h =
          probes::FloatToHalf(ToFloat(data + i * stride * size, t.dtype));
      std::memcpy(out.bytes.data() + i * 2, &h, 2);
    }
  } else if (to_float) {
    out.dtype = ProbeDType::kFloat32;
    out.bytes.resize(kept * 4);
    for (uint64_t i = 0; i < kept; ++i) {
      const float f = ToFloat(data + i * stride * size, t.dtype);
      std::memcpy(out.bytes.data() + i * 4, &f, 4);
    }
  } else {
    out.dtype = t.dtype;
    if (stride == 1) {
      out.bytes.assign(data, count * size);
    } else {
      out.bytes.resize(kept * size);
      for (uint64_t i = 0; i < kept; ++i) {
        std::memcpy(out.bytes.data() + i * size, data + i * stride * size,
                    size);
      }
    }
  }
  return out;
}

}  // namespace

// The runs this process has begun and not yet ended, by store file: a
// "running" row of this process is in progress only while its store
// object still holds it (one that closed without ending it was abandoned).
std::mutex& OpenRunsMutex() {
  static std::mutex mu;
  return mu;
}
std::set<std::pair<std::string, int64_t>>& OpenRuns() {
  static auto* runs = new std::set<std::pair<std::string, int64_t>>();
  return *runs;
}

class ProbeStore::Impl {
 public:
  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(OpenRunsMutex());
      for (const auto& [run, pending] : pending_)
        OpenRuns().erase({path_, run});
    }
    if (db_ != nullptr) sqlite3_close_v2(db_);
  }

  Status Open(const std::string& run_dir, bool create, int keep_runs) {
    run_dir_ = run_dir;
    probes_dir_ = (fs::path(run_dir) / "probes").string();
    path_ = DbPath(run_dir);
    keep_runs_ = std::max(1, keep_runs);
    std::error_code ec;
    if (create) {
      fs::create_directories(fs::path(probes_dir_) / "arrays", ec);
      if (ec) {
        return IoError(
            probes_dir_ +
            ": cannot create the probe store's folder: " + ec.message());
      }
    } else if (!fs::exists(path_, ec)) {
      return NotFoundError(path_ +
                           ": no probe store (expected probes/probes.db in "
                           "the run directory)");
    }
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX;
    if (create) flags |= SQLITE_OPEN_CREATE;
    const int rc = sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
      std::string message =
          db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      return IoError(path_ + ": cannot open the probe store: " + message);
    }
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
    sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    // In WAL mode, NORMAL syncs at checkpoints, not at every commit: a run
    // is still all or nothing after a crash of the writer, and only an OS
    // crash or power loss can drop the newest runs. A full sync per commit
    // (two per probed run) cost more than the statistics of every tensor.
    // Set per connection; ignored until the file is in WAL mode.
    MI_RETURN_IF_ERROR(
        Exec("PRAGMA synchronous = NORMAL", "setting the sync mode"));
    if (create) {
      MI_RETURN_IF_ERROR(SetWalJournal());
      MI_RETURN_IF_ERROR(Exec(
          "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
          "INSERT OR IGNORE INTO meta VALUES('schema', '" +
              std::string(kSchemaName) + "'), ('version', '" +
              std::to_string(kSchemaVersion) +
              "');"
              "CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY "
              "AUTOINCREMENT, created TEXT NOT NULL, backend TEXT, model "
              "TEXT, level TEXT, label TEXT, inputs TEXT, status TEXT NOT "
              "NULL, stopped_at TEXT, elapsed_ns INTEGER, pid INTEGER);"
              "CREATE TABLE IF NOT EXISTS probes(run INTEGER NOT NULL, seq "
              "INTEGER NOT NULL, probe TEXT NOT NULL, node TEXT, kind TEXT, "
              "idx INTEGER, step INTEGER, ord INTEGER, dtype TEXT, shape "
              "TEXT, count INTEGER, nan INTEGER, pos_inf INTEGER, neg_inf "
              "INTEGER, zero INTEGER, min REAL, max REAL, mean REAL, std "
              "REAL, l2 REAL, abs_max REAL, extra TEXT, array TEXT, "
              "array_dtype TEXT, sampled INTEGER, sample_stride INTEGER, "
              "PRIMARY KEY(run, seq));"
              "CREATE INDEX IF NOT EXISTS probes_by_name ON probes(probe, "
              "run);"
              "CREATE TABLE IF NOT EXISTS plugin_metrics(run INTEGER NOT "
              "NULL, seq INTEGER NOT NULL, probe TEXT, plugin TEXT, metrics "
              "TEXT);"
              "CREATE TABLE IF NOT EXISTS trigger_hits(run INTEGER NOT NULL, "
              "seq INTEGER NOT NULL, trigger TEXT, probe TEXT, node TEXT, "
              "role TEXT, detail TEXT, ord INTEGER);",
          "creating the tables"));
    }
    // A file that is not ours (or a damaged one) is said so, by name.
    Stmt check(db_, path_, "reading the schema");
    Status s = check.Prepare("SELECT value FROM meta WHERE key = 'version'");
    if (!s.ok()) {
      return MalformedInputError(
          path_ +
          ": not a model-inspector probe store (expected an SQLite "
          "file with a 'meta' table): " +
          s.message());
    }
    MI_ASSIGN_OR_RETURN(bool row, check.Step());
    if (!row || check.Int(0) != kSchemaVersion) {
      return UnsupportedError(path_ + ": probe store version " +
                              (row ? check.Text(0) : std::string("absent")) +
                              ", expected " + std::to_string(kSchemaVersion));
    }
    return Status::Ok();
  }

  // Switching to WAL needs an exclusive lock, and SQLite returns
  // SQLITE_BUSY for it without calling the busy handler: a second process
  // creating the same store at the same moment failed with "database is
  // locked". Retried until the busy timeout.
  Status SetWalJournal() {
    constexpr int kRetryMs = 5;
    for (int waited = 0;; waited += kRetryMs) {
      const int rc = sqlite3_exec(db_, "PRAGMA journal_mode = WAL", nullptr,
                                  nullptr, nullptr);
      if ((rc & 0xff) != SQLITE_BUSY || waited >= kBusyTimeoutMs) break;
      sqlite3_sleep(kRetryMs);
    }
    return Exec("PRAGMA journal_mode = WAL", "setting the journal mode");
  }

  Status Exec(const std::string& sql, std::string_view what) {
    char* error = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
    std::string message = error != nullptr ? error : "";
    sqlite3_free(error);
    if (rc == SQLITE_OK) return Status::Ok();
    return Status((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT
                      ? StatusCode::kMalformedInput
                      : StatusCode::kIo,
                  path_ + ": " + std::string(what) + ": " + message);
  }

  struct Pending {
    std::vector<ProbeRecord> records;
    std::vector<ProbePluginMetrics> metrics;
    std::vector<ProbeTriggerHit> hits;
    int64_t next_array = 0;
  };

  StatusOr<Pending*> Find(int64_t run) {
    auto it = pending_.find(run);
    if (it == pending_.end()) {
      return NotFoundError(path_ + ": run " + std::to_string(run) +
                           " is not being written by this store (begin_run "
                           "returns the id; a run ends once)");
    }
    return &it->second;
  }

  StatusOr<int64_t> BeginRun(const ProbeRunInfo& info) {
    std::lock_guard<std::mutex> lock(mu_);
    Stmt insert(db_, path_, "beginning a run");
    MI_RETURN_IF_ERROR(insert.Prepare(
        "INSERT INTO runs(created, backend, model, level, label, inputs, "
        "status, elapsed_ns, pid) VALUES(?, ?, ?, ?, ?, ?, 'running', 0, ?)"));
    insert.Bind(1, info.created.empty() ? UtcNow() : info.created);
    insert.Bind(2, info.backend);
    insert.Bind(3, info.model);
    insert.Bind(4, info.level);
    insert.Bind(5, info.label);
    insert.Bind(6, info.inputs);
    insert.Bind(7, static_cast<int64_t>(getpid()));
    MI_RETURN_IF_ERROR(insert.Run());
    const int64_t id = sqlite3_last_insert_rowid(db_);
    pending_[id];
    {
      std::lock_guard<std::mutex> lock(OpenRunsMutex());
      OpenRuns().insert({path_, id});
    }
    return id;
  }

  StatusOr<TensorStats> Add(ProbeRecord record, const TensorView& tensor,
                            const ProbeKeep& keep) {
    MI_ASSIGN_OR_RETURN(uint64_t count, ShapeElementCount(tensor.shape));
    int64_t array_number = -1;
    {
      std::lock_guard<std::mutex> lock(mu_);
      MI_ASSIGN_OR_RETURN(Pending * p, Find(record.run));
      if (keep.tensor) array_number = p->next_array++;
    }
    // The statistics and the file are written outside the lock: several
    // threads may add tensors of one run at once.
    MI_ASSIGN_OR_RETURN(record.stats, ComputeTensorStats(tensor));
    if (keep.tensor) {
      KeptArray kept = Keep(tensor, count, keep.fp16);
      const std::string rel = "arrays/" + std::to_string(record.run) + "/" +
                              std::to_string(array_number) + ".npy";
      const fs::path dir =
          fs::path(probes_dir_) / "arrays" / std::to_string(record.run);
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) {
        return IoError(dir.string() +
                       ": cannot create the run's array "
                       "folder: " +
                       ec.message());
      }
      MI_RETURN_IF_ERROR(
          WriteNpy((fs::path(probes_dir_) / rel).string(),
                   TensorView{kept.bytes.data(), kept.dtype, kept.shape}));
      record.array_file = rel;
      record.array_dtype = std::string(ProbeDTypeName(kept.dtype));
      record.sampled = kept.sampled;
      record.sample_stride = kept.stride;
    }
    TensorStats stats = record.stats;
    std::lock_guard<std::mutex> lock(mu_);
    MI_ASSIGN_OR_RETURN(Pending * p, Find(record.run));
    p->records.push_back(std::move(record));
    return stats;
  }

  Status AddStats(ProbeRecord record) {
    std::lock_guard<std::mutex> lock(mu_);
    MI_ASSIGN_OR_RETURN(Pending * p, Find(record.run));
    p->records.push_back(std::move(record));
    return Status::Ok();
  }

  Status AddPluginMetrics(ProbePluginMetrics m) {
    Json parsed = Json::parse(m.metrics_json, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      return InvalidArgumentError("plugin '" + m.plugin + "' metrics for '" +
                                  m.probe + "': expected a JSON object");
    }
    std::lock_guard<std::mutex> lock(mu_);
    MI_ASSIGN_OR_RETURN(Pending * p, Find(m.run));
    p->metrics.push_back(std::move(m));
    return Status::Ok();
  }

  Status AddTriggerHit(ProbeTriggerHit hit) {
    if (hit.role != "producer" && hit.role != "propagator") {
      return InvalidArgumentError("trigger hit role '" + hit.role +
                                  "': expected 'producer' or 'propagator'");
    }
    std::lock_guard<std::mutex> lock(mu_);
    MI_ASSIGN_OR_RETURN(Pending * p, Find(hit.run));
    p->hits.push_back(std::move(hit));
    return Status::Ok();
  }

  Status EndRun(int64_t run, std::string_view status,
                std::string_view stopped_at, int64_t elapsed_ns) {
    if (status != "complete" && status != "stopped") {
      return InvalidArgumentError("run status '" + std::string(status) +
                                  "': expected 'complete' or 'stopped'");
    }
    std::lock_guard<std::mutex> lock(mu_);
    MI_ASSIGN_OR_RETURN(Pending * p, Find(run));
    std::vector<int64_t> removed;
    MI_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "ending a run"));
    Status s = WriteRun(run, *p, status, stopped_at, elapsed_ns, &removed);
    if (s.ok()) s = Exec("COMMIT", "ending a run");
    if (!s.ok()) {
      Exec("ROLLBACK", "ending a run").IgnoreError();
      return s;
    }
    pending_.erase(run);
    {
      std::lock_guard<std::mutex> lock(OpenRunsMutex());
      OpenRuns().erase({path_, run});
    }
    // Files after the commit: a crash in between leaves only files no row
    // names, which the next EndRun removes.
    std::error_code ec;
    for (int64_t id : removed) {
      fs::remove_all(fs::path(probes_dir_) / "arrays" / std::to_string(id), ec);
    }
    RemoveOrphanArrays();
    return Status::Ok();
  }

  Status WriteRun(int64_t run, const Pending& p, std::string_view status,
                  std::string_view stopped_at, int64_t elapsed_ns,
                  std::vector<int64_t>* removed) {
    Stmt row(db_, path_, "writing a run's probes");
    MI_RETURN_IF_ERROR(row.Prepare(
        "INSERT INTO probes(run, seq, probe, node, kind, idx, step, ord, "
        "dtype, shape, count, nan, pos_inf, neg_inf, zero, min, max, mean, "
        "std, l2, abs_max, extra, array, array_dtype, sampled, "
        "sample_stride) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    int64_t seq = 0;
    for (const ProbeRecord& r : p.records) {
      const TensorStats& st = r.stats;
      row.Bind(1, run);
      row.Bind(2, seq++);
      row.Bind(3, r.probe);
      row.Bind(4, r.node);
      row.Bind(5, r.kind);
      row.Bind(6, r.index);
      if (r.step) {
        row.Bind(7, *r.step);
      } else {
        row.BindNull(7);
      }
      row.Bind(8, r.order);
      row.Bind(9, st.dtype);
      row.Bind(10, Json(st.shape).dump());
      row.BindCount(11, st.count);
      row.BindCount(12, st.nan);
      row.BindCount(13, st.pos_inf);
      row.BindCount(14, st.neg_inf);
      row.BindCount(15, st.zero);
      row.Bind(16, st.min);
      row.Bind(17, st.max);
      row.Bind(18, st.mean);
      row.Bind(19, st.std);
      row.Bind(20, st.l2);
      row.Bind(21, st.abs_max);
      row.Bind(22, r.extra_json.empty() ? std::string_view("{}")
                                        : std::string_view(r.extra_json));
      if (r.array_file.empty()) {
        row.BindNull(23);
        row.BindNull(24);
      } else {
        row.Bind(23, r.array_file);
        row.Bind(24, r.array_dtype);
      }
      row.Bind(25, int64_t{r.sampled ? 1 : 0});
      row.Bind(26, r.sample_stride);
      MI_RETURN_IF_ERROR(row.Run());
    }
    Stmt metric(db_, path_, "writing a run's plugin metrics");
    MI_RETURN_IF_ERROR(metric.Prepare(
        "INSERT INTO plugin_metrics(run, seq, probe, plugin, metrics) "
        "VALUES(?, ?, ?, ?, ?)"));
    seq = 0;
    for (const ProbePluginMetrics& m : p.metrics) {
      metric.Bind(1, run);
      metric.Bind(2, seq++);
      metric.Bind(3, m.probe);
      metric.Bind(4, m.plugin);
      metric.Bind(5, m.metrics_json);
      MI_RETURN_IF_ERROR(metric.Run());
    }
    Stmt hit(db_, path_, "writing a run's trigger hits");
    MI_RETURN_IF_ERROR(hit.Prepare(
        "INSERT INTO trigger_hits(run, seq, trigger, probe, node, role, "
        "detail, ord) VALUES(?, ?, ?, ?, ?, ?, ?, ?)"));
    seq = 0;
    for (const ProbeTriggerHit& h : p.hits) {
      hit.Bind(1, run);
      hit.Bind(2, seq++);
      hit.Bind(3, h.trigger);
      hit.Bind(4, h.probe);
      hit.Bind(5, h.node);
      hit.Bind(6, h.role);
      hit.Bind(7, h.detail);
      hit.Bind(8, h.order);
      MI_RETURN_IF_ERROR(hit.Run());
    }
    Stmt end(db_, path_, "ending a run");
    MI_RETURN_IF_ERROR(end.Prepare(
        "UPDATE runs SET status = ?, stopped_at = ?, elapsed_ns = ? WHERE id "
        "= ?"));
    end.Bind(1, status);
    if (stopped_at.empty()) {
      end.BindNull(2);
    } else {
      end.Bind(2, stopped_at);
    }
    end.Bind(3, elapsed_ns);
    end.Bind(4, run);
    MI_RETURN_IF_ERROR(end.Run());

    // The last keep_runs finished runs stay; older finished runs go, and so
    // do "running" rows older than every kept run whose writer died (its
    // process is gone): a writer still at work on an older run, in another
    // process, keeps it.
    Stmt old(db_, path_, "choosing runs to delete");
    MI_RETURN_IF_ERROR(old.Prepare(
        std::string("SELECT id, status = 'running', pid FROM runs WHERE (") +
        kFinished +
        " OR status = 'running') AND id < (SELECT MIN(id) FROM "
        "(SELECT id FROM runs WHERE " +
        kFinished +
        " ORDER BY id DESC LIMIT "
        "?))"));
    old.Bind(1, static_cast<int64_t>(keep_runs_));
    while (true) {
      MI_ASSIGN_OR_RETURN(bool more, old.Step());
      if (!more) break;
      if (old.Int(1) != 0 && WriterAlive(old.Int(0), old.Int(2))) continue;
      removed->push_back(old.Int(0));
    }
    for (const char* table : {"probes", "plugin_metrics", "trigger_hits"}) {
      Stmt del(db_, path_, "deleting old runs");
      MI_RETURN_IF_ERROR(
          del.Prepare(std::string("DELETE FROM ") + table + " WHERE run = ?"));
      for (int64_t id : *removed) {
        del.Bind(1, id);
        MI_RETURN_IF_ERROR(del.Run());
      }
    }
    Stmt del(db_, path_, "deleting old runs");
    MI_RETURN_IF_ERROR(del.Prepare("DELETE FROM runs WHERE id = ?"));
    for (int64_t id : *removed) {
      del.Bind(1, id);
      MI_RETURN_IF_ERROR(del.Run());
    }
    return Status::Ok();
  }

  // Whether the writer of a "running" row is still at work: another
  // process that still runs (the store lives next to the run, on local
  // disk), or a store object of this process that holds the run.
  bool WriterAlive(int64_t run, int64_t pid) const {
    if (pid <= 0) return false;
    if (pid == static_cast<int64_t>(getpid())) {
      std::lock_guard<std::mutex> lock(OpenRunsMutex());
      return OpenRuns().count({path_, run}) > 0;
    }
    return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
  }

  // Array folders of runs the table no longer has (deleted, or whose
  // writer died before its row was pruned and the folder removed).
  void RemoveOrphanArrays() {
    std::error_code ec;
    const fs::path arrays = fs::path(probes_dir_) / "arrays";
    std::vector<fs::path> orphans;
    for (const auto& entry : fs::directory_iterator(arrays, ec)) {
      const std::string name = entry.path().filename().string();
      char* end = nullptr;
      const long long id = std::strtoll(name.c_str(), &end, 10);
      if (end == name.c_str() || *end != '\0') continue;
      Stmt q(db_, path_, "listing runs");
      if (!q.Prepare("SELECT 1 FROM runs WHERE id = ?").ok()) return;
      q.Bind(1, static_cast<int64_t>(id));
      StatusOr<bool> row = q.Step();
      if (row.ok() && !*row) orphans.push_back(entry.path());
    }
    for (const fs::path& p : orphans) fs::remove_all(p, ec);
  }

  // Reading.
  static constexpr const char* kRunColumns =
      "id, created, backend, model, level, label, inputs, status, "
      "stopped_at, elapsed_ns, (SELECT COUNT(*) FROM probes WHERE run = "
      "runs.id)";

  static ProbeRunInfo ReadRun(const Stmt& q) {
    ProbeRunInfo r;
    r.id = q.Int(0);
    r.created = q.Text(1);
    r.backend = q.Text(2);
    r.model = q.Text(3);
    r.level = q.Text(4);
    r.label = q.Text(5);
    r.inputs = q.Text(6);
    r.status = q.Text(7);
    r.stopped_at = q.Text(8);
    r.elapsed_ns = q.Int(9);
    r.probe_rows = q.Int(10);
    return r;
  }

  StatusOr<std::vector<ProbeRunInfo>> Runs(std::string_view level,
                                           bool newest_only) {
    std::lock_guard<std::mutex> lock(mu_);
    Stmt q(db_, path_, "listing runs");
    MI_RETURN_IF_ERROR(q.Prepare(
        std::string("SELECT ") + kRunColumns + " FROM runs WHERE " + kFinished +
        (level.empty() ? "" : " AND level = ?") +
        (newest_only ? " ORDER BY id DESC LIMIT 1" : " ORDER BY id")));
    if (!level.empty()) q.Bind(1, level);
    std::vector<ProbeRunInfo> out;
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) break;
      out.push_back(ReadRun(q));
    }
    return out;
  }

  static constexpr const char* kProbeColumns =
      "run, probe, node, kind, idx, step, ord, dtype, shape, count, nan, "
      "pos_inf, neg_inf, zero, min, max, mean, std, l2, abs_max, extra, "
      "array, array_dtype, sampled, sample_stride";

  static ProbeRecord ReadRecord(const Stmt& q) {
    ProbeRecord r;
    r.run = q.Int(0);
    r.probe = q.Text(1);
    r.node = q.Text(2);
    r.kind = q.Text(3);
    r.index = q.Int(4);
    if (!q.Null(5)) r.step = q.Int(5);
    r.order = q.Int(6);
    TensorStats& s = r.stats;
    s.dtype = q.Text(7);
    Json shape = Json::parse(q.Text(8), nullptr, false);
    if (shape.is_array()) {
      for (const Json& d : shape) {
        if (d.is_number_integer()) s.shape.push_back(d.get<int64_t>());
      }
    }
    s.count = q.Count(9);
    s.nan = q.Count(10);
    s.pos_inf = q.Count(11);
    s.neg_inf = q.Count(12);
    s.zero = q.Count(13);
    s.min = q.Real(14);
    s.max = q.Real(15);
    s.mean = q.Real(16);
    s.std = q.Real(17);
    s.l2 = q.Real(18);
    s.abs_max = q.Real(19);
    r.extra_json = q.Null(20) ? "{}" : q.Text(20);
    r.array_file = q.Text(21);
    r.array_dtype = q.Text(22);
    r.sampled = q.Int(23) != 0;
    r.sample_stride = q.Null(24) ? 1 : q.Int(24);
    return r;
  }

  StatusOr<std::vector<ProbeRecord>> Records(const std::string& where,
                                             const std::string& order,
                                             std::string_view probe,
                                             int64_t run, size_t last) {
    std::lock_guard<std::mutex> lock(mu_);
    Stmt q(db_, path_, "reading probes");
    MI_RETURN_IF_ERROR(q.Prepare(std::string("SELECT ") + kProbeColumns +
                                 " FROM probes WHERE " + where + " ORDER BY " +
                                 order));
    int i = 1;
    if (!probe.empty()) q.Bind(i++, probe);
    if (run > 0) {
      q.Bind(i++, run);
    } else {
      q.Bind(i++, static_cast<int64_t>(last));
    }
    std::vector<ProbeRecord> out;
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) break;
      out.push_back(ReadRecord(q));
    }
    return out;
  }

  StatusOr<std::vector<ProbePluginMetrics>> PluginMetrics(int64_t run) {
    std::lock_guard<std::mutex> lock(mu_);
    Stmt q(db_, path_, "reading plugin metrics");
    MI_RETURN_IF_ERROR(q.Prepare(
        "SELECT run, probe, plugin, metrics FROM plugin_metrics WHERE run = "
        "? ORDER BY seq"));
    q.Bind(1, run);
    std::vector<ProbePluginMetrics> out;
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) break;
      out.push_back({q.Int(0), q.Text(1), q.Text(2), q.Text(3)});
    }
    return out;
  }

  StatusOr<std::vector<ProbeTriggerHit>> TriggerHits(int64_t run) {
    std::lock_guard<std::mutex> lock(mu_);
    Stmt q(db_, path_, "reading trigger hits");
    MI_RETURN_IF_ERROR(
        q.Prepare("SELECT run, trigger, probe, node, role, detail, ord FROM "
                  "trigger_hits WHERE run = ? ORDER BY ord, seq"));
    q.Bind(1, run);
    std::vector<ProbeTriggerHit> out;
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) break;
      out.push_back({q.Int(0), q.Text(1), q.Text(2), q.Text(3), q.Text(4),
                     q.Text(5), q.Int(6)});
    }
    return out;
  }

  std::string run_dir_;
  std::string probes_dir_;
  std::string path_;
  int keep_runs_ = ProbeStore::kDefaultKeepRuns;
  sqlite3* db_ = nullptr;
  std::mutex mu_;
  std::map<int64_t, Pending> pending_;
};

std::string ProbeStore::DbPath(const std::string& run_dir) {
  return (fs::path(run_dir) / "probes" / "probes.db").string();
}

bool ProbeStore::Exists(const std::string& run_dir) {
  std::error_code ec;
  return fs::is_regular_file(DbPath(run_dir), ec);
}

StatusOr<std::unique_ptr<ProbeStore>> ProbeStore::Open(
    const std::string& run_dir, bool create, int keep_runs) {
  auto impl = std::make_unique<Impl>();
  MI_RETURN_IF_ERROR(impl->Open(run_dir, create, keep_runs));
  return std::unique_ptr<ProbeStore>(new ProbeStore(std::move(impl)));
}

ProbeStore::ProbeStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProbeStore::~ProbeStore() = default;

const std::string& ProbeStore::run_dir() const { return impl_->run_dir_; }
const std::string& ProbeStore::probes_dir() const { return impl_->probes_dir_; }

StatusOr<int64_t> ProbeStore::BeginRun(const ProbeRunInfo& info) {
  return impl_->BeginRun(info);
}
StatusOr<TensorStats> ProbeStore::Add(ProbeRecord record,
                                      const TensorView& tensor,
                                      const ProbeKeep& keep) {
  return impl_->Add(std::move(record), tensor, keep);
}
Status ProbeStore::AddStats(ProbeRecord record) {
  return impl_->AddStats(std::move(record));
}
Status ProbeStore::AddPluginMetrics(ProbePluginMetrics metrics) {
  return impl_->AddPluginMetrics(std::move(metrics));
}
Status ProbeStore::AddTriggerHit(ProbeTriggerHit hit) {
  return impl_->AddTriggerHit(std::move(hit));
}
Status ProbeStore::EndRun(int64_t run, std::string_view status,
                          std::string_view stopped_at, int64_t elapsed_ns) {
  return impl_->EndRun(run, status, stopped_at, elapsed_ns);
}

StatusOr<std::vector<ProbeRunInfo>> ProbeStore::Runs() const {
  return impl_->Runs("", false);
}

StatusOr<std::optional<ProbeRunInfo>> ProbeStore::LatestRun(
    std::string_view level) const {
  MI_ASSIGN_OR_RETURN(std::vector<ProbeRunInfo> runs, impl_->Runs(level, true));
  if (runs.empty()) return std::optional<ProbeRunInfo>();
  return std::optional<ProbeRunInfo>(runs.front());
}

StatusOr<std::vector<ProbeRecord>> ProbeStore::Probes(int64_t run) const {
  return impl_->Records("run = ?", "ord, seq", "", run, 0);
}

StatusOr<std::vector<ProbeRecord>> ProbeStore::ProbeRows(std::string_view probe,
                                                         int64_t run,
                                                         size_t last) const {
  if (run > 0) {
    return impl_->Records("probe = ? AND run = ?", "step, seq", probe, run, 0);
  }
  return impl_->Records(
      std::string("probe = ? AND run IN (SELECT id FROM runs WHERE ") +
          kFinished + " ORDER BY id DESC LIMIT ?)",
      "run, step, seq", probe, 0, last);
}

StatusOr<std::vector<ProbePluginMetrics>> ProbeStore::PluginMetrics(
    int64_t run) const {
  return impl_->PluginMetrics(run);
}

StatusOr<std::vector<ProbeTriggerHit>> ProbeStore::TriggerHits(
    int64_t run) const {
  return impl_->TriggerHits(run);
}

std::string TensorStatsJson(const TensorStats& stats) {
  return StatsToJson(stats).dump();
}
std::string ProbeRunJson(const ProbeRunInfo& run) {
  return RunToJson(run).dump();
}
std::string ProbeRecordJson(const ProbeRecord& record) {
  return RecordToJson(record).dump();
}
std::string ProbePluginMetricsJson(const ProbePluginMetrics& m) {
  Json metrics = Json::parse(m.metrics_json, nullptr, false);
  if (metrics.is_discarded()) metrics = Json::object();
  return Json{{"run", m.run},
              {"probe", m.probe},
              {"plugin", m.plugin},
              {"metrics", metrics}}
      .dump();
}
std::string ProbeTriggerHitJson(const ProbeTriggerHit& h) {
  return Json{{"run", h.run},    {"trigger", h.trigger}, {"probe", h.probe},
              {"node", h.node},  {"role", h.role},       {"detail", h.detail},
              {"order", h.order}}
      .dump();
}

StatusOr<TensorStats> ParseTensorStatsJson(std::string_view json,
                                           std::string* extra_json) {
  Json j = Json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError("probe statistics: expected a JSON object");
  }
  TensorStats s;
  s.count = s.nan = s.pos_inf = s.neg_inf = s.zero = -1;
  Json extra = Json::object();
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const Json& v = it.value();
    auto count = [&](int64_t* out) -> Status {
      if (v.is_null()) return Status::Ok();
      if (!v.is_number()) {
        return InvalidArgumentError("probe statistics: '" + key +
                                    "' must be a number or null");
      }
      *out = v.get<int64_t>();
      return Status::Ok();
    };
    auto real = [&](std::optional<double>* out) -> Status {
      if (v.is_null()) return Status::Ok();
      if (!v.is_number()) {
        return InvalidArgumentError("probe statistics: '" + key +
                                    "' must be a number or null");
      }
      *out = v.get<double>();
      return Status::Ok();
    };
    if (key == "count") {
      MI_RETURN_IF_ERROR(count(&s.count));
    } else if (key == "nan") {
      MI_RETURN_IF_ERROR(count(&s.nan));
    } else if (key == "pos_inf") {
      MI_RETURN_IF_ERROR(count(&s.pos_inf));
    } else if (key == "neg_inf") {
      MI_RETURN_IF_ERROR(count(&s.neg_inf));
    } else if (key == "zero") {
      MI_RETURN_IF_ERROR(count(&s.zero));
    } else if (key == "min") {
      MI_RETURN_IF_ERROR(real(&s.min));
    } else if (key == "max") {
      MI_RETURN_IF_ERROR(real(&s.max));
    } else if (key == "mean") {
      MI_RETURN_IF_ERROR(real(&s.mean));
    } else if (key == "std") {
      MI_RETURN_IF_ERROR(real(&s.std));
    } else if (key == "l2") {
      MI_RETURN_IF_ERROR(real(&s.l2));
    } else if (key == "abs_max") {
      MI_RETURN_IF_ERROR(real(&s.abs_max));
    } else if (key == "dtype") {
      if (v.is_string()) s.dtype = v.get<std::string>();
    } else if (key == "shape") {
      if (v.is_array()) {
        for (const Json& d : v) {
          if (!d.is_number_integer()) {
            return InvalidArgumentError(
                "probe statistics: 'shape' must be a list of integers");
          }
          s.shape.push_back(d.get<int64_t>());
        }
      }
    } else {
      extra[key] = v;
    }
  }
  if (extra_json != nullptr) *extra_json = extra.dump();
  return s;
}

Status WriteNpy(const std::string& path, const TensorView& tensor) {
  MI_ASSIGN_OR_RETURN(uint64_t count, ShapeElementCount(tensor.shape));
  std::string descr;
  switch (tensor.dtype) {
    case ProbeDType::kFloat16:
      descr = "<f2";
      break;
    case ProbeDType::kBFloat16:
      return InvalidArgumentError(path + ": NumPy has no bfloat16");
    case ProbeDType::kFloat32:
      descr = "<f4";
      break;
    case ProbeDType::kFloat64:
      descr = "<f8";
      break;
    case ProbeDType::kInt8:
      descr = "|i1";
      break;
    case ProbeDType::kInt16:
      descr = "<i2";
      break;
    case ProbeDType::kInt32:
      descr = "<i4";
      break;
    case ProbeDType::kInt64:
      descr = "<i8";
      break;
    case ProbeDType::kUInt8:
      descr = "|u1";
      break;
    case ProbeDType::kUInt16:
      descr = "<u2";
      break;
    case ProbeDType::kUInt32:
      descr = "<u4";
      break;
    case ProbeDType::kUInt64:
      descr = "<u8";
      break;
    case ProbeDType::kBool:
      descr = "|b1";
      break;
  }
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape.size(); ++i) {
    shape += std::to_string(tensor.shape[i]);
    shape += tensor.shape.size() == 1
                 ? ","
                 : (i + 1 < tensor.shape.size() ? ", " : "");
  }
  shape += ")";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded with spaces
  // to a multiple of 64 bytes, as NumPy writes it.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  if (header.size() > 65535) {
    return InvalidArgumentError(path + ": tensor shape too long for .npy 1.0");
  }
  std::string prefix("\x93NUMPY\x01\x00", 8);
  prefix += static_cast<char>(header.size() & 0xff);
  prefix += static_cast<char>(header.size() >> 8);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return IoError(path + ": cannot write the tensor: " + std::strerror(errno));
  }
  const size_t bytes = count * ProbeDTypeSize(tensor.dtype);
  bool ok = std::fwrite(prefix.data(), 1, prefix.size(), f) == prefix.size() &&
            std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
            (bytes == 0 || std::fwrite(tensor.data, 1, bytes, f) == bytes);
  const int write_errno = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    std::remove(path.c_str());
    return IoError(path +
                   ": cannot write the tensor: " + std::strerror(write_errno));
  }
  return Status::Ok();
}

}  // namespace mi
