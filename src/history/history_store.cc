// HistoryStore (include/model_inspector/history.h) on an SQLite file.
//
// Schema version 1 (docs/design/diff.md, "Run history"):
//   history_schema(key, value): format = "model-inspector/history",
//                               version = "1"
//   runs: one row per recorded run: the summary columns the list, trend and
//         baseline commands read, and the whole digest (RunDigestJson),
//         zlib-compressed (digest_encoding "zlib", digest_size = the JSON's
//         length).
//   baselines(name, run_id, set_utc)
// The file is opened in WAL mode with synchronous=FULL; every write is one
// BEGIN IMMEDIATE ... COMMIT, so a writer killed mid-write leaves only a
// transaction SQLite rolls back, and concurrent writers queue on the busy
// timeout.

#include <sqlite3.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "history/run_stats.h"
#include "history/sqlite_conn.h"
#include "model_inspector/history.h"

namespace mi {
namespace {

using history::SqliteConn;
using history::SqliteStmt;
using history::WriteTransaction;

constexpr const char* kFormat = "model-inspector/history";
constexpr int64_t kSchemaVersion = 1;
// Writes take milliseconds; a CI machine running many jobs at once may
// still queue a few behind each other (and behind a checkpoint).
constexpr int kBusyTimeoutMs = 120'000;
// A digest larger than this is not inflated (a damaged size column).
constexpr int64_t kMaxDigestBytes = int64_t{1} << 32;

constexpr const char* kCreateSchema = R"sql(
CREATE TABLE history_schema (
  key TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  model TEXT NOT NULL,
  label TEXT NOT NULL,
  created_utc TEXT NOT NULL,
  recorded_utc TEXT NOT NULL,
  host TEXT NOT NULL,
  tool_version TEXT NOT NULL,
  producers TEXT NOT NULL,
  git_commit TEXT NOT NULL,
  inputs TEXT NOT NULL,
  formats TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  framework_nodes INTEGER NOT NULL,
  compiled_nodes INTEGER NOT NULL,
  runs_from TEXT NOT NULL,
  run_count INTEGER NOT NULL,
  total_median_ns INTEGER NOT NULL,
  total_spread_ns INTEGER NOT NULL,
  digest_encoding TEXT NOT NULL,
  digest_size INTEGER NOT NULL,
  digest BLOB NOT NULL
);
CREATE INDEX runs_by_model ON runs (model, id);
CREATE TABLE baselines (
  name TEXT PRIMARY KEY NOT NULL,
  run_id INTEGER NOT NULL REFERENCES runs (id),
  set_utc TEXT NOT NULL
);
)sql";

constexpr const char* kRunColumns =
    "id, model, label, created_utc, recorded_utc, host, tool_version, "
    "producers, git_commit, inputs, formats, fingerprint, framework_nodes, "
    "compiled_nodes, run_count, total_median_ns, total_spread_ns";

std::string NowUtc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string JsonList(const std::vector<std::string>& items) {
  return nlohmann::json(items).dump(-1, ' ', false,
                                    nlohmann::json::error_handler_t::replace);
}

std::vector<std::string> ListFromJson(const std::string& text) {
  std::vector<std::string> out;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const auto& item : j) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

HistoryRun RunFromRow(const SqliteStmt& q) {
  HistoryRun run;
  run.id = q.Int(0);
  run.meta.model = q.Text(1);
  run.meta.label = q.Text(2);
  run.meta.created_utc = q.Text(3);
  run.recorded_utc = q.Text(4);
  run.meta.host = q.Text(5);
  run.meta.tool_version = q.Text(6);
  run.meta.producers = q.Text(7);
  run.meta.git_commit = q.Text(8);
  run.meta.inputs = ListFromJson(q.Text(9));
  run.meta.formats = ListFromJson(q.Text(10));
  run.fingerprint = q.Text(11);
  run.framework_nodes = q.Int(12);
  run.compiled_nodes = q.Int(13);
  run.run_count = q.Int(14);
  run.total_median_ns = q.Int(15);
  run.total_spread_ns = q.Int(16);
  return run;
}

StatusOr<std::string> Deflate(const std::string& text,
                              const std::string& path) {
  uLongf size = compressBound(static_cast<uLong>(text.size()));
  std::string out(size, '\0');
  const int rc =
      compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                reinterpret_cast<const Bytef*>(text.data()),
                static_cast<uLong>(text.size()), Z_DEFAULT_COMPRESSION);
  if (rc != Z_OK) {
    return InternalError(path + ": compressing a run digest failed (zlib " +
                         std::to_string(rc) + ")");
  }
  out.resize(size);
  return out;
}

}  // namespace

std::string DefaultHistoryPath() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("MODEL_INSPECTOR_HISTORY");
      env != nullptr && *env != '\0') {
    return env;
  }
  // XDG base directories: a relative XDG_DATA_HOME is invalid and ignored.
  if (const char* xdg = std::getenv("XDG_DATA_HOME");
      xdg != nullptr && *xdg == '/') {
    return (fs::path(xdg) / "model-inspector" / "history.db").string();
  }
  const char* home = std::getenv("HOME");
  std::string base = home != nullptr && *home != '\0' ? home : ".";
  return (fs::path(base) / ".local" / "share" / "model-inspector" /
          "history.db")
      .string();
}

namespace {

class SqliteHistoryStore final : public HistoryStore {
 public:
  explicit SqliteHistoryStore(std::unique_ptr<SqliteConn> conn)
      : conn_(std::move(conn)) {}

  const std::string& path() const override { return conn_->path(); }

  // WAL, synchronous, the schema check (creating it when `create` and the
  // file holds no tables).
  Status Init(bool create) {
    sqlite3_busy_timeout(conn_->raw(), kBusyTimeoutMs);
    // While another process creates the file or recovers its WAL, switching
    // the journal mode and the first read can fail busy without SQLite's
    // busy handler being asked: those are retried until the same timeout.
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(kBusyTimeoutMs);
    unsigned seed = static_cast<unsigned>(getpid());
    while (true) {
      Status s = InitOnce(create);
      const int code = conn_->last_error();
      if (s.ok() || (code != SQLITE_BUSY && code != SQLITE_LOCKED) ||
          std::chrono::steady_clock::now() > deadline) {
        return s;
      }
      ::usleep(5'000 + rand_r(&seed) % 45'000);
    }
  }

 private:
  Status InitOnce(bool create) {
    MI_ASSIGN_OR_RETURN(std::string journal, JournalModeWal());
    if (journal != "wal") {
      return UnsupportedError(
          path() +
          ": the run history needs SQLite's WAL journal, but the file "
          "system refused it (journal mode '" +
          journal + "'); give --history a path on a local disk");
    }
    MI_RETURN_IF_ERROR(
        conn_->Exec("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON",
                    "opening it as a run history"));
    MI_ASSIGN_OR_RETURN(std::vector<std::string> tables, Tables());
    if (tables.empty()) {
      if (!create) {
        return NotFoundError(path() +
                             ": an empty database: no run has been recorded "
                             "in this run history");
      }
      MI_ASSIGN_OR_RETURN(
          auto tx, WriteTransaction::Begin(*conn_, "creating the run history"));
      // Another process may have created it while this one waited.
      MI_ASSIGN_OR_RETURN(tables, Tables());
      if (tables.empty()) {
        MI_RETURN_IF_ERROR(
            conn_->Exec(kCreateSchema, "creating the run history"));
        MI_ASSIGN_OR_RETURN(
            SqliteStmt insert,
            conn_->Prepare("INSERT INTO history_schema (key, value) VALUES "
                           "('format', ?1), ('version', ?2)",
                           "creating the run history"));
        insert.Bind(1, std::string_view(kFormat))
            .Bind(2, std::to_string(kSchemaVersion));
        MI_RETURN_IF_ERROR(insert.Run());
      }
      MI_RETURN_IF_ERROR(tx->Commit());
      MI_ASSIGN_OR_RETURN(tables, Tables());
    }
    return CheckSchema(tables);
  }

 public:
  StatusOr<int64_t> Add(const RunDigest& digest) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string fingerprint;
    int64_t framework_nodes = -1;
    int64_t compiled_nodes = -1;
    for (const DigestLevel& level : digest.levels) {
      if (!fingerprint.empty()) fingerprint += ' ';
      fingerprint += level.level + ":" + level.fingerprint;
      const int64_t n = static_cast<int64_t>(level.nodes.size());
      if (level.level == "framework") framework_nodes = n;
      if (level.level == "compiled") compiled_nodes = n;
    }
    history::MedianSpread total;
    if (digest.has_trace()) {
      total = history::MedianAndSpread(digest.total.run_ns);
    }
    const std::string json = RunDigestJson(digest);
    MI_ASSIGN_OR_RETURN(std::string packed, Deflate(json, path()));

    MI_ASSIGN_OR_RETURN(auto tx,
                        WriteTransaction::Begin(*conn_, "recording a run"));
    MI_ASSIGN_OR_RETURN(
        SqliteStmt insert,
        conn_->Prepare(
            "INSERT INTO runs (model, label, created_utc, recorded_utc, host, "
            "tool_version, producers, git_commit, inputs, formats, "
            "fingerprint, framework_nodes, compiled_nodes, runs_from, "
            "run_count, total_median_ns, total_spread_ns, digest_encoding, "
            "digest_size, digest) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
            "?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, 'zlib', ?18, ?19)",
            "recording a run"));
    const RunDigestMeta& m = digest.meta;
    insert.Bind(1, m.model)
        .Bind(2, m.label)
        .Bind(3, m.created_utc)
        .Bind(4, NowUtc())
        .Bind(5, m.host)
        .Bind(6, m.tool_version)
        .Bind(7, m.producers)
        .Bind(8, m.git_commit)
        .Bind(9, JsonList(m.inputs))
        .Bind(10, JsonList(m.formats))
        .Bind(11, fingerprint)
        .Bind(12, framework_nodes)
        .Bind(13, compiled_nodes)
        .Bind(14, digest.runs_from)
        .Bind(15, digest.run_count)
        .Bind(16, total.median_ns)
        .Bind(17, total.spread_ns)
        .Bind(18, static_cast<int64_t>(json.size()))
        .BindBlob(19, packed);
    MI_RETURN_IF_ERROR(insert.Run());
    const int64_t id = conn_->LastInsertId();
    PauseForCrashTest();
    MI_RETURN_IF_ERROR(tx->Commit());
    return id;
  }

  StatusOr<std::vector<HistoryRun>> List(const std::string& model,
                                         size_t limit) const override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string sql = std::string("SELECT ") + kRunColumns + " FROM runs";
    if (!model.empty()) sql += " WHERE model = ?1";
    sql += " ORDER BY id DESC";
    if (limit > 0) sql += " LIMIT " + std::to_string(limit);
    MI_ASSIGN_OR_RETURN(SqliteStmt q, conn_->Prepare(sql, "listing runs"));
    if (!model.empty()) q.Bind(1, model);
    std::vector<HistoryRun> runs;
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      runs.push_back(RunFromRow(q));
    }
    return runs;
  }

  StatusOr<HistoryRun> Get(int64_t run_id) const override {
    std::lock_guard<std::mutex> lock(mu_);
    return GetLocked(run_id);
  }

  StatusOr<RunDigest> Digest(int64_t run_id) const override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string what = "reading run " + std::to_string(run_id);
    MI_ASSIGN_OR_RETURN(
        SqliteStmt q,
        conn_->Prepare("SELECT digest_encoding, digest_size, digest FROM runs "
                       "WHERE id = ?1",
                       what));
    q.Bind(1, run_id);
    MI_ASSIGN_OR_RETURN(bool row, q.Next());
    if (!row) return NoSuchRun(run_id);
    const std::string encoding = q.Text(0);
    const int64_t size = q.Int(1);
    const std::string packed = q.Blob(2);
    std::string json;
    if (encoding == "json") {
      json = packed;
    } else if (encoding == "zlib") {
      if (size < 0 || size > kMaxDigestBytes) {
        return MalformedInputError(path() + ": " + what + ": digest size " +
                                   std::to_string(size) + " out of range");
      }
      json.resize(static_cast<size_t>(size));
      uLongf out_size = static_cast<uLongf>(size);
      const int rc =
          uncompress(reinterpret_cast<Bytef*>(json.data()), &out_size,
                     reinterpret_cast<const Bytef*>(packed.data()),
                     static_cast<uLong>(packed.size()));
      if (rc != Z_OK || out_size != static_cast<uLongf>(size)) {
        return MalformedInputError(
            path() + ": " + what +
            ": the stored digest does not inflate to its recorded size "
            "(zlib " +
            std::to_string(rc) + ")");
      }
    } else {
      return MalformedInputError(path() + ": " + what +
                                 ": unknown digest encoding '" + encoding +
                                 "' (expected zlib or json)");
    }
    return ParseRunDigest(json, path() + ": run " + std::to_string(run_id));
  }

  Status SetBaseline(const std::string& name, int64_t run_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (name.empty()) {
      return InvalidArgumentError("a baseline needs a name");
    }
    MI_ASSIGN_OR_RETURN(
        auto tx, WriteTransaction::Begin(*conn_, "setting baseline " + name));
    MI_RETURN_IF_ERROR(GetLocked(run_id).status());
    MI_ASSIGN_OR_RETURN(
        SqliteStmt q,
        conn_->Prepare("INSERT INTO baselines (name, run_id, set_utc) "
                       "VALUES (?1, ?2, ?3) ON CONFLICT (name) DO UPDATE "
                       "SET run_id = excluded.run_id, "
                       "set_utc = excluded.set_utc",
                       "setting baseline " + name));
    q.Bind(1, name).Bind(2, run_id).Bind(3, NowUtc());
    MI_RETURN_IF_ERROR(q.Run());
    return tx->Commit();
  }

  StatusOr<std::vector<HistoryBaseline>> Baselines() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return BaselinesLocked();
  }

  StatusOr<HistoryBaseline> Baseline(const std::string& name) const override {
    std::lock_guard<std::mutex> lock(mu_);
    MI_ASSIGN_OR_RETURN(std::vector<HistoryBaseline> all, BaselinesLocked());
    for (HistoryBaseline& b : all) {
      if (b.name == name) return std::move(b);
    }
    std::string known;
    for (const HistoryBaseline& b : all) {
      if (!known.empty()) known += ", ";
      known += "'" + b.name + "' (run " + std::to_string(b.run_id) + ")";
    }
    return NotFoundError(
        path() + ": no baseline '" + name + "' (" +
        (known.empty() ? std::string("no baseline is set: `history baseline "
                                     "set NAME RUN` sets one")
                       : "baselines: " + known) +
        ")");
  }

  StatusOr<std::vector<HistoryTrendPoint>> Trend(
      const std::string& model) const override {
    std::lock_guard<std::mutex> lock(mu_);
    MI_ASSIGN_OR_RETURN(
        SqliteStmt q,
        conn_->Prepare(
            "SELECT id, CASE WHEN created_utc = '' THEN recorded_utc ELSE "
            "created_utc END AS t, git_commit, label, total_median_ns, "
            "total_spread_ns FROM runs WHERE model = ?1 ORDER BY t, id",
            "reading the trend of " + model));
    q.Bind(1, model);
    std::vector<HistoryTrendPoint> points;
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      HistoryTrendPoint p;
      p.run_id = q.Int(0);
      p.created_utc = q.Text(1);
      p.git_commit = q.Text(2);
      p.label = q.Text(3);
      p.total_median_ns = q.Int(4);
      p.total_spread_ns = q.Int(5);
      points.push_back(std::move(p));
    }
    if (points.empty()) {
      MI_ASSIGN_OR_RETURN(std::vector<HistoryModel> models, ModelsLocked());
      std::string known;
      for (const HistoryModel& m : models) {
        if (!known.empty()) known += ", ";
        known += "'" + m.model + "' (" + std::to_string(m.runs) +
                 (m.runs == 1 ? " run)" : " runs)");
      }
      return NotFoundError(path() + ": no run of model '" + model + "' (" +
                           (known.empty() ? std::string("no run is recorded")
                                          : "models: " + known) +
                           ")");
    }
    return points;
  }

  StatusOr<std::vector<HistoryModel>> Models() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return ModelsLocked();
  }

 private:
  // Sets WAL mode; returns the journal mode now in force.
  StatusOr<std::string> JournalModeWal() const {
    MI_ASSIGN_OR_RETURN(SqliteStmt mode,
                        conn_->Prepare("PRAGMA journal_mode = WAL",
                                       "opening it as a run history"));
    MI_ASSIGN_OR_RETURN(bool row, mode.Next());
    return row ? mode.Text(0) : std::string();
  }

  StatusOr<std::vector<std::string>> Tables() const {
    MI_ASSIGN_OR_RETURN(
        SqliteStmt q,
        conn_->Prepare("SELECT name FROM sqlite_master WHERE type = 'table' "
                       "AND name NOT LIKE 'sqlite_%' ORDER BY name",
                       "opening it as a run history"));
    std::vector<std::string> tables;
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      tables.push_back(q.Text(0));
    }
    return tables;
  }

  Status CheckSchema(const std::vector<std::string>& tables) const {
    auto has = [&](std::string_view t) {
      return std::find(tables.begin(), tables.end(), t) != tables.end();
    };
    if (!has("history_schema")) {
      return MalformedInputError(
          path() +
          ": an SQLite database, but not a model-inspector run history "
          "(tables: " +
          Join(tables, ", ") +
          "; expected history_schema, runs, baselines); give --history "
          "another path");
    }
    MI_ASSIGN_OR_RETURN(
        SqliteStmt q,
        conn_->Prepare("SELECT key, value FROM history_schema",
                       "reading the run history's schema version"));
    std::string format;
    std::string version;
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      if (q.Text(0) == "format") format = q.Text(1);
      if (q.Text(0) == "version") version = q.Text(1);
    }
    if (format != kFormat) {
      return MalformedInputError(
          path() + ": table history_schema names format '" + format +
          "', expected '" + kFormat + "': not a model-inspector run history");
    }
    std::optional<int64_t> v = ParseInteger<int64_t>(version);
    if (!v || *v < 1) {
      return MalformedInputError(path() + ": run history schema version '" +
                                 version + "' is not a version number");
    }
    if (*v > kSchemaVersion) {
      return UnsupportedError(
          path() + ": run history schema version " + std::to_string(*v) +
          " is newer than this model-inspector reads (version " +
          std::to_string(kSchemaVersion) +
          "); use a newer model-inspector, or give --history another path");
    }
    for (const char* t : {"runs", "baselines"}) {
      if (!has(t)) {
        return MalformedInputError(path() + ": run history without table " + t +
                                   " (tables: " + Join(tables, ", ") + ")");
      }
    }
    return Status::Ok();
  }

  StatusOr<HistoryRun> GetLocked(int64_t run_id) const {
    MI_ASSIGN_OR_RETURN(
        SqliteStmt q, conn_->Prepare(std::string("SELECT ") + kRunColumns +
                                         " FROM runs WHERE id = ?1",
                                     "reading run " + std::to_string(run_id)));
    q.Bind(1, run_id);
    MI_ASSIGN_OR_RETURN(bool row, q.Next());
    if (!row) return NoSuchRun(run_id);
    return RunFromRow(q);
  }

  // NotFound naming the ids the store holds.
  Status NoSuchRun(int64_t run_id) const {
    StatusOr<SqliteStmt> q = conn_->Prepare(
        "SELECT COUNT(*), MIN(id), MAX(id) FROM runs", "counting runs");
    std::string held = "no run is recorded";
    if (q.ok()) {
      StatusOr<bool> row = q->Next();
      if (row.ok() && *row && q->Int(0) > 0) {
        const int64_t count = q->Int(0);
        held = count == 1 ? "it holds run " + std::to_string(q->Int(1))
                          : fmt::format("it holds {} runs, ids {} to {}", count,
                                        q->Int(1), q->Int(2));
      }
    }
    return NotFoundError(path() + ": no run " + std::to_string(run_id) +
                         " in the run history (" + held +
                         "; `model-inspector history list` lists them)");
  }

  StatusOr<std::vector<HistoryBaseline>> BaselinesLocked() const {
    MI_ASSIGN_OR_RETURN(
        SqliteStmt q,
        conn_->Prepare(
            "SELECT name, run_id, set_utc FROM baselines ORDER BY name",
            "reading baselines"));
    std::vector<HistoryBaseline> out;
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      out.push_back({q.Text(0), q.Int(1), q.Text(2)});
    }
    return out;
  }

  StatusOr<std::vector<HistoryModel>> ModelsLocked() const {
    MI_ASSIGN_OR_RETURN(SqliteStmt q,
                        conn_->Prepare("SELECT model, COUNT(*), MAX(id) FROM "
                                       "runs GROUP BY model ORDER BY model",
                                       "listing models"));
    std::vector<HistoryModel> out;
    while (true) {
      MI_ASSIGN_OR_RETURN(bool row, q.Next());
      if (!row) break;
      out.push_back({q.Text(0), q.Int(1), q.Int(2)});
    }
    return out;
  }

  // Test-only: with MI_HISTORY_TEST_PAUSE_IN_WRITE=FILE, a write creates
  // FILE and then waits inside its open transaction until the process is
  // killed (the crash test in history_store_test.cc).
  static void PauseForCrashTest() {
    const char* file = std::getenv("MI_HISTORY_TEST_PAUSE_IN_WRITE");
    if (file == nullptr || *file == '\0') return;
    std::ofstream(file) << getpid() << "\n";
    while (true) ::pause();
  }

  std::unique_ptr<SqliteConn> conn_;
  mutable std::mutex mu_;
};

// The first bytes of the file, when it exists and is not empty: a file that
// is not SQLite is named before SQLite is asked to open it.
Status CheckHeader(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot read the run history");
  char header[16] = {};
  in.read(header, sizeof(header));
  const std::streamsize got = in.gcount();
  if (got < 16 || std::string_view(header, 16) !=
                      std::string_view("SQLite format 3\0", 16)) {
    return MalformedInputError(
        path +
        ": not a model-inspector run history: not an SQLite 3 database "
        "(it does not begin with \"SQLite format 3\"); give --history "
        "another path");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<HistoryStore>> HistoryStore::Open(
    const std::string& path, bool create) {
  namespace fs = std::filesystem;
  if (path.empty())
    return InvalidArgumentError("the run history path is empty");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::exists(st)) {
    if (fs::is_directory(st)) {
      return InvalidArgumentError(
          path + ": a directory; the run history is a file (e.g. " + path +
          "/history.db)");
    }
    if (fs::file_size(path, ec) > 0 || !create) {
      MI_RETURN_IF_ERROR(CheckHeader(path));
    }
  } else if (!create) {
    return NotFoundError(
        path +
        ": no run history here (runs are recorded with `history add` or "
        "`export --record`; --history PATH or MODEL_INSPECTOR_HISTORY "
        "names another)");
  } else {
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) {
      fs::create_directories(parent, ec);
      if (ec) {
        return IoError(
            parent.string() +
            ": cannot create the run history's folder: " + ec.message());
      }
    }
  }
  MI_ASSIGN_OR_RETURN(std::unique_ptr<history::SqliteConn> conn,
                      history::SqliteConn::Open(path, create));
  auto store = std::make_unique<SqliteHistoryStore>(std::move(conn));
  MI_RETURN_IF_ERROR(store->Init(create));
  return std::unique_ptr<HistoryStore>(std::move(store));
}

}  // namespace mi
