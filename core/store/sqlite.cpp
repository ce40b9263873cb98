#include "store/sqlite.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace tessel::store {

namespace {

// file:PATH?immutable=1, with the characters a URI gives meaning escaped.
std::string immutableUri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", unsigned(static_cast<unsigned char>(c)));
      uri += hex;
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

Connection::Connection(const std::string& path, int flags, bool immutable) : path_(path) {
  const std::string name = immutable ? immutableUri(path) : path;
  int rc = sqlite3_open_v2(name.c_str(), &db_, immutable ? (SQLITE_OPEN_READONLY | SQLITE_OPEN_URI) : flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError("cannot open database " + path + ": " + msg);
  }
  sqlite3_extended_result_codes(db_, 1);
  // Readers wait for a checkpoint or a commit instead of failing at once.
  sqlite3_busy_timeout(db_, 5000);
}

Connection::~Connection() {
  sqlite3_close_v2(db_);
}

void Connection::check(int rc, const std::string& what) const {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
  const std::string msg = sqlite3_errmsg(db_);
  // The schema was verified on open: a table gone since was dropped by
  // someone else while Tessel had the file open. Say so, not in SQL.
  for (const char* thing : {"table", "column"}) {
    const std::string prefix = std::string("no such ") + thing + ": ";
    if (msg.rfind(prefix, 0) == 0)
      throw StoreError(path_ + " is damaged: its " + thing + " '" + msg.substr(prefix.size()) +
                       "' is missing (it was there when Tessel opened the file)");
  }
  throw StoreError(what + ": " + msg);
}

void Connection::exec(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw StoreError(path_ + ": " + msg + " (in: " + sql.substr(0, 80) + ")");
  }
}

Statement Connection::prepare(const std::string& sql) {
  return Statement(*this, sql);
}

Statement::Statement(Connection& c, const std::string& sql) : c_(c), sql_(sql) {
  c_.check(sqlite3_prepare_v2(c.handle(), sql.c_str(), int(sql.size()), &st_, nullptr),
           c.path() + ": cannot prepare '" + sql.substr(0, 80) + "'");
}

Statement::~Statement() {
  sqlite3_finalize(st_);
}

Statement& Statement::bind(int i, int64_t v) {
  c_.check(sqlite3_bind_int64(st_, i, v), "bind");
  return *this;
}

Statement& Statement::bind(int i, double v) {
  if (std::isnan(v)) return bindNull(i);
  c_.check(sqlite3_bind_double(st_, i, v), "bind");
  return *this;
}

Statement& Statement::bind(int i, const std::string& v) {
  c_.check(sqlite3_bind_text(st_, i, v.data(), int(v.size()), SQLITE_TRANSIENT), "bind");
  return *this;
}

Statement& Statement::bindNull(int i) {
  c_.check(sqlite3_bind_null(st_, i), "bind");
  return *this;
}

Statement& Statement::bindBlob(int i, const std::string& bytes) {
  c_.check(sqlite3_bind_blob(st_, i, bytes.data(), int(bytes.size()), SQLITE_TRANSIENT), "bind");
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  c_.check(rc, c_.path() + ": '" + sql_.substr(0, 80) + "' failed");
  return false;
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(st_);
  sqlite3_clear_bindings(st_);
}

double Statement::getDouble(int i) const {
  if (isNull(i)) return std::numeric_limits<double>::quiet_NaN();
  return sqlite3_column_double(st_, i);
}

std::string Statement::getText(int i) const {
  const unsigned char* t = sqlite3_column_text(st_, i);
  return t ? std::string(reinterpret_cast<const char*>(t), size_t(sqlite3_column_bytes(st_, i))) : std::string();
}

std::string Statement::getBlob(int i) const {
  const void* b = sqlite3_column_blob(st_, i);
  return b ? std::string(static_cast<const char*>(b), size_t(sqlite3_column_bytes(st_, i))) : std::string();
}

Transaction::Transaction(Connection& c) : c_(c) {
  c_.exec("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(c_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  c_.exec("COMMIT");
  done_ = true;
}

}  // namespace tessel::store
