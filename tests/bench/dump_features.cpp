// Writes the features of a dataset's programs as NumPy arrays, for trying
// cost-model ideas in Python before they are written in C++ (the features
// are Tessel's own, recomputed from the steps as the models see them).
//
// usage: dump_features DATA.jsonl[.gz] OUT_DIR
// OUT_DIR receives: programs_{task,cost}.npy (per valid program: task index,
// seconds, +inf for failed), stores.npy [R,170] + stores_program.npy,
// nodes.npy [N,21] + nodes_program.npy + edges.npy [E,2] (global node
// indices, nesting and data flow, one way), tokens.npy [T,14] +
// tokens_program.npy, and tasks.json (key, model, weight per task index).
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost/features.h"
#include "cost/program_features.h"
#include "tuning/dataset.h"

namespace {

template <typename T>
const char* descr();
template <>
const char* descr<float>() {
  return "<f4";
}
template <>
const char* descr<double>() {
  return "<f8";
}
template <>
const char* descr<int64_t>() {
  return "<i8";
}

// NumPy's .npy format, version 1.0: magic, header length, a Python dict
// padded to 64 bytes, then the raw little-endian values.
template <typename T>
void writeNpy(const std::string& path, const std::vector<T>& values, size_t columns) {
  const size_t rows = columns ? values.size() / columns : values.size();
  std::string shape =
      columns ? "(" + std::to_string(rows) + ", " + std::to_string(columns) + ")" : "(" + std::to_string(rows) + ",)";
  std::string header = std::string("{'descr': '") + descr<T>() + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = uint16_t(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << header;
  out.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * sizeof(T)));
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessel;
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DATA.jsonl[.gz] OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[2];
  const tuning::DatasetTasks data = tuning::featuresOf(tuning::readDataset(argv[1]), cost::kAllFeatures);
  std::vector<int64_t> programTask, storesProgram, nodesProgram, edges, tokensProgram;
  std::vector<double> programCost;
  std::vector<float> stores, nodes, tokens;
  nlohmann::json tasks = nlohmann::json::array();
  int64_t program = 0, nodeOffset = 0;
  for (size_t t = 0; t < data.tasks.size(); ++t) {
    const cost::TaskRecords& r = data.tasks[t];
    tasks.push_back({{"key", r.taskKey}, {"model", data.model[t]}, {"weight", data.weight[t]}});
    for (size_t i = 0; i < r.programs.size(); ++i) {
      const cost::ProgramFeatureSet& p = r.programs[i];
      if (!p.valid) continue;
      programTask.push_back(int64_t(t));
      programCost.push_back(r.costs[i]);
      for (const auto& row : p.stores) {
        stores.insert(stores.end(), row.begin(), row.end());
        storesProgram.push_back(program);
      }
      nodes.insert(nodes.end(), p.graph.attributes.begin(), p.graph.attributes.end());
      nodesProgram.insert(nodesProgram.end(), p.graph.numNodes(), program);
      for (const auto& e : p.graph.edges) {
        edges.push_back(nodeOffset + e.from);
        edges.push_back(nodeOffset + e.to);
      }
      nodeOffset += int64_t(p.graph.numNodes());
      tokens.insert(tokens.end(), p.loops.values.begin(), p.loops.values.end());
      tokensProgram.insert(tokensProgram.end(), p.loops.size(), program);
      ++program;
    }
  }
  writeNpy(dir + "/programs_task.npy", programTask, 0);
  writeNpy(dir + "/programs_cost.npy", programCost, 0);
  writeNpy(dir + "/stores.npy", stores, cost::kNumFeatures);
  writeNpy(dir + "/stores_program.npy", storesProgram, 0);
  writeNpy(dir + "/nodes.npy", nodes, cost::kGraphNodeFeatures);
  writeNpy(dir + "/nodes_program.npy", nodesProgram, 0);
  writeNpy(dir + "/edges.npy", edges, 2);
  writeNpy(dir + "/tokens.npy", tokens, cost::kLoopTokenFeatures);
  writeNpy(dir + "/tokens_program.npy", tokensProgram, 0);
  std::ofstream(dir + "/tasks.json") << tasks.dump(1) << "\n";
  std::printf("%lld programs of %zu tasks (%zu records skipped) written to %s\n", (long long)program, data.tasks.size(),
              data.skipped, dir.c_str());
  return 0;
}
