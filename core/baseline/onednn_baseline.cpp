// The oneDNN peer: one primitive per op on the CPU engine (oneDNN 2.x API).
// oneDNN here runs on OpenMP, so its thread count is OpenMP's
// (runtime::OmpThreadCount).
#include <cstring>
#include <functional>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

#include "baseline/peer.h"
#include "runtime/thread_team.h"

namespace tessel::baseline::detail {

namespace {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::prop_kind;
using Tag = memory::format_tag;
using Dt = memory::data_type;

memory::desc plain(const memory::dims& dims) {
  static const Tag tags[] = {Tag::undef, Tag::a, Tag::ab, Tag::abc, Tag::abcd, Tag::abcde, Tag::abcdef};
  if (dims.empty() || dims.size() > 6) throw std::invalid_argument("oneDNN peer: unsupported rank");
  return memory::desc(dims, Dt::f32, tags[dims.size()]);
}

memory::desc anyLayout(const memory::dims& dims) {
  return memory::desc(dims, Dt::f32, Tag::any);
}

class OnednnKernel : public PeerKernel {
 public:
  OnednnKernel(const OpSpec& spec, const std::vector<std::vector<float>>& inputs, int threads)
      : threads_(threads), inputs_(inputs), constantWeights_(spec.weights.size() > 1 && spec.weights[1]) {
    outputSize_ = numElements(spec.output);
    using Build = std::function<void(OnednnKernel&, const OpSpec&)>;
    // oneDNN's primitive for each library op, by name.
    static const std::map<std::string, Build> builders = {
        {"matmul", [](OnednnKernel& k, const OpSpec& s) { k.buildMatmul(s, false); }},
        {"batch_matmul", [](OnednnKernel& k, const OpSpec& s) { k.buildMatmul(s, true); }},
        {"dense", [](OnednnKernel& k, const OpSpec& s) { k.buildDense(s); }},
        {"conv2d", [](OnednnKernel& k, const OpSpec& s) { k.buildConv(s, false); }},
        {"depthwise_conv2d", [](OnednnKernel& k, const OpSpec& s) { k.buildConv(s, false); }},
        {"conv2d_bias_relu", [](OnednnKernel& k, const OpSpec& s) { k.buildConv(s, true); }},
        // Max pooling ignores the padding (as -inf padding does); the average
        // counts it, dividing by the whole window as Tessel's avg_pool2d does.
        {"max_pool2d", [](OnednnKernel& k, const OpSpec& s) { k.buildPool(s, algorithm::pooling_max, false); }},
        {"avg_pool2d",
         [](OnednnKernel& k, const OpSpec& s) { k.buildPool(s, algorithm::pooling_avg_include_padding, false); }},
        {"global_avg_pool",
         [](OnednnKernel& k, const OpSpec& s) { k.buildPool(s, algorithm::pooling_avg_include_padding, true); }},
        {"relu", [](OnednnKernel& k, const OpSpec& s) { k.buildEltwise(s, algorithm::eltwise_relu); }},
        {"gelu", [](OnednnKernel& k, const OpSpec& s) { k.buildEltwise(s, algorithm::eltwise_gelu_erf); }},
        {"add", [](OnednnKernel& k, const OpSpec& s) { k.buildBinary(s, algorithm::binary_add, false); }},
        {"mul", [](OnednnKernel& k, const OpSpec& s) { k.buildBinary(s, algorithm::binary_mul, false); }},
        {"bias_add", [](OnednnKernel& k, const OpSpec& s) { k.buildBinary(s, algorithm::binary_add, true); }},
        {"softmax", [](OnednnKernel& k, const OpSpec& s) { k.buildSoftmax(s); }},
        {"layernorm", [](OnednnKernel& k, const OpSpec& s) { k.buildLayerNorm(s); }},
    };
    auto b = builders.find(spec.op);
    if (b == builders.end()) throw NotApplicable("not applicable to " + spec.op);
    b->second(*this, spec);
  }

  void buildEltwise(const OpSpec& spec, algorithm alg) {
    const memory::desc md = plain({numElements(spec.shape)});
    dnnl::eltwise_forward::desc d(prop_kind::forward_inference, alg, md, 0.0f, 0.0f);
    dnnl::eltwise_forward::primitive_desc pd(d, engine_);
    primitive_ = dnnl::eltwise_forward(pd);
    args_[DNNL_ARG_SRC] = userMemory(md, 0);
    setDestination(pd.dst_desc(), md);
  }

  // Two inputs of one shape, or (bias) [d0, d1, rest] + bias[1, d1, 1].
  void buildBinary(const OpSpec& spec, algorithm alg, bool bias) {
    memory::desc a, b;
    if (bias) {
      const int64_t d0 = spec.shape[0], d1 = spec.shape[1];
      const int64_t rest = numElements(spec.shape) / (d0 * d1);
      a = plain({d0, d1, rest});
      b = plain({1, d1, 1});
    } else {
      a = b = plain({numElements(spec.shape)});
    }
    dnnl::binary::desc d(alg, a, b, a);
    dnnl::binary::primitive_desc pd(d, engine_);
    primitive_ = dnnl::binary(pd);
    args_[DNNL_ARG_SRC_0] = userMemory(a, 0);
    args_[DNNL_ARG_SRC_1] = userMemory(b, 1);
    setDestination(pd.dst_desc(), a);
  }

  // Rows of the last axis.
  memory::desc rows(const OpSpec& spec) {
    const int64_t n = spec.shape.back();
    return plain({numElements(spec.shape) / n, n});
  }

  void buildSoftmax(const OpSpec& spec) {
    const memory::desc md = rows(spec);
    args_[DNNL_ARG_SRC] = userMemory(md, 0);
    dnnl::softmax_forward::desc d(prop_kind::forward_inference, md, 1);
    dnnl::softmax_forward::primitive_desc pd(d, engine_);
    primitive_ = dnnl::softmax_forward(pd);
    setDestination(pd.dst_desc(), md);
  }

  void buildLayerNorm(const OpSpec& spec) {
    const memory::desc md = rows(spec);
    args_[DNNL_ARG_SRC] = userMemory(md, 0);
    dnnl::layer_normalization_forward::desc d(
        prop_kind::forward_inference, md, 1e-5f,
        dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift);
    dnnl::layer_normalization_forward::primitive_desc pd(d, engine_);
    primitive_ = dnnl::layer_normalization_forward(pd);
    const memory::desc scale = plain({spec.shape.back()});
    if (pd.weights_desc().get_size() != scale.get_size())
      throw std::runtime_error("oneDNN peer: unexpected layer normalization scale size");
    args_[DNNL_ARG_SCALE] = userMemory(pd.weights_desc(), 1);
    args_[DNNL_ARG_SHIFT] = userMemory(pd.weights_desc(), 2);
    setDestination(pd.dst_desc(), md);
  }

  void run() override {
    primitive_.execute(stream_, args_);
    stream_.wait();
  }

  std::vector<measure::CallBuffer> buffers() const override {
    std::vector<measure::CallBuffer> out;
    for (const auto& [arg, mem] : args_)
      out.push_back({mem.get_data_handle(), mem.get_desc().get_size(), arg == DNNL_ARG_WEIGHTS && constantWeights_});
    return out;
  }

  std::vector<float> output() override {
    memory plainDst = args_.at(DNNL_ARG_DST);
    if (plainDst.get_desc() != userDst_) {
      memory converted(userDst_, engine_);
      dnnl::reorder(plainDst, converted).execute(stream_, plainDst, converted);
      stream_.wait();
      plainDst = converted;
    }
    std::vector<float> out(static_cast<size_t>(outputSize_));
    std::memcpy(out.data(), plainDst.get_data_handle(), out.size() * sizeof(float));
    return out;
  }

 private:
  // A memory over input `index` as it is given (layout `md`).
  memory userMemory(const memory::desc& md, size_t index) {
    if (md.get_size() != inputs_.at(index).size() * sizeof(float))
      throw std::runtime_error("oneDNN peer: input " + std::to_string(index) + " does not match its descriptor");
    return memory(md, engine_, inputs_[index].data());
  }

  // Input `index` (layout `given`) in the layout the primitive wants, reordered
  // once here, outside the timed calls.
  memory inputAs(const memory::desc& wanted, const memory::desc& given, size_t index) {
    memory user = userMemory(given, index);
    if (wanted == given) return user;
    memory converted(wanted, engine_);
    dnnl::reorder(user, converted).execute(stream_, user, converted);
    stream_.wait();
    return converted;
  }

  // The primitive writes `dst` (allocated by oneDNN); output() converts it to
  // the op's layout `user`.
  void setDestination(const memory::desc& dst, const memory::desc& user) {
    args_[DNNL_ARG_DST] = memory(dst, engine_);
    userDst_ = user;
  }

  void buildDense(const OpSpec& spec) {
    const auto& s = spec.shape;
    // X[M,K] times W[N,K]^T: W is a [K,N] matrix stored column-major ("ba").
    const int64_t m = s[0], n = s[1], k = s[2];
    const memory::desc src = plain({m, k}), dst = plain({m, n}), bias = plain({1, n});
    const memory::desc weightsGiven({k, n}, Dt::f32, Tag::ba);
    dnnl::matmul::desc d(src, anyLayout({k, n}), bias, dst);
    dnnl::matmul::primitive_desc pd(d, engine_);
    primitive_ = dnnl::matmul(pd);
    args_[DNNL_ARG_SRC] = userMemory(src, 0);
    args_[DNNL_ARG_WEIGHTS] = inputAs(pd.weights_desc(), weightsGiven, 1);
    args_[DNNL_ARG_BIAS] = userMemory(bias, 2);
    setDestination(pd.dst_desc(), dst);
  }

  void buildMatmul(const OpSpec& spec, bool batched) {
    const auto& s = spec.shape;
    memory::desc a, b, c;
    if (!batched) {
      a = plain({s[0], s[2]}), b = plain({s[2], s[1]}), c = plain({s[0], s[1]});
    } else {
      a = plain({s[0], s[1], s[3]}), b = plain({s[0], s[3], s[2]}), c = plain({s[0], s[1], s[2]});
    }
    dnnl::matmul::desc d(a, b, c);
    dnnl::matmul::primitive_desc pd(d, engine_);
    primitive_ = dnnl::matmul(pd);
    args_[DNNL_ARG_SRC] = userMemory(a, 0);
    args_[DNNL_ARG_WEIGHTS] = userMemory(b, 1);
    setDestination(pd.dst_desc(), c);
  }

  void buildConv(const OpSpec& spec, bool withBias) {
    const memory::desc srcGiven = plain({spec.n, spec.c, spec.h, spec.w});
    const memory::desc dstGiven = plain({spec.n, spec.k, spec.oh, spec.ow});
    memory::dims weightDims;
    if (spec.groups == 1) {
      weightDims = {spec.k, spec.c, spec.r, spec.s};
    } else {
      weightDims = {spec.groups, spec.k / spec.groups, spec.c / spec.groups, spec.r, spec.s};
    }
    const memory::desc weightsGiven = plain(weightDims);
    const memory::desc biasGiven = withBias ? plain({spec.k}) : memory::desc();
    dnnl::convolution_forward::desc d(
        prop_kind::forward_inference, algorithm::convolution_direct, anyLayout({spec.n, spec.c, spec.h, spec.w}),
        anyLayout(weightDims), biasGiven, anyLayout({spec.n, spec.k, spec.oh, spec.ow}), {spec.stride, spec.stride},
        {spec.dilation - 1, spec.dilation - 1}, {spec.pad, spec.pad}, {spec.pad, spec.pad});
    dnnl::primitive_attr attr;
    if (withBias) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
      attr.set_post_ops(ops);
    }
    dnnl::convolution_forward::primitive_desc pd(d, attr, engine_);
    primitive_ = dnnl::convolution_forward(pd);
    args_[DNNL_ARG_SRC] = inputAs(pd.src_desc(), srcGiven, 0);
    args_[DNNL_ARG_WEIGHTS] = inputAs(pd.weights_desc(), weightsGiven, 1);
    if (withBias) args_[DNNL_ARG_BIAS] = inputAs(pd.bias_desc(), biasGiven, 2);
    setDestination(pd.dst_desc(), dstGiven);
  }

  void buildPool(const OpSpec& spec, algorithm alg, bool global) {
    const memory::desc src = plain({spec.n, spec.c, spec.h, spec.w});
    const memory::desc dst = plain({spec.n, spec.c, spec.oh, spec.ow});
    const memory::dims strides = global ? memory::dims{1, 1} : memory::dims{spec.stride, spec.stride};
    dnnl::pooling_forward::desc d(prop_kind::forward_inference, alg, src, dst, strides, {spec.r, spec.s},
                                  {spec.pad, spec.pad}, {spec.pad, spec.pad});
    dnnl::pooling_forward::primitive_desc pd(d, engine_);
    primitive_ = dnnl::pooling_forward(pd);
    args_[DNNL_ARG_SRC] = userMemory(src, 0);
    setDestination(pd.dst_desc(), dst);
  }

  // oneDNN sizes its work partition when a primitive is created: the thread
  // count is set first.
  runtime::OmpThreadCount threads_;
  std::vector<std::vector<float>> inputs_;  // the op's inputs as given
  // DNNL_ARG_WEIGHTS holds input 1; a model's constant for conv and dense
  // (matmul's B is an activation).
  bool constantWeights_ = false;
  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream_{engine_};
  dnnl::primitive primitive_;
  std::unordered_map<int, memory> args_;
  memory::desc userDst_;
  int64_t outputSize_ = 0;
};

}  // namespace

std::unique_ptr<PeerKernel> makeOnednnKernel(const OpSpec& spec, const std::vector<std::vector<float>>& inputs,
                                             int threads) {
  return std::make_unique<OnednnKernel>(spec, inputs, threads);
}

}  // namespace tessel::baseline::detail
