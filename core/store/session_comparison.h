// Two tuning sessions side by side, task by task: each task's best latency in
// either, their ratio and what the difference costs the model (weight x
// seconds), ordered so that the tasks where the sessions differ most come
// first. Tasks are matched by workload key, so sessions of one model tuned
// for two targets, with two searches or two cost models compare; a task only
// one session measured is kept, with the other side NaN. The studio's
// comparison view draws it; the sessions may come from two databases.
#pragma once

#include <string>
#include <vector>

#include "store/session_history.h"

namespace tessel::store {

struct TaskComparison {
  TaskRow task;                  // as the first session that measured it stored it
  double weight = 1;             // occurrences in the model (the first session's)
  double secondsA = kNoSeconds;  // best latency in session A (NaN: not measured there)
  double secondsB = kNoSeconds;  // in session B
  int trialsA = 0, trialsB = 0;  // records of the task in each session
  // B over A (below 1: B is faster); NaN unless both measured it.
  double ratio() const { return secondsB / secondsA; }
  // Seconds of the model's latency B gains (negative) or loses against A:
  // weight x (B - A); NaN unless both measured it.
  double weightedDifference() const { return weight * (secondsB - secondsA); }
};

struct SessionComparison {
  // Tasks both measured, by |weighted difference| (largest first), then
  // those only one of them measured.
  std::vector<TaskComparison> tasks;
  // The last finite objective of each (the estimated end-to-end latency of a
  // model session, the best latency of a task session; NaN: none).
  double objectiveA = kNoSeconds, objectiveB = kNoSeconds;
  // Each task's share of the summed |weighted difference| ([0, 1]; NaN for
  // a task only one measured), by workload key: the graph's heat.
  double differenceShare(const std::string& key) const;
};

SessionComparison compareSessions(const SessionHistory& a, const SessionHistory& b);

}  // namespace tessel::store
