// The LibTorch peer: the ATen call of each op. The only translation unit of
// Tessel that includes LibTorch's headers for the baselines.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <cstring>
#include <functional>
#include <stdexcept>

#include "baseline/peer.h"

namespace tessel::baseline::detail {

namespace {

// Sets ATen's intra-op thread count for as long as it lives.
class TorchThreads {
 public:
  explicit TorchThreads(int threads) : previous_(at::get_num_threads()) { at::set_num_threads(threads); }
  ~TorchThreads() { at::set_num_threads(previous_); }
  TorchThreads(const TorchThreads&) = delete;
  TorchThreads& operator=(const TorchThreads&) = delete;

 private:
  int previous_;
};

class TorchKernel : public PeerKernel {
 public:
  TorchKernel(const OpSpec& spec, const std::vector<std::vector<float>>& inputs, int threads)
      : threads_(threads), data_(inputs), weights_(spec.weights) {
    for (size_t i = 0; i < data_.size(); ++i)
      tensors_.push_back(at::from_blob(data_[i].data(), spec.inputs[i], at::TensorOptions().dtype(at::kFloat)));
    call_ = makeCall(spec);
  }

  void run() override {
    c10::InferenceMode guard;
    try {
      result_ = call_();
    } catch (const c10::Error& e) {
      // The message alone: what() appends a long C++ backtrace.
      throw std::runtime_error(e.what_without_backtrace());
    }
  }

  // The inputs; each call allocates its output anew (as ATen does).
  std::vector<measure::CallBuffer> buffers() const override {
    std::vector<measure::CallBuffer> out;
    for (size_t i = 0; i < data_.size(); ++i)
      out.push_back({data_[i].data(), data_[i].size() * sizeof(float), weights_[i]});
    return out;
  }

  std::vector<float> output() override {
    const at::Tensor out = result_.contiguous();
    std::vector<float> values(size_t(out.numel()));
    std::memcpy(values.data(), out.data_ptr<float>(), values.size() * sizeof(float));
    return values;
  }

 private:
  std::function<at::Tensor()> makeCall(const OpSpec& spec) {
    const std::string& op = spec.op;
    if (op == "matmul") return [this] { return at::matmul(in(0), in(1)); };
    if (op == "batch_matmul") return [this] { return at::bmm(in(0), in(1)); };
    if (op == "dense") return [this] { return at::linear(in(0), in(1), in(2)); };
    if (spec.isConv()) {
      const std::vector<int64_t> stride{spec.stride, spec.stride}, pad{spec.pad, spec.pad};
      const std::vector<int64_t> dilation{spec.dilation, spec.dilation};
      const int64_t groups = spec.groups;
      if (op == "conv2d_bias_relu")
        return [this, stride, pad, dilation, groups] {
          at::Tensor y = at::conv2d(in(0), in(1), in(2), stride, pad, dilation, groups);
          at::relu_(y);
          return y;
        };
      return
          [this, stride, pad, dilation, groups] { return at::conv2d(in(0), in(1), {}, stride, pad, dilation, groups); };
    }
    if (op == "max_pool2d" || op == "avg_pool2d") {
      const std::vector<int64_t> kernel{spec.r, spec.s}, stride{spec.stride, spec.stride}, pad{spec.pad, spec.pad};
      if (op == "max_pool2d") return [this, kernel, stride, pad] { return at::max_pool2d(in(0), kernel, stride, pad); };
      // count_include_pad: Tessel's average divides by the whole window.
      return [this, kernel, stride, pad] {
        return at::avg_pool2d(in(0), kernel, stride, pad, /*ceil_mode=*/false, /*count_include_pad=*/true);
      };
    }
    if (op == "global_avg_pool") return [this] { return at::adaptive_avg_pool2d(in(0), {1, 1}); };
    if (op == "relu") return [this] { return at::relu(in(0)); };
    if (op == "gelu") return [this] { return at::gelu(in(0), "none"); };  // the erf form
    if (op == "add") return [this] { return at::add(in(0), in(1)); };
    if (op == "mul") return [this] { return at::mul(in(0), in(1)); };
    if (op == "bias_add") {
      std::vector<int64_t> view(spec.shape.size(), 1);
      view[1] = spec.shape[1];
      at::Tensor bias = in(1).view(view);
      return [this, bias] { return at::add(in(0), bias); };
    }
    if (op == "softmax") return [this] { return at::softmax(in(0), -1); };
    if (op == "layernorm") {
      const std::vector<int64_t> normalized{spec.shape.back()};
      return [this, normalized] { return at::layer_norm(in(0), normalized, in(1), in(2), 1e-5); };
    }
    throw NotApplicable("not applicable to " + op);
  }

  const at::Tensor& in(size_t i) const { return tensors_[i]; }

  TorchThreads threads_;
  std::vector<std::vector<float>> data_;  // the inputs, which the tensors view
  std::vector<bool> weights_;             // per input
  std::vector<at::Tensor> tensors_;
  std::function<at::Tensor()> call_;
  at::Tensor result_;
};

}  // namespace

std::unique_ptr<PeerKernel> makeLibtorchKernel(const OpSpec& spec, const std::vector<std::vector<float>>& inputs,
                                               int threads) {
  return std::make_unique<TorchKernel>(spec, inputs, threads);
}

}  // namespace tessel::baseline::detail
