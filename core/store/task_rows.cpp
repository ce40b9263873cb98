#include "store/task_rows.h"

#include <stdexcept>

#include "schedule/steps.h"
#include "target/target.h"

namespace tessel::store {

target::Target targetOf(const TaskRow& row) {
  try {
    return target::parseTarget(row.target);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error("task " + row.key + " has a target this build cannot read: " + e.what());
  }
}

task::SearchTask operatorTaskOf(const TaskRow& row) {
  const target::Target target = targetOf(row);
  task::SearchTask task;
  try {
    task = task::makeOperatorTask(row.op, row.shape, target, row.layout);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot rebuild task " + row.key + " (" + e.what() +
                             "): a model's tasks are rebuilt from the model");
  }
  if (task.key != row.key)
    throw std::runtime_error("the definition of " + row.op + " changed since task " + row.key +
                             " was tuned (it is now " + task.key + "): tune it again");
  return task;
}

TaskRow taskRowOf(const task::SearchTask& task) {
  TaskRow t;
  t.key = task.key;
  t.target = task.target.str();
  t.device = task.target.isCpu() ? hostDevice() : "";  // every CPU target runs here
  t.op = task.op;
  t.shape = task.shape;
  t.layout = task.layout;
  t.compute = task.dag.toString();
  t.flops = task.flops;
  return t;
}

std::optional<BestRow> bestReplayable(const Database& db, int64_t taskId, const te::ComputeDAG& dag, int64_t* skipped) {
  return db.records().bestUsable(
      taskId, [&](const RecordRow& r) { return schedule::replayableSteps(dag, r.steps).has_value(); }, skipped);
}

}  // namespace tessel::store
