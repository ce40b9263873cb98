// Without LibTorch: the learned models are listed, unavailable, with the reason.
#include "cost/cost_model_registry.h"
#include "cost/learned/learned_models.h"

namespace tessel::cost {

void registerLearnedCostModels() {
  const std::string why = "this build of Tessel has no LibTorch (libtorch-dev)";
  for (const char* name : {"mlp", "gat", "atformer"})
    registerCostModel({name, "a learned model on LibTorch", nullptr, false, why});
}

}  // namespace tessel::cost
