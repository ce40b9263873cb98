#include "cost/learned/feature_scaler.h"

#include <cmath>

#include "cost/features.h"

namespace tessel::cost::learned {

namespace {

// Mean and deviation of each column over rows of `columns` values; a column
// that does not vary keeps deviation 1 (it is only shifted).
struct ColumnStats {
  explicit ColumnStats(size_t columns) : sum(columns, 0.0), squares(columns, 0.0) {}
  void add(const float* row) {
    for (size_t c = 0; c < sum.size(); ++c) {
      sum[c] += row[c];
      squares[c] += double(row[c]) * row[c];
    }
    ++rows;
  }
  void store(torch::Tensor& mean, torch::Tensor& deviation) const {
    const size_t n = sum.size();
    std::vector<float> m(n, 0.0f), d(n, 1.0f);
    for (size_t c = 0; rows > 0 && c < n; ++c) {
      const double mu = sum[c] / double(rows);
      const double var = squares[c] / double(rows) - mu * mu;
      m[c] = float(mu);
      d[c] = var > 1e-12 ? float(std::sqrt(var)) : 1.0f;
    }
    mean.copy_(torch::tensor(m));
    deviation.copy_(torch::tensor(d));
  }
  std::vector<double> sum, squares;
  size_t rows = 0;
};

}  // namespace

FeatureScalerImpl::FeatureScalerImpl()
    : storeMean_(register_buffer("store_mean", torch::zeros({int64_t(kNumFeatures)}))),
      storeDeviation_(register_buffer("store_deviation", torch::ones({int64_t(kNumFeatures)}))),
      nodeMean_(register_buffer("node_mean", torch::zeros({int64_t(kGraphNodeFeatures)}))),
      nodeDeviation_(register_buffer("node_deviation", torch::ones({int64_t(kGraphNodeFeatures)}))),
      tokenMean_(register_buffer("token_mean", torch::zeros({int64_t(kLoopTokenFeatures)}))),
      tokenDeviation_(register_buffer("token_deviation", torch::ones({int64_t(kLoopTokenFeatures)}))),
      fitted_(register_buffer("fitted", torch::zeros({1}))) {}

bool FeatureScalerImpl::fitted() const {
  return fitted_.item<float>() > 0;
}

void FeatureScalerImpl::fit(const std::vector<const ProgramFeatureSet*>& programs) {
  ColumnStats stores(kNumFeatures), nodes(kGraphNodeFeatures), tokens(kLoopTokenFeatures);
  for (const ProgramFeatureSet* p : programs) {
    for (const auto& row : p->stores)
      stores.add(row.data());
    for (size_t i = 0; i < p->graph.numNodes(); ++i)
      nodes.add(p->graph.row(i));
    for (size_t i = 0; i < p->loops.size(); ++i)
      tokens.add(p->loops.values.data() + i * kLoopTokenFeatures);
  }
  torch::NoGradGuard noGrad;
  stores.store(storeMean_, storeDeviation_);
  nodes.store(nodeMean_, nodeDeviation_);
  tokens.store(tokenMean_, tokenDeviation_);
  fitted_.fill_(1.0f);
}

}  // namespace tessel::cost::learned
