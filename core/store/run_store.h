// The runs of models against LibTorch kept in the tuning database: each is
// `tessel run --json --profile`'s one-line result, as it printed it, with
// the model, target and fusion it ran and the session whose kernels it ran
// (none for a run outside a session). The studio stores a run when it ends
// and shows a session's latest again when the session is reopened; `tessel
// db runs` lists them. Over the Database's one connection, reached through
// it: db.runs() (reads and writes; a const Database gives the reads only).
// Runs are their own concept, not more of Database.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"

namespace tessel::store {

struct RunRow {
  int64_t id = 0;
  int64_t sessionId = 0;  // 0: the run belongs to no session
  std::string model;      // zoo name or file, as run
  std::string target;     // canonical target string
  std::string fusion;     // dp | rule | none
  std::string created;    // ISO 8601, UTC; set when stored
  std::string result;     // the run's JSON object, as tessel run --json printed it
};

// The runs, read.
class RunReader {
 public:
  // Every run, oldest first. A file of an older schema opened read-only has
  // no runs table yet (its next writer adds it): no runs.
  std::vector<RunRow> all() const;
  // The newest run of a session, if it has one.
  std::optional<RunRow> latestOfSession(int64_t sessionId) const;

 protected:
  explicit RunReader(Connection& c) : conn_(c) {}

  Connection& conn_;

 private:
  friend class Database;
  bool hasTable() const;
};

// The runs, read and written (a write needs the database open for writing).
class RunStore : public RunReader {
 public:
  // Stores a run and returns its id. A result that is not a JSON object, or
  // a session that does not exist, is a StoreError and nothing is stored.
  int64_t add(const RunRow& run);

 private:
  friend class Database;
  explicit RunStore(Database& db) : RunReader(db.connection()) {}
};

}  // namespace tessel::store
