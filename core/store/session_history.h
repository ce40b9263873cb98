// The history of one tuning session, rebuilt from its stored records: the
// rounds as a live tuning reported them (a task, its trials and best
// latency, the estimated end-to-end latency, the time), every program's
// predicted score and measured time, and each task's best program. The
// studio reopens a session from it and compares sessions by its objective
// curve.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/database.h"
#include "store/record_store.h"
#include "store/session_store.h"

namespace tessel::store {

inline constexpr double kNoSeconds = std::numeric_limits<double>::quiet_NaN();

struct SessionTask {
  TaskRow task;
  double weight = 1;              // occurrences in the model (1 for a task session)
  int trials = 0;                 // records of this session
  std::optional<RecordRow> best;  // the fastest valid record of this session
};

// A round: a run of consecutive records of one task (a measured batch, or
// several when one task was tuned on its own).
struct SessionRound {
  size_t task = 0;                      // index into SessionHistory::tasks
  int taskTrials = 0;                   // the task's records so far
  double bestSeconds = kNoSeconds;      // the task's best so far (NaN: none valid yet)
  double estimateSeconds = kNoSeconds;  // sum of weight x best over the tasks (NaN while a task of the model has none)
  int totalTrials = 0;                  // records of the session so far
  double elapsedSeconds = 0;            // from the session's start to the round's last record
};

struct SessionProgram {
  size_t task = 0;
  double predicted = kNoSeconds;  // the cost model's score (NaN if none)
  double seconds = kNoSeconds;    // median measured time (NaN if it failed)
  // The scoring round: consecutive records of one task scored in one state
  // of the model (a measured batch), numbered from 0 in the session.
  int scoringRound = 0;
  bool untrained = false;  // its score came from a model that had learned nothing (RecordRow::scoredUntrained)
};

struct SessionHistory {
  SessionRow session;
  std::string fusion;       // of a model session's configuration ("" if not recorded)
  std::string inputShapes;  // the model's, as --input-shapes gave them ("": none)
  std::string target = "cpu";
  size_t modelTasks = 0;           // tasks of the model as tuned (config "tasks"; 0 if not recorded)
  std::vector<SessionTask> tasks;  // in order of their first record
  std::vector<SessionRound> rounds;
  std::vector<SessionProgram> programs;  // one per record, oldest first

  // Index of a task by workload key, or -1.
  int taskIndex(const std::string& key) const;
  // (trials, seconds) wherever the objective improved: the estimated
  // end-to-end latency of a model session, the best latency of a task session.
  std::vector<std::pair<int, double>> objectiveCurve() const;
};

// Throws StoreError when the session does not exist.
SessionHistory loadSessionHistory(const Database& db, int64_t sessionId);

// Seconds from one stored timestamp (ISO 8601, UTC, as the database writes
// them) to another; NaN if either cannot be read.
double secondsBetween(const std::string& from, const std::string& to);

}  // namespace tessel::store
