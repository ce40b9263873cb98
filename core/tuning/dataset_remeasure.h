// `tessel dataset remeasure`: measures a dataset's programs again, on this
// machine now (or through the fleet), several times each, and labels each
// program with the median. One measurement per program lets a single slow
// run decide which program of a task looks best; a median of three does not.
// It also relabels a set collected on another machine or with an older code
// generator. Resumable: a task the output already holds is kept as it is.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "support/cancellation.h"
#include "tuning/dataset.h"
#include "tuning/tuning_config.h"

namespace tessel::tuning {

struct RemeasureConfig {
  int repeats = 3;                  // measurements per program, one pass over the task each
  std::vector<std::string> models;  // only these models' records (empty: every model's)
  // target, cache state, timeout, jobs, batch (programs per build), seed, the
  // worker path and the measurer factory as a tuning's; the records keep
  // their own target, which must be this one.
  TuningConfig tuning;
};

struct RemeasureProgress {
  std::string model, task;
  size_t taskIndex = 0, tasks = 0;  // of all the tasks this run relabels
  int programs = 0;                 // the task's
};

struct RemeasureEvents {
  std::function<void(const RemeasureProgress&)> onTask;  // after each task is written
  support::CancelFlag cancel;                            // set: stops before the next build; that task is not written
};

struct RemeasureSummary {
  size_t tasks = 0;     // relabelled by this run
  size_t kept = 0;      // tasks the output held already
  size_t programs = 0;  // relabelled by this run
  size_t valid = 0;     // of those, with a finite median
  bool stopped = false;
};

// The label of one program from its measurements (seconds, +inf for a failed
// run): the median of the runs that succeeded, if at least half did; else +inf.
double medianLabel(std::vector<double> costs);

// Relabels the records of `in` into `outPath` (written after every task,
// gzip-compressed for a name ending in ".gz"; an existing file's tasks are
// kept). std::invalid_argument for a bad configuration or a record of another
// target, std::runtime_error for a task its model no longer has, both before
// anything is measured.
RemeasureSummary remeasureDataset(const std::vector<DatasetRecord>& in, const RemeasureConfig& config,
                                  const std::string& outPath, const RemeasureEvents& events = {});

}  // namespace tessel::tuning
