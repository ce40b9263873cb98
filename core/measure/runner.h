// Measures compiled kernels in isolated `tessel-worker` processes, on the CPU
// or (RunOptions::device) on the GPU.
//
// Kernel ABI (CPU): extern "C" int symbol(float* const* args), where args are
// the task's input buffers then its output buffers (float32, sizes from
// RunTask::bufferSizes, or KernelRef::packedSizes for packed inputs); it
// returns 0 on success.
//
// Each kernel runs on random inputs (seeded per task, so every kernel of a
// task sees the same data), first once with outputs pre-filled with NaN to be
// checked against the task's reference kernel, then timed: warm-up runs, then
// `repeats` repeats, each running the kernel `number` times where `number`
// grows until one repeat lasts at least `minRepeatSeconds`; the cost of a
// repeat is its time / number. Unless the cache state is Warm, each call
// first has the kernel's buffers put where RunOptions::cacheState says
// (cache_state.h, cache_flush.h), only the calls are timed, and a repeat is
// long enough once calls and evictions together last minRepeatSeconds. A crash, a
// hang (per-kernel timeout, or its CPU time limit), a wrong answer or a system
// call the worker's sandbox stops is an error result; the worker is replaced
// and the batch goes on.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "measure/backend.h"
#include "measure/cache_state.h"
#include "measure/measure_types.h"
#include "measure/timing_rule.h"
#include "support/cancellation.h"
#include "target/target.h"

namespace tessel::measure {

struct RunOptions {
  std::string workerPath;  // the tessel-worker executable
  // Where the kernels run: the CPU (KernelRef::library is a shared library)
  // or CUDA (a CUDA program's manifest, measured on the GPU: cuda_worker.h).
  target::Target::Kind device = target::Target::Kind::Cpu;
  double timeoutSeconds = 10;  // per kernel, checking and timing included
  int warmup = kDefaultTiming.warmup;
  int repeats = kDefaultTiming.repeats;
  double minRepeatSeconds = kDefaultTiming.minRepeatSeconds;  // measure/timing_rule.h
  // Where the kernel's buffers are at each timed call (evictions not timed).
  CacheState cacheState = CacheState::Warm;
  unsigned seed = 1;
  // OpenMP threads the kernels run on (the worker's OMP_NUM_THREADS, so every
  // parallel region of a kernel gets this team); 0: one per core.
  int threads = 0;
  // The walls the worker runs kernels in (worker_sandbox.h): the profile of
  // the device. Off only to debug a kernel under a tool that needs more.
  bool sandbox = true;
  // CPU seconds one kernel's request may use (the worker's RLIMIT_CPU, set
  // before each request): a backstop the kernel cannot lift, should the
  // runner stop watching the wall clock; 0: the timeout times the cores the
  // kernel may use, plus a second.
  double cpuSecondsPerKernel = 0;
  // Set: the kernel being measured is abandoned (its worker killed) and the
  // rest are not run; their results say "cancelled".
  support::CancelFlag cancel;
};

// The runner of both backends (measure/backend.h): the worker process does
// the device's part.
class Runner final : public ProgramRunner {
 public:
  explicit Runner(RunOptions options);
  ~Runner() override;
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Measures the kernels one after another (never two at once: they own the cores).
  std::vector<MeasureResult> run(const RunTask& task, const std::vector<KernelRef>& kernels) override;
  // Workers started so far (1 + replacements after crashes and hangs).
  int workersStarted() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel::measure
