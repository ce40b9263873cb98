// The cost models a tuning session saved in the database, as they were when
// it ended (what CostModel::save() wrote), for a later session or a reader
// to load again. Over the Database's one connection, reached through it:
// db.costModels() (reads and writes; a const Database gives the reads only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/database.h"

namespace tessel::store {

struct SavedCostModel {
  int64_t id = 0, taskId = 0, sessionId = 0;  // taskId 0: shared by the session's tasks
  std::string name;                           // the registry's name (cost::findCostModel)
  int64_t trainedOn = 0;                      // programs
  std::string blob;                           // what CostModel::save() wrote
};

// The saved cost models, read.
class CostModelReader {
 public:
  // The cost models a session saved, oldest first.
  std::vector<SavedCostModel> ofSession(int64_t sessionId) const;

 protected:
  explicit CostModelReader(Connection& c) : conn_(c) {}

  Connection& conn_;

 private:
  friend class Database;
};

// The saved cost models, read and written (a write needs the database open for writing).
class CostModelStore : public CostModelReader {
 public:
  // taskId 0: a model shared by every task of the session.
  void save(int64_t taskId, int64_t sessionId, const std::string& name, int64_t trainedOn, const std::string& blob);

 private:
  friend class Database;
  explicit CostModelStore(Database& db) : CostModelReader(db.connection()) {}
};

}  // namespace tessel::store
