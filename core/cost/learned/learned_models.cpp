// The learned models' entries in the cost-model registry.
#include "cost/learned/learned_models.h"

#include <torch/utils.h>

#include "cost/cost_model_registry.h"
#include "cost/learned/torch_cost_model.h"

namespace tessel::cost {

void registerLearnedCostModels() {
  using learned::TorchCostModel;
  auto options = [](uint64_t seed) {
    learned::TrainOptions o;
    o.seed = seed;
    torch::manual_seed(seed);  // the networks' initial weights
    return o;
  };
  registerCostModel({"mlp", "TenSet's MLP on Ansor's per-store features, rank loss (LibTorch)",
                     [options](uint64_t seed) -> std::unique_ptr<CostModel> {
                       auto o = options(seed);
                       return std::make_unique<TorchCostModel>("mlp", kStoreRows, learned::makeMlpNet(), o);
                     },
                     true, ""});
  registerCostModel({"gat", "GTuner's graph attention network on the program graph and store features (LibTorch)",
                     [options](uint64_t seed) -> std::unique_ptr<CostModel> {
                       auto o = options(seed);
                       return std::make_unique<TorchCostModel>("gat", kStoreRows | kGraph, learned::makeGatNet(), o);
                     },
                     true, ""});
  registerCostModel({"atformer", "ATFormer: attention over store and loop tokens, rank loss (LibTorch)",
                     [options](uint64_t seed) -> std::unique_ptr<CostModel> {
                       auto o = options(seed);
                       o.fineTuneEncoderRate = 0.1;  // docs/cost-models.md, "Transfer to another target"
                       return std::make_unique<TorchCostModel>("atformer", kStoreRows | kLoopTokens,
                                                               learned::makeAtformerNet(), o);
                     },
                     true, ""});
}

}  // namespace tessel::cost
