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

void saveCostModelFile(const std::string& path, const CostModel& model) {
  const std::string blob = model.save();
  if (blob.empty()) throw std::runtime_error("the " + model.name() + " cost model has nothing to save (untrained?)");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << kMagic << model.name() << '\n';
  out.write(blob.data(), std::streamsize(blob.size()));
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
}

bool isCostModelFile(const std::string& path) {
  if (!support::notARegularFile(path).empty()) return false;  // a FIFO would block the open
  std::ifstream in(path, std::ios::binary);
  std::string head(kMagic.size(), '\0');
  return in.read(head.data(), std::streamsize(head.size())) && head == kMagic;
}

std::unique_ptr<CostModel> loadCostModelFile(const std::string& path, uint64_t seed) {
  const std::string bytes = support::readRegularFile(path, "cost model file", support::defaultMaxInputBytes());
  const size_t eol = bytes.find('\n');
  const std::string first = bytes.substr(0, eol);
  if (eol == std::string::npos || first.compare(0, kMagic.size(), kMagic) != 0)
    throw std::runtime_error(path + " is not a Tessel cost model file");
  const std::string name = first.substr(kMagic.size());
  const std::string blob = bytes.substr(eol + 1);
  std::unique_ptr<CostModel> model;
  try {
    const int members = ensembleMembers(blob);
    model = members ? makeEnsemble(name, members, seed) : makeCostModel(name, seed);
    model->load(blob);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  return model;
}

}  // namespace tessel::cost
