// Tunes one task: the search proposes batches, the pipeline builds and
// measures them, the best valid program wins.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "measure/program_measurer.h"
#include "search/search_policy.h"

namespace tessel::search {

struct TuneOptions {
  int trials = 64;
  int batchSize = 16;
  std::string search = "evolutionary";
  std::string costModel = "xgb";
  uint64_t seed = 1;
  schedule::HardwareParams hardware;
  EvolutionParams evolution;
  measure::MeasurerOptions measurer;
  // Called after each measured batch (trials so far, best seconds so far).
  std::function<void(int, double)> onBatch;
};

struct TuneRecord {
  std::string steps;  // serialised
  measure::MeasureResult result;
};

struct TuneResult {
  int trials = 0, validTrials = 0;
  double bestSeconds = 0;  // median of the best program's repeats; 0 without a valid one
  Program bestSteps;
  std::string bestSource;
  std::vector<std::pair<int, double>> curve;  // (trial, best seconds so far)
  std::vector<TuneRecord> records;
  double wallSeconds = 0;
  double searchSeconds = 0;  // proposing batches: features, prediction, evolution
  size_t predictions = 0;    // programs the cost model scored
};

TuneResult tuneTask(const SearchTask& task, const TuneOptions& options);

}  // namespace tessel::search
