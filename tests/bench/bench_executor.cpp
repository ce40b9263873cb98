// The graph executor's per-kernel dispatch overhead: a chain of tiny ReLUs
// (16 floats each, so the kernels themselves take nanoseconds), one kernel per
// node, run by Tessel's executor and by LibTorch's ATen ops on the same graph
// in the same process. Also the cost of an empty OpenMP parallel region on the
// executor's pinned team: what every parallel (tuned) kernel pays on top.
//
// usage: bench_executor [NODES] [REPEATS]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "graph/graph_builder.h"
#include "reference/libtorch_executor.h"
#include "runtime/graph_executor.h"
#include "runtime/thread_team.h"

using namespace tessel;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 200;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 200;
  graph::GraphBuilder b("relu_chain");
  std::string v = b.input("x", {1, 16});
  for (int i = 0; i < nodes; ++i)
    v = b.node("relu" + std::to_string(i), "Relu", {v});
  b.output(v);
  const graph::Graph g = b.finish();
  runtime::HostTensor x{{1, 16}, std::vector<float>(16, 0.5f)};
  const std::map<std::string, runtime::HostTensor> inputs = {{"x", x}};

  const int cores = int(runtime::allowedCores().size());
  // LibTorch first, as `tessel run` does.
  const reference::ReferenceRun ref = reference::runWithLibTorch(g, inputs, cores, repeats);
  runtime::GraphExecutor ex(g);
  ex.run(inputs);
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    ex.run(inputs);
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  const double tesselPerKernel = median(times) / nodes, torchPerOp = ref.seconds / nodes;

  // An empty parallel region on a pinned team like the one tuned kernels run on.
  runtime::ThreadTeam team(0, true);
  const runtime::ThreadTeam::Entered entered = team.enter();
  std::vector<double> regions;
  for (int r = 0; r < 2000; ++r) {
    const auto t0 = Clock::now();
#pragma omp parallel
    { asm volatile("" ::: "memory"); }
    regions.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::printf("relu chain of %d nodes (16 floats each), %d threads, medians of %d runs\n", nodes, ex.threads(),
              repeats);
  std::printf("tessel executor   %8.3f us per kernel (run %.3f ms)\n", tesselPerKernel * 1e6, median(times) * 1e3);
  std::printf("libtorch (ATen)   %8.3f us per op     (run %.3f ms)\n", torchPerOp * 1e6, ref.seconds * 1e3);
  std::printf("ratio             %8.2fx LibTorch's per-op overhead\n", tesselPerKernel / torchPerOp);
  std::printf("empty OpenMP parallel region on the pinned team: %.3f us (median of 2000)\n", median(regions) * 1e6);
  return 0;
}
