#pragma once

// A read-only SQLite database, as the importers of SQLite formats read
// them (torch_npu's DB export, training snapshots; Debian's libsqlite3):
// opened with the `immutable=1` URI flag, so that a
// WAL-mode file in a read-only folder opens and nothing (-wal, -shm,
// journal) is created beside it, with SQLite's defensive mode on and the
// schema untrusted. Every error names the file and what was being read.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model_inspector/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace mi::importers {

class SqliteDb;

// One prepared SELECT, stepped row by row.
class SqliteQuery {
 public:
  SqliteQuery(SqliteQuery&&) noexcept;
  SqliteQuery& operator=(SqliteQuery&&) = delete;
  ~SqliteQuery();

  // The next row: true, false at the end, or the error (file and `what`).
  StatusOr<bool> Next();
  bool IsNull(int column) const;
  int64_t Int(int column) const;
  double Double(int column) const;
  // The column as text (a number is converted); empty for NULL.
  std::string_view Text(int column) const;
  // The column's bytes (a BLOB as stored; text as UTF-8); empty for NULL.
  std::string_view Blob(int column) const;
  // The column as an integer when it is one (or a decimal text of one).
  std::optional<int64_t> IntIfAny(int column) const;
  // Rows stepped so far.
  uint64_t rows() const { return rows_; }

 private:
  friend class SqliteDb;
  SqliteQuery(const SqliteDb* db, sqlite3_stmt* stmt, std::string what);
  const SqliteDb* db_;
  sqlite3_stmt* stmt_;
  std::string what_;
  uint64_t rows_ = 0;
};

class SqliteDb {
 public:
  // Opens `path` read-only and immutable; the first read of the schema
  // checks that it is an SQLite database at all. `expected` names what the
  // file should have been in the error for a file that is not SQLite
  // ("torch_npu's DB export").
  static StatusOr<std::unique_ptr<SqliteDb>> Open(const std::string& path,
                                                  std::string_view expected);
  ~SqliteDb();

  const std::string& path() const { return path_; }
  // The names of the tables (views are not tables: they are never read).
  const std::vector<std::string>& tables() const { return tables_; }
  bool HasTable(std::string_view name) const;
  // The columns of a table (PRAGMA table_info), in order.
  StatusOr<std::vector<std::string>> Columns(std::string_view table) const;
  // Prepares `sql`; `what` says what it reads ("table TASK") in errors.
  StatusOr<SqliteQuery> Query(const std::string& sql, std::string what) const;

  // "<path>: <what>: <SQLite's message>" for the last error.
  Status Error(std::string_view what, int code) const;

 private:
  SqliteDb(std::string path, sqlite3* db, std::string expected)
      : path_(std::move(path)), db_(db), expected_(std::move(expected)) {}
  std::string path_;
  sqlite3* db_;
  std::string expected_;
  std::vector<std::string> tables_;
};

// `name` quoted as an SQL identifier ("TASK" -> "\"TASK\"").
std::string QuoteIdentifier(std::string_view name);

}  // namespace mi::importers
