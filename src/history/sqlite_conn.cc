#include "history/sqlite_conn.h"

#include <sqlite3.h>

#include <utility>

namespace mi::history {
namespace {

StatusCode CodeOf(int code) {
  switch (code & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FORMAT:
    case SQLITE_MISMATCH:
    case SQLITE_SCHEMA:
    case SQLITE_TOOBIG:
      return StatusCode::kMalformedInput;
    case SQLITE_NOMEM:
      return StatusCode::kMemoryLimit;
    case SQLITE_CANTOPEN:
      return StatusCode::kNotFound;
    case SQLITE_ERROR:
    case SQLITE_RANGE:
    case SQLITE_MISUSE:
      return StatusCode::kInternal;
    default:  // busy, locked, read-only, I/O, full disk
      return StatusCode::kIo;
  }
}

}  // namespace

StatusOr<std::unique_ptr<SqliteConn>> SqliteConn::Open(const std::string& path,
                                                       bool create) {
  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX;
  if (create) flags |= SQLITE_OPEN_CREATE;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  std::unique_ptr<SqliteConn> conn(new SqliteConn(path, raw));
  if (raw == nullptr) return IoError(path + ": cannot open the run history");
  if (rc != SQLITE_OK) return conn->Error("opening the run history", rc);
  sqlite3_extended_result_codes(raw, 1);
  // The file is ours, but it may have been replaced by anything: reads stay
  // reads.
  sqlite3_db_config(raw, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  return conn;
}

SqliteConn::~SqliteConn() { sqlite3_close_v2(db_); }

Status SqliteConn::Error(std::string_view what, int code) const {
  last_error_ = code & 0xff;
  std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : "";
  if (message.empty() || message == "not an error") {
    message = sqlite3_errstr(code);
  }
  switch (code & 0xff) {
    case SQLITE_NOTADB:
      message +=
          " (expected a model-inspector run history: an SQLite 3 "
          "database; `--history PATH` names another one)";
      break;
    case SQLITE_CORRUPT:
      message +=
          " (the run history is damaged; runs can be recorded again "
          "into a new file given with --history)";
      break;
    case SQLITE_BUSY:
      message +=
          " (another model-inspector kept the run history locked "
          "past the wait)";
      break;
    default:
      break;
  }
  return Status(CodeOf(code),
                path_ + ": " + std::string(what) + ": " + message);
}

Status SqliteConn::Exec(const std::string& sql, std::string_view what) const {
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  sqlite3_free(error);
  if (rc != SQLITE_OK) return Error(what, rc);
  return Status::Ok();
}

StatusOr<SqliteStmt> SqliteConn::Prepare(const std::string& sql,
                                         std::string what) const {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(
      db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Error(what, rc);
  }
  return SqliteStmt(this, stmt, std::move(what));
}

int64_t SqliteConn::LastInsertId() const {
  return sqlite3_last_insert_rowid(db_);
}

SqliteStmt::SqliteStmt(SqliteStmt&& other) noexcept
    : conn_(other.conn_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      what_(std::move(other.what_)),
      bind_error_(other.bind_error_) {}

SqliteStmt::~SqliteStmt() { sqlite3_finalize(stmt_); }

SqliteStmt& SqliteStmt::Bind(int index, int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
  return *this;
}

SqliteStmt& SqliteStmt::Bind(int index, std::string_view text) {
  const int rc = sqlite3_bind_text64(stmt_, index, text.data(), text.size(),
                                     SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
  return *this;
}

SqliteStmt& SqliteStmt::BindBlob(int index, std::string_view bytes) {
  const int rc = sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(),
                                     SQLITE_TRANSIENT);
  if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
  return *this;
}

StatusOr<bool> SqliteStmt::Next() {
  if (bind_error_ != 0) return conn_->Error(what_, bind_error_);
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return conn_->Error(what_, rc);
}

Status SqliteStmt::Run() {
  StatusOr<bool> row = Next();
  if (!row.ok()) return row.status();
  return Status::Ok();
}

bool SqliteStmt::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t SqliteStmt::Int(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

std::string SqliteStmt::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::string SqliteStmt::Blob(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  if (data == nullptr) return {};
  return std::string(static_cast<const char*>(data),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

StatusOr<std::unique_ptr<WriteTransaction>> WriteTransaction::Begin(
    const SqliteConn& conn, std::string_view what) {
  MI_RETURN_IF_ERROR(conn.Exec("BEGIN IMMEDIATE", what));
  return std::unique_ptr<WriteTransaction>(
      new WriteTransaction(conn, std::string(what)));
}

WriteTransaction::~WriteTransaction() {
  if (open_) conn_.Exec("ROLLBACK", what_).IgnoreError();
}

Status WriteTransaction::Commit() {
  Status s = conn_.Exec("COMMIT", what_);
  if (s.ok()) open_ = false;
  return s;
}

}  // namespace mi::history
