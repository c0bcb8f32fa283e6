#include "importers/common/sqlite_db.h"

#include <sqlite3.h>

#include <algorithm>
#include <utility>

#include "base/strings.h"

namespace mi::importers {
namespace {

// `path` as the file part of an SQLite URI: bytes other than unreserved
// characters and '/' are percent-encoded ('?', '#', '%' would end or
// escape it).
std::string UriOf(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (unsigned char c : path) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
        (c >= '0' && c <= '9') || c == '/' || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return uri + "?immutable=1";
}

// A corrupt or foreign file is the input's fault; anything else (no
// memory, a read refused) the system's.
StatusCode CodeOf(int code) {
  switch (code & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FORMAT:
    case SQLITE_MISMATCH:
    case SQLITE_ERROR:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
    case SQLITE_SCHEMA:
      return StatusCode::kMalformedInput;
    case SQLITE_NOMEM:
      return StatusCode::kMemoryLimit;
    default:
      return StatusCode::kIo;
  }
}

}  // namespace

std::string QuoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path,
                                                   std::string_view expected) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(
      UriOf(path).c_str(), &raw,
      SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<SqliteDb> db(new SqliteDb(path, raw, std::string(expected)));
  if (rc != SQLITE_OK) {
    if (raw == nullptr) return IoError(path + ": cannot open the database");
    Status status = db->Error("opening it as an SQLite database", rc);
    if ((rc & 0xff) == SQLITE_CANTOPEN) {
      return NotFoundError(status.message());
    }
    return status;
  }
  // A hostile file must not make a read do more than read: no writes to
  // the schema, no functions with side effects called from it.
  sqlite3_db_config(raw, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_limit(raw, SQLITE_LIMIT_LENGTH, 1 << 28);
  MI_ASSIGN_OR_RETURN(
      SqliteQuery q,
      db->Query("SELECT name FROM sqlite_master WHERE type = 'table'",
                "reading its table list"));
  while (true) {
    MI_ASSIGN_OR_RETURN(bool row, q.Next());
    if (!row) break;
    db->tables_.emplace_back(q.Text(0));
  }
  return db;
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

Status SqliteDb::Error(std::string_view what, int code) const {
  std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : "";
  if (message.empty() || message == "not an error") {
    message = sqlite3_errstr(code);
  }
  if ((code & 0xff) == SQLITE_NOTADB) {
    message += " (expected an SQLite 3 database: " + expected_ + ")";
  }
  return Status(CodeOf(code),
                path_ + ": " + std::string(what) + ": " + message);
}

bool SqliteDb::HasTable(std::string_view name) const {
  return std::find(tables_.begin(), tables_.end(), name) != tables_.end();
}

StatusOr<std::vector<std::string>> SqliteDb::Columns(
    std::string_view table) const {
  MI_ASSIGN_OR_RETURN(
      SqliteQuery q,
      Query("PRAGMA table_info(" + QuoteIdentifier(table) + ")",
            "reading the columns of table " + std::string(table)));
  std::vector<std::string> columns;
  while (true) {
    MI_ASSIGN_OR_RETURN(bool row, q.Next());
    if (!row) break;
    columns.emplace_back(q.Text(1));
  }
  return columns;
}

StatusOr<SqliteQuery> SqliteDb::Query(const std::string& sql,
                                      std::string what) const {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(
      db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Error(what, rc);
  }
  return SqliteQuery(this, stmt, std::move(what));
}

SqliteQuery::SqliteQuery(const SqliteDb* db, sqlite3_stmt* stmt,
                         std::string what)
    : db_(db), stmt_(stmt), what_(std::move(what)) {}

SqliteQuery::SqliteQuery(SqliteQuery&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      what_(std::move(other.what_)),
      rows_(other.rows_) {}

SqliteQuery::~SqliteQuery() { sqlite3_finalize(stmt_); }

StatusOr<bool> SqliteQuery::Next() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    ++rows_;
    return true;
  }
  if (rc == SQLITE_DONE) return false;
  return db_->Error(what_ + " (row " + std::to_string(rows_ + 1) + ")", rc);
}

bool SqliteQuery::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t SqliteQuery::Int(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double SqliteQuery::Double(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string_view SqliteQuery::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string_view(
      reinterpret_cast<const char*>(text),
      static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::string_view SqliteQuery::Blob(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  if (data == nullptr) return {};
  return std::string_view(
      static_cast<const char*>(data),
      static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<int64_t> SqliteQuery::IntIfAny(int column) const {
  switch (sqlite3_column_type(stmt_, column)) {
    case SQLITE_INTEGER:
      return sqlite3_column_int64(stmt_, column);
    case SQLITE_TEXT:
      return ParseInteger<int64_t>(Text(column));
    default:
      return std::nullopt;
  }
}

}  // namespace mi::importers
