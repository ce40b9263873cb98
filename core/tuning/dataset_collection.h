// `tessel dataset collect`: measures programs of every task of several
// models into a tuning database, for training cost models. Each task gets
// random programs and programs evolved by a cost model (so the set holds both
// the typical and the good ones), up to a number per task. Resumable: what
// the database holds already counts, and a run measures only what is missing.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "support/cancellation.h"
#include "tuning/tuning_config.h"

namespace tessel::tuning {

struct DatasetConfig {
  std::vector<std::string> models;  // zoo names or model files
  int programsPerTask = 64;
  double randomShare = 0.5;  // of each batch: random programs; the rest evolved
  // target, fusion, seed, batch, population, cache state, timeout, jobs and
  // the worker path as a tuning's; trials, search and cost model are unused.
  TuningConfig tuning;
};

struct DatasetProgress {
  std::string model;
  size_t task = 0, tasks = 0;  // this model's
  int taskPrograms = 0;        // the task's records now
  int measured = 0;            // programs this run has measured, all models
};

struct DatasetEvents {
  std::function<void(const DatasetProgress&)> onTask;  // after each task's round
  support::CancelFlag cancel;                          // set: stops after the round in flight
};

struct DatasetSummary {
  int measured = 0;     // this run
  int valid = 0;        // of those, measured without error
  size_t tasks = 0;     // of all the models
  int64_t records = 0;  // of those tasks in the database now
  bool stopped = false;
};

// std::invalid_argument for a bad configuration, before anything is written.
DatasetSummary collectDataset(const DatasetConfig& config, const std::string& dbPath, const DatasetEvents& events = {});

}  // namespace tessel::tuning
