// The "xgb" cost model: gradient-boosted trees through XGBoost's C API, after
// Ansor's XGBModel (TVM python/tvm/auto_scheduler/cost_model/xgb_model.py).
//
// A program is a list of per-store feature rows. One model may serve every
// task of a tuning, as Ansor's does: labels are throughputs normalised over
// each task's records so far, y = min_cost(task) / cost, so the best program
// of a task scores 1 and a failed one (cost = inf) scores 0. The
// training set accumulates over all update() calls and the booster is
// retrained from scratch on each call, as Ansor does.
//
// Losses:
//  - "throughput" (Ansor's default): every row is one XGBoost sample and a
//    program's prediction is the SUM of its rows' predictions ("pack-sum").
//    The objective is the weighted squared error of that sum, supplied as a
//    custom objective: per round, predict the training margins, sum them per
//    program, and give every row of a program gradient (sum - y) * w and
//    hessian w with w = max(y, 1e-3) (fast programs matter most).
//  - "rank": XGBoost's "rank:pairwise" with each task's programs in one
//    query group. Pairs are between programs, so each program is ONE sample: the
//    MEAN of its rows' features plus one extra feature, its number of rows
//    (the mean alone would hide how many stores a program has). This is
//    simpler than a pack-sum pairwise objective and ranks as well on our
//    data; a program's score is that sample's margin.
//
// Booster parameters are Ansor's (max_depth 10, gamma 0.001,
// min_child_weight 0, eta 0.2, verbosity 0, the model's seed), 100 rounds, no
// early stopping, tree_method "hist". predict() returns, per program, the
// pack-sum (throughput) or the margin (rank): higher = faster. Before the
// first training (which needs 2 measured programs) it returns seeded noise in
// [0, 1e-3); a program without rows always gets kInvalidScore.
//
#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "cost/cost_model.h"
#include "cost/features.h"

namespace tessel::cost {

namespace {

// Ansor's parameters.
constexpr int kRounds = 100;
constexpr float kMinWeight = 1e-3f;

void check(int rc, const char* what) {
  if (rc != 0) {
    const char* err = XGBGetLastError();
    throw std::runtime_error(std::string("xgb cost model: ") + what + " failed: " + (err ? err : "unknown error"));
  }
}

int threadCount() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

// Threads for training on `rows` samples. XGBoost's tree builder opens a
// parallel region per node; on the few thousand rows of a tuning session
// that costs more than it saves (and several times more when the cores are
// shared with builds or measurements: the threads spin-wait), so small sets
// train on one thread. Prediction always uses every core.
constexpr size_t kRowsPerExtraThread = 20000;
int trainThreads(size_t rows) {
  return rows < kRowsPerExtraThread ? 1 : threadCount();
}

// Owning handles.
class DMatrix {
 public:
  DMatrix(const std::vector<float>& data, size_t rows, size_t cols, int threads) {
    check(XGDMatrixCreateFromMat_omp(data.data(), rows, cols, std::numeric_limits<float>::quiet_NaN(), &h_, threads),
          "XGDMatrixCreateFromMat");
  }
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  ~DMatrix() {
    if (h_) XGDMatrixFree(h_);
  }
  DMatrixHandle get() const { return h_; }

 private:
  DMatrixHandle h_ = nullptr;
};

class Booster {
 public:
  Booster() = default;
  explicit Booster(BoosterHandle h) : h_(h) {}
  explicit Booster(const DMatrix& train) {
    DMatrixHandle mats[1] = {train.get()};
    check(XGBoosterCreate(mats, 1, &h_), "XGBoosterCreate");
  }
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;
  Booster(Booster&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Booster& operator=(Booster&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  ~Booster() { reset(); }
  BoosterHandle get() const { return h_; }
  explicit operator bool() const { return h_ != nullptr; }
  void setParam(const char* name, const std::string& value) {
    check(XGBoosterSetParam(h_, name, value.c_str()), "XGBoosterSetParam");
  }
  // Raw margins of a dense row-major matrix, without copying it into a
  // DMatrix (in-place prediction). Missing values: NaN.
  std::pair<const float*, size_t> margins(const std::vector<float>& data, size_t rows, size_t cols) const {
    const std::string values = R"({"data": [)" + std::to_string(reinterpret_cast<uintptr_t>(data.data())) +
                               R"(, true], "shape": [)" + std::to_string(rows) + ", " + std::to_string(cols) +
                               R"(], "typestr": "<f4", "version": 3})";
    const char* config =
        R"({"type": 1, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false, )"
        R"("cache_id": 0, "missing": NaN})";
    const bst_ulong* shape = nullptr;
    bst_ulong dim = 0;
    const float* out = nullptr;
    check(XGBoosterPredictFromDense(h_, values.c_str(), config, nullptr, &shape, &dim, &out),
          "XGBoosterPredictFromDense");
    size_t len = 1;
    for (bst_ulong i = 0; i < dim; ++i)
      len *= static_cast<size_t>(shape[i]);
    return {out, len};
  }
  // Raw margins, one per row of `m`.
  std::pair<const float*, size_t> margins(const DMatrix& m, bool training) const {
    bst_ulong len = 0;
    const float* out = nullptr;
    check(XGBoosterPredict(h_, m.get(), /*output_margin*/ 1, 0, training ? 1 : 0, &len, &out), "XGBoosterPredict");
    return {out, static_cast<size_t>(len)};
  }

 private:
  void reset() {
    if (h_) XGBoosterFree(h_);
    h_ = nullptr;
  }
  BoosterHandle h_ = nullptr;
};

bool measured(double cost) {
  return std::isfinite(cost) && cost > 0;
}

class XgbModel final : public CostModel {
 public:
  XgbModel(std::string loss, uint64_t seed) : loss_(std::move(loss)), seed_(seed), rng_(seed) {
    if (loss_ != "throughput" && loss_ != "rank") {
      throw std::invalid_argument("xgb cost model: unknown loss '" + loss_ + "' (available: throughput, rank)");
    }
  }

  std::string name() const override { return "xgb"; }

  std::string save() const override { return booster_ ? saved(booster_) : std::string(); }

  static std::string saved(const Booster& b) {
    bst_ulong len = 0;
    const char* buf = nullptr;
    check(XGBoosterSaveModelToBuffer(b.get(), R"({"format": "ubj"})", &len, &buf), "XGBoosterSaveModelToBuffer");
    return std::string(buf, static_cast<size_t>(len));
  }

  // A loaded booster predicts until the first update, which retrains from
  // the records alone (as every update does).
  void load(const std::string& bytes) override {
    loadBooster(bytes);
    pretrained_ = true;
  }

  // The booster of `bytes` becomes the model (load(), and each training's trees).
  void loadBooster(const std::string& bytes) {
    BoosterHandle h = nullptr;
    check(XGBoosterCreate(nullptr, 0, &h), "XGBoosterCreate");
    Booster b(h);
    check(XGBoosterLoadModelFromBuffer(b.get(), bytes.data(), bytes.size()), "XGBoosterLoadModelFromBuffer");
    bst_ulong features = 0;
    check(XGBoosterGetNumFeature(b.get(), &features), "XGBoosterGetNumFeature");
    const size_t width = loss_ == "rank" ? size_t(features) - 1 : size_t(features);
    if (width_ != 0 && width != width_)
      throw std::runtime_error("xgb cost model: the saved model reads " + std::to_string(width) +
                               " features per row, this one " + std::to_string(width_));
    width_ = width;
    loaded_ = true;
    b.setParam("nthread", std::to_string(threadCount()));
    booster_ = std::move(b);
  }

  void updateFeatures(const std::vector<TaskRecords>& records) override {
    checkRecordSizes(name(), records);
    size_t width = width_;
    for (const TaskRecords& r : records) {
      for (const auto& p : r.programs)
        checkRows(p.stores, width);
    }
    width_ = width;

    unsigned added = 0;
    for (const TaskRecords& r : records) {
      trained_ += r.programs.size();
      const size_t task = taskIndex_.emplace(r.taskKey, taskIndex_.size()).first->second;
      for (size_t i = 0; i < r.programs.size(); ++i) {
        const ProgramFeatures& p = r.programs[i].stores;
        if (!r.programs[i].valid || p.empty()) continue;  // nothing to learn from
        const bool ok = measured(r.costs[i]);
        costs_.push_back(ok ? r.costs[i] : std::numeric_limits<double>::infinity());
        taskOf_.push_back(task);
        if (ok) ++valid_;
        for (const auto& row : p)
          rows_.insert(rows_.end(), row.begin(), row.end());
        programEnd_.push_back(rows_.size() / width_);
        ++added;
      }
    }
    if (added == 0) return;  // the training set, hence the model, is unchanged
    // Labels are normalised within each task (its best program so far is 1).
    std::vector<double> minCost(taskIndex_.size(), std::numeric_limits<double>::infinity());
    for (size_t p = 0; p < costs_.size(); ++p)
      minCost[taskOf_[p]] = std::min(minCost[taskOf_[p]], costs_[p]);
    labels_.clear();
    for (size_t p = 0; p < costs_.size(); ++p)
      labels_.push_back(std::isfinite(costs_[p]) ? static_cast<float>(minCost[taskOf_[p]] / costs_[p]) : 0.0f);
    if (valid_ >= 2) train();
  }

  std::vector<double> predictFeatures(const std::string& /*taskKey*/,
                                      const std::vector<ProgramFeatureSet>& programs) override {
    std::vector<double> scores(programs.size(), kInvalidScore);
    auto usable = [](const ProgramFeatureSet& p) { return p.valid && !p.stores.empty(); };
    if (!booster_) {
      // Untrained: small seeded noise so the search still explores.
      for (size_t i = 0; i < programs.size(); ++i) {
        const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
        if (usable(programs[i])) scores[i] = 1e-3 * u;
      }
      return scores;
    }
    size_t width = width_;
    for (const auto& p : programs)
      checkRows(p.stores, width);
    std::vector<float> data;
    std::vector<size_t> ends;  // per program: end of its samples
    ends.reserve(programs.size());
    size_t samples = 0;
    for (const auto& set : programs) {
      const ProgramFeatures& p = set.stores;
      if (!usable(set)) {
      } else if (loss_ == "rank") {
        appendMean(data, p.size(), [&](size_t r) { return p[r].data(); });
        ++samples;
      } else {
        for (const auto& row : p)
          data.insert(data.end(), row.begin(), row.end());
        samples += p.size();
      }
      ends.push_back(samples);
    }
    if (samples == 0) return scores;
    const auto [out, len] = booster_.margins(data, samples, loss_ == "rank" ? width_ + 1 : width_);
    if (len != samples) throw std::runtime_error("xgb cost model: XGBoosterPredict returned a wrong number of values");
    size_t begin = 0;
    for (size_t i = 0; i < programs.size(); ++i) {
      if (ends[i] > begin) {
        double sum = 0;
        for (size_t r = begin; r < ends[i]; ++r)
          sum += out[r];
        scores[i] = sum;
      }
      begin = ends[i];
    }
    return scores;
  }

  size_t trainedOn() const override { return trained_; }
  bool pretrained() const override { return pretrained_; }

 private:
  // All rows of all programs must have one length, `width` (0: not known
  // yet, set by the first row).
  void checkRows(const ProgramFeatures& p, size_t& width) const {
    for (const auto& row : p) {
      if (width == 0) {
        if (row.empty()) throw std::invalid_argument("xgb cost model: empty feature row");
        width = row.size();
      } else if (row.size() != width) {
        std::string why = "xgb cost model: feature row of length " + std::to_string(row.size()) + ", expected " +
                          std::to_string(width);
        if (loaded_)  // e.g. 164: saved before the register-tile features
          why += " (the model was loaded from a file saved for rows of " + std::to_string(width) +
                 " features; Tessel's store rows have " + std::to_string(kNumFeatures) + ": train it again)";
        throw std::invalid_argument(why);
      }
    }
  }

  // Appends one "rank" sample: the mean of `n` rows (rowAt(r) points at row
  // r), then n itself, so that programs with more stores can still rank lower.
  template <typename RowAt>
  void appendMean(std::vector<float>& data, size_t n, RowAt rowAt) const {
    std::vector<double> acc(width_, 0.0);
    for (size_t r = 0; r < n; ++r) {
      const float* row = rowAt(r);
      for (size_t j = 0; j < width_; ++j)
        acc[j] += row[j];
    }
    for (size_t j = 0; j < width_; ++j)
      data.push_back(static_cast<float>(acc[j] / static_cast<double>(n)));
    data.push_back(static_cast<float>(n));
  }

  void setParams(Booster& b, int threads) const {
    b.setParam("max_depth", "10");
    b.setParam("gamma", "0.001");
    b.setParam("min_child_weight", "0");
    b.setParam("eta", "0.2");
    b.setParam("nthread", std::to_string(threads));
    b.setParam("verbosity", "0");
    b.setParam("seed", std::to_string(seed_ & 0x7fffffffu));
    b.setParam("tree_method", "hist");
    if (loss_ == "rank") {
      b.setParam("objective", "rank:pairwise");
      // Pairwise gradients never vanish, so (with Ansor's gamma and
      // min_child_weight) every tree grows to full depth and enumerating
      // splits (nodes x features x bins) dominates: 64 bins instead of 256
      // train about 3x faster at the same accuracy.
      b.setParam("max_bin", "64");
    } else {
      b.setParam("objective", "reg:squarederror");  // unused for boosting (custom gradients)
      b.setParam("base_score", "0");                // a program's sum starts at 0, not 0.5 x rows
    }
  }

  void train() {
    Booster b = loss_ == "rank" ? trainRank() : trainThroughput();
    // A booster made from a DMatrix keeps it (and its histogram index) for
    // as long as it lives: kept as the model, that is a second copy of every
    // training row between rounds, growing with each trial. The trees alone,
    // loaded into a booster of their own, predict the same.
    loadBooster(saved(b));
  }

  Booster trainThroughput() {
    const size_t nrows = rows_.size() / width_;
    const size_t nprog = labels_.size();
    const DMatrix m(rows_, nrows, width_, trainThreads(nrows));
    std::vector<float> rowLabel(nrows), weight(nprog);
    for (size_t p = 0, r = 0; p < nprog; ++p) {
      weight[p] = std::max(labels_[p], kMinWeight);
      for (; r < programEnd_[p]; ++r)
        rowLabel[r] = labels_[p];
    }
    check(XGDMatrixSetFloatInfo(m.get(), "label", rowLabel.data(), nrows), "XGDMatrixSetFloatInfo");
    Booster b(m);
    setParams(b, trainThreads(nrows));
    std::vector<float> grad(nrows), hess(nrows);
    for (int round = 0; round < kRounds; ++round) {
      const auto [out, len] = b.margins(m, true);
      if (len != nrows) throw std::runtime_error("xgb cost model: XGBoosterPredict returned a wrong number of values");
      for (size_t p = 0, begin = 0; p < nprog; ++p) {
        double sum = 0;
        for (size_t r = begin; r < programEnd_[p]; ++r)
          sum += out[r];
        const float g = static_cast<float>((sum - labels_[p]) * weight[p]);
        for (size_t r = begin; r < programEnd_[p]; ++r) {
          grad[r] = g;
          hess[r] = weight[p];
        }
        begin = programEnd_[p];
      }
      check(XGBoosterBoostOneIter(b.get(), m.get(), grad.data(), hess.data(), nrows), "XGBoosterBoostOneIter");
    }
    return b;
  }

  Booster trainRank() {
    // XGBoost's query groups are runs of consecutive samples: one per task.
    const size_t nprog = labels_.size();
    std::vector<size_t> begin(nprog);
    for (size_t p = 0; p < nprog; ++p)
      begin[p] = p == 0 ? 0 : programEnd_[p - 1];
    std::vector<size_t> order(nprog);
    for (size_t p = 0; p < nprog; ++p)
      order[p] = p;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return taskOf_[a] < taskOf_[b]; });
    std::vector<float> data, labels;
    std::vector<unsigned> groups;
    data.reserve(nprog * (width_ + 1));
    for (size_t k = 0; k < nprog; ++k) {
      const size_t p = order[k];
      appendMean(data, programEnd_[p] - begin[p], [&](size_t r) { return &rows_[(begin[p] + r) * width_]; });
      labels.push_back(labels_[p]);
      if (k == 0 || taskOf_[p] != taskOf_[order[k - 1]])
        groups.push_back(1);
      else
        ++groups.back();
    }
    const DMatrix m(data, nprog, width_ + 1, trainThreads(nprog));
    check(XGDMatrixSetFloatInfo(m.get(), "label", labels.data(), nprog), "XGDMatrixSetFloatInfo");
    check(XGDMatrixSetUIntInfo(m.get(), "group", groups.data(), groups.size()), "XGDMatrixSetUIntInfo");
    Booster b(m);
    setParams(b, trainThreads(nprog));
    for (int round = 0; round < kRounds; ++round)
      check(XGBoosterUpdateOneIter(b.get(), round, m.get()), "XGBoosterUpdateOneIter");
    return b;
  }

  std::string loss_;
  uint64_t seed_;
  std::mt19937_64 rng_;
  size_t width_ = 0;                         // feature row length, from the first row seen
  bool loaded_ = false;                      // load() gave it its booster
  bool pretrained_ = false;                  // a caller's load(), not a training's own trees
  std::vector<float> rows_;                  // training rows, flat
  std::vector<size_t> programEnd_;           // per training program: end of its rows
  std::vector<double> costs_;                // per training program: seconds (inf: failed)
  std::vector<float> labels_;                // per training program: normalised throughput within its task
  std::vector<size_t> taskOf_;               // per training program: index into taskIndex_
  std::map<std::string, size_t> taskIndex_;  // task key -> index
  size_t valid_ = 0;                         // measured training programs
  size_t trained_ = 0;
  Booster booster_;
};

}  // namespace

std::unique_ptr<CostModel> makeXgbModel(const std::string& loss, uint64_t seed) {
  return std::make_unique<XgbModel>(loss, seed);
}

}  // namespace tessel::cost
