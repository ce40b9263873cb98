// Dispatch and timing of the GPU baselines (cuda_baselines.h); the peers live
// in cublas_baseline.cpp and cudnn_baseline.cpp, their device plumbing in
// cuda_device.cpp.
#include "baseline/cuda_baselines.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <new>
#include <random>
#include <stdexcept>

#include "baseline/baselines.h"
#include "baseline/cuda_libraries.h"
#include "baseline/cuda_peer.h"
#include "measure/timing_rule.h"

namespace tessel::baseline {

namespace {

using detail::OpSpec;
namespace gpu = detail::gpu;

// The CUDA worker's timing rule.
const measure::TimingRule& kRule = measure::kDefaultTiming;

struct Peer {
  const char* name;
  std::optional<double> CudaBaselineResult::*seconds;
  const std::set<std::string>& (*ops)();
  std::string (*libraryUnavailable)();  // "" when the library loads
  std::unique_ptr<gpu::GpuKernel> (*make)(const OpSpec&, const std::vector<std::vector<float>>&);
};

const std::vector<Peer>& peers() {
  static const std::vector<Peer> all = {
      {"cublas", &CudaBaselineResult::cublasSeconds, gpu::cublasOps, gpu::cublasUnavailableReason,
       gpu::makeCublasKernel},
      {"cudnn", &CudaBaselineResult::cudnnSeconds, gpu::cudnnOps, gpu::cudnnUnavailableReason, gpu::makeCudnnKernel},
  };
  return all;
}

const Peer* findPeer(const std::string& name) {
  for (const Peer& p : peers())
    if (name == p.name) return &p;
  return nullptr;
}

std::string unknownPeer(const std::string& name) {
  return "unknown GPU peer '" + name + "' (known: cublas, cudnn)";
}

// The CPU peers' inputs: the same seed and distribution.
std::vector<std::vector<float>> randomInputs(const OpSpec& spec) {
  std::mt19937 rng(20240601u);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::vector<float>> inputs;
  for (const auto& s : spec.inputs) {
    std::vector<float> v(size_t(detail::numElements(s)));
    for (float& x : v)
      x = dist(rng);
    inputs.push_back(std::move(v));
  }
  return inputs;
}

void checkInputs(const OpSpec& spec, const std::vector<std::vector<float>>& inputs) {
  if (inputs.size() != spec.inputs.size())
    throw std::invalid_argument(spec.op + ": expected " + std::to_string(spec.inputs.size()) + " inputs, got " +
                                std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (int64_t(inputs[i].size()) != detail::numElements(spec.inputs[i]))
      throw std::invalid_argument(spec.op + ": input " + std::to_string(i) + " needs " +
                                  std::to_string(detail::numElements(spec.inputs[i])) + " values, got " +
                                  std::to_string(inputs[i].size()));
}

// Throws std::runtime_error, the note, when the peer's library is missing.
void requireLibrary(const Peer& peer) {
  if (const std::string why = peer.libraryUnavailable(); !why.empty()) throw std::runtime_error(why);
}

// One repeat of `number` calls: the GPU's seconds for them, and whether the
// repeat lasted long enough.
using Repeat = measure::RepeatTime;

Repeat warmRepeat(gpu::GpuKernel& kernel, gpu::EventTimer& timer, int64_t number) {
  timer.start();
  for (int64_t i = 0; i < number; ++i)
    kernel.run();
  timer.stop();
  const double seconds = timer.seconds();
  return {seconds, seconds >= kRule.minRepeatSeconds};
}

// Each call timed alone, after the cache state was entered.
Repeat flushedRepeat(gpu::GpuKernel& kernel, const gpu::CacheConditioner& cache, gpu::EventTimer& timer,
                     int64_t number) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  Repeat r;
  for (int64_t i = 0; i < number; ++i) {
    cache.prepare();
    timer.start();
    kernel.run();
    timer.stop();
    r.seconds += timer.seconds();
  }
  r.longEnough = r.seconds >= kRule.minRepeatSeconds ||
                 std::chrono::duration<double>(Clock::now() - start).count() >= kRule.minRepeatSeconds;
  return r;
}

// Seconds per call of each repeat, after a warm-up.
std::vector<double> timeKernel(const gpu::GpuSession& session, gpu::GpuKernel& kernel,
                               const gpu::CacheConditioner& cache) {
  for (int i = 0; i < kRule.warmup; ++i)
    kernel.run();
  session.synchronize();
  gpu::EventTimer timer;
  // The CUDA worker's cap: a launch costs microseconds.
  const int64_t maxNumber = cache.active() ? measure::kMaxFlushedNumber : measure::kMaxGpuNumber;
  return *measure::timeRepeats(kRule, maxNumber, [&](int64_t number) -> std::optional<Repeat> {
    return cache.active() ? flushedRepeat(kernel, cache, timer, number) : warmRepeat(kernel, timer, number);
  });
}

double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double spreadOf(const std::vector<double>& v) {
  return medianOf(v) / *std::min_element(v.begin(), v.end());
}

// One checked call (a peer that computes NaN gets no time), then the timing,
// taken again when its repeats spread.
void measurePeer(const Peer& peer, const OpSpec& spec, const std::vector<std::vector<float>>& inputs,
                 measure::CacheState cacheState, const gpu::GpuSession& session, CudaBaselineResult& result) {
  std::unique_ptr<gpu::GpuKernel> kernel = peer.make(spec, inputs);
  kernel->run();
  const std::vector<float> out = kernel->output();
  if (std::any_of(out.begin(), out.end(), [](float v) { return !std::isfinite(v); }))
    throw std::runtime_error("the output contains NaN or infinity");
  const gpu::CacheConditioner cache(session, *kernel, cacheState);
  std::vector<double> costs = timeKernel(session, *kernel, cache);
  if (spreadOf(costs) > kDisturbedSpread) {
    std::vector<double> again = timeKernel(session, *kernel, cache);
    const std::string why = disturbanceOf(costs, again);
    if (!why.empty()) result.disturbed[peer.name] = why;
    if (spreadOf(again) < spreadOf(costs)) costs = again;
  }
  result.repeats[peer.name] = costs;
  result.*peer.seconds = medianOf(costs);
}

// The GPU session, opened by the first peer that needs it; its failure is
// kept as every later peer's note too.
class LazySession {
 public:
  const gpu::GpuSession& get() {
    if (!session_ && error_.empty()) {
      try {
        session_ = std::make_unique<gpu::GpuSession>();
      } catch (const std::exception& e) {
        error_ = e.what();
      }
    }
    if (!session_) throw std::runtime_error(error_);
    return *session_;
  }

 private:
  std::unique_ptr<gpu::GpuSession> session_;
  std::string error_;
};

}  // namespace

const std::vector<std::string>& cudaPeerNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Peer& p : peers())
      out.push_back(p.name);
    return out;
  }();
  return names;
}

bool cudaPeerApplies(const std::string& peer, const std::string& op) {
  const Peer* p = findPeer(peer);
  return p && p->ops().count(op) > 0;
}

std::string cudaPeerUnavailableReason(const std::string& peer) {
  const Peer* p = findPeer(peer);
  if (!p) return unknownPeer(peer);
  if (std::string why = measure::cuda::unavailableReason(); !why.empty()) return why;
  return p->libraryUnavailable();
}

CudaBaselineResult measureCudaBaselines(const std::string& op, const std::vector<int64_t>& shape,
                                        measure::CacheState cacheState) {
  const OpSpec spec = detail::specOf(op, shape);  // throws std::invalid_argument
  CudaBaselineResult result;
  LazySession session;  // outlives every kernel below
  std::vector<std::vector<float>> inputs;
  for (const Peer& peer : peers()) {
    try {
      if (!peer.ops().count(op)) throw detail::NotApplicable("not applicable to " + op);
      const gpu::GpuSession& gpuSession = session.get();
      result.gpu = gpuSession.info().name;
      requireLibrary(peer);
      if (inputs.empty()) inputs = randomInputs(spec);
      measurePeer(peer, spec, inputs, cacheState, gpuSession, result);
    } catch (const std::bad_alloc&) {
      result.notes[peer.name] = "out of memory";
    } catch (const std::exception& e) {  // detail::NotApplicable included
      result.notes[peer.name] = e.what();
    } catch (...) {
      result.notes[peer.name] = "unknown error";
    }
  }
  return result;
}

std::vector<float> runCudaBaselineOnce(const std::string& peer, const std::string& op,
                                       const std::vector<int64_t>& shape,
                                       const std::vector<std::vector<float>>& inputs) {
  const Peer* p = findPeer(peer);
  if (!p) throw std::invalid_argument(unknownPeer(peer));
  const OpSpec spec = detail::specOf(op, shape);
  checkInputs(spec, inputs);
  if (!p->ops().count(op)) throw detail::NotApplicable("not applicable to " + op);
  const gpu::GpuSession session;  // outlives the kernel
  requireLibrary(*p);
  std::unique_ptr<gpu::GpuKernel> kernel = p->make(spec, inputs);
  kernel->run();
  return kernel->output();
}

}  // namespace tessel::baseline
