// A trained cost model in a file (`tessel costmodel train --out`,
// `--cost-model-file`): one line naming the model, then what its save()
// wrote, so the file says which model reads it.
#pragma once

#include <memory>
#include <string>

#include "cost/cost_model.h"

namespace tessel::cost {

// std::runtime_error when the model has nothing to save or the file cannot be written.
void saveCostModelFile(const std::string& path, const CostModel& model);
// The model named in the file, made by the registry and loaded;
// std::runtime_error naming the file for anything else.
std::unique_ptr<CostModel> loadCostModelFile(const std::string& path, uint64_t seed = 1);
// Whether the file begins like a cost-model file.
bool isCostModelFile(const std::string& path);

}  // namespace tessel::cost
