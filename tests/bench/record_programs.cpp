// Measures random programs of one operator and writes them as JSON lines
// ({"steps": [...], "cost": seconds or null}): the recorded sets the cost
// model tests train and evaluate on (tests/data/).
//
//   build/bin/record_programs OP SHAPE COUNT SEED > FILE.jsonl
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "search/tuner.h"

using namespace tessel;

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: record_programs OP SHAPE COUNT SEED > FILE.jsonl\n");
    return 2;
  }
  std::vector<int64_t> shape;
  std::stringstream ss(argv[2]);
  for (std::string part; std::getline(ss, part, ',');)
    shape.push_back(std::stoll(part));
  task::SearchTask task = task::makeOperatorTask(argv[1], shape, tessel::target::Target::host());
  search::TuneOptions o;
  o.trials = std::atoi(argv[3]);
  o.seed = uint64_t(std::atoll(argv[4]));
  o.search = "random";
  o.batchSize = 32;
  o.hardware.cores = int(std::thread::hardware_concurrency());
  o.measurer.run.workerPath = TESSEL_WORKER_PATH;
  o.measurer.build.jobs = o.hardware.cores;
  search::TuneResult r = search::tuneTask(task, o);
  for (const auto& rec : r.records) {
    nlohmann::json j;
    j["steps"] = nlohmann::json::parse(rec.steps);
    j["cost"] = rec.result.ok() ? nlohmann::json(rec.result.medianCost()) : nlohmann::json(nullptr);
    std::puts(j.dump().c_str());
  }
  return 0;
}
