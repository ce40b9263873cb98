// The LibTorch peer: the ATen call of each op. The only translation unit of
// Tessel that includes LibTorch's headers for the baselines.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <cstring>
#include <functional>
#include <map>
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
  using Call = std::function<at::Tensor()>;

  // ATen's call for each library op, by name.
  Call makeCall(const OpSpec& spec) {
    using Maker = std::function<Call(TorchKernel&, const OpSpec&)>;
    auto simple = [](std::function<at::Tensor(TorchKernel&)> f) -> Maker {
      return [f](TorchKernel& k, const OpSpec&) -> Call { return [&k, f] { return f(k); }; };
    };
    auto conv = [](bool biasRelu) -> Maker {
      return [biasRelu](TorchKernel& k, const OpSpec& spec) -> Call {
        const std::vector<int64_t> stride{spec.stride, spec.stride}, pad{spec.pad, spec.pad};
        const std::vector<int64_t> dilation{spec.dilation, spec.dilation};
        const int64_t groups = spec.groups;
        if (biasRelu)
          return [&k, stride, pad, dilation, groups] {
            at::Tensor y = at::conv2d(k.in(0), k.in(1), k.in(2), stride, pad, dilation, groups);
            at::relu_(y);
            return y;
          };
        return [&k, stride, pad, dilation, groups] {
          return at::conv2d(k.in(0), k.in(1), {}, stride, pad, dilation, groups);
        };
      };
    };
    auto pool = [](bool max) -> Maker {
      return [max](TorchKernel& k, const OpSpec& spec) -> Call {
        const std::vector<int64_t> kernel{spec.r, spec.s}, stride{spec.stride, spec.stride}, pad{spec.pad, spec.pad};
        if (max) return [&k, kernel, stride, pad] { return at::max_pool2d(k.in(0), kernel, stride, pad); };
        // count_include_pad: Tessel's average divides by the whole window.
        return [&k, kernel, stride, pad] {
          return at::avg_pool2d(k.in(0), kernel, stride, pad, /*ceil_mode=*/false, /*count_include_pad=*/true);
        };
      };
    };
    static const std::map<std::string, Maker> makers = {
        {"matmul", simple([](TorchKernel& k) { return at::matmul(k.in(0), k.in(1)); })},
        {"batch_matmul", simple([](TorchKernel& k) { return at::bmm(k.in(0), k.in(1)); })},
        {"dense", simple([](TorchKernel& k) { return at::linear(k.in(0), k.in(1), k.in(2)); })},
        {"conv2d", conv(false)},
        {"depthwise_conv2d", conv(false)},
        {"conv2d_bias_relu", conv(true)},
        {"max_pool2d", pool(true)},
        {"avg_pool2d", pool(false)},
        {"global_avg_pool", simple([](TorchKernel& k) {
           return at::adaptive_avg_pool2d(k.in(0), {1, 1});
         })},
        {"relu", simple([](TorchKernel& k) { return at::relu(k.in(0)); })},
        {"gelu", simple([](TorchKernel& k) { return at::gelu(k.in(0), "none"); })},  // the erf form
        {"add", simple([](TorchKernel& k) { return at::add(k.in(0), k.in(1)); })},
        {"mul", simple([](TorchKernel& k) { return at::mul(k.in(0), k.in(1)); })},
        {"bias_add",
         [](TorchKernel& k, const OpSpec& spec) -> Call {
           std::vector<int64_t> view(spec.shape.size(), 1);
           view[1] = spec.shape[1];
           at::Tensor bias = k.in(1).view(view);
           return [&k, bias] { return at::add(k.in(0), bias); };
         }},
        {"softmax", simple([](TorchKernel& k) { return at::softmax(k.in(0), -1); })},
        {"layernorm",
         [](TorchKernel& k, const OpSpec& spec) -> Call {
           const std::vector<int64_t> normalized{spec.shape.back()};
           return [&k, normalized] { return at::layer_norm(k.in(0), normalized, k.in(1), k.in(2), 1e-5); };
         }},
    };
    auto m = makers.find(spec.op);
    if (m == makers.end()) throw NotApplicable("not applicable to " + spec.op);
    return m->second(*this, spec);
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
