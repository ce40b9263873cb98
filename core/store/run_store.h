// The runs of models against LibTorch kept in the tuning database: each is
// `tessel run --json --profile`'s one-line result, as it printed it, with
// the model, target and fusion it ran and the session whose kernels it ran
// (none for a run outside a session). The studio stores a run when it ends
// and shows a session's latest again when the session is reopened; `tessel
// db runs` lists them. Over the Database's one connection: runs are their own
// concept, not more of Database.
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

class RunStore {
 public:
  explicit RunStore(Database& db) : db_(db) {}

  // Stores a run (the database open for writing) and returns its id. A
  // result that is not a JSON object, or a session that does not exist, is
  // a StoreError and nothing is stored.
  int64_t add(const RunRow& run);
  // Every run, oldest first. A file of an older schema opened read-only has
  // no runs table yet (its next writer adds it): no runs.
  std::vector<RunRow> runs() const;
  // The newest run of a session, if it has one.
  std::optional<RunRow> latestOfSession(int64_t sessionId) const;

 private:
  bool hasTable() const;
  Database& db_;
};

}  // namespace tessel::store
