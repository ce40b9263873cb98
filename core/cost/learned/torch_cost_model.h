// What the LibTorch cost models share: the records they learn from, grouped
// by task; training with a pairwise rank loss (plus a regression of
// normalised throughput) on mini-batches of a few tasks each (scores are only
// compared within a task); batched
// prediction without gradients; save() / load() of the parameters.
// Includes LibTorch: only for the files of this folder.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/optim/adam.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "cost/learned/feature_scaler.h"

namespace tessel::cost::learned {

struct TrainOptions {
  int onlineSteps = 24;  // mini-batches per update() during a tuning
  // A model loaded from a file (pre-trained) holds its online updates until
  // it has kept this many records: trained on a few dozen programs of one or
  // two tasks, it forgets what thousands taught it (docs/cost-models.md).
  size_t loadedWarmupRecords = 512;
  int tasksPerBatch = 4;       // tasks drawn for one mini-batch (their losses averaged)
  int batchPrograms = 48;      // programs drawn from each of them
  double learningRate = 1e-3;  // Adam
  double weightDecay = 1e-5;
  uint64_t seed = 1;
  // The weight of the regression of normalised throughput beside the rank
  // loss (0: rank loss alone). See docs/cost-models.md for the figures.
  double regressionWeight = 1.0;
  // pretrain() lets the learning rate fall along a cosine to a hundredth of
  // learningRate over its steps; online updates keep the full rate.
  bool cosineDecay = true;
  // pretrain() of a loaded (pre-trained) model trains the store-row encoder,
  // the parameters under `encoder.`, at this fraction of the learning rate
  // and the rest at the full rate. Fine-tuned at the full rate on a few
  // hundred programs of another target, atformer's encoder sends some slow
  // programs' summed codes far off before its head catches up, and the
  // model's picks collapse; at 0.1 they do not (docs/cost-models.md,
  // "Transfer to another target"). 1: one rate for all. Online updates
  // (updateFeatures) always train everything at the full rate.
  double fineTuneEncoderRate = 1.0;
};

// A network that scores programs: it turns their features into tensors,
// standardised by its scaler.
class ScoringNet : public torch::nn::Module {
 public:
  ScoringNet() : scaler_(register_module("scaler", FeatureScaler())) {}
  // Scores of valid programs, shape [n]; higher = predicted faster.
  virtual torch::Tensor score(const std::vector<const ProgramFeatureSet*>& programs) = 0;
  FeatureScaler& scaler() { return scaler_; }

 protected:
  // The sum over each program's store rows of their codes under `encoder`
  // (makeStoreEncoder): Ansor's and TenSet's pack-sum, [n, width].
  torch::Tensor encodedStoreSum(torch::nn::Sequential& encoder, const std::vector<const ProgramFeatureSet*>& programs);

  FeatureScaler scaler_;
};

class TorchCostModel : public CostModel {
 public:
  TorchCostModel(std::string name, FeatureKinds kinds, std::shared_ptr<ScoringNet> net, TrainOptions options);

  std::string name() const override { return name_; }
  FeatureKinds features() const override { return kinds_; }
  // Keeps the records and trains options.onlineSteps mini-batches on all
  // kept so far (online fine-tuning); a loaded model only once it has kept
  // options.loadedWarmupRecords.
  void updateFeatures(const std::vector<TaskRecords>& records) override;
  // Keeps the records and trains `epochs` passes over all kept so far.
  void pretrain(const std::vector<TaskRecords>& records, int epochs) override;
  std::vector<double> predictFeatures(const std::string& taskKey,
                                      const std::vector<ProgramFeatureSet>& programs) override;
  size_t trainedOn() const override { return trained_; }
  bool pretrained() const override { return loaded_; }
  std::string save() const override;
  void load(const std::string& bytes) override;

  // Mean loss of the last training pass (NaN before any).
  double lastLoss() const { return lastLoss_; }
  // The network, to read its parameters.
  const ScoringNet& network() const { return *net_; }

 private:
  struct TaskData {
    std::string key;
    std::vector<ProgramFeatureSet> programs;  // valid ones
    std::vector<double> costs;                // seconds; +inf: failed
    double best = 0;                          // seconds: the fastest
  };
  void keep(const std::vector<TaskRecords>& records);
  // `decay`: the learning rate falls along a cosine over the steps.
  // `encoderFactor`: the store-row encoder's rate relative to the rest's
  // (once splitEncoderRate() has given it a parameter group of its own).
  void trainSteps(int steps, bool decay = false, double encoderFactor = 1.0);
  void setLearningRate(double rate, double encoderFactor = 1.0);
  torch::optim::AdamOptions adamOptions() const;  // Adam at options_' rate and weight decay
  // Gives the store-row encoder (the parameters under `encoder.`) a
  // parameter group of its own, group 1, in a fresh Adam (its moments start
  // afresh; a model just loaded has none).
  void splitEncoderRate();
  // The loss (rank + regression) of one task's programs `pick`; undefined when no two differ.
  torch::Tensor rankLoss(const TaskData& task, const std::vector<size_t>& pick);

  std::string name_;
  FeatureKinds kinds_;
  std::shared_ptr<ScoringNet> net_;
  TrainOptions options_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
  bool encoderGroup_ = false;  // optimizer_'s group 1 is the store-row encoder
  std::vector<TaskData> tasks_;
  std::mt19937_64 rng_;
  size_t trained_ = 0;
  bool loaded_ = false;  // load() gave it its parameters
  double lastLoss_;
};

// The registry's learned models (learned_models.cpp): the options each
// trains with for `seed` (atformer: the gentler encoder), and the model of a
// name ("mlp", "gat", "atformer"; nullptr for another) with its network's
// initial weights drawn from options.seed.
TrainOptions defaultTrainOptions(const std::string& name, uint64_t seed);
std::unique_ptr<TorchCostModel> makeTorchCostModel(const std::string& name, const TrainOptions& options);

// The networks, in their own files.
std::shared_ptr<ScoringNet> makeMlpNet();
std::shared_ptr<ScoringNet> makeGatNet();
std::shared_ptr<ScoringNet> makeAtformerNet();

// Helpers for the networks: the store rows of the programs as one [rows,
// kNumFeatures] tensor (as extracted: scale them) with each row's program index.
struct StoreRows {
  torch::Tensor rows;     // [R, kNumFeatures] float
  torch::Tensor program;  // [R] int64
};
StoreRows storeRows(const std::vector<const ProgramFeatureSet*>& programs);
// Sum over each program's rows: [n, columns].
torch::Tensor sumByProgram(const torch::Tensor& values, const torch::Tensor& program, int64_t n);
// TenSet's store-row encoder: a perceptron kNumFeatures-width-width (ReLU).
torch::nn::Sequential makeStoreEncoder(int64_t width);

}  // namespace tessel::cost::learned
