// The learned models' entries in the cost-model registry, and how each is
// made: its network, the features it reads and its training options.
#include "cost/learned/learned_models.h"

#include <torch/utils.h>

#include "cost/cost_model_registry.h"
#include "cost/learned/torch_cost_model.h"

namespace tessel::cost {

namespace learned {

TrainOptions defaultTrainOptions(const std::string& name, uint64_t seed) {
  TrainOptions o;
  o.seed = seed;
  if (name == "atformer") o.fineTuneEncoderRate = 0.1;  // docs/cost-models.md, "Transfer to another target"
  return o;
}

std::unique_ptr<TorchCostModel> makeTorchCostModel(const std::string& name, const TrainOptions& options) {
  torch::manual_seed(options.seed);  // the network's initial weights
  if (name == "mlp") return std::make_unique<TorchCostModel>("mlp", kStoreRows, makeMlpNet(), options);
  if (name == "gat") return std::make_unique<TorchCostModel>("gat", kStoreRows | kGraph, makeGatNet(), options);
  if (name == "atformer")
    return std::make_unique<TorchCostModel>("atformer", kStoreRows | kLoopTokens, makeAtformerNet(), options);
  return nullptr;
}

}  // namespace learned

void registerLearnedCostModels() {
  const auto entry = [](const char* name, const char* description) {
    registerCostModel({name, description,
                       [name](uint64_t seed) -> std::unique_ptr<CostModel> {
                         return learned::makeTorchCostModel(name, learned::defaultTrainOptions(name, seed));
                       },
                       true, ""});
  };
  entry("mlp", "TenSet's MLP on Ansor's per-store features, rank loss (LibTorch)");
  entry("gat", "GTuner's graph attention network on the program graph and store features (LibTorch)");
  entry("atformer", "ATFormer: attention over store and loop tokens, rank loss (LibTorch)");
}

}  // namespace tessel::cost
