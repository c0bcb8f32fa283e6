#pragma once

// A read-write SQLite connection for the run history: prepared statements
// with bound parameters, and a transaction guard that rolls back unless
// committed. Every error names the store's file and what was being done.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "model_inspector/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace mi::history {

class SqliteConn;

class SqliteStmt {
 public:
  SqliteStmt(SqliteStmt&& other) noexcept;
  SqliteStmt& operator=(SqliteStmt&&) = delete;
  ~SqliteStmt();

  // Parameters are numbered from 1, as in SQL's "?1".
  SqliteStmt& Bind(int index, int64_t value);
  SqliteStmt& Bind(int index, std::string_view text);
  SqliteStmt& BindBlob(int index, std::string_view bytes);
  // A row: true; the end: false; or the error.
  StatusOr<bool> Next();
  // Steps a statement that returns no rows.
  Status Run();

  bool IsNull(int column) const;
  int64_t Int(int column) const;
  std::string Text(int column) const;  // empty for NULL
  std::string Blob(int column) const;

 private:
  friend class SqliteConn;
  SqliteStmt(const SqliteConn* conn, sqlite3_stmt* stmt, std::string what)
      : conn_(conn), stmt_(stmt), what_(std::move(what)) {}
  const SqliteConn* conn_;
  sqlite3_stmt* stmt_;
  std::string what_;
  int bind_error_ = 0;
};

class SqliteConn {
 public:
  // Opens `path` read-write (creating it when `create`); no SQL is run.
  static StatusOr<std::unique_ptr<SqliteConn>> Open(const std::string& path,
                                                    bool create);
  ~SqliteConn();

  const std::string& path() const { return path_; }
  sqlite3* raw() const { return db_; }
  // Runs one or more statements that return no rows.
  Status Exec(const std::string& sql, std::string_view what) const;
  StatusOr<SqliteStmt> Prepare(const std::string& sql, std::string what) const;
  // "<path>: <what>: <SQLite's message>", with a status code chosen from
  // SQLite's: a corrupt or foreign file is malformed input, a lock wait
  // that timed out or a refused write an I/O error.
  Status Error(std::string_view what, int code) const;
  int64_t LastInsertId() const;
  // SQLite's primary result code of the last error Error() reported.
  int last_error() const { return last_error_; }

 private:
  SqliteConn(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  std::string path_;
  sqlite3* db_;
  mutable int last_error_ = 0;
};

// BEGIN IMMEDIATE on construction (Begin), ROLLBACK in the destructor
// unless Commit() succeeded. IMMEDIATE takes the write lock at once, so two
// writers queue on the busy timeout instead of one failing at its first
// write with "database is locked".
class WriteTransaction {
 public:
  static StatusOr<std::unique_ptr<WriteTransaction>> Begin(
      const SqliteConn& conn, std::string_view what);
  ~WriteTransaction();
  Status Commit();

 private:
  WriteTransaction(const SqliteConn& conn, std::string what)
      : conn_(conn), what_(std::move(what)) {}
  const SqliteConn& conn_;
  std::string what_;
  bool open_ = true;
};

}  // namespace mi::history
