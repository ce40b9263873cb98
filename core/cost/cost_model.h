// Cost models: score programs so the search measures the promising ones.
// All models share this interface: update with measured records, predict
// scores (higher = faster). Models work on per-store feature rows (see
// cost/features.h): a program is the list of its buffer stores' rows.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace tessel::cost {

// One row of features per buffer store of the program (Ansor's 164 features).
using ProgramFeatures = std::vector<std::vector<float>>;

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string name() const = 0;
  // Learns from measured programs of one task. `costs` are seconds; a
  // failed program has cost +infinity (it may be used as a bad example).
  virtual void update(const std::vector<ProgramFeatures>& programs, const std::vector<double>& costs) = 0;
  // Scores: higher means predicted faster. Comparable within one task.
  virtual std::vector<double> predict(const std::vector<ProgramFeatures>& programs) = 0;
  // Number of programs learned from so far.
  virtual size_t trainedOn() const = 0;
  // The trained model as bytes, to keep in the database ("" if there is
  // nothing worth keeping, e.g. the random model or an untrained one).
  virtual std::string save() const { return {}; }
};

// "random": uniform random scores (the baseline every model must beat).
std::unique_ptr<CostModel> makeRandomModel(uint64_t seed);
// "xgb": gradient-boosted trees (throws std::runtime_error when this build
// has no XGBoost). `loss` is "throughput" (Ansor's weighted regression of
// normalised throughput) or "rank" (pairwise ranking).
std::unique_ptr<CostModel> makeXgbModel(const std::string& loss, uint64_t seed);
// Models by name: cost/cost_model_registry.h.

}  // namespace tessel::cost
