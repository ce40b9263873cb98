// A task as the database stores it, and back: the row of a search task, the
// operator task a stored library-operator row is rebuilt into, and the best
// stored record that still replays on a task's computation.
#pragma once

#include <cstdint>
#include <optional>

#include "store/database.h"
#include "store/record_store.h"
#include "task/search_task.h"

namespace tessel::store {

TaskRow taskRowOf(const task::SearchTask& task);
// The target of a stored task: the row keeps its canonical string. Throws
// std::runtime_error naming the task for a string this build cannot read.
target::Target targetOf(const TaskRow& row);
// A stored library-operator task (tune-op's) rebuilt from its op, shape and
// layout. Throws std::runtime_error when it cannot be (a model's fused
// subgraph: rebuild it from the model) or when the operator's definition
// changed since it was tuned (another workload key).
task::SearchTask operatorTaskOf(const TaskRow& row);

// The task's best valid record whose steps replay on `dag`; records that do
// not (damaged, or of another definition) are skipped and counted in *skipped.
std::optional<BestRow> bestReplayable(const Database& db, int64_t taskId, const te::ComputeDAG& dag,
                                      int64_t* skipped = nullptr);

}  // namespace tessel::store
