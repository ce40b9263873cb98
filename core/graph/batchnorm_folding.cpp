// foldBatchNorm(): Conv -> BatchNormalization (inference form) becomes one
// Conv with rescaled weights and a shifted bias:
//   s = scale / sqrt(var + epsilon)
//   W'[m, ...] = W[m, ...] * s[m]
//   b'[m] = (b[m] - mean[m]) * s[m] + B[m]
// computed in double and rounded once to float.
#include <cmath>
#include <set>

#include "graph/graph.h"

namespace tessel::graph {

namespace {

// Folds BN node `bi` into its producing Conv if possible.
bool foldOne(Graph& g, size_t bi) {
  const Node& bn = g.nodes[bi];
  if (bn.op != "BatchNormalization" || bn.inputs.size() < 5 || bn.attrInt("training_mode", 0)) return false;
  for (size_t o = 1; o < bn.outputs.size(); ++o)
    if (!bn.outputs[o].empty()) return false;
  for (size_t i = 1; i < 5; ++i)
    if (!g.isInitializer(bn.inputs[i])) return false;
  int ci = g.producer(bn.inputs[0]);
  if (ci < 0) return false;
  Node& conv = g.nodes[size_t(ci)];
  if (conv.op != "Conv" || g.usedElsewhere(conv.outputs[0], bi) || !g.isInitializer(conv.inputs.at(1))) return false;
  bool hasBias = conv.inputs.size() > 2 && !conv.inputs[2].empty();
  if (hasBias && !g.isInitializer(conv.inputs[2])) return false;
  const ValueInfo& wInfo = g.initializers.at(conv.inputs[1]).info;
  if (wInfo.dtype != DType::Float32 || wInfo.shape.empty() ||
      wInfo.shape[0] != g.initializers.at(bn.inputs[1]).info.numElements())
    return false;

  auto param = [&](size_t i) -> const std::vector<float>& {
    Initializer& init = g.initializers.at(bn.inputs[i]);
    init.materialise();
    return init.data;
  };
  const std::vector<float>&gamma = param(1), &beta = param(2), &mean = param(3), &var = param(4);
  double eps = bn.attrFloat("epsilon", 1e-5);
  size_t channels = gamma.size();

  // Weights: in place when only this conv reads them, else a copy.
  std::string wName = conv.inputs[1];
  if (g.usedElsewhere(wName, size_t(ci))) {
    Initializer copy = g.initializers.at(wName);
    copy.materialise();
    wName = uniqueInitializerName(g, conv.name + "_weight_bn_folded");
    copy.info.name = wName;
    g.initializers[wName] = std::move(copy);
    conv.inputs[1] = wName;
  }
  Initializer& w = g.initializers.at(wName);
  w.materialise();
  size_t perChannel = w.data.size() / channels;

  std::vector<double> s(channels);
  for (size_t m = 0; m < channels; ++m)
    s[m] = double(gamma[m]) / std::sqrt(double(var[m]) + eps);
  for (size_t m = 0; m < channels; ++m)
    for (size_t k = 0; k < perChannel; ++k)
      w.data[m * perChannel + k] = float(double(w.data[m * perChannel + k]) * s[m]);

  std::vector<float> oldBias(channels, 0.0f);
  if (hasBias) {
    Initializer& b = g.initializers.at(conv.inputs[2]);
    b.materialise();
    oldBias = b.data;
  }
  std::string bName = hasBias && !g.usedElsewhere(conv.inputs[2], size_t(ci))
                          ? conv.inputs[2]
                          : uniqueInitializerName(g, conv.name + "_bias_bn_folded");
  Initializer bias;
  bias.info.name = bName;
  bias.info.shape = {int64_t(channels)};
  bias.info.dtype = DType::Float32;
  bias.data.resize(channels);
  for (size_t m = 0; m < channels; ++m)
    bias.data[m] = float((double(oldBias[m]) - double(mean[m])) * s[m] + double(beta[m]));
  g.initializers[bName] = std::move(bias);
  conv.inputs.resize(3);
  conv.inputs[2] = bName;

  // The conv now writes the BN's output; the BN and its unused parameters go.
  std::string convOut = conv.outputs[0];
  conv.outputs[0] = bn.outputs[0];
  std::vector<std::string> bnParams(bn.inputs.begin() + 1, bn.inputs.begin() + 5);
  g.nodes.erase(g.nodes.begin() + std::ptrdiff_t(bi));
  g.values.erase(convOut);
  for (const std::string& p : bnParams)
    if (g.consumers(p).empty()) g.initializers.erase(p);
  return true;
}

}  // namespace

void foldBatchNorm(Graph& g) {
  for (size_t i = 0; i < g.nodes.size();)
    if (!foldOne(g, i)) ++i;
  inferShapes(g);
}

}  // namespace tessel::graph
