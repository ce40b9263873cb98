// The cuBLAS peer: single-precision GEMM (FP32 throughout: CUBLAS_DEFAULT_MATH,
// no TF32) for matmul, batch_matmul and dense, on row-major operands as
// te/operators.h lays them out. cuBLAS is column-major, so each product is
// computed transposed: C^T = B^T A^T reads row-major A, B and writes row-major
// C without any copy. Every other op is not applicable.
#include <map>

#include "baseline/cuda_libraries.h"
#include "baseline/cuda_peer.h"

namespace tessel::baseline::detail::gpu {

namespace {

enum class Gemm {
  Plain,    // matmul: C[M,N] = A[M,K] B[K,N]
  Batched,  // batch_matmul: C[b,M,N] = A[b,M,K] B[b,K,N]
  Dense,    // dense: Y[M,N] = X[M,K] W[N,K]^T + bias[N]
};

const std::map<std::string, Gemm>& gemmKinds() {
  static const std::map<std::string, Gemm> kinds = {
      {"matmul", Gemm::Plain}, {"batch_matmul", Gemm::Batched}, {"dense", Gemm::Dense}};
  return kinds;
}

// A cuBLAS handle, destroyed with the object.
struct CublasHandleOwner {
  explicit CublasHandleOwner(const Cublas& b) : blas(b) { blas.check(blas.create(&handle), "cublasCreate"); }
  ~CublasHandleOwner() { blas.destroy(handle); }
  CublasHandleOwner(const CublasHandleOwner&) = delete;
  CublasHandleOwner& operator=(const CublasHandleOwner&) = delete;

  const Cublas& blas;
  CublasHandle handle = nullptr;
};

class CublasGemm : public GpuKernel {
 public:
  CublasGemm(const OpSpec& spec, const std::vector<std::vector<float>>& inputs, Gemm kind)
      : GpuKernel(spec, inputs), blas_(cublas()), owner_(blas_), kind_(kind) {
    const std::vector<int64_t>& s = spec.shape;
    const size_t first = kind == Gemm::Batched ? 1 : 0;
    batch_ = kind == Gemm::Batched ? fitInt(s[0], "cuBLAS") : 1;
    m_ = fitInt(s[first], "cuBLAS"), n_ = fitInt(s[first + 1], "cuBLAS"), k_ = fitInt(s[first + 2], "cuBLAS");
    if (kind == Gemm::Dense) ones_ = DeviceBuffer::upload(std::vector<float>(size_t(m_), 1.0f));
    blas_.check(blas_.setMathMode(owner_.handle, kCublasDefaultMath), "cublasSetMathMode");
  }

  void run() override {
    switch (kind_) {
      case Gemm::Plain:
        return plain();
      case Gemm::Batched:
        return batched();
      case Gemm::Dense:
        return dense();
    }
  }

 private:
  // C^T[N,M] = B^T[N,K] A^T[K,M]: row-major B and A are their transposes
  // in column-major, with leading dimensions N and K.
  void plain() {
    blas_.check(blas_.sgemm(owner_.handle, kCublasOpN, kCublasOpN, n_, m_, k_, &kOne, inputs_[1].floats(), n_,
                            inputs_[0].floats(), k_, &kZero, output_.floats(), n_),
                "cublasSgemm");
  }

  void batched() {
    const long long a = (long long)m_ * k_, b = (long long)k_ * n_, c = (long long)m_ * n_;
    blas_.check(blas_.sgemmStridedBatched(owner_.handle, kCublasOpN, kCublasOpN, n_, m_, k_, &kOne, inputs_[1].floats(),
                                          n_, b, inputs_[0].floats(), k_, a, &kZero, output_.floats(), n_, c, batch_),
                "cublasSgemmStridedBatched");
  }

  // As at::addmm does it: the bias broadcast into Y (a rank-1 product of the
  // bias and a column of ones), then Y^T += W X^T, with row-major W[N,K]
  // read transposed.
  void dense() {
    const float* x = inputs_[0].floats();
    const float* w = inputs_[1].floats();
    const float* bias = inputs_[2].floats();
    float* y = output_.floats();
    blas_.check(blas_.sgemm(owner_.handle, kCublasOpN, kCublasOpN, n_, m_, 1, &kOne, bias, n_, ones_.floats(), 1,
                            &kZero, y, n_),
                "cublasSgemm (bias)");
    blas_.check(blas_.sgemm(owner_.handle, kCublasOpT, kCublasOpN, n_, m_, k_, &kOne, w, k_, x, k_, &kOne, y, n_),
                "cublasSgemm");
  }

  static constexpr float kOne = 1.0f, kZero = 0.0f;
  const Cublas& blas_;
  CublasHandleOwner owner_;
  Gemm kind_;
  int batch_ = 1, m_ = 0, n_ = 0, k_ = 0;
  DeviceBuffer ones_;  // dense: M ones, the bias's broadcast
};

}  // namespace

const std::set<std::string>& cublasOps() {
  static const std::set<std::string> ops = [] {
    std::set<std::string> out;
    for (const auto& [op, kind] : gemmKinds())
      out.insert(op);
    return out;
  }();
  return ops;
}

std::unique_ptr<GpuKernel> makeCublasKernel(const OpSpec& spec, const std::vector<std::vector<float>>& inputs) {
  const auto kind = gemmKinds().find(spec.op);
  if (kind == gemmKinds().end()) throw NotApplicable("not applicable to " + spec.op);
  return std::make_unique<CublasGemm>(spec, inputs, kind->second);
}

}  // namespace tessel::baseline::detail::gpu
