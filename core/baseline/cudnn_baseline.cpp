// The cuDNN peer: conv2d, conv2d_bias_relu and depthwise_conv2d in NCHW with
// KCRS weights (the op's own layout: no reorder), FP32 throughout
// (CUDNN_FMA_MATH: no TF32). The algorithm is the fastest of
// cudnnFindConvolutionForwardAlgorithm's that runs (Find times them all
// once); its workspace is allocated beforehand and not timed. A call is one
// cudnnConvolutionForward, or for conv2d_bias_relu one fused
// cudnnConvolutionBiasActivationForward (y = relu(conv(x) + bias)). Every
// other op is not applicable.
#include <map>
#include <stdexcept>

#include "baseline/cuda_libraries.h"
#include "baseline/cuda_peer.h"

namespace tessel::baseline::detail::gpu {

namespace {

// The convolutions, and whether bias and ReLU are fused into them.
const std::map<std::string, bool>& convolutions() {
  static const std::map<std::string, bool> ops = {
      {"conv2d", false}, {"depthwise_conv2d", false}, {"conv2d_bias_relu", true}};
  return ops;
}

// cuDNN's handle and descriptors, each destroyed with the object once made.
struct CudnnObjects {
  explicit CudnnObjects(const Cudnn& d) : dnn(d) {}
  ~CudnnObjects() {
    if (relu) dnn.destroyActivation(relu);
    if (conv) dnn.destroyConvolution(conv);
    if (w) dnn.destroyFilter(w);
    for (CudnnTensorDesc t : {bias, y, x})
      if (t) dnn.destroyTensor(t);
    if (handle) dnn.destroy(handle);
  }
  CudnnObjects(const CudnnObjects&) = delete;
  CudnnObjects& operator=(const CudnnObjects&) = delete;

  const Cudnn& dnn;
  CudnnHandle handle = nullptr;
  CudnnTensorDesc x = nullptr, y = nullptr, bias = nullptr;
  CudnnFilterDesc w = nullptr;
  CudnnConvDesc conv = nullptr;
  CudnnActivationDesc relu = nullptr;
};

int cudnnInt(int64_t v) {
  return fitInt(v, "cuDNN");
}

class CudnnConv : public GpuKernel {
 public:
  CudnnConv(const OpSpec& spec, const std::vector<std::vector<float>>& inputs, bool biasRelu)
      : GpuKernel(spec, inputs), dnn_(cudnn()), o_(dnn_), biasRelu_(biasRelu) {
    dnn_.check(dnn_.create(&o_.handle), "cudnnCreate");
    describe(spec);
    if (biasRelu_) describeBiasRelu(spec);
    chooseAlgorithm();
  }

  void run() override { forward(algo_, workspace_); }

 private:
  // Input [n,c,h,w], weights [k,c/groups,r,s], output [n,k,oh,ow].
  void describe(const OpSpec& s) {
    dnn_.check(dnn_.createTensor(&o_.x), "cudnnCreateTensorDescriptor");
    dnn_.check(dnn_.createTensor(&o_.y), "cudnnCreateTensorDescriptor");
    dnn_.check(dnn_.createFilter(&o_.w), "cudnnCreateFilterDescriptor");
    dnn_.check(dnn_.createConvolution(&o_.conv), "cudnnCreateConvolutionDescriptor");
    dnn_.check(
        dnn_.setTensor4d(o_.x, kCudnnNchw, kCudnnFloat, cudnnInt(s.n), cudnnInt(s.c), cudnnInt(s.h), cudnnInt(s.w)),
        "cudnnSetTensor4dDescriptor");
    dnn_.check(dnn_.setFilter4d(o_.w, kCudnnFloat, kCudnnNchw, cudnnInt(s.k), cudnnInt(s.c / s.groups), cudnnInt(s.r),
                                cudnnInt(s.s)),
               "cudnnSetFilter4dDescriptor");
    const int pad = cudnnInt(s.pad), stride = cudnnInt(s.stride), dilation = cudnnInt(s.dilation);
    dnn_.check(dnn_.setConvolution2d(o_.conv, pad, pad, stride, stride, dilation, dilation, kCudnnCrossCorrelation,
                                     kCudnnFloat),
               "cudnnSetConvolution2dDescriptor");
    dnn_.check(dnn_.setGroupCount(o_.conv, cudnnInt(s.groups)), "cudnnSetConvolutionGroupCount");
    dnn_.check(dnn_.setMathType(o_.conv, kCudnnFmaMath), "cudnnSetConvolutionMathType");
    int n = 0, k = 0, oh = 0, ow = 0;
    dnn_.check(dnn_.outputDim(o_.conv, o_.x, o_.w, &n, &k, &oh, &ow), "cudnnGetConvolution2dForwardOutputDim");
    if (n != s.n || k != s.k || oh != s.oh || ow != s.ow)
      throw std::runtime_error("cuDNN: the convolution's output would be " + std::to_string(n) + "x" +
                               std::to_string(k) + "x" + std::to_string(oh) + "x" + std::to_string(ow) +
                               ", the op's is " + std::to_string(s.n) + "x" + std::to_string(s.k) + "x" +
                               std::to_string(s.oh) + "x" + std::to_string(s.ow));
    dnn_.check(dnn_.setTensor4d(o_.y, kCudnnNchw, kCudnnFloat, n, k, oh, ow), "cudnnSetTensor4dDescriptor");
  }

  // The bias [k] as a 1 x k x 1 x 1 tensor, and ReLU.
  void describeBiasRelu(const OpSpec& s) {
    dnn_.check(dnn_.createTensor(&o_.bias), "cudnnCreateTensorDescriptor");
    dnn_.check(dnn_.setTensor4d(o_.bias, kCudnnNchw, kCudnnFloat, 1, cudnnInt(s.k), 1, 1),
               "cudnnSetTensor4dDescriptor");
    dnn_.check(dnn_.createActivation(&o_.relu), "cudnnCreateActivationDescriptor");
    dnn_.check(dnn_.setActivation(o_.relu, kCudnnRelu, kCudnnNotPropagateNan, 0.0), "cudnnSetActivationDescriptor");
  }

  // Find's algorithms, fastest first: the first FP32 one that runs here (with
  // the workspace it asks for, and for the fused call) is kept.
  void chooseAlgorithm() {
    CudnnFwdAlgoPerf perf[kCudnnFwdAlgoCount] = {};
    int returned = 0;
    dnn_.check(dnn_.findForward(o_.handle, o_.x, o_.w, o_.conv, o_.y, kCudnnFwdAlgoCount, &returned, perf),
               "cudnnFindConvolutionForwardAlgorithm");
    std::string firstError;
    for (int i = 0; i < returned && i < kCudnnFwdAlgoCount; ++i) {
      const CudnnFwdAlgoPerf& p = perf[i];
      if (p.status != kCudnnSuccess || (p.mathType != kCudnnFmaMath && p.mathType != kCudnnDefaultMath)) continue;
      try {
        size_t bytes = 0;
        dnn_.check(dnn_.workspaceSize(o_.handle, o_.x, o_.w, o_.conv, o_.y, p.algo, &bytes),
                   "cudnnGetConvolutionForwardWorkspaceSize");
        DeviceBuffer workspace(bytes);
        forward(p.algo, workspace);
        cuda::driver().check(cuda::driver().ctxSynchronize(), "cuCtxSynchronize");
        algo_ = p.algo;
        workspace_ = std::move(workspace);
        return;
      } catch (const std::runtime_error& e) {
        if (firstError.empty()) firstError = e.what();
      }
    }
    throw std::runtime_error("cuDNN has no FP32 algorithm that runs this convolution" +
                             (firstError.empty() ? std::string() : " (" + firstError + ")"));
  }

  void forward(int algo, const DeviceBuffer& workspace) {
    const float one = 1.0f, zero = 0.0f;
    const float* x = inputs_[0].floats();
    const float* w = inputs_[1].floats();
    float* y = output_.floats();
    if (!biasRelu_) {
      dnn_.check(dnn_.forward(o_.handle, &one, o_.x, x, o_.w, w, o_.conv, algo, workspace.floats(), workspace.bytes(),
                              &zero, o_.y, y),
                 "cudnnConvolutionForward");
      return;
    }
    // y = relu(1 * conv(x) + 0 * z + bias), with z = y.
    dnn_.check(
        dnn_.biasActivationForward(o_.handle, &one, o_.x, x, o_.w, w, o_.conv, algo, workspace.floats(),
                                   workspace.bytes(), &zero, o_.y, y, o_.bias, inputs_[2].floats(), o_.relu, o_.y, y),
        "cudnnConvolutionBiasActivationForward");
  }

  const Cudnn& dnn_;
  CudnnObjects o_;
  bool biasRelu_;
  int algo_ = 0;            // cudnnConvolutionFwdAlgo_t
  DeviceBuffer workspace_;  // the algorithm's, allocated once
};

}  // namespace

const std::set<std::string>& cudnnOps() {
  static const std::set<std::string> ops = [] {
    std::set<std::string> out;
    for (const auto& [op, fused] : convolutions())
      out.insert(op);
    return out;
  }();
  return ops;
}

std::unique_ptr<GpuKernel> makeCudnnKernel(const OpSpec& spec, const std::vector<std::vector<float>>& inputs) {
  const auto conv = convolutions().find(spec.op);
  if (conv == convolutions().end()) throw NotApplicable("not applicable to " + spec.op);
  return std::make_unique<CudnnConv>(spec, inputs, conv->second);
}

}  // namespace tessel::baseline::detail::gpu
