// The "xgb" cost model: gradient-boosted trees through XGBoost's C API, after
// Ansor's XGBModel (TVM python/tvm/auto_scheduler/cost_model/xgb_model.py).
//
// A program is a list of per-store feature rows. One model serves one task.
// Labels are throughputs normalised over all the task's records so far:
// y = min_cost / cost, so the best program scores 1 and a failed one
// (cost = inf) scores 0. The
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
//  - "rank": XGBoost's "rank:pairwise" with all the task's programs in one
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
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "cost/cost_model.h"

namespace tessel::cost {

namespace {

// Score of a program without feature rows (it failed to lower).
constexpr double kInvalidScore = -1e30;
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

  std::string save() const override {
    if (!booster_) return {};
    bst_ulong len = 0;
    const char* buf = nullptr;
    check(XGBoosterSaveModelToBuffer(booster_.get(), R"({"format": "ubj"})", &len, &buf), "XGBoosterSaveModelToBuffer");
    return std::string(buf, static_cast<size_t>(len));
  }

  void update(const std::vector<ProgramFeatures>& programs, const std::vector<double>& costs) override {
    if (programs.size() != costs.size()) {
      throw std::invalid_argument("xgb cost model: " + std::to_string(programs.size()) + " programs but " +
                                  std::to_string(costs.size()) + " costs");
    }
    size_t width = width_;
    for (const auto& p : programs)
      checkRows(p, width);
    width_ = width;
    trained_ += programs.size();

    unsigned added = 0;
    for (size_t i = 0; i < programs.size(); ++i) {
      const auto& p = programs[i];
      if (p.empty()) continue;  // nothing to learn from
      const bool ok = measured(costs[i]);
      costs_.push_back(ok ? costs[i] : std::numeric_limits<double>::infinity());
      if (ok) ++valid_;
      for (const auto& row : p)
        rows_.insert(rows_.end(), row.begin(), row.end());
      programEnd_.push_back(rows_.size() / width_);
      ++added;
    }
    if (added == 0) return;  // the training set, hence the model, is unchanged
    // One model serves one task: labels are normalised over all its records
    // (the best program so far is 1), and its programs form one rank group.
    double minCost = *std::min_element(costs_.begin(), costs_.end());
    labels_.clear();
    for (double c : costs_)
      labels_.push_back(std::isfinite(c) ? static_cast<float>(minCost / c) : 0.0f);
    groups_ = {static_cast<unsigned>(costs_.size())};
    if (valid_ >= 2) train();
  }

  std::vector<double> predict(const std::vector<ProgramFeatures>& programs) override {
    std::vector<double> scores(programs.size(), kInvalidScore);
    if (!booster_) {
      // Untrained: small seeded noise so the search still explores.
      for (size_t i = 0; i < programs.size(); ++i) {
        const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
        if (!programs[i].empty()) scores[i] = 1e-3 * u;
      }
      return scores;
    }
    size_t width = width_;
    for (const auto& p : programs)
      checkRows(p, width);
    std::vector<float> data;
    std::vector<size_t> ends;  // per program: end of its samples
    ends.reserve(programs.size());
    size_t samples = 0;
    for (const auto& p : programs) {
      if (loss_ == "rank") {
        if (!p.empty()) {
          appendMean(data, p.size(), [&](size_t r) { return p[r].data(); });
          ++samples;
        }
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

 private:
  // All rows of all programs must have one length, `width` (0: not known
  // yet, set by the first row).
  static void checkRows(const ProgramFeatures& p, size_t& width) {
    for (const auto& row : p) {
      if (width == 0) {
        if (row.empty()) throw std::invalid_argument("xgb cost model: empty feature row");
        width = row.size();
      } else if (row.size() != width) {
        throw std::invalid_argument("xgb cost model: feature row of length " + std::to_string(row.size()) +
                                    ", expected " + std::to_string(width));
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
    b.setParam("nthread", std::to_string(threadCount()));  // for prediction
    booster_ = std::move(b);
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
    const size_t nprog = labels_.size();
    std::vector<float> data;
    data.reserve(nprog * (width_ + 1));
    for (size_t p = 0, begin = 0; p < nprog; ++p) {
      appendMean(data, programEnd_[p] - begin, [&](size_t r) { return &rows_[(begin + r) * width_]; });
      begin = programEnd_[p];
    }
    const DMatrix m(data, nprog, width_ + 1, trainThreads(nprog));
    check(XGDMatrixSetFloatInfo(m.get(), "label", labels_.data(), nprog), "XGDMatrixSetFloatInfo");
    check(XGDMatrixSetUIntInfo(m.get(), "group", groups_.data(), groups_.size()), "XGDMatrixSetUIntInfo");
    Booster b(m);
    setParams(b, trainThreads(nprog));
    for (int round = 0; round < kRounds; ++round)
      check(XGBoosterUpdateOneIter(b.get(), round, m.get()), "XGBoosterUpdateOneIter");
    return b;
  }

  std::string loss_;
  uint64_t seed_;
  std::mt19937_64 rng_;
  size_t width_ = 0;                // feature row length, from the first row seen
  std::vector<float> rows_;         // training rows, flat
  std::vector<size_t> programEnd_;  // per training program: end of its rows
  std::vector<double> costs_;       // per training program: seconds (inf: failed)
  std::vector<float> labels_;       // per training program: normalised throughput
  std::vector<unsigned> groups_;    // programs (with rows) per update() call
  size_t valid_ = 0;                // measured training programs
  size_t trained_ = 0;
  Booster booster_;
};

}  // namespace

std::unique_ptr<CostModel> makeXgbModel(const std::string& loss, uint64_t seed) {
  return std::make_unique<XgbModel>(loss, seed);
}

}  // namespace tessel::cost
