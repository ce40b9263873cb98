#include "cost/ensemble_model.h"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "cost/cost_model_registry.h"

namespace tessel::cost {

namespace {

const std::string kHeader = "tessel-ensemble ";
constexpr int kMaxMembers = 16;

class EnsembleModel final : public CostModel {
 public:
  EnsembleModel(const std::string& name, int members, uint64_t seed) {
    for (int i = 0; i < members; ++i)
      members_.push_back(makeCostModel(name, seed + uint64_t(i)));
  }
  std::string name() const override { return members_.front()->name(); }
  FeatureKinds features() const override { return members_.front()->features(); }
  void updateFeatures(const std::vector<TaskRecords>& records) override {
    for (auto& m : members_)
      m->updateFeatures(records);
  }
  void pretrain(const std::vector<TaskRecords>& records, int epochs) override {
    for (auto& m : members_)
      m->pretrain(records, epochs);
  }
  std::vector<double> predictFeatures(const std::string& taskKey,
                                      const std::vector<ProgramFeatureSet>& programs) override {
    std::vector<double> sum(programs.size(), 0.0);
    for (auto& m : members_) {
      const std::vector<double> s = m->predictFeatures(taskKey, programs);
      // Standardised over the valid programs of this call.
      double mean = 0, sq = 0;
      size_t n = 0;
      for (size_t i = 0; i < s.size(); ++i)
        if (programs[i].valid) mean += s[i], ++n;
      if (n == 0) continue;
      mean /= double(n);
      for (size_t i = 0; i < s.size(); ++i)
        if (programs[i].valid) sq += (s[i] - mean) * (s[i] - mean);
      const double sd = std::sqrt(sq / double(n));
      for (size_t i = 0; i < s.size(); ++i)
        if (programs[i].valid) sum[i] += sd > 0 ? (s[i] - mean) / sd : 0.0;
    }
    for (size_t i = 0; i < programs.size(); ++i)
      sum[i] = programs[i].valid ? sum[i] / double(members_.size()) : kInvalidScore;
    return sum;
  }
  size_t trainedOn() const override { return members_.front()->trainedOn(); }
  bool pretrained() const override { return members_.front()->pretrained(); }
  std::string save() const override {
    std::ostringstream out;
    out << kHeader << members_.size() << "\n";
    for (const auto& m : members_) {
      const std::string bytes = m->save();
      if (bytes.empty()) return {};  // nothing worth keeping in one: none in all
      out << bytes.size() << "\n" << bytes;
    }
    return out.str();
  }
  void load(const std::string& bytes) override {
    if (ensembleMembers(bytes) != int(members_.size()))
      throw std::runtime_error("not a saved ensemble of " + std::to_string(members_.size()) + " '" + name() +
                               "' models");
    size_t at = bytes.find('\n') + 1;
    for (auto& m : members_) {
      const size_t eol = bytes.find('\n', at);
      if (eol == std::string::npos) throw std::runtime_error("a saved ensemble ends early");
      const size_t size = std::stoull(bytes.substr(at, eol - at));
      if (eol + 1 + size > bytes.size()) throw std::runtime_error("a saved ensemble ends early");
      m->load(bytes.substr(eol + 1, size));
      at = eol + 1 + size;
    }
  }

 private:
  std::vector<std::unique_ptr<CostModel>> members_;
};

}  // namespace

std::unique_ptr<CostModel> makeEnsemble(const std::string& name, int members, uint64_t seed) {
  if (members < 2 || members > kMaxMembers)
    throw std::invalid_argument("an ensemble has 2 to " + std::to_string(kMaxMembers) + " members, not " +
                                std::to_string(members));
  return std::make_unique<EnsembleModel>(name, members, seed);
}

int ensembleMembers(const std::string& bytes) {
  if (bytes.compare(0, kHeader.size(), kHeader) != 0) return 0;
  const size_t eol = bytes.find('\n');
  if (eol == std::string::npos) return 0;
  try {
    const int k = std::stoi(bytes.substr(kHeader.size(), eol - kHeader.size()));
    return k >= 2 && k <= kMaxMembers ? k : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace tessel::cost
