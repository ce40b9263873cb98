// cuBLAS and cuDNN loaded with dlopen, once per process (see cuda_libraries.h).
#include "baseline/cuda_libraries.h"

#include <dlfcn.h>

#include <stdexcept>

namespace tessel::baseline::detail::gpu {

namespace {

// A library's table, or why there is none.
template <class Table>
struct Loaded {
  Table api{};
  std::string error;  // empty: usable
};

// Opens `soname` and binds entry points by name into a table; the first
// failure is kept as the table's error, prefixed with the library's name.
class Binder {
 public:
  Binder(const char* library, const char* soname) : library_(library), soname_(soname) {
    handle_ = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* why = dlerror();
      error_ = library_ + ": " + soname_ + " could not be loaded (" + (why ? why : "unknown error") + ")";
    }
  }

  template <class Fn>
  void bind(Fn& fn, const char* name, bool optional = false) {
    fn = nullptr;
    if (!handle_) return;
    fn = reinterpret_cast<Fn>(dlsym(handle_, name));
    if (!fn && !optional && error_.empty()) error_ = library_ + ": " + soname_ + " lacks " + name + " (too old?)";
  }

  const std::string& error() const { return error_; }

 private:
  std::string library_, soname_;
  void* handle_ = nullptr;  // kept open for the process's life
  std::string error_;
};

Loaded<Cublas> loadCublas() {
  Loaded<Cublas> out;
  Binder b("cuBLAS", "libcublas.so.13");
  Cublas& t = out.api;
  b.bind(t.create, "cublasCreate_v2");
  b.bind(t.destroy, "cublasDestroy_v2");
  b.bind(t.setMathMode, "cublasSetMathMode");
  b.bind(t.statusString, "cublasGetStatusString");
  b.bind(t.sgemm, "cublasSgemm_v2");
  b.bind(t.sgemmStridedBatched, "cublasSgemmStridedBatched");
  out.error = b.error();
  return out;
}

Loaded<Cudnn> loadCudnn() {
  Loaded<Cudnn> out;
  Binder b("cuDNN", "libcudnn.so.9");
  Cudnn& t = out.api;
  b.bind(t.create, "cudnnCreate");
  b.bind(t.destroy, "cudnnDestroy");
  b.bind(t.errorString, "cudnnGetErrorString");
  b.bind(t.lastErrorString, "cudnnGetLastErrorString", true);
  b.bind(t.createTensor, "cudnnCreateTensorDescriptor");
  b.bind(t.destroyTensor, "cudnnDestroyTensorDescriptor");
  b.bind(t.setTensor4d, "cudnnSetTensor4dDescriptor");
  b.bind(t.createFilter, "cudnnCreateFilterDescriptor");
  b.bind(t.destroyFilter, "cudnnDestroyFilterDescriptor");
  b.bind(t.setFilter4d, "cudnnSetFilter4dDescriptor");
  b.bind(t.createConvolution, "cudnnCreateConvolutionDescriptor");
  b.bind(t.destroyConvolution, "cudnnDestroyConvolutionDescriptor");
  b.bind(t.setConvolution2d, "cudnnSetConvolution2dDescriptor");
  b.bind(t.setGroupCount, "cudnnSetConvolutionGroupCount");
  b.bind(t.setMathType, "cudnnSetConvolutionMathType");
  b.bind(t.outputDim, "cudnnGetConvolution2dForwardOutputDim");
  b.bind(t.createActivation, "cudnnCreateActivationDescriptor");
  b.bind(t.destroyActivation, "cudnnDestroyActivationDescriptor");
  b.bind(t.setActivation, "cudnnSetActivationDescriptor");
  b.bind(t.findForward, "cudnnFindConvolutionForwardAlgorithm");
  b.bind(t.workspaceSize, "cudnnGetConvolutionForwardWorkspaceSize");
  b.bind(t.forward, "cudnnConvolutionForward");
  b.bind(t.biasActivationForward, "cudnnConvolutionBiasActivationForward");
  out.error = b.error();
  return out;
}

const Loaded<Cublas>& loadedCublas() {
  static const Loaded<Cublas> l = loadCublas();
  return l;
}

const Loaded<Cudnn>& loadedCudnn() {
  static const Loaded<Cudnn> l = loadCudnn();
  return l;
}

}  // namespace

void Cublas::check(CublasStatus status, const char* call) const {
  if (status == kCublasSuccess) return;
  const char* text = statusString ? statusString(status) : nullptr;
  throw std::runtime_error(std::string(call) + ": " + (text ? text : "unknown error") + " (cuBLAS status " +
                           std::to_string(status) + ")");
}

void Cudnn::check(CudnnStatus status, const char* call) const {
  if (status == kCudnnSuccess) return;
  const char* text = errorString ? errorString(status) : nullptr;
  std::string message =
      std::string(call) + ": " + (text ? text : "unknown error") + " (cuDNN status " + std::to_string(status) + ")";
  if (lastErrorString) {
    char detail[512] = {};
    lastErrorString(detail, sizeof detail);
    if (detail[0]) message += ": " + std::string(detail);
  }
  throw std::runtime_error(message);
}

const Cublas& cublas() {
  const Loaded<Cublas>& l = loadedCublas();
  if (!l.error.empty()) throw std::runtime_error(l.error);
  return l.api;
}

const Cudnn& cudnn() {
  const Loaded<Cudnn>& l = loadedCudnn();
  if (!l.error.empty()) throw std::runtime_error(l.error);
  return l.api;
}

std::string cublasUnavailableReason() {
  return loadedCublas().error;
}

std::string cudnnUnavailableReason() {
  return loadedCudnn().error;
}

}  // namespace tessel::baseline::detail::gpu
