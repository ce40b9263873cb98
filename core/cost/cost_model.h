// Cost models: score programs so the search measures the promising ones.
// As in TVM's auto_scheduler, a model is given a task and its programs and
// computes the features it reads itself (cost/program_features.h); one model
// may serve every task of a model's tuning, and is told which task each
// record belongs to (labels are normalised and programs ranked within a
// task). Scores: higher = predicted faster, comparable within one task.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cost/cost_model_types.h"
#include "cost/program_features.h"
#include "task/search_task.h"

namespace tessel::cost {

using Program = std::vector<schedule::Step>;

// Measured programs of one task, as features. `costs` are seconds; a failed
// program has cost +infinity (it may be used as a bad example).
struct TaskRecords {
  std::string taskKey;
  std::vector<ProgramFeatureSet> programs;
  std::vector<double> costs;
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string name() const = 0;
  // The features the model reads (FeatureKind bits).
  virtual FeatureKinds features() const { return kStoreRows; }

  // Learns from measured programs of `task` (features computed here).
  void update(const task::SearchTask& task, const std::vector<Program>& programs, const std::vector<double>& costs);
  std::vector<double> predict(const task::SearchTask& task, const std::vector<Program>& programs);

  // The same on features extracted already (datasets, evaluation, tests).
  // One call may carry several tasks: the model is trained once on all.
  virtual void updateFeatures(const std::vector<TaskRecords>& records) = 0;
  // Learns a whole dataset at once (`tessel costmodel train`): the learned
  // models pass over it `epochs` times; the others learn as from an update.
  virtual void pretrain(const std::vector<TaskRecords>& records, int /*epochs*/) { updateFeatures(records); }
  // A program that is not valid gets kInvalidScore.
  virtual std::vector<double> predictFeatures(const std::string& taskKey,
                                              const std::vector<ProgramFeatureSet>& programs) = 0;

  // Number of programs learned from so far.
  virtual size_t trainedOn() const = 0;
  // Whether load() gave it a trained model (a pre-trained file, the
  // knowledge base's): its scores mean something before it has learned from
  // anything here. An untrained model is neither pretrained nor trainedOn.
  virtual bool pretrained() const { return false; }
  // The trained model as bytes, to keep in the database or a file ("" if
  // there is nothing worth keeping, e.g. the random model or an untrained one).
  virtual std::string save() const { return {}; }
  // Reads what save() wrote (std::runtime_error when the bytes are not this
  // model's). A loaded model predicts at once and goes on learning.
  virtual void load(const std::string& bytes);
};

// "random": uniform random scores (the baseline every model must beat).
std::unique_ptr<CostModel> makeRandomModel(uint64_t seed);
// "xgb": gradient-boosted trees (throws std::runtime_error when this build
// has no XGBoost). `loss` is "throughput" (Ansor's weighted regression of
// normalised throughput) or "rank" (pairwise ranking).
std::unique_ptr<CostModel> makeXgbModel(const std::string& loss, uint64_t seed);
// Models by name: cost/cost_model_registry.h.

// std::invalid_argument naming `model` when a record set has more programs
// than costs or fewer.
void checkRecordSizes(const std::string& model, const std::vector<TaskRecords>& records);

// Store rows only, as the tests and tools that build them by hand have them
// (an empty program is an invalid one).
std::vector<ProgramFeatureSet> fromStoreRows(const std::vector<ProgramFeatures>& programs);

}  // namespace tessel::cost
