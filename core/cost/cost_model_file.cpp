#include "cost/cost_model_file.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

#include "cost/cost_model_registry.h"
#include "cost/ensemble_model.h"
#include "support/input_file.h"

namespace tessel::cost {

namespace {

const std::string kMagic = "tessel-cost-model-file 1 ";

}  // namespace

std::string costModelFileBytes(const CostModel& model) {
  const std::string blob = model.save();
  if (blob.empty()) throw std::runtime_error("the " + model.name() + " cost model has nothing to save (untrained?)");
  return kMagic + model.name() + '\n' + blob;
}

void saveCostModelFile(const std::string& path, const CostModel& model) {
  const std::string bytes = costModelFileBytes(model);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
}

bool isCostModelFile(const std::string& path) {
  if (!support::notARegularFile(path).empty()) return false;  // a FIFO would block the open
  std::ifstream in(path, std::ios::binary);
  std::string head(kMagic.size(), '\0');
  return in.read(head.data(), std::streamsize(head.size())) && head == kMagic;
}

std::string costModelNameOf(const std::string& bytes) {
  const size_t eol = bytes.find('\n');
  if (eol == std::string::npos || bytes.compare(0, kMagic.size(), kMagic) != 0) return "";
  return bytes.substr(kMagic.size(), eol - kMagic.size());
}

std::unique_ptr<CostModel> loadCostModelBytes(const std::string& bytes, const std::string& what, uint64_t seed) {
  const std::string name = costModelNameOf(bytes);
  if (name.empty()) throw std::runtime_error(what + " is not a Tessel cost model file");
  const std::string blob = bytes.substr(bytes.find('\n') + 1);
  std::unique_ptr<CostModel> model;
  try {
    const int members = ensembleMembers(blob);
    model = members ? makeEnsemble(name, members, seed) : makeCostModel(name, seed);
    model->load(blob);
  } catch (const std::exception& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
  return model;
}

std::unique_ptr<CostModel> loadCostModelFile(const std::string& path, uint64_t seed) {
  return loadCostModelBytes(support::readRegularFile(path, "cost model file", support::defaultMaxInputBytes()), path,
                            seed);
}

}  // namespace tessel::cost
