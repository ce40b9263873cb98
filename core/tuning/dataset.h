// A cost-model dataset: measured programs of the tasks of several models,
// as JSON lines (one record per line: the model, the task's key and weight,
// the program's steps and its cost), plain or gzip-compressed (".gz").
// Features are not stored: they are recomputed from the steps, on tasks
// rebuilt from the models, so a dataset outlives changes to the features.
#pragma once

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "cost/cost_model_eval.h"
#include "store/database.h"
#include "target/target.h"

namespace tessel::tuning {

struct DatasetRecord {
  std::string model;                                      // zoo name or model file, as given to dataset collect
  std::string task;                                       // workload key
  double weight = 1;                                      // occurrences of the task in the model
  target::Target target = target::Target::host();         // read from and written as its canonical string
  std::string steps;                                      // serialised schedule steps
  double cost = std::numeric_limits<double>::infinity();  // median seconds; +inf: failed
};

// Every record of the named models (all the database's models when empty),
// of every target, or of `target` alone.
std::vector<DatasetRecord> datasetFromDatabase(const store::Database& db, const std::vector<std::string>& models,
                                               const std::optional<target::Target>& target = std::nullopt);
// Writes or reads JSON lines; a name ending in ".gz" is gzip-compressed.
// std::runtime_error naming the file and line for what cannot be read.
void writeDataset(const std::string& path, const std::vector<DatasetRecord>& records);
std::vector<DatasetRecord> readDataset(const std::string& path);

// A dataset as the cost models read it: per task, its programs' features
// (the kinds given) and costs, and the task's model and weight. A task is a
// workload on one target (its TaskRecords::taskKey is task::recordKey).
struct DatasetTasks {
  std::vector<cost::TaskRecords> tasks;
  std::vector<std::string> model;  // per task
  std::vector<double> weight;      // per task
  size_t skipped = 0;              // records whose program no longer replays
};
// A model's tasks on `target` as a dataset's records name them (zoo name or
// file, default fusion), by workload key.
std::map<std::string, task::SearchTask> tasksOfModel(const std::string& model, const target::Target& target);

// Rebuilds each model's tasks (tasksOfModel) and extracts the features.
// std::runtime_error for a task no model has.
DatasetTasks featuresOf(const std::vector<DatasetRecord>& records, cost::FeatureKinds kinds);

// The records of `models` (held out) and of the others.
std::pair<std::vector<DatasetRecord>, std::vector<DatasetRecord>> splitByModel(
    const std::vector<DatasetRecord>& records, const std::vector<std::string>& heldOut);

// The model's scores for every task of `data`, per TenSet's metrics.
std::vector<cost::EvalTask> scoreTasks(cost::CostModel& model, const DatasetTasks& data);

}  // namespace tessel::tuning
