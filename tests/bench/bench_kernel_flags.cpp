// A compiler flag's effect on generated kernels: a dataset's programs of one
// model, built with the target's flags and with FLAG added, measured in the
// worker in the same batches (cache state "model", as datasets are collected),
// in the order flags, FLAG, FLAG, flags, so that a drift of the machine over
// the four passes cancels in the ratio of each pair's geometric means. The
// two runs of the target's flags, first and last, show that drift and the
// noise the ratio is read against.
//
// Programs per task: N at random, or (--affected) only those the flag
// changes as the kernel flags were chosen against: their register tile has
// an unrolled reduction loop, and compiled to assembly with FLAG they
// broadcast from registers more often than without (all a task's such
// kernels in one translation unit, counted per function), up to N.
//
// usage: bench_kernel_flags DATASET MODEL N [--affected] [--flag F]
//        (F default -fpredictive-commoning, the -O3 pass the flags turn off)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "codegen/cpp_codegen.h"
#include "frontend/model_loader.h"
#include "fusion/task_extraction.h"
#include "measure/cpp_program_builder.h"
#include "measure/program_measurer.h"
#include "schedule/steps.h"
#include "support/subprocess.h"
#include "target/target.h"
#include "tuning/dataset.h"

using namespace tessel;

namespace {

bool unrolledTile(const std::string& code) {
  const size_t tile = code.find("register tile");
  return tile != std::string::npos && code.find("#pragma GCC unroll", tile) < code.find("tessel_store", tile);
}

// Broadcasts from a register per kernel k<i> (its OpenMP parts included) of
// `code` compiled to assembly with `flags`.
std::map<int, int> registerBroadcasts(const std::string& code, std::vector<std::string> flags, const std::string& dir) {
  std::ofstream(dir + "/k.cpp") << code;
  flags.insert(flags.begin(), "c++");
  flags.insert(flags.end(), {"-w", "-S", "-o", dir + "/k.s", dir + "/k.cpp"});
  std::map<int, int> n;
  if (!support::runProcess(flags, 600).ok()) return n;
  std::ifstream in(dir + "/k.s");
  const std::regex function(R"(^k(\d+)[._:])"), fromRegister(R"(vbroadcastss\s+%xmm)");
  int current = -1;
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, function)) current = std::stoi(m[1]);
    if (current >= 0 && std::regex_search(line, fromRegister)) ++n[current];
  }
  return n;
}

double geomean(const std::vector<double>& r) {
  double s = 0;
  for (double x : r)
    s += std::log(x);
  return r.empty() ? NAN : std::exp(s / double(r.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: bench_kernel_flags DATASET MODEL N [--affected] [--flag F]\n");
    return 2;
  }
  const std::string model = argv[2];
  const size_t perTask = size_t(std::atoi(argv[3]));
  bool onlyAffected = false;
  std::string flag = "-fpredictive-commoning";
  for (int i = 4; i < argc; ++i) {
    if (std::strcmp(argv[i], "--affected") == 0) onlyAffected = true;
    if (std::strcmp(argv[i], "--flag") == 0 && i + 1 < argc) flag = argv[++i];
  }
  const std::vector<tuning::DatasetRecord> records = tuning::readDataset(argv[1]);
  const frontend::PreparedModel m = frontend::prepareModel(model, "", "dp", tessel::target::Target::host());
  std::mt19937 rng(7);
  std::printf("%-44s %4s %10s %10s %8s\n", "task", "n", "flags ms", "+flag ms", "+flag/fl");
  std::vector<double> withFlag, drift;  // per program: FLAG / flags; last flags run / first
  for (const fusion::GraphTask& gt : m.tasks) {
    const task::SearchTask st = fusion::toSearchTask(gt, tessel::target::Target::host());
    std::vector<std::vector<schedule::Step>> programs;
    for (const tuning::DatasetRecord& r : records)
      if (r.model == model && r.task == st.key) programs.push_back(schedule::deserializeSteps(r.steps));
    std::shuffle(programs.begin(), programs.end(), rng);
    measure::MeasurerOptions base = measure::measurerOptionsFor(target::Target::host());
    base.run.workerPath = TESSEL_WORKER_PATH;
    base.run.cacheState = measure::CacheState::Model;
    measure::MeasurerOptions plus = base;
    plus.build.flags.push_back(flag);
    if (onlyAffected) {
      std::string unit = codegen::cppPrelude();
      std::vector<size_t> tiled;
      for (size_t i = 0; i < programs.size(); ++i) {
        const std::string code = measure::programSource(st.dag, programs[i], "k" + std::to_string(i), base.cpp);
        if (unrolledTile(code)) {
          unit += code;
          tiled.push_back(i);
        }
      }
      const std::string dir = support::makeTempDir("tessel-bench-flags");
      const std::map<int, int> without = registerBroadcasts(unit, base.build.flags, dir);
      const std::map<int, int> with = registerBroadcasts(unit, plus.build.flags, dir);
      support::removeTree(dir);
      std::vector<std::vector<schedule::Step>> affected;
      for (size_t i : tiled) {
        const auto w = with.find(int(i)), wo = without.find(int(i));
        if (w != with.end() && w->second > (wo == without.end() ? 0 : wo->second)) affected.push_back(programs[i]);
      }
      programs = std::move(affected);
    }
    if (programs.size() > perTask) programs.resize(perTask);
    if (programs.empty()) continue;
    std::vector<std::vector<double>> cost(4, std::vector<double>(programs.size(), INFINITY));
    for (size_t b = 0; b < programs.size(); b += 16) {
      const std::vector<std::vector<schedule::Step>> chunk(programs.begin() + long(b),
                                                           programs.begin() + long(std::min(programs.size(), b + 16)));
      for (int v = 0; v < 4; ++v) {
        measure::ProgramMeasurer pm(st, v == 1 || v == 2 ? plus : base);
        const std::vector<measure::ProgramResult> res = pm.measure(chunk);
        for (size_t i = 0; i < res.size(); ++i)
          if (res[i].result.ok()) cost[size_t(v)][b + i] = res[i].result.medianCost();
      }
    }
    double best[2] = {INFINITY, INFINITY};
    for (size_t i = 0; i < programs.size(); ++i) {
      const double flags = std::sqrt(cost[0][i] * cost[3][i]), plusFlag = std::sqrt(cost[1][i] * cost[2][i]);
      best[0] = std::min(best[0], flags);
      best[1] = std::min(best[1], plusFlag);
      if (std::isfinite(flags) && std::isfinite(plusFlag)) {
        withFlag.push_back(plusFlag / flags);
        drift.push_back(cost[3][i] / cost[0][i]);
      }
    }
    std::printf("%-44s %4zu %10.4f %10.4f %8.3f\n", st.key.substr(0, 44).c_str(), programs.size(), best[0] * 1e3,
                best[1] * 1e3, best[1] / best[0]);
    std::fflush(stdout);
  }
  auto beyond = [](const std::vector<double>& r, double f) {
    return std::count_if(r.begin(), r.end(), [&](double x) { return x > f; });
  };
  auto below = [](const std::vector<double>& r, double f) {
    return std::count_if(r.begin(), r.end(), [&](double x) { return x < f; });
  };
  std::printf(
      "%zu programs, %s: geometric mean of +flag/flags %.3f; over 1.3x slower with it %td, over 1.3x faster %td; "
      "last flags run / first: geometric mean %.3f, %td over 1.3x slower, %td over 1.3x faster\n",
      withFlag.size(), flag.c_str(), geomean(withFlag), beyond(withFlag, 1.3), below(withFlag, 1 / 1.3), geomean(drift),
      beyond(drift, 1.3), below(drift, 1 / 1.3));
  return 0;
}
