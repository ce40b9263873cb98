// Tuning options for tests that measure for real: random search (no cost
// model to train), small batches, the worker the build just made. Include it
// where TESSEL_WORKER_PATH is defined.
#pragma once

#include "search/tuner.h"

#ifndef TESSEL_WORKER_PATH
#error "TESSEL_WORKER_PATH must name the tessel-worker executable"
#endif

namespace tessel::testing {

inline search::TuneOptions smallTuning(int trials, int batch = 8) {
  search::TuneOptions o;
  o.trials = trials;
  o.batchSize = batch;
  o.search = "random";
  o.costModel = "random";
  o.measurer.run.workerPath = TESSEL_WORKER_PATH;
  o.measurer.build.jobs = 2;
  return o;
}

}  // namespace tessel::testing
