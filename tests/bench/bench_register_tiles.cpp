// Explicit register tiles against the compiler's auto-vectoriser on the same
// schedules: for every task of a tuned model, its best stored programs are
// built twice (register tiles on, and the plain loops GCC vectorises on its
// own, with the flags this CPU gets either way) and measured in the worker
// under the same conditions (cache flush as in model tuning), interleaved,
// best of three rounds each. With --prefer256 both are built with
// -mprefer-vector-width=256, the preference GCC has on Intel's AVX-512 CPUs.
//
// usage: bench_register_tiles MODEL DB [TOP_PROGRAMS] [--prefer256]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "frontend/model_loader.h"
#include "measure/program_measurer.h"
#include "schedule/steps.h"
#include "store/database.h"
#include "store/record_store.h"

using namespace tessel;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_register_tiles MODEL DB [TOP_PROGRAMS] [--prefer256]\n");
    return 2;
  }
  const std::string model = argv[1], dbPath = argv[2];
  const int top = argc > 3 && argv[3][0] != '-' ? std::atoi(argv[3]) : 3;
  bool prefer256 = false;
  for (int i = 3; i < argc; ++i)
    prefer256 |= std::strcmp(argv[i], "--prefer256") == 0;
  const frontend::PreparedModel m = frontend::prepareModel(model, "", "dp", tessel::target::Target::host());
  const auto db = store::Database::open(dbPath, store::OpenMode::ReadOnly);
  std::printf("%-46s %6s %12s %12s %7s\n", "task", "weight", "tiles ms", "plain ms", "plain/tiles");
  double sumTiles = 0, sumPlain = 0, logRatio = 0;
  int n = 0;
  for (const fusion::GraphTask& gt : m.tasks) {
    const task::SearchTask task = fusion::toSearchTask(gt, tessel::target::Target::host());
    const auto row = db->taskByKey(gt.key, "cpu");
    if (!row) continue;
    std::vector<store::RecordRow> records = db->records().ofTask(row->id);
    records.erase(std::remove_if(records.begin(), records.end(), [](const store::RecordRow& r) { return !r.ok(); }),
                  records.end());
    std::sort(records.begin(), records.end(),
              [](const store::RecordRow& a, const store::RecordRow& b) { return a.medianCost() < b.medianCost(); });
    if (records.size() > size_t(top)) records.resize(size_t(top));
    if (records.empty()) continue;
    std::vector<std::vector<schedule::Step>> programs;
    for (const store::RecordRow& r : records)
      programs.push_back(schedule::deserializeSteps(r.steps));
    double best[2] = {INFINITY, INFINITY};
    for (int round = 0; round < 3; ++round)
      for (int tiles = 1; tiles >= 0; --tiles) {
        measure::MeasurerOptions o;
        o.run.workerPath = TESSEL_WORKER_PATH;
        o.run.cacheState = measure::CacheState::Cold;
        o.cpp.registerTiles = tiles == 1;
        if (prefer256) {
          auto& f = o.build.flags;
          f.erase(std::remove(f.begin(), f.end(), "-mprefer-vector-width=512"), f.end());
          f.push_back("-mprefer-vector-width=256");
        }
        measure::ProgramMeasurer pm(task, o);
        for (const measure::ProgramResult& r : pm.measure(programs))
          if (r.result.ok()) best[tiles] = std::min(best[tiles], r.result.medianCost());
      }
    std::printf("%-46s %6lld %12.4f %12.4f %7.2f\n", gt.key.c_str(), (long long)gt.weight, best[1] * 1e3, best[0] * 1e3,
                best[0] / best[1]);
    std::fflush(stdout);
    sumTiles += double(gt.weight) * best[1];
    sumPlain += double(gt.weight) * best[0];
    logRatio += std::log(best[0] / best[1]);
    ++n;
  }
  if (n)
    std::printf("end-to-end estimate: tiles %.3f ms, plain %.3f ms; geometric mean plain/tiles %.3f over %d tasks\n",
                sumTiles * 1e3, sumPlain * 1e3, std::exp(logRatio / n), n);
  return 0;
}
