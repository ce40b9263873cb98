// The OpenBLAS peer: single-precision GEMM for matmul, batch_matmul and
// dense; every other op is not applicable.
#include <cblas.h>

#include <algorithm>
#include <set>
#include <string>

#include "baseline/peer.h"

namespace tessel::baseline::detail {

namespace {

class OpenblasGemm : public PeerKernel {
 public:
  OpenblasGemm(const OpSpec& spec, const std::vector<std::vector<float>>& inputs)
      : op_(spec.op), inputs_(inputs), weights_(spec.weights) {
    const auto& s = spec.shape;
    if (op_ == "matmul" || op_ == "dense") {
      batch_ = 1, m_ = s[0], n_ = s[1], k_ = s[2];
    } else {  // batch_matmul
      batch_ = s[0], m_ = s[1], n_ = s[2], k_ = s[3];
    }
    out_.assign(size_t(batch_ * m_ * n_), 0.0f);
  }

  void run() override {
    const float* a = inputs_[0].data();
    const float* b = inputs_[1].data();
    float* c = out_.data();
    const auto m = blasint(m_), n = blasint(n_), k = blasint(k_);
    if (op_ == "dense") {
      // Y[M,N] = X[M,K] W[N,K]^T, then the bias along N.
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
      const float* bias = inputs_[2].data();
      for (int64_t i = 0; i < m_; ++i) {
        float* row = c + i * n_;
        for (int64_t j = 0; j < n_; ++j)
          row[j] += bias[j];
      }
      return;
    }
    for (int64_t p = 0; p < batch_; ++p)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a + p * m_ * k_, k, b + p * k_ * n_, n,
                  0.0f, c + p * m_ * n_, n);
  }

  std::vector<float> output() override { return out_; }
  std::vector<measure::CallBuffer> buffers() const override {
    std::vector<measure::CallBuffer> out = {{out_.data(), out_.size() * sizeof(float), false}};
    for (size_t i = 0; i < inputs_.size(); ++i)
      out.push_back({inputs_[i].data(), inputs_[i].size() * sizeof(float), weights_[i]});
    return out;
  }

 private:
  std::string op_;
  std::vector<std::vector<float>> inputs_;
  std::vector<bool> weights_;  // per input
  std::vector<float> out_;
  int64_t batch_ = 1, m_ = 0, n_ = 0, k_ = 0;
};

}  // namespace

int setOpenblasThreads(int threads) {
  const int previous = openblas_get_num_threads();
  openblas_set_num_threads(std::max(1, threads));
  return previous;
}

std::unique_ptr<PeerKernel> makeOpenblasKernel(const OpSpec& spec, const std::vector<std::vector<float>>& inputs,
                                               int threads) {
  static const std::set<std::string> gemms = {"matmul", "batch_matmul", "dense"};  // what a GEMM computes
  if (!gemms.count(spec.op)) throw NotApplicable("not applicable to " + spec.op);
  // The thread count is set by the caller's scope (shared with LibTorch).
  (void)threads;
  return std::make_unique<OpenblasGemm>(spec, inputs);
}

}  // namespace tessel::baseline::detail
