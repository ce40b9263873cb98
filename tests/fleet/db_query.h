// The first column of the first row a query gives, as text ("" if none or
// unreadable): how the fleet's tests read the databases tunings wrote.
#pragma once

#include <sqlite3.h>

#include <QString>
#include <string>

inline QString queryFirst(const QString& db, const std::string& sql) {
  sqlite3* raw = nullptr;
  QString out;
  if (sqlite3_open_v2(db.toUtf8().constData(), &raw, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(raw, 2000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(raw, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      out = QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
  }
  sqlite3_close(raw);
  return out;
}
