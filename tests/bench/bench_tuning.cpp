// Tuning efficiency and kernel quality: tunes one operator with
// evolutionary search + a cost model and with random search (same trial
// budget, same seeds), then times oneDNN, OpenBLAS and LibTorch on it in the
// same process. Prints a summary and writes the curves as CSV.
//
//   build/bin/bench_tuning OP SHAPE TRIALS [OUT_PREFIX] [RANDOM_TRIALS]
// RANDOM_TRIALS (default TRIALS) of 0 skips the random search.
//   e.g. build/bin/bench_tuning matmul 1024,1024,1024 500 docs/bench/matmul1024
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "baseline/baselines.h"
#include "search/tuner.h"

using namespace tessel;

namespace {

struct Curve {
  std::vector<int> trials;
  std::vector<double> bestMs, seconds;
};

search::TuneResult tune(const task::SearchTask& task, const std::string& search, int trials, Curve* curve) {
  search::TuneOptions o;
  o.trials = trials;
  o.batchSize = 64;
  o.search = search;
  o.costModel = "xgb";
  o.hardware.cores = int(std::thread::hardware_concurrency());
  o.measurer.run.workerPath = TESSEL_WORKER_PATH;
  o.measurer.build.jobs = o.hardware.cores;
  auto start = std::chrono::steady_clock::now();
  o.onBatch = [&](int t, double best) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    curve->trials.push_back(t);
    curve->bestMs.push_back(best * 1e3);
    curve->seconds.push_back(s);
    std::fprintf(stderr, "  %-12s %4d trials  %8.1f s  best %.4f ms\n", search.c_str(), t, s, best * 1e3);
  };
  return search::tuneTask(task, o);
}

// Trials the curve needed to reach `targetMs` (or -1).
int trialsToReach(const search::TuneResult& r, double targetMs) {
  for (auto [t, s] : r.curve)
    if (s * 1e3 <= targetMs * (1 + 1e-9)) return t;
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: bench_tuning OP SHAPE TRIALS [OUT_PREFIX]\n");
    return 2;
  }
  std::string op = argv[1], shapeText = argv[2];
  int trials = std::atoi(argv[3]);
  std::string out = argc > 4 ? argv[4] : "";
  int randomTrials = argc > 5 ? std::atoi(argv[5]) : trials;
  std::vector<int64_t> shape;
  std::stringstream ss(shapeText);
  for (std::string part; std::getline(ss, part, ',');)
    shape.push_back(std::stoll(part));
  task::SearchTask task = task::makeOperatorTask(op, shape, tessel::target::Target::host());

  Curve evoCurve, rndCurve;
  search::TuneResult evo = tune(task, "evolutionary", trials, &evoCurve);
  search::TuneResult rnd;
  if (randomTrials > 0) rnd = tune(task, "random", randomTrials, &rndCurve);
  baseline::BaselineResult peers = baseline::measureBaselines(op, shape, int(std::thread::hardware_concurrency()));

  double g = task.flops / 1e9;
  double evoMs = evo.bestSeconds * 1e3, rndMs = rnd.bestSeconds * 1e3;
  double bestPeer = 0;
  std::string bestPeerName;
  auto peer = [&](const char* name, const std::optional<double>& t) {
    if (!t) {
      std::printf("%-10s --\n", name);
      return;
    }
    std::printf("%-10s %9.4f ms %8.1f GFLOP/s\n", name, *t * 1e3, g / *t);
    if (bestPeer == 0 || *t < bestPeer) bestPeer = *t, bestPeerName = name;
  };
  std::printf("%s %s%s%s, %d trials per search, %u threads\n", op.c_str(), shapeText.c_str(),
              task.layout.empty() ? "" : " layout ", task.layout.c_str(), trials, std::thread::hardware_concurrency());
  std::printf("%-10s %9.4f ms %8.1f GFLOP/s  (%.1f s, search %.1f s, %zu predictions)\n", "evo+xgb", evoMs,
              g / evo.bestSeconds, evo.wallSeconds, evo.searchSeconds, evo.predictions);
  if (randomTrials > 0)
    std::printf("%-10s %9.4f ms %8.1f GFLOP/s  (%.1f s)\n", "random", rndMs, g / rnd.bestSeconds, rnd.wallSeconds);
  peer("oneDNN", peers.onednnSeconds);
  peer("OpenBLAS", peers.openblasSeconds);
  peer("LibTorch", peers.libtorchSeconds);
  if (bestPeer > 0)
    std::printf("ratio evo+xgb / best peer (%s): %.2f\n", bestPeerName.c_str(), bestPeer / evo.bestSeconds);
  if (randomTrials > 0)
    std::printf("evo+xgb reaches random's %d-trial best (%.4f ms) after %d trials\n", randomTrials, rndMs,
                trialsToReach(evo, rndMs));
  int n95 = trialsToReach(evo, evoMs / 0.95);
  std::printf("evo+xgb reaches 95%% of its final result after %d trials\n", n95);
  double batches = double(evo.trials) / 64.0;
  std::printf("search per round: %.2f s (%.0f predictions/s); build+measure per round: %.2f s\n",
              evo.searchSeconds / batches, double(evo.predictions) / std::max(1e-9, evo.searchSeconds),
              (evo.wallSeconds - evo.searchSeconds) / batches);
  if (!out.empty()) {
    std::ofstream f(out + ".csv");
    f << "search,trials,best_ms,seconds\n";
    for (size_t i = 0; i < evoCurve.trials.size(); ++i)
      f << "evolutionary," << evoCurve.trials[i] << "," << evoCurve.bestMs[i] << "," << evoCurve.seconds[i] << "\n";
    for (size_t i = 0; i < rndCurve.trials.size(); ++i)
      f << "random," << rndCurve.trials[i] << "," << rndCurve.bestMs[i] << "," << rndCurve.seconds[i] << "\n";
  }
  return 0;
}
