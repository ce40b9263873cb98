// The measured programs of one task in one session, as the studio's program
// inspector lists them: every record, oldest first, numbered as the session
// measured them, with its rank by the cost model's score and by measured
// time among the task's programs of that session. Plain C++, no Qt.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/record_store.h"

namespace tessel::store {

struct ListedProgram {
  RecordRow record;
  int ordinal = 0;    // 0 for the session's first program of the task
  int scoreRank = 0;  // 1 = the highest score of the task's scored programs; 0: not scored
  int timeRank = 0;   // 1 = the fastest of its valid programs; 0: failed
};

struct ProgramListing {
  TaskRow task;
  int64_t session = 0;
  std::vector<ListedProgram> programs;  // by ordinal
  int scored = 0;                       // programs with a finite score
  int measured = 0;                     // valid programs
  int fastest = -1;                     // ordinal of the fastest (ties: the oldest); -1: none valid
};

// Throws StoreError when the database has no task of that key and target.
ProgramListing listPrograms(const Database& db, const std::string& key, const std::string& target, int64_t session);

}  // namespace tessel::store
