// The GPU half of a tessel-worker process (worker.h): measures a CUDA
// program built by CudaProgramBuilder (its manifest and CUBIN,
// cuda_manifest.h) on this machine's first GPU (CUDA_VISIBLE_DEVICES picks
// another), through the driver API loaded at run time (cuda_driver.h).
//
// For each request: the manifest is read and checked against the task, the
// CUBIN loaded (modules cached by path), every buffer allocated with guard
// zones on both sides (canaries checked after the checked run), the task's
// inputs uploaded (the same seeded data the CPU half makes), outputs and
// temporaries filled with NaN. The kernels are launched once in manifest
// order and the outputs compared with the reference computed on the CPU;
// then timed with CUDA events on the default stream: warm-up runs, then
// `repeats` repeats, each of `number` runs of the whole program, `number`
// doubling until a repeat lasts at least minRepeatSeconds. Unless the cache
// state is Warm, the L2 cache is flushed (a write over twice its size)
// before every timed run and each run is timed alone; on the GPU, `model`
// and `on` are the same: the whole L2 is flushed.
//
// A driver error that loses the context (an illegal address, a launch
// failure) is an error response that says the worker exits: the process
// cannot use the GPU again, so the runner starts a new one.
#pragma once

#include <memory>
#include <vector>

#include "measure/worker_protocol.h"

namespace tessel::measure {

class CudaWorker {
 public:
  CudaWorker();
  ~CudaWorker();
  CudaWorker(const CudaWorker&) = delete;
  CudaWorker& operator=(const CudaWorker&) = delete;

  // `inputs`: the task's inputs; `reference`: the expected outputs (null:
  // outputs need only be finite). Never throws: every failure is a response.
  protocol::Response measure(const protocol::Request& req, const std::vector<std::vector<float>>& inputs,
                             const std::vector<std::vector<float>>* reference);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel::measure
