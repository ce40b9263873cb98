#include "cost/learned/torch_cost_model.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>
#include <stdexcept>

#include "cost/cost_model_file.h"
#include "cost/features.h"

namespace tessel::cost::learned {

namespace {

// What save() writes first: the format and the model's name. load() refuses
// another model's bytes with this line, and an older format's: 2 had the
// feature scaler's statistics among the buffers, 3 has gat's store-row
// encoder and atformer's summed stores (an older atformer's parameters would
// load and score otherwise), 4 the register-tile features (168 per store row),
// 5 their loads per FMA and reduction steps (170), 6 atformer's store-row
// encoder beside its attention (cost/cost_model_file.h names the current one
// for the knowledge bases that record it).
constexpr int kFormat = kLearnedModelFormat;
const char* const kOlderFormats[] = {"",
                                     "without feature scaling",
                                     "before gat encoded and atformer summed the stores",
                                     "with 164 features per store, before the register-tile ones",
                                     "with 168 features per store, before the register tiles' loads per FMA",
                                     "before atformer encoded its store rows beside the attention"};

std::string header(const std::string& name, int format = kFormat) {
  return "tessel-cost-model " + std::to_string(format) + " " + name + "\n";
}

constexpr size_t kPredictChunk = 1024;  // programs per forward pass when predicting

}  // namespace

TorchCostModel::TorchCostModel(std::string name, FeatureKinds kinds, std::shared_ptr<ScoringNet> net,
                               TrainOptions options)
    : name_(std::move(name)),
      kinds_(kinds),
      net_(std::move(net)),
      options_(options),
      rng_(options.seed),
      lastLoss_(std::numeric_limits<double>::quiet_NaN()) {
  optimizer_ = std::make_unique<torch::optim::Adam>(net_->parameters(), adamOptions());
}

torch::optim::AdamOptions TorchCostModel::adamOptions() const {
  return torch::optim::AdamOptions(options_.learningRate).weight_decay(options_.weightDecay);
}

void TorchCostModel::keep(const std::vector<TaskRecords>& records) {
  checkRecordSizes(name_, records);
  for (const TaskRecords& r : records) {
    trained_ += r.programs.size();
    auto it = std::find_if(tasks_.begin(), tasks_.end(), [&](const TaskData& t) { return t.key == r.taskKey; });
    if (it == tasks_.end()) it = tasks_.insert(tasks_.end(), TaskData{r.taskKey, {}, {}});
    for (size_t i = 0; i < r.programs.size(); ++i) {
      if (!r.programs[i].valid) continue;  // nothing to learn from
      const double c = r.costs[i];
      it->programs.push_back(r.programs[i]);
      it->costs.push_back(std::isfinite(c) && c > 0 ? c : std::numeric_limits<double>::infinity());
    }
    it->best = *std::min_element(it->costs.begin(), it->costs.end());
  }
}

void TorchCostModel::updateFeatures(const std::vector<TaskRecords>& records) {
  keep(records);
  if (loaded_ && trained_ < options_.loadedWarmupRecords) return;
  trainSteps(options_.onlineSteps);
}

void TorchCostModel::pretrain(const std::vector<TaskRecords>& records, int epochs) {
  keep(records);
  const bool gentleEncoder = loaded_ && options_.fineTuneEncoderRate != 1.0;
  if (gentleEncoder && !encoderGroup_) splitEncoderRate();
  size_t programs = 0;
  for (const TaskData& t : tasks_)
    programs += t.programs.size();
  const size_t perStep = size_t(options_.batchPrograms) * size_t(options_.tasksPerBatch);
  trainSteps(int((programs + perStep - 1) / perStep) * std::max(epochs, 0), options_.cosineDecay,
             gentleEncoder ? options_.fineTuneEncoderRate : 1.0);
}

// The pairwise logistic loss over every pair of the task's picked programs
// whose costs differ (a failed program is slower than all), plus
// options_.regressionWeight x Ansor's regression: the squared error of the
// score against the normalised throughput (the task's best cost / the cost,
// 0 for a failed program), weighted by that throughput. The rank term orders
// the programs; the regression ties the scores to the throughput's scale and
// weighs the fast programs most (where top-1 is decided).
torch::Tensor TorchCostModel::rankLoss(const TaskData& task, const std::vector<size_t>& pick) {
  std::vector<const ProgramFeatureSet*> batch;
  std::vector<double> costs;
  for (size_t i : pick) {
    batch.push_back(&task.programs[i]);
    costs.push_back(task.costs[i]);
  }
  const int64_t n = int64_t(batch.size());
  std::vector<float> better(size_t(n * n), 0.0f);  // [i][j] = 1 where i is faster than j
  std::vector<float> throughput(batch.size());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j)
      better[size_t(i * n + j)] = costs[size_t(i)] < costs[size_t(j)] ? 1.0f : 0.0f;
    throughput[size_t(i)] = std::isfinite(costs[size_t(i)]) ? float(task.best / costs[size_t(i)]) : 0.0f;
  }
  const torch::Tensor mask = torch::from_blob(better.data(), {n, n}, torch::kFloat32).clone();
  const float pairs = mask.sum().item<float>();
  if (pairs == 0) return {};
  const torch::Tensor s = net_->score(batch);
  const torch::Tensor diff = s.unsqueeze(1) - s.unsqueeze(0);  // s_i - s_j
  const torch::Tensor rank = (torch::nn::functional::softplus(-diff) * mask).sum() / pairs;
  if (options_.regressionWeight <= 0) return rank;
  const torch::Tensor y = torch::from_blob(throughput.data(), {n}, torch::kFloat32).clone();
  return rank + options_.regressionWeight * (y * (s - y).square()).mean();
}

// Each step averages the rank losses of several tasks drawn by their
// program counts: one task's gradient alone pulls the shared network about.
void TorchCostModel::trainSteps(int steps, bool decay, double encoderFactor) {
  std::vector<size_t> eligible;  // tasks with two programs to compare
  std::vector<double> weight;
  for (size_t t = 0; t < tasks_.size(); ++t)
    if (tasks_[t].programs.size() >= 2) {
      eligible.push_back(t);
      weight.push_back(double(tasks_[t].programs.size()));
    }
  if (eligible.empty() || steps <= 0) return;
  if (!net_->scaler()->fitted()) {
    std::vector<const ProgramFeatureSet*> all;
    for (const TaskData& t : tasks_)
      for (const ProgramFeatureSet& p : t.programs)
        all.push_back(&p);
    net_->scaler()->fit(all);
  }
  net_->train();
  setLearningRate(options_.learningRate, encoderFactor);  // each call sets its own: online updates at the full rate
  std::discrete_distribution<size_t> taskOf(weight.begin(), weight.end());
  double sum = 0;
  int counted = 0;
  std::vector<size_t> order, pick;
  for (int step = 0; step < steps; ++step) {
    if (decay) {
      const double progress = double(step) / double(steps), floor = 0.01;
      setLearningRate(options_.learningRate * (floor + (1 - floor) * 0.5 * (1 + std::cos(std::numbers::pi * progress))),
                      encoderFactor);
    }
    torch::Tensor loss;
    int parts = 0;
    for (int k = 0; k < options_.tasksPerBatch; ++k) {
      const TaskData& task = tasks_[eligible[taskOf(rng_)]];
      order.resize(task.programs.size());
      for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
      const size_t n = std::min(order.size(), size_t(options_.batchPrograms));
      // A partial Fisher-Yates shuffle: the first n of a random order.
      for (size_t i = 0; i < n; ++i)
        std::swap(order[i], order[i + rng_() % (order.size() - i)]);
      pick.assign(order.begin(), order.begin() + long(n));
      const torch::Tensor l = rankLoss(task, pick);
      if (!l.defined()) continue;
      loss = parts == 0 ? l : loss + l;
      ++parts;
    }
    if (parts == 0) continue;
    loss = loss / double(parts);
    optimizer_->zero_grad();
    loss.backward();
    optimizer_->step();
    sum += loss.item<double>();
    ++counted;
  }
  if (counted) lastLoss_ = sum / counted;
}

void TorchCostModel::setLearningRate(double rate, double encoderFactor) {
  auto& groups = optimizer_->param_groups();
  for (size_t g = 0; g < groups.size(); ++g)
    static_cast<torch::optim::AdamOptions&>(groups[g].options())
        .lr(encoderGroup_ && g == 1 ? rate * encoderFactor : rate);
}

void TorchCostModel::splitEncoderRate() {
  std::vector<torch::Tensor> encoder, rest;
  for (const auto& p : net_->named_parameters())
    (p.key().starts_with("encoder.") ? encoder : rest).push_back(p.value());
  if (encoder.empty()) return;
  std::vector<torch::optim::OptimizerParamGroup> groups;  // their rates are set by trainSteps()
  groups.emplace_back(rest, std::make_unique<torch::optim::AdamOptions>(adamOptions()));
  groups.emplace_back(encoder, std::make_unique<torch::optim::AdamOptions>(adamOptions()));
  optimizer_ = std::make_unique<torch::optim::Adam>(std::move(groups));
  encoderGroup_ = true;
}

std::vector<double> TorchCostModel::predictFeatures(const std::string& /*taskKey*/,
                                                    const std::vector<ProgramFeatureSet>& programs) {
  std::vector<double> scores(programs.size(), kInvalidScore);
  std::vector<size_t> valid;
  for (size_t i = 0; i < programs.size(); ++i)
    if (programs[i].valid) valid.push_back(i);
  torch::NoGradGuard noGrad;
  net_->eval();
  for (size_t begin = 0; begin < valid.size(); begin += kPredictChunk) {
    const size_t end = std::min(valid.size(), begin + kPredictChunk);
    std::vector<const ProgramFeatureSet*> batch;
    for (size_t k = begin; k < end; ++k)
      batch.push_back(&programs[valid[k]]);
    const torch::Tensor s = net_->score(batch).to(torch::kFloat64).contiguous();
    const double* p = s.data_ptr<double>();
    for (size_t k = begin; k < end; ++k)
      scores[valid[k]] = p[k - begin];
  }
  return scores;
}

std::string TorchCostModel::save() const {
  torch::serialize::OutputArchive archive;
  net_->save(archive);
  std::ostringstream out;
  out << header(name_);
  archive.save_to(out);
  return out.str();
}

void TorchCostModel::load(const std::string& bytes) {
  const std::string head = header(name_);
  if (bytes.compare(0, head.size(), head) != 0) {
    const std::string first = bytes.substr(0, std::min(bytes.find('\n'), size_t(60)));
    for (int format = 1; format < kFormat; ++format) {
      const std::string older = header(name_, format);
      if (bytes.compare(0, older.size(), older) == 0)
        throw std::runtime_error("this '" + name_ + "' cost model was saved by an older Tessel (format " +
                                 std::to_string(format) + ", " + kOlderFormats[format] + "); train it again");
    }
    throw std::runtime_error("not a saved '" + name_ + "' cost model (it begins \"" + first + "\")");
  }
  std::istringstream in(bytes.substr(head.size()));
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(in);
    net_->load(archive);
    loaded_ = true;
  } catch (const c10::Error& e) {
    throw std::runtime_error("the saved '" + name_ + "' cost model cannot be read: " + e.what_without_backtrace());
  }
}

StoreRows storeRows(const std::vector<const ProgramFeatureSet*>& programs) {
  std::vector<float> rows;
  std::vector<int64_t> owner;
  for (size_t p = 0; p < programs.size(); ++p)
    for (const auto& row : programs[p]->stores) {
      rows.insert(rows.end(), row.begin(), row.end());
      owner.push_back(int64_t(p));
    }
  const int64_t r = int64_t(owner.size());
  return {torch::from_blob(rows.data(), {r, int64_t(kNumFeatures)}, torch::kFloat32).clone(),
          torch::from_blob(owner.data(), {r}, torch::kInt64).clone()};
}

torch::Tensor sumByProgram(const torch::Tensor& values, const torch::Tensor& program, int64_t n) {
  return torch::zeros({n, values.size(1)}, values.options()).index_add(0, program, values);
}

torch::nn::Sequential makeStoreEncoder(int64_t width) {
  return torch::nn::Sequential(torch::nn::Linear(int64_t(kNumFeatures), width), torch::nn::ReLU(),
                               torch::nn::Linear(width, width), torch::nn::ReLU());
}

torch::Tensor ScoringNet::encodedStoreSum(torch::nn::Sequential& encoder,
                                          const std::vector<const ProgramFeatureSet*>& programs) {
  const StoreRows r = storeRows(programs);
  return sumByProgram(encoder->forward(scaler_->stores(r.rows)), r.program, int64_t(programs.size()));
}

}  // namespace tessel::cost::learned
