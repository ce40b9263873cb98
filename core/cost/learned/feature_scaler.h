// Standardises what the networks read, column by column: each store-row,
// graph-node and loop-token feature minus its mean, over its deviation, as
// measured on the programs the model first trained on. The features span
// different ranges (flags of 0/1 beside log-scaled byte counts near 30), and
// a network trains far better on standardised inputs (docs/cost-models.md
// has the figures). The statistics are buffers: saved and loaded with the
// network, so a pre-trained model keeps the scale it learned with.
#pragma once

#include <torch/nn/module.h>

#include <vector>

#include "cost/program_features.h"

namespace tessel::cost::learned {

class FeatureScalerImpl : public torch::nn::Module {
 public:
  FeatureScalerImpl();
  bool fitted() const;
  // Fits the statistics to these programs' features (all kinds present).
  void fit(const std::vector<const ProgramFeatureSet*>& programs);
  // x [..., columns] standardised; identity before fit().
  torch::Tensor stores(const torch::Tensor& x) const { return scale(x, storeMean_, storeDeviation_); }
  torch::Tensor nodes(const torch::Tensor& x) const { return scale(x, nodeMean_, nodeDeviation_); }
  torch::Tensor tokens(const torch::Tensor& x) const { return scale(x, tokenMean_, tokenDeviation_); }

 private:
  static torch::Tensor scale(const torch::Tensor& x, const torch::Tensor& mean, const torch::Tensor& deviation) {
    return (x - mean) / deviation;
  }
  torch::Tensor storeMean_, storeDeviation_, nodeMean_, nodeDeviation_, tokenMean_, tokenDeviation_;
  torch::Tensor fitted_;  // 0 or 1: a buffer, so that it travels with the parameters
};
TORCH_MODULE(FeatureScaler);

}  // namespace tessel::cost::learned
