// Which cache state a kernel meets inside a model: for every task of a tuned
// model, its best stored program measured in the worker three ways,
// interleaved, best of three rounds each: warm (repeated calls), cold (every
// buffer evicted before each call, Ansor's flush, what `tune` uses) and with
// only the weights evicted (activations and outputs where the previous call
// left them). Compare the sums with `tessel run MODEL --db DB --profile`.
//
// usage: bench_cache_states MODEL DB
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "frontend/model_loader.h"
#include "measure/program_measurer.h"
#include "schedule/steps.h"
#include "store/database.h"

using namespace tessel;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_cache_states MODEL DB\n");
    return 2;
  }
  const frontend::PreparedModel m = frontend::prepareModel(argv[1], "", "dp", "cpu");
  const auto db = store::Database::open(argv[2], store::OpenMode::ReadOnly);
  const char* states[] = {"warm", "cold", "weights cold"};
  std::printf("%-46s %6s %10s %10s %13s\n", "task", "weight", "warm ms", "cold ms", "weights-cold ms");
  double sum[3] = {0, 0, 0};
  for (const fusion::GraphTask& gt : m.tasks) {
    const auto row = db->taskByKey(gt.key, "cpu");
    if (!row) continue;
    const std::vector<store::BestRow> best = db->best(row->id);
    if (best.empty()) continue;
    const search::SearchTask task = fusion::toSearchTask(gt, "cpu");
    const std::vector<std::vector<schedule::Step>> program = {schedule::deserializeSteps(best.front().record.steps)};
    std::vector<std::unique_ptr<measure::ProgramMeasurer>> measurers;  // one per state: one reference built each
    for (int s = 0; s < 3; ++s) {
      measure::MeasurerOptions o;
      o.run.workerPath = TESSEL_WORKER_PATH;
      o.run.flushCache = s > 0;
      o.run.flushConstantsOnly = s == 2;
      measurers.push_back(std::make_unique<measure::ProgramMeasurer>(task, o));
    }
    double seconds[3] = {INFINITY, INFINITY, INFINITY};
    for (int round = 0; round < 3; ++round)
      for (int s = 0; s < 3; ++s) {
        const measure::ProgramResult r = measurers[size_t(s)]->measure(program).at(0);
        if (!r.result.ok()) {
          std::fprintf(stderr, "%s (%s): %s\n", gt.key.c_str(), states[s], r.result.message.c_str());
          continue;
        }
        seconds[s] = std::min(seconds[s], r.result.medianCost());
      }
    std::printf("%-46s %6lld %10.4f %10.4f %13.4f\n", gt.key.c_str(), (long long)gt.weight, seconds[0] * 1e3,
                seconds[1] * 1e3, seconds[2] * 1e3);
    std::fflush(stdout);
    for (int s = 0; s < 3; ++s)
      sum[s] += double(gt.weight) * seconds[s];
  }
  std::printf("end-to-end estimate: warm %.3f ms, cold %.3f ms, weights cold %.3f ms\n", sum[0] * 1e3, sum[1] * 1e3,
              sum[2] * 1e3);
  return 0;
}
