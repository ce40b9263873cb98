// Dispatch and timing of the vendor baselines; the peers themselves live in
// one translation unit each.
#include "baseline/baselines.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <new>
#include <random>
#include <stdexcept>
#include <thread>

#include "baseline/peer.h"
#include "measure/cache_flush.h"
#include "measure/timing_rule.h"
#include "runtime/thread_team.h"
#include "te/operators.h"

namespace tessel::baseline {

namespace detail {

int64_t numElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

}  // namespace detail

namespace {

using detail::OpSpec;
using detail::PeerKernel;

OpSpec parseOp(const std::string& op, const std::vector<int64_t>& shape) {
  const te::ComputeDAG dag = te::makeOperator(op, shape);  // validates, throws std::invalid_argument
  OpSpec spec;
  spec.op = op;
  spec.shape = shape;
  for (const std::string& name : dag.inputs()) {
    spec.inputs.push_back(dag.op(name).shape);
    spec.weights.push_back(dag.op(name).layoutFree);
  }
  if (dag.outputs().size() != 1) throw std::invalid_argument(op + ": expected one output");
  spec.output = dag.op(dag.outputs().front()).shape;

  // The image ops' shape lists (te/operators.cpp), decoded by op.
  using Decode = std::function<void(OpSpec&, const std::vector<int64_t>&)>;
  const Decode convolution = [](OpSpec& p, const std::vector<int64_t>& s) {
    p.conv = true;
    p.n = s[0], p.c = s[1], p.h = s[2], p.w = s[3], p.k = s[4], p.r = s[5], p.s = s[6];
    p.stride = s[7], p.pad = s[8];
    p.dilation = s.size() > 9 ? s[9] : 1;
    p.groups = s.size() > 10 ? s[10] : 1;
  };
  const Decode windowPool = [](OpSpec& p, const std::vector<int64_t>& s) {
    p.pool = true;
    p.n = s[0], p.c = s[1], p.h = s[2], p.w = s[3], p.k = s[1], p.r = s[4], p.s = s[4];
    p.stride = s[5], p.pad = s[6];
  };
  const std::map<std::string, Decode> decoders = {
      {"conv2d", convolution},
      {"conv2d_bias_relu", convolution},
      {"depthwise_conv2d",
       [](OpSpec& p, const std::vector<int64_t>& s) {
         p.conv = true;
         p.n = s[0], p.c = s[1], p.h = s[2], p.w = s[3], p.k = s[1], p.r = s[4], p.s = s[5];
         p.stride = s[6], p.pad = s[7];
         p.dilation = s.size() > 8 ? s[8] : 1;
         p.groups = s[1];
       }},
      {"max_pool2d", windowPool},
      {"avg_pool2d", windowPool},
      {"global_avg_pool",
       [](OpSpec& p, const std::vector<int64_t>& s) {
         p.pool = true;
         p.n = s[0], p.c = s[1], p.h = s[2], p.w = s[3], p.k = s[1], p.r = s[2], p.s = s[3];
       }},
  };
  if (auto d = decoders.find(op); d != decoders.end()) d->second(spec, shape);
  if (spec.isConv() || spec.isPool()) spec.oh = spec.output[2], spec.ow = spec.output[3];
  return spec;
}

int resolveThreads(int threads) {
  if (threads >= 1) return threads;
  return std::max(1, int(std::thread::hardware_concurrency()));
}

// OpenBLAS's pool is shared by the OpenBLAS peer and LibTorch's matmul, so
// it is sized for every peer, and restored afterwards.
class OpenblasThreadScope {
 public:
  explicit OpenblasThreadScope(int threads) {
#ifdef TESSEL_BASELINE_HAVE_OPENBLAS
    previous_ = detail::setOpenblasThreads(threads);
#endif
  }
  ~OpenblasThreadScope() {
#ifdef TESSEL_BASELINE_HAVE_OPENBLAS
    if (previous_ > 0) detail::setOpenblasThreads(previous_);
#endif
  }
  OpenblasThreadScope(const OpenblasThreadScope&) = delete;
  OpenblasThreadScope& operator=(const OpenblasThreadScope&) = delete;

 private:
  [[maybe_unused]] int previous_ = -1;
};

std::unique_ptr<PeerKernel> makeKernel(const std::string& peer, const OpSpec& spec,
                                       const std::vector<std::vector<float>>& inputs, int threads) {
  if (peer == "onednn") {
#ifdef TESSEL_BASELINE_HAVE_ONEDNN
    return detail::makeOnednnKernel(spec, inputs, threads);
#else
    throw std::runtime_error("not built with oneDNN");
#endif
  }
  if (peer == "openblas") {
#ifdef TESSEL_BASELINE_HAVE_OPENBLAS
    return detail::makeOpenblasKernel(spec, inputs, threads);
#else
    throw std::runtime_error("not built with OpenBLAS");
#endif
  }
  if (peer == "libtorch") {
#ifdef TESSEL_BASELINE_HAVE_LIBTORCH
    return detail::makeLibtorchKernel(spec, inputs, threads);
#else
    throw std::runtime_error("not built with LibTorch");
#endif
  }
  throw std::invalid_argument("unknown baseline peer '" + peer + "' (known: onednn, openblas, libtorch)");
}

void checkInputs(const OpSpec& spec, const std::vector<std::vector<float>>& inputs) {
  if (inputs.size() != spec.inputs.size())
    throw std::invalid_argument(spec.op + ": expected " + std::to_string(spec.inputs.size()) + " inputs, got " +
                                std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int64_t want = detail::numElements(spec.inputs[i]);
    if (int64_t(inputs[i].size()) != want)
      throw std::invalid_argument(spec.op + ": input " + std::to_string(i) + " needs " + std::to_string(want) +
                                  " values, got " + std::to_string(inputs[i].size()));
  }
}

// Seconds per call of each repeat, after a warm-up.
std::vector<double> timeKernel(PeerKernel& kernel, measure::CacheState cacheState) {
  using Clock = std::chrono::steady_clock;
  const measure::TimingRule& rule = measure::kDefaultTiming;  // the worker's
  for (int i = 0; i < rule.warmup; ++i)
    kernel.run();
  const std::vector<measure::CallBuffer> buffers = kernel.buffers();
  auto repeat = [&](int64_t number) -> std::optional<measure::RepeatTime> {
    measure::RepeatTime t;
    if (cacheState != measure::CacheState::Warm) {
      const auto start = Clock::now();
      for (int64_t i = 0; i < number; ++i) {
        measure::enterCacheState(cacheState, buffers);  // as the worker does
        const auto t0 = Clock::now();
        kernel.run();
        t.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
      }
      t.longEnough = std::chrono::duration<double>(Clock::now() - start).count() >= rule.minRepeatSeconds;
    } else {
      const auto t0 = Clock::now();
      for (int64_t i = 0; i < number; ++i)
        kernel.run();
      t.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    }
    return t;
  };
  return *measure::timeRepeats(rule, measure::maxNumber(cacheState, measure::TimedOn::Cpu), repeat);
}

double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double spreadOf(const std::vector<double>& v) {
  return medianOf(v) / *std::min_element(v.begin(), v.end());
}

}  // namespace

std::string disturbanceOf(const std::vector<double>& first, const std::vector<double>& second) {
  if (first.empty() || spreadOf(first) <= kDisturbedSpread) return "";
  if (second.empty()) return "";
  const double a = medianOf(first), b = medianOf(second);
  const double steadier = std::min(spreadOf(first), spreadOf(second));
  if (steadier <= kDisturbedSpread && std::max(a, b) <= kDisturbedSpread * std::min(a, b)) return "";
  char why[200];
  std::snprintf(why, sizeof why, "repeats spread to %.2fx their fastest; two measurements gave %.4f and %.4f ms",
                steadier, a * 1e3, b * 1e3);
  return why;
}

const std::vector<std::string>& peerNames() {
  static const std::vector<std::string> names = {"onednn", "openblas", "libtorch"};
  return names;
}

bool peerAvailable(const std::string& peer) {
#ifdef TESSEL_BASELINE_HAVE_ONEDNN
  if (peer == "onednn") return true;
#endif
#ifdef TESSEL_BASELINE_HAVE_OPENBLAS
  if (peer == "openblas") return true;
#endif
#ifdef TESSEL_BASELINE_HAVE_LIBTORCH
  if (peer == "libtorch") return true;
#endif
  return false;
}

std::vector<std::vector<int64_t>> baselineInputShapes(const std::string& op, const std::vector<int64_t>& shape) {
  return parseOp(op, shape).inputs;
}

std::vector<int64_t> baselineOutputShape(const std::string& op, const std::vector<int64_t>& shape) {
  return parseOp(op, shape).output;
}

std::vector<float> runBaselineOnce(const std::string& peer, const std::string& op, const std::vector<int64_t>& shape,
                                   const std::vector<std::vector<float>>& inputs, int threads) {
  const OpSpec spec = parseOp(op, shape);
  checkInputs(spec, inputs);
  threads = resolveThreads(threads);
  OpenblasThreadScope blasThreads(threads);
  runtime::ThreadTeam team(threads, true);
  const runtime::ThreadTeam::Entered pinned = team.enter();
  std::unique_ptr<PeerKernel> kernel = makeKernel(peer, spec, inputs, threads);
  kernel->run();
  return kernel->output();
}

BaselineResult measureBaselines(const std::string& op, const std::vector<int64_t>& shape, int threads,
                                measure::CacheState cacheState) {
  const OpSpec spec = parseOp(op, shape);
  threads = resolveThreads(threads);

  BaselineResult result;
  std::vector<std::vector<float>> inputs;
  try {
    std::mt19937 rng(20240601u);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (const auto& s : spec.inputs) {
      std::vector<float> v(size_t(detail::numElements(s)));
      for (float& x : v)
        x = dist(rng);
      inputs.push_back(std::move(v));
    }
  } catch (const std::bad_alloc&) {
    for (const std::string& peer : peerNames())
      result.notes[peer] = "out of memory for the inputs";
    return result;
  }

  OpenblasThreadScope blasThreads(threads);
  runtime::ThreadTeam team(threads, true);
  const runtime::ThreadTeam::Entered pinned = team.enter();
  for (const std::string& peer : peerNames()) {
    std::optional<double>& slot = peer == "onednn"     ? result.onednnSeconds
                                  : peer == "openblas" ? result.openblasSeconds
                                                       : result.libtorchSeconds;
    try {
      std::unique_ptr<PeerKernel> kernel = makeKernel(peer, spec, inputs, threads);
      // One checked call first: a peer that computes garbage gets no time.
      kernel->run();
      const std::vector<float> out = kernel->output();
      if (std::any_of(out.begin(), out.end(), [](float v) { return std::isnan(v); }))
        throw std::runtime_error("the output contains NaN");
      std::vector<double> costs = timeKernel(*kernel, cacheState);
      if (spreadOf(costs) > kDisturbedSpread) {
        // A busy moment: measure again; keep the steadier of the two.
        std::vector<double> again = timeKernel(*kernel, cacheState);
        const std::string why = disturbanceOf(costs, again);
        if (!why.empty()) result.disturbed[peer] = why;
        if (spreadOf(again) < spreadOf(costs)) costs = again;
      }
      result.repeats[peer] = costs;
      slot = medianOf(costs);
    } catch (const std::bad_alloc&) {
      result.notes[peer] = "out of memory";
    } catch (const std::exception& e) {  // detail::NotApplicable included
      result.notes[peer] = e.what();
    } catch (...) {
      result.notes[peer] = "unknown error";
    }
  }
  return result;
}

namespace detail {

OpSpec specOf(const std::string& op, const std::vector<int64_t>& shape) {
  return parseOp(op, shape);
}

}  // namespace detail

}  // namespace tessel::baseline
