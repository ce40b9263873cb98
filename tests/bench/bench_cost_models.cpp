// Cost-model speed: features extracted per second (each kind, all cores) and
// predictions per second of every model this build has, on the same sampled
// programs of one operator, with the ratio to xgb measured in the same run.
// Each model is first trained on the programs (random costs: this measures
// speed, not accuracy), then scores them in batches as the search does. The
// store rows' fingerprint tells a faster extraction from a different one.
//
// usage: bench_cost_models [OP SHAPE [PROGRAMS]]   (default: conv2d 1,64,56,56,64,3,3,1,1 2048)
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cost/cost_model_registry.h"
#include "cost/learned/learned_models.h"
#include "schedule/sketch.h"
#include "task/search_task.h"

using namespace tessel;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::vector<cost::Program> sample(const task::SearchTask& task, size_t count) {
  schedule::HardwareParams hw;
  const auto sketches = schedule::generateSketches(task.dag, hw);
  std::mt19937_64 rng(1);
  std::vector<cost::Program> out;
  for (size_t i = 0; out.size() < count && i < count * 20; ++i) {
    try {
      out.push_back(schedule::annotateSketch(sketches[i % sketches.size()], hw, rng));
    } catch (const schedule::ScheduleError&) {
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  cost::registerLearnedCostModels();
  const std::string op = argc > 1 ? argv[1] : "conv2d";
  const std::string shapeText = argc > 2 ? argv[2] : "1,64,56,56,64,3,3,1,1";
  const size_t count = argc > 3 ? size_t(std::stoul(argv[3])) : 2048;
  std::vector<int64_t> shape;
  std::stringstream dims(shapeText);
  for (std::string d; std::getline(dims, d, ',');)
    shape.push_back(std::stoll(d));
  const task::SearchTask task = task::makeOperatorTask(op, shape, tessel::target::Target::host());
  const std::vector<cost::Program> programs = sample(task, count);
  std::printf("%s %s: %zu sampled programs\n\n", op.c_str(), shapeText.c_str(), programs.size());

  std::printf("%-28s %12s\n", "features", "programs/s");
  for (auto [name, kinds] : {std::pair{"store rows", cost::kStoreRows}, std::pair{"program graph", cost::kGraph},
                             std::pair{"loop tokens", cost::kLoopTokens}, std::pair{"all three", cost::kAllFeatures}}) {
    const auto start = Clock::now();
    cost::extractFeatureSets(task.dag, programs, kinds);
    std::printf("%-28s %12.0f\n", name, double(programs.size()) / seconds(start));
  }

  const auto sets = cost::extractFeatureSets(task.dag, programs, cost::kAllFeatures);
  // A fingerprint of the store rows (plain and position-weighted sums): a
  // change that only speeds extraction up must leave it as it was.
  double sum = 0, weighted = 0;
  size_t values = 0;
  for (const auto& set : sets)
    for (const auto& row : set.stores)
      for (float v : row) {
        sum += v;
        weighted += v * double(++values % 97);
      }
  std::printf("%-28s %.9g %.9g (%zu values)\n", "store rows fingerprint", sum, weighted, values);
  std::mt19937_64 rng(2);
  std::vector<double> costs;
  for (size_t i = 0; i < sets.size(); ++i)
    costs.push_back(1e-3 * (1 + double(rng() % 1000)));
  std::printf("\n%-12s %16s %14s %10s\n", "model", "predictions/s", "vs xgb", "train s");
  double xgb = 0;
  for (const cost::CostModelEntry& e : cost::costModels()) {
    if (!e.available) continue;
    auto m = cost::makeCostModel(e.name, 1);
    auto start = Clock::now();
    m->pretrain({{task.key, sets, costs}}, 5);
    const double train = seconds(start);
    m->predictFeatures(task.key, sets);  // warm-up
    double best = 1e30;
    for (int round = 0; round < 3; ++round) {
      start = Clock::now();
      m->predictFeatures(task.key, sets);
      best = std::min(best, seconds(start));
    }
    const double perSecond = double(sets.size()) / best;
    if (e.name == "xgb") xgb = perSecond;
    std::printf("%-12s %16.0f %14s %10.1f\n", e.name.c_str(), perSecond,
                xgb > 0 ? (std::to_string(perSecond / xgb).substr(0, 5) + "x").c_str() : "-", train);
  }
  return 0;
}
