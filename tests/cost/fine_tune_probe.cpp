#include "fine_tune_probe.h"

#include <torch/nn/module.h>

#include <cmath>
#include <stdexcept>

#include "cost/learned/torch_cost_model.h"

namespace tessel::testing {

namespace {

using Parameters = std::vector<std::pair<std::string, torch::Tensor>>;

Parameters copyOf(const torch::nn::Module& net) {
  Parameters out;
  for (const auto& p : net.named_parameters())
    out.emplace_back(p.key(), p.value().detach().clone());
  return out;
}

// ||after - before|| / ||before|| over the parameters whose name starts (or
// does not start) with "encoder.".
double drift(const Parameters& before, const Parameters& after, bool encoder) {
  double moved = 0, size = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    if (before[i].first.starts_with("encoder.") != encoder) continue;
    moved += (after[i].second - before[i].second).square().sum().item<double>();
    size += before[i].second.square().sum().item<double>();
  }
  return size > 0 ? std::sqrt(moved / size) : 0;
}

}  // namespace

FineTuneProbe probeFineTune(const std::string& model, const std::string& saved, const cost::TaskRecords& records,
                            int epochs, double encoderRate, const std::vector<cost::ProgramFeatureSet>& test) {
  using namespace cost::learned;
  TrainOptions options = defaultTrainOptions(model, 1);
  options.fineTuneEncoderRate = encoderRate;
  const std::unique_ptr<TorchCostModel> made = makeTorchCostModel(model, options);
  if (!made) throw std::invalid_argument("probeFineTune: no model " + model);
  TorchCostModel& m = *made;
  const torch::nn::Module& net = m.network();
  if (!saved.empty()) m.load(saved);
  const Parameters before = copyOf(net);
  m.pretrain({records}, epochs);
  const Parameters after = copyOf(net);
  FineTuneProbe probe{drift(before, after, true), drift(before, after, false),
                      m.predictFeatures(records.taskKey, test)};
  // A loaded model keeps its parameters until it has kept
  // loadedWarmupRecords: only the last of these updates trains.
  while (m.trainedOn() <= options.loadedWarmupRecords)
    m.updateFeatures({records});
  const Parameters online = copyOf(net);
  probe.onlineEncoderDrift = drift(after, online, true);
  probe.onlineRestDrift = drift(after, online, false);
  return probe;
}

}  // namespace tessel::testing
