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

// The same as bytes (a knowledge base carries a cost-model file inside):
// what saveCostModelFile writes, and the model they hold, with errors
// naming `what`.
std::string costModelFileBytes(const CostModel& model);
std::unique_ptr<CostModel> loadCostModelBytes(const std::string& bytes, const std::string& what, uint64_t seed = 1);
// The name of the model the bytes hold ("" if they are not a cost-model file's).
std::string costModelNameOf(const std::string& bytes);

// The format of the learned models' files (cost/learned/), which changes
// with their features: a knowledge base records the one it was trained with.
inline constexpr int kLearnedModelFormat = 6;

}  // namespace tessel::cost
