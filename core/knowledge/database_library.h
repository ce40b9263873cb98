// A user's tuning database as a record library: what earlier sessions
// measured (of this model or another, tune-op's tasks too) feeds the same
// schedule transfer as the knowledge base, and the records themselves train
// the cost model before a tuning's first round (tuning/warm_start.h).
#pragma once

#include <cstddef>
#include <string>

#include "knowledge/record_library.h"
#include "store/database.h"

namespace tessel::knowledge {

// For every task of `target` (a canonical target string) with a valid record,
// its `perTask` fastest valid records; a task's models are those the
// database names it in.
RecordLibrary libraryOfDatabase(const store::Database& db, const target::Target& target, size_t perTask);

}  // namespace tessel::knowledge
