// Internal to tessel_baseline: cuBLAS (libcublas.so.13) and cuDNN
// (libcudnn.so.9), loaded with dlopen when a GPU peer first needs them, so
// that Tessel builds and runs where neither is installed. Only the handful of
// entry points the GPU peers call are declared here, with the enum values
// they pass copied from the vendor headers (named beside each constant); no
// vendor header is included.
#pragma once

#include <cstddef>
#include <string>

namespace tessel::baseline::detail::gpu {

// ---- cuBLAS (cublas_api.h, CUDA 13) ----

using CublasHandle = struct cublasContext*;
using CublasStatus = int;  // cublasStatus_t

constexpr CublasStatus kCublasSuccess = 0;  // CUBLAS_STATUS_SUCCESS
constexpr int kCublasOpN = 0;               // CUBLAS_OP_N
constexpr int kCublasOpT = 1;               // CUBLAS_OP_T
// CUBLAS_DEFAULT_MATH: single precision stays single precision (no TF32).
constexpr int kCublasDefaultMath = 0;

struct Cublas {
  CublasStatus (*create)(CublasHandle*);           // cublasCreate_v2
  CublasStatus (*destroy)(CublasHandle);           // cublasDestroy_v2
  CublasStatus (*setMathMode)(CublasHandle, int);  // cublasSetMathMode
  const char* (*statusString)(CublasStatus);       // cublasGetStatusString
  CublasStatus (*sgemm)(CublasHandle, int transa, int transb, int m, int n, int k, const float* alpha, const float* a,
                        int lda, const float* b, int ldb, const float* beta, float* c,
                        int ldc);  // cublasSgemm_v2 (column-major)
  CublasStatus (*sgemmStridedBatched)(CublasHandle, int transa, int transb, int m, int n, int k, const float* alpha,
                                      const float* a, int lda, long long strideA, const float* b, int ldb,
                                      long long strideB, const float* beta, float* c, int ldc, long long strideC,
                                      int batchCount);  // cublasSgemmStridedBatched

  // Throws std::runtime_error naming the call and cuBLAS's status.
  void check(CublasStatus status, const char* call) const;
};

// cuBLAS, loaded once. Throws std::runtime_error ("cuBLAS: libcublas.so.13
// could not be loaded (...)") when it is not there.
const Cublas& cublas();

// ---- cuDNN (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h, cuDNN 9) ----

using CudnnHandle = struct cudnnContext*;
using CudnnTensorDesc = struct cudnnTensorStruct*;
using CudnnFilterDesc = struct cudnnFilterStruct*;
using CudnnConvDesc = struct cudnnConvolutionStruct*;
using CudnnActivationDesc = struct cudnnActivationStruct*;
using CudnnStatus = int;  // cudnnStatus_t

constexpr CudnnStatus kCudnnSuccess = 0;   // CUDNN_STATUS_SUCCESS (cudnn_graph.h)
constexpr int kCudnnFloat = 0;             // CUDNN_DATA_FLOAT (cudnn_graph.h)
constexpr int kCudnnNchw = 0;              // CUDNN_TENSOR_NCHW (cudnn_graph.h)
constexpr int kCudnnCrossCorrelation = 1;  // CUDNN_CROSS_CORRELATION (cudnn_graph.h): no filter flip
constexpr int kCudnnDefaultMath = 0;       // CUDNN_DEFAULT_MATH (cudnn_graph.h)
constexpr int kCudnnFmaMath = 3;           // CUDNN_FMA_MATH (cudnn_graph.h): FP32 FMA kernels only, no TF32
constexpr int kCudnnRelu = 1;              // CUDNN_ACTIVATION_RELU (cudnn_graph.h)
constexpr int kCudnnNotPropagateNan = 0;   // CUDNN_NOT_PROPAGATE_NAN (cudnn_graph.h)
constexpr int kCudnnFwdAlgoCount = 8;      // CUDNN_CONVOLUTION_FWD_ALGO_COUNT (cudnn_ops.h)

// cudnnConvolutionFwdAlgoPerf_t (cudnn_cnn.h).
struct CudnnFwdAlgoPerf {
  int algo;  // cudnnConvolutionFwdAlgo_t
  CudnnStatus status;
  float time;       // milliseconds
  size_t memory;    // workspace bytes
  int determinism;  // cudnnDeterminism_t
  int mathType;     // cudnnMathType_t
  int reserved[3];
};

struct Cudnn {
  CudnnStatus (*create)(CudnnHandle*);            // cudnnCreate
  CudnnStatus (*destroy)(CudnnHandle);            // cudnnDestroy
  const char* (*errorString)(CudnnStatus);        // cudnnGetErrorString
  void (*lastErrorString)(char*, size_t);         // cudnnGetLastErrorString (optional: may be null)
  CudnnStatus (*createTensor)(CudnnTensorDesc*);  // cudnnCreateTensorDescriptor
  CudnnStatus (*destroyTensor)(CudnnTensorDesc);
  CudnnStatus (*setTensor4d)(CudnnTensorDesc, int format, int dataType, int n, int c, int h, int w);
  CudnnStatus (*createFilter)(CudnnFilterDesc*);  // cudnnCreateFilterDescriptor
  CudnnStatus (*destroyFilter)(CudnnFilterDesc);
  CudnnStatus (*setFilter4d)(CudnnFilterDesc, int dataType, int format, int k, int c, int h, int w);
  CudnnStatus (*createConvolution)(CudnnConvDesc*);  // cudnnCreateConvolutionDescriptor
  CudnnStatus (*destroyConvolution)(CudnnConvDesc);
  CudnnStatus (*setConvolution2d)(CudnnConvDesc, int padH, int padW, int strideH, int strideW, int dilationH,
                                  int dilationW, int mode, int computeType);
  CudnnStatus (*setGroupCount)(CudnnConvDesc, int);  // cudnnSetConvolutionGroupCount
  CudnnStatus (*setMathType)(CudnnConvDesc, int);    // cudnnSetConvolutionMathType
  CudnnStatus (*outputDim)(CudnnConvDesc, CudnnTensorDesc, CudnnFilterDesc, int* n, int* c, int* h,
                           int* w);                       // cudnnGetConvolution2dForwardOutputDim
  CudnnStatus (*createActivation)(CudnnActivationDesc*);  // cudnnCreateActivationDescriptor
  CudnnStatus (*destroyActivation)(CudnnActivationDesc);
  CudnnStatus (*setActivation)(CudnnActivationDesc, int mode, int nanPropagation, double coef);
  CudnnStatus (*findForward)(CudnnHandle, CudnnTensorDesc, CudnnFilterDesc, CudnnConvDesc, CudnnTensorDesc,
                             int requested, int* returned,
                             CudnnFwdAlgoPerf* results);  // cudnnFindConvolutionForwardAlgorithm
  CudnnStatus (*workspaceSize)(CudnnHandle, CudnnTensorDesc, CudnnFilterDesc, CudnnConvDesc, CudnnTensorDesc, int algo,
                               size_t* bytes);  // cudnnGetConvolutionForwardWorkspaceSize
  CudnnStatus (*forward)(CudnnHandle, const void* alpha, CudnnTensorDesc, const void* x, CudnnFilterDesc, const void* w,
                         CudnnConvDesc, int algo, void* workspace, size_t workspaceBytes, const void* beta,
                         CudnnTensorDesc, void* y);  // cudnnConvolutionForward
  CudnnStatus (*biasActivationForward)(CudnnHandle, const void* alpha1, CudnnTensorDesc, const void* x, CudnnFilterDesc,
                                       const void* w, CudnnConvDesc, int algo, void* workspace, size_t workspaceBytes,
                                       const void* alpha2, CudnnTensorDesc zDesc, const void* z,
                                       CudnnTensorDesc biasDesc, const void* bias, CudnnActivationDesc,
                                       CudnnTensorDesc yDesc, void* y);  // cudnnConvolutionBiasActivationForward

  // Throws std::runtime_error naming the call, cuDNN's status and its last
  // error message.
  void check(CudnnStatus status, const char* call) const;
};

// cuDNN, loaded once. Throws std::runtime_error ("cuDNN: libcudnn.so.9 could
// not be loaded (...)") when it is not there.
const Cudnn& cudnn();

// Why each library cannot be loaded here; "" when it can. Loads it.
std::string cublasUnavailableReason();
std::string cudnnUnavailableReason();

}  // namespace tessel::baseline::detail::gpu
