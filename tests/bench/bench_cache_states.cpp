// Which cache state a kernel meets inside a model: for every task of a tuned
// model, its best stored program measured in the worker under each of
// `--cache-flush off|on|model` (measure/cache_state.h), interleaved, best of
// two rounds each. Compare the sums with `tessel run MODEL --db DB --profile`.
//
// usage: bench_cache_states MODEL DB
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "frontend/model_loader.h"
#include "measure/cache_state.h"
#include "measure/program_measurer.h"
#include "schedule/steps.h"
#include "store/database.h"
#include "store/record_store.h"

using namespace tessel;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_cache_states MODEL DB\n");
    return 2;
  }
  const frontend::PreparedModel m = frontend::prepareModel(argv[1], "", "dp", tessel::target::Target::host());
  const auto db = store::Database::open(argv[2], store::OpenMode::ReadOnly);
  const measure::CacheState states[] = {measure::CacheState::Warm, measure::CacheState::Cold,
                                        measure::CacheState::Model};
  constexpr size_t kStates = std::size(states);
  std::printf("%-46s %6s %12s %12s %12s\n", "task", "weight", "off (warm)", "on (cold)", "model");
  double sum[kStates] = {};
  for (const fusion::GraphTask& gt : m.tasks) {
    const auto row = db->taskByKey(gt.key, "cpu");
    if (!row) continue;
    const std::vector<store::BestRow> best = db->records().best(row->id);
    if (best.empty()) continue;
    const task::SearchTask task = fusion::toSearchTask(gt, tessel::target::Target::host());
    const std::vector<std::vector<schedule::Step>> program = {schedule::deserializeSteps(best.front().record.steps)};
    std::vector<std::unique_ptr<measure::ProgramMeasurer>> measurers;  // one per state: one reference built each
    for (measure::CacheState state : states) {
      measure::MeasurerOptions o;
      o.run.workerPath = TESSEL_WORKER_PATH;
      o.run.cacheState = state;
      measurers.push_back(std::make_unique<measure::ProgramMeasurer>(task, o));
    }
    double seconds[kStates];
    std::fill(std::begin(seconds), std::end(seconds), INFINITY);
    for (int round = 0; round < 2; ++round)
      for (size_t s = 0; s < kStates; ++s) {
        const measure::ProgramResult r = measurers[s]->measure(program).at(0);
        if (!r.result.ok()) {
          std::fprintf(stderr, "%s (%s): %s\n", gt.key.c_str(), measure::cacheStateName(states[s]),
                       r.result.message.c_str());
          continue;
        }
        seconds[s] = std::min(seconds[s], r.result.medianCost());
      }
    std::printf("%-46s %6lld %12.4f %12.4f %12.4f\n", gt.key.c_str(), (long long)gt.weight, seconds[0] * 1e3,
                seconds[1] * 1e3, seconds[2] * 1e3);
    std::fflush(stdout);
    for (size_t s = 0; s < kStates; ++s)
      sum[s] += double(gt.weight) * seconds[s];
  }
  std::printf("end-to-end estimate: off (warm) %.3f ms, on (cold) %.3f ms, model %.3f ms\n", sum[0] * 1e3, sum[1] * 1e3,
              sum[2] * 1e3);
  return 0;
}
