// A thin RAII layer over SQLite's C API: a connection, prepared statements
// with typed binds and columns, and transactions. Errors become StoreError
// with SQLite's message and the statement that failed.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace tessel::store {

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Statement;

class Connection {
 public:
  // flags: SQLITE_OPEN_READONLY or SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE.
  // `immutable`: read-only, without locks, -wal or -shm (SQLite's
  // immutable=1): for a file no process has open (see Database::open).
  Connection(const std::string& path, int flags, bool immutable = false);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  // Runs statements without results (several, separated by ';').
  void exec(const std::string& sql);
  Statement prepare(const std::string& sql);
  int64_t lastInsertId() const { return sqlite3_last_insert_rowid(db_); }
  // Throws StoreError("<what>: <sqlite message>") if rc is an error.
  void check(int rc, const std::string& what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Statement {
 public:
  Statement(Connection& c, const std::string& sql);
  ~Statement();
  Statement(Statement&& o) noexcept : c_(o.c_), st_(o.st_), sql_(std::move(o.sql_)) { o.st_ = nullptr; }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binds are 1-based, as in SQLite.
  Statement& bind(int i, int64_t v);
  Statement& bind(int i, int v) { return bind(i, int64_t(v)); }
  Statement& bind(int i, double v);  // NaN binds NULL
  Statement& bind(int i, const std::string& v);
  Statement& bind(int i, const char* v) { return bind(i, std::string(v)); }
  Statement& bindNull(int i);
  Statement& bindBlob(int i, const std::string& bytes);

  // Advances: true while there is a row.
  bool step();
  // Runs a statement without results to completion.
  void run();
  void reset();

  // Columns are 0-based.
  bool isNull(int i) const { return sqlite3_column_type(st_, i) == SQLITE_NULL; }
  int64_t getInt(int i) const { return sqlite3_column_int64(st_, i); }
  double getDouble(int i) const;  // NULL reads as NaN
  std::string getText(int i) const;
  std::string getBlob(int i) const;

 private:
  Connection& c_;
  sqlite3_stmt* st_ = nullptr;
  std::string sql_;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back if not committed (an exception).
class Transaction {
 public:
  explicit Transaction(Connection& c);
  ~Transaction();
  void commit();

 private:
  Connection& c_;
  bool done_ = false;
};

}  // namespace tessel::store
