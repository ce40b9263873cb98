// The measured records kept in the database: every program a session
// measured (its schedule steps and decisions, its timed repeats or why it
// failed, the cost model's score), and the best ones per task. A batch is
// stored whole or not at all; a time that is not positive and finite is
// refused. Over the Database's one connection, reached through it:
// db.records() (reads and writes; a const Database gives the reads only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"

namespace tessel::store {

struct RecordRow {
  int64_t id = 0, taskId = 0, sessionId = 0;
  std::string steps;          // serialised schedule steps
  std::string decisions;      // serialised annotation decisions ("" if unknown)
  std::vector<double> costs;  // seconds of every timed repeat
  int errorCode = 0;
  std::string errorMessage;
  double predicted = std::numeric_limits<double>::quiet_NaN();  // the cost model's score
  std::string costModel;
  // Measured programs the cost model had learned from when it scored this
  // one (-1: not scored, or a file older than schema 4), and whether it was
  // loaded trained (a pre-trained file). 0 and not pretrained: an untrained
  // model's score, which says nothing yet.
  int64_t modelTrainedOn = -1;
  bool modelPretrained = false;
  bool scoredUntrained() const { return modelTrainedOn == 0 && !modelPretrained; }
  double buildSeconds = 0, runSeconds = 0;
  double maxAbsError = 0;  // against the reference output
  std::string created;     // ISO 8601, UTC
  bool ok() const { return errorCode == 0 && !costs.empty(); }
  double medianCost() const;  // seconds; +inf if not ok
};

struct BestRow {
  TaskRow task;
  RecordRow record;
};

// The records, read.
class RecordReader {
 public:
  // Records of a task (all sessions, or one), oldest first.
  std::vector<RecordRow> ofTask(int64_t taskId, std::optional<int64_t> sessionId = {}) const;
  // Records of one session, whatever their task, oldest first.
  std::vector<RecordRow> ofSession(int64_t sessionId) const;
  std::vector<RecordRow> all() const;
  // The task's `n` fastest valid records, fastest first (ties: the oldest).
  std::vector<RecordRow> fastest(int64_t taskId, size_t n) const;
  // The best valid record of every task (optionally of one task).
  std::vector<BestRow> best(std::optional<int64_t> taskId = {}) const;
  // The task's lowest-cost valid record that `usable` accepts (ties: the
  // oldest), for readers that must skip damaged records (the predicate
  // replays the steps: schedule::replayableSteps); better records it rejected
  // are counted in *rejected. None when no record is accepted.
  std::optional<BestRow> bestUsable(int64_t taskId, const std::function<bool(const RecordRow&)>& usable,
                                    int64_t* rejected = nullptr) const;

 protected:
  RecordReader(const Database& db, Connection& c) : db_(db), conn_(c) {}
  // "records.id, ... FROM records" as this file's schema has them.
  std::string columns() const;

  const Database& db_;
  Connection& conn_;

 private:
  friend class Database;
};

// The records, read and written (a write needs the database open for writing).
class RecordStore : public RecordReader {
 public:
  // One transaction for the whole batch: it is stored entirely or not at all.
  void add(const std::vector<RecordRow>& records);

 private:
  friend class Database;
  explicit RecordStore(Database& db) : RecordReader(db, db.connection()) {}
};

// A measured time Tessel stores and reads: positive and finite (seconds).
bool usableCost(double seconds);
// Costs (seconds) as a JSON array and back; costs that are not usable are
// dropped on the way back.
std::string costsToJson(const std::vector<double>& costs);
std::vector<double> costsFromJson(const std::string& text);

}  // namespace tessel::store
