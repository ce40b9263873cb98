// The "random" cost model: the baseline every learned model must beat.
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>

#include "cost/cost_model.h"

namespace tessel::cost {

namespace {

class RandomModel final : public CostModel {
 public:
  explicit RandomModel(uint64_t seed) : rng_(seed) {}

  std::string name() const override { return "random"; }

  void updateFeatures(const std::vector<TaskRecords>& records) override {
    checkRecordSizes(name(), records);
    for (const TaskRecords& r : records)
      trained_ += r.programs.size();
  }

  // Uniform in [0, 1), from the seeded generator: the same seed and the same
  // calls give the same scores on every platform (no std distributions).
  std::vector<double> predictFeatures(const std::string& /*taskKey*/,
                                      const std::vector<ProgramFeatureSet>& programs) override {
    std::vector<double> scores;
    scores.reserve(programs.size());
    for (const auto& p : programs) {
      const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
      scores.push_back(p.valid ? u : kInvalidScore);
    }
    return scores;
  }

  size_t trainedOn() const override { return trained_; }

 private:
  std::mt19937_64 rng_;
  size_t trained_ = 0;
};

}  // namespace

std::unique_ptr<CostModel> makeRandomModel(uint64_t seed) {
  return std::make_unique<RandomModel>(seed);
}

#ifndef TESSEL_HAVE_XGBOOST
std::unique_ptr<CostModel> makeXgbModel(const std::string& /*loss*/, uint64_t /*seed*/) {
  throw std::runtime_error("cost model 'xgb' is not available: this build of Tessel has no XGBoost (libxgboost-dev)");
}
#endif

}  // namespace tessel::cost
