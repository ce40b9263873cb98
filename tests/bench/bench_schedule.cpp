// One operator under schedules given by hand: each schedule (a step list as
// the database and `tune-op --json` store it, one per line of a file) is
// replayed, built and measured in the worker (warm, or with the cache flush),
// best of three rounds, and its C++ printed with --show-code. For checking what
// a schedule the search did not find would give, and reading its kernel.
//
// usage: bench_schedule OP SHAPE STEPS_FILE [--flush] [--show-code] [--keep] [--plain-layout]
// (--keep leaves the sources and shared libraries in the printed folders;
// --plain-layout reads the weights in their own layout, without the layout
// rewrite, for comparisons)
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "measure/program_measurer.h"
#include "schedule/steps.h"
#include "task/search_task.h"

using namespace tessel;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: bench_schedule OP SHAPE STEPS_FILE [--flush] [--show-code] [--keep] [--plain-layout]\n");
    return 2;
  }
  bool flush = false, showCode = false, keep = false, plainLayout = false;
  for (int i = 4; i < argc; ++i) {
    flush |= std::strcmp(argv[i], "--flush") == 0;
    showCode |= std::strcmp(argv[i], "--show-code") == 0;
    keep |= std::strcmp(argv[i], "--keep") == 0;
    plainLayout |= std::strcmp(argv[i], "--plain-layout") == 0;
  }
  std::vector<int64_t> shape;
  std::stringstream dims(argv[2]);
  for (std::string d; std::getline(dims, d, ',');)
    shape.push_back(std::stoll(d));
  const task::SearchTask task = task::makeOperatorTask(argv[1], shape, tessel::target::Target::host(), "");
  std::vector<std::vector<schedule::Step>> programs;
  std::vector<std::string> lines;
  std::ifstream in(argv[3]);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') {
      programs.push_back(schedule::deserializeSteps(line));
      lines.push_back(line);
    }
  std::vector<double> best(programs.size(), INFINITY);
  std::vector<std::string> sources(programs.size());
  measure::MeasurerOptions o;
  o.run.workerPath = TESSEL_WORKER_PATH;
  o.run.cacheState = flush ? measure::CacheState::Cold : measure::CacheState::Warm;
  o.keepFiles = keep;
  o.cpp.layoutRewrite = !plainLayout;
  measure::ProgramMeasurer pm(task, o);  // one reference and work folder for all rounds
  if (keep) std::printf("files in %s\n", pm.workDir().c_str());
  for (int round = 0; round < 3; ++round) {
    const std::vector<measure::ProgramResult> results = pm.measure(programs);
    for (size_t i = 0; i < results.size(); ++i) {
      sources[i] = results[i].source;
      if (results[i].result.ok())
        best[i] = std::min(best[i], results[i].result.medianCost());
      else if (round == 0)
        std::printf("schedule %zu: %s\n", i + 1, results[i].result.message.c_str());
    }
  }
  for (size_t i = 0; i < programs.size(); ++i) {
    std::printf("schedule %zu: %.4f ms (%.1f GFLOP/s)\n", i + 1, best[i] * 1e3, task.flops / best[i] * 1e-9);
    if (showCode) std::printf("%s\n", sources[i].c_str());
  }
  return 0;
}
