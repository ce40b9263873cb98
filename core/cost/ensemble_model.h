// An ensemble of one cost model: K copies trained from K seeds (seed, seed +
// 1, ...) on the same records, whose scores are standardised per prediction
// call (each copy's scores have a scale of their own) and averaged. The
// learned models' top-1 moves by up to 0.2 with the seed alone (see
// docs/cost-models.md): an average of several is steadier than any one.
// Saved as "tessel-ensemble K" then each copy's bytes; a cost-model file
// names the copies' model, and loadCostModelFile makes the ensemble back.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cost/cost_model.h"

namespace tessel::cost {

// K copies of the registry's model `name`; std::invalid_argument for K
// outside 2..16 (and as makeCostModel for the name).
std::unique_ptr<CostModel> makeEnsemble(const std::string& name, int members, uint64_t seed);
// The copies an ensemble's saved bytes hold, or 0 when they are not one's.
int ensembleMembers(const std::string& bytes);

}  // namespace tessel::cost
