// How import and model preparation scale with the graph: chains of n nodes
// (Relu and Add of a constant, alternating) imported from ONNX bytes, then
// folded, fused and cut into tasks as `tessel inspect` does, each stage timed.
// Linear work gives a ratio of time per node near 1 between sizes.
//
//   build/bin/bench_import_scaling [--fusion dp|rule|none] [N...]
//   (defaults: dp; 2000 20000 100000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "chain_model.h"
#include "frontend/model_loader.h"
#include "frontend/onnx_import.h"

using namespace tessel;

namespace {

std::string chainBytes(int n) {
  const onnx::ModelProto m = testing::chainModel(n);
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string fusion = "dp";
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--fusion" && i + 1 < argc)
      fusion = argv[++i];
    else
      sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {2000, 20000, 100000};
  std::printf("%8s %10s %12s %10s %12s\n", "nodes", "import s", "prepare s", "tasks", "us per node");
  double firstPerNode = 0;
  for (int n : sizes) {
    const std::string bytes = chainBytes(n);
    auto t0 = std::chrono::steady_clock::now();
    graph::Graph g = frontend::importOnnxBytes(bytes, "chain.onnx");
    const double import = since(t0);
    t0 = std::chrono::steady_clock::now();
    const frontend::PreparedModel m =
        frontend::prepareModel(std::move(g), "chain", fusion, tessel::target::Target::host());
    const double prepare = since(t0);
    const double perNode = (import + prepare) / n * 1e6;
    if (firstPerNode == 0) firstPerNode = perNode;
    std::printf("%8d %10.3f %12.3f %10zu %12.2f  (x%.2f the first size's)\n", n, import, prepare, m.tasks.size(),
                perNode, perNode / firstPerNode);
    std::fflush(stdout);
  }
  return 0;
}
