// The tuning sessions kept in the database: one per `tune`, `tune-op` or
// dataset collection (a task's or a model's), with its configuration, its
// status and why it ended so, and a summary over its records. A session left
// running by a process that is gone reads as interrupted. Over the
// Database's one connection, reached through it: db.sessions() (reads and
// writes; a const Database gives the reads only).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"

namespace tessel::store {

struct SessionRow {
  int64_t id = 0;
  std::string kind;  // "task" or "model"
  int64_t taskId = 0, modelId = 0;
  std::string config;  // JSON
  // running | finished | stopped | failed | interrupted: a session left
  // running by a process that is gone (SIGKILL, a crash, a power cut). The
  // next writer marks it so in the file; readers show it so at once.
  std::string status;
  std::string message;         // why it failed or was interrupted ("" otherwise)
  std::string started, ended;  // ISO 8601, UTC; ended is "" while it runs
  int64_t trialsTarget = 0;    // programs to measure
  // Filled by all() and byId(): over this session's records.
  int64_t records = 0, validRecords = 0;
  double bestCost = std::numeric_limits<double>::quiet_NaN();  // seconds
  // A model session's estimated end-to-end seconds: sum over the model's
  // tasks of weight x the task's best in this session (NaN for a task
  // session, or while a task of the model has no valid record here).
  double estimateSeconds = std::numeric_limits<double>::quiet_NaN();
  std::string subject;  // the task key or model name
};

// The sessions, read.
class SessionReader {
 public:
  // The newest session of a task (or model) that did not finish.
  std::optional<SessionRow> lastUnfinished(int64_t taskId, int64_t modelId) const;
  // The newest session of a task (or model), whatever its status.
  std::optional<SessionRow> last(int64_t taskId, int64_t modelId) const;
  // Every session with its summary, oldest first.
  std::vector<SessionRow> all() const;
  // One session with its summary (records, best, subject), if it exists.
  std::optional<SessionRow> byId(int64_t id) const;

 protected:
  SessionReader(const Database& db, Connection& c) : db_(db), conn_(c) {}
  // The message of a session whose process ended before it did.
  static constexpr const char* kInterrupted =
      "its process ended before the session did (killed, crashed or the machine stopped)";

  const Database& db_;
  Connection& conn_;

 private:
  friend class Database;
  void summarize(SessionRow& s) const;  // fills records, validRecords, bestCost, subject
  std::string sessionColumns() const;   // a schema 1 file has no message
  SessionRow readSession(Statement& st) const;
};

// The sessions, read and written (a write needs the database open for writing).
class SessionStore : public SessionReader {
 public:
  // A new session, running; returns its id. taskId for a task session,
  // modelId for a model's (the other 0).
  int64_t start(const std::string& kind, int64_t taskId, int64_t modelId, const std::string& config,
                int64_t trialsTarget);
  // Marks a session running again (resume), with a new trial target.
  void reopen(int64_t id, int64_t trialsTarget);
  // Ends a session with its status (finished, stopped, failed) and why.
  void close(int64_t id, const std::string& status, const std::string& message = "");
  // Marks a session failed with `why`; never throws (it runs while another
  // error is on its way up, and a damaged file must not hide that one).
  void fail(int64_t id, const std::string& why) noexcept;

 private:
  friend class Database;
  explicit SessionStore(Database& db) : SessionReader(db, db.connection()) {}
  // Run by open() under the writer lock: a session still `running` was left
  // so by a process that is gone.
  void markInterrupted();
};

}  // namespace tessel::store
