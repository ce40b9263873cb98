// Pipeline throughput: programs built and measured per second while tuning
// a matmul with random search, and the tuned kernel against OpenBLAS sgemm
// measured in the same run with the same timing rule (median of repeats).
//
//   build/bin/bench_pipeline [M N K] [trials]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "search/tuner.h"

using namespace tessel;

namespace {

double openblasSeconds(int m, int n, int k) {
  std::vector<float> a(size_t(m) * k), b(size_t(k) * n), c(size_t(m) * n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& x : a)
    x = u(rng);
  for (float& x : b)
    x = u(rng);
  auto run = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1, a.data(), k, b.data(), n, 0, c.data(), n);
  };
  run();
  // Same rule as the worker: repeats of >= 20 ms, median of 3.
  int number = 1;
  for (;;) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < number; ++i)
      run();
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >= 0.02) break;
    number *= 2;
  }
  std::vector<double> costs;
  for (int r = 0; r < 3; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < number; ++i)
      run();
    costs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / number);
  }
  std::sort(costs.begin(), costs.end());
  return costs[1];
}

}  // namespace

int main(int argc, char** argv) {
  int m = argc > 3 ? std::atoi(argv[1]) : 256, n = argc > 3 ? std::atoi(argv[2]) : 256,
      k = argc > 3 ? std::atoi(argv[3]) : 256;
  int trials = argc > 4 ? std::atoi(argv[4]) : (argc == 2 ? std::atoi(argv[1]) : 64);
  task::SearchTask task = task::makeOperatorTask("matmul", {m, n, k}, tessel::target::Target::host());
  search::TuneOptions o;
  o.trials = trials;
  o.batchSize = 16;
  o.hardware.cores = int(std::thread::hardware_concurrency());
  o.measurer.run.workerPath = TESSEL_WORKER_PATH;
  o.measurer.build.jobs = o.hardware.cores;
  search::TuneResult r = search::tuneTask(task, o);

  double build = 0, run = 0;
  for (const auto& rec : r.records)
    run += rec.result.runSeconds;
  // Build time is per translation unit; count each unit once per batch.
  for (size_t i = 0; i < r.records.size(); i += size_t(o.batchSize)) {
    double maxb = 0;
    for (size_t j = i; j < std::min(r.records.size(), i + size_t(o.batchSize)); ++j)
      maxb = std::max(maxb, r.records[j].result.buildSeconds);
    build += maxb;
  }
  double blas = openblasSeconds(m, n, k);
  double tunedGflops = task.flops / r.bestSeconds / 1e9, blasGflops = task.flops / blas / 1e9;
  std::printf("matmul %dx%dx%d, %d trials (%d valid), random search, %u threads\n", m, n, k, r.trials, r.validTrials,
              std::thread::hardware_concurrency());
  std::printf(
      "pipeline: %.2f programs/s end to end (%.1f s wall; slowest unit per batch %.1f s in all, measuring %.1f s)\n",
      r.trials / r.wallSeconds, r.wallSeconds, build, run);
  std::printf("best tuned kernel: %.4f ms, %.1f GFLOP/s\n", r.bestSeconds * 1e3, tunedGflops);
  std::printf("OpenBLAS sgemm:    %.4f ms, %.1f GFLOP/s\n", blas * 1e3, blasGflops);
  std::printf("ratio tuned / OpenBLAS: %.2f\n", tunedGflops / blasGflops);
  return 0;
}
