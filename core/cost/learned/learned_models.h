// The learned cost models on LibTorch: "mlp" (TenSet), "gat" (GTuner) and
// "atformer" (ATFormer). This header has no LibTorch in it: the library is
// walled off like core/reference/, and a build without LibTorch lists the
// models as unavailable, saying why.
#pragma once

namespace tessel::cost {

// Adds mlp, gat and atformer to the cost-model registry
// (cost/cost_model_registry.h). Call once at start-up, before any tuning.
void registerLearnedCostModels();

}  // namespace tessel::cost
