#include "measure/worker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "measure/cache_flush.h"
#include "measure/cuda_worker.h"
#include "measure/library_cache.h"
#include "measure/output_check.h"
#include "measure/timing_rule.h"
#include "measure/worker_protocol.h"
#include "support/hash.h"

namespace tessel::measure {

namespace {

using Clock = std::chrono::steady_clock;
using KernelFn = int (*)(float* const*);
using PackFn = int (*)(float* const* plain, float* const* packed);

// Guard zone on each side of every buffer, in floats (keeps 64-byte alignment).
constexpr size_t kGuardFloats = 64;
constexpr std::align_val_t kBufferAlign{64};
constexpr uint32_t kCanary = 0xdeadbeefu;
// Any single buffer above this is a corrupt request, not a real tensor.
constexpr int64_t kMaxBufferElements = int64_t(1) << 36;

// A float buffer with canary-filled guard zones before and after it.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t n) : n_(n) {
    const size_t total = n + 2 * kGuardFloats;
    base_ = static_cast<float*>(::operator new[](total * sizeof(float), kBufferAlign));
    rearm();
  }
  ~GuardedBuffer() { ::operator delete[](base_, kBufferAlign); }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  float* data() { return base_ + kGuardFloats; }
  size_t size() const { return n_; }
  // The index (relative to the buffer start: negative before it) of the
  // clobbered guard element nearest the buffer, if any.
  std::optional<int64_t> clobbered() const {
    for (size_t i = kGuardFloats; i-- > 0;) {
      if (!intact(base_ + i)) return int64_t(i) - int64_t(kGuardFloats);
    }
    for (size_t i = 0; i < kGuardFloats; ++i) {
      if (!intact(base_ + kGuardFloats + n_ + i)) return int64_t(n_ + i);
    }
    return std::nullopt;
  }
  void rearm() {
    for (size_t i = 0; i < kGuardFloats; ++i) {
      std::memcpy(base_ + i, &kCanary, sizeof kCanary);
      std::memcpy(base_ + kGuardFloats + n_ + i, &kCanary, sizeof kCanary);
    }
  }

 private:
  static bool intact(const float* p) {
    uint32_t bits;
    std::memcpy(&bits, p, sizeof bits);
    return bits == kCanary;
  }
  float* base_ = nullptr;
  size_t n_ = 0;
};

// Inputs, reference outputs and argument buffers of the latest task.
struct TaskData {
  std::string identity;  // everything the data depends on
  std::vector<std::vector<float>> inputs;
  std::vector<std::vector<float>> referenceOutputs;
  bool haveReference = false;
  std::vector<std::unique_ptr<GuardedBuffer>> buffers;
  std::vector<float*> args;
};

class Worker {
 public:
  protocol::Response handle(const protocol::Request& req) {
    protocol::Response res;
    try {
      measure(req, res);
    } catch (const std::bad_alloc&) {
      res = {};
      res.error = ErrorCode::Runtime;
      res.message = "out of memory while preparing the task's buffers";
    } catch (const std::exception& e) {
      res = {};
      res.error = ErrorCode::Unknown;
      res.message = std::string("worker error: ") + e.what();
    }
    return res;
  }

 private:
  static void fail(protocol::Response& res, ErrorCode code, std::string message) {
    res.error = code;
    res.message = std::move(message);
    res.costs.clear();
  }

  void measure(const protocol::Request& req, protocol::Response& res) {
    std::string error;
    if (!prepareTask(req, error)) return fail(res, ErrorCode::Runtime, error);
    const size_t numArgs = task_.buffers.size();

    if (!req.referenceLibrary.empty() && !task_.haveReference) {
      auto ref = reinterpret_cast<KernelFn>(libs_.resolveSymbol(req.referenceLibrary, req.referenceSymbol, error));
      if (!ref) return fail(res, ErrorCode::Runtime, "reference: " + error);
      resetBuffers(req.numInputs);
      const int rc = ref(task_.args.data());
      if (rc != 0) {
        return fail(res, ErrorCode::Runtime, "reference kernel returned " + std::to_string(rc));
      }
      if (!checkGuards(req.numInputs, "reference kernel", error)) {
        return fail(res, ErrorCode::Runtime, error);
      }
      task_.referenceOutputs.clear();
      for (size_t a = req.numInputs; a < numArgs; ++a) {
        GuardedBuffer& b = *task_.buffers[a];
        task_.referenceOutputs.emplace_back(b.data(), b.data() + b.size());
      }
      task_.haveReference = true;
    }

    if (req.device == target::Target::Kind::Cuda) {
      res = gpu_.measure(req, task_.inputs, task_.haveReference ? &task_.referenceOutputs : nullptr);
      return;
    }
    auto kernel = reinterpret_cast<KernelFn>(libs_.resolveSymbol(req.library, req.symbol, error));
    if (!kernel) return fail(res, ErrorCode::Runtime, error);

    // Correctness first: a wrong kernel's time must never count.
    resetBuffers(req.numInputs);
    if (!packInputs(req, error)) return fail(res, ErrorCode::Runtime, error);
    float* const* args = kernelArgs_.data();
    const int rc = kernel(args);
    if (rc != 0) return fail(res, ErrorCode::Runtime, "kernel returned " + std::to_string(rc));
    if (!checkGuards(req.numInputs, "kernel", error)) return fail(res, ErrorCode::Runtime, error);
    if (!compare(req, res)) return;

    // Timing.
    for (int i = 0; i < req.warmup; ++i) {
      const int r = kernel(args);
      if (r != 0) return fail(res, ErrorCode::Runtime, "kernel returned " + std::to_string(r));
    }
    int failed = 0;  // the return code of a call that failed
    auto repeat = [&](int64_t number) -> std::optional<RepeatTime> {
      RepeatTime t;
      if (req.cacheState != CacheState::Warm) {
        // The cache state made anew for every call: only the calls are
        // timed, each on its own, so a repeat is long enough once the calls
        // and evictions together last minRepeatSeconds.
        const std::vector<CallBuffer> buffers = callBuffers(req);
        const auto start = Clock::now();
        for (int64_t i = 0; i < number; ++i) {
          enterCacheState(req.cacheState, buffers);
          const auto t0 = Clock::now();
          const int r = kernel(args);
          t.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
          if (r != 0) {
            failed = r;
            return std::nullopt;
          }
        }
        t.longEnough = std::chrono::duration<double>(Clock::now() - start).count() >= req.minRepeatSeconds;
      } else {
        const auto t0 = Clock::now();
        for (int64_t i = 0; i < number; ++i)
          if (const int r = kernel(args); r != 0) {
            failed = r;
            return std::nullopt;
          }
        t.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      }
      return t;
    };
    const TimingRule rule{req.warmup, req.repeats, req.minRepeatSeconds};
    std::optional<std::vector<double>> costs = timeRepeats(rule, maxNumber(req.cacheState, TimedOn::Cpu), repeat);
    if (!costs) return fail(res, ErrorCode::Runtime, "kernel returned " + std::to_string(failed));
    res.costs.insert(res.costs.end(), costs->begin(), costs->end());
  }

  // (Re)builds inputs and buffers when the task differs from the cached one.
  bool prepareTask(const protocol::Request& req, std::string& error) {
    if (req.numInputs > req.bufferSizes.size()) {
      error = "invalid task: " + std::to_string(req.numInputs) + " inputs but only " +
              std::to_string(req.bufferSizes.size()) + " buffers";
      return false;
    }
    for (int64_t n : req.bufferSizes) {
      if (n < 0 || n > kMaxBufferElements) {
        error = "invalid task: buffer size " + std::to_string(n);
        return false;
      }
    }
    std::string identity = req.taskKey + '\n' + std::to_string(req.seed) + '\n' + std::to_string(req.numInputs) + '\n' +
                           req.referenceLibrary + '\n' + req.referenceSymbol + '\n';
    for (int64_t n : req.bufferSizes)
      identity += std::to_string(n) + ',';
    if (identity == task_.identity) return true;

    // Only the latest task is kept, so memory stays bounded by one task.
    task_ = TaskData{};
    const uint64_t h = support::fnv1a(req.taskKey);
    std::seed_seq seq{uint32_t(h), uint32_t(h >> 32), uint32_t(req.seed)};
    std::mt19937 rng(seq);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (size_t a = 0; a < req.numInputs; ++a) {
      std::vector<float> v(size_t(req.bufferSizes[a]));
      for (float& x : v)
        x = dist(rng);
      task_.inputs.push_back(std::move(v));
    }
    for (int64_t n : req.bufferSizes) {
      task_.buffers.push_back(std::make_unique<GuardedBuffer>(size_t(n)));
      task_.args.push_back(task_.buffers.back()->data());
    }
    task_.identity = std::move(identity);
    return true;
  }

  // Pristine inputs (a kernel may have scribbled on them) and NaN outputs, so
  // an element the kernel forgets to write cannot pass the check.
  void resetBuffers(size_t numInputs) {
    for (size_t a = 0; a < task_.buffers.size(); ++a) {
      GuardedBuffer& b = *task_.buffers[a];
      if (a < numInputs) {
        std::copy(task_.inputs[a].begin(), task_.inputs[a].end(), b.data());
      } else {
        std::fill(b.data(), b.data() + b.size(), std::numeric_limits<float>::quiet_NaN());
      }
    }
  }

  // Packed copies of the constant inputs the kernel reads in a layout of its
  // own (made once per kernel, before it is checked and timed), and the
  // arguments it is called with.
  bool packInputs(const protocol::Request& req, std::string& error) {
    packed_.clear();
    kernelArgs_ = task_.args;
    if (req.packSymbol.empty()) return true;
    if (req.packedSizes.size() != req.numInputs) {
      error = "invalid task: " + std::to_string(req.packedSizes.size()) + " packed sizes for " +
              std::to_string(req.numInputs) + " inputs";
      return false;
    }
    auto pack = reinterpret_cast<PackFn>(libs_.resolveSymbol(req.library, req.packSymbol, error));
    if (!pack) return false;
    packed_.resize(req.numInputs);
    for (size_t a = 0; a < req.numInputs; ++a) {
      const int64_t n = req.packedSizes[a];
      if (n == 0) continue;
      if (n < 0 || n > kMaxBufferElements) {
        error = "invalid task: packed size " + std::to_string(n);
        return false;
      }
      packed_[a] = std::make_unique<GuardedBuffer>(size_t(n));
      kernelArgs_[a] = packed_[a]->data();
    }
    const int rc = pack(task_.args.data(), kernelArgs_.data());
    if (rc != 0) {
      error = "packing function returned " + std::to_string(rc);
      return false;
    }
    return checkGuards(req.numInputs, "packing function", error);
  }

  bool checkGuards(size_t numInputs, const char* who, std::string& error) {
    bool ok = true;
    auto check = [&](const GuardedBuffer& b, const std::string& what) {
      const std::optional<int64_t> at = b.clobbered();
      if (!at || !ok) return;
      error = std::string(who) + " wrote out of bounds of " + what + " (element " + std::to_string(*at) +
              " of a buffer of " + std::to_string(b.size()) + ")";
      ok = false;
    };
    for (size_t a = 0; a < task_.buffers.size(); ++a)
      check(*task_.buffers[a],
            a < numInputs ? "input " + std::to_string(a) : "output " + std::to_string(a - numInputs));
    for (size_t a = 0; a < packed_.size(); ++a)
      if (packed_[a]) check(*packed_[a], "packed input " + std::to_string(a));
    // Re-arm every guard so one bad kernel does not blame the next.
    if (!ok) {
      for (auto& b : task_.buffers)
        b->rearm();
      for (auto& b : packed_)
        if (b) b->rearm();
    }
    return ok;
  }

  // Compares the outputs with the reference (or only checks they are finite).
  bool compare(const protocol::Request& req, protocol::Response& res) {
    std::vector<std::span<const float>> outputs;
    for (size_t a = req.numInputs; a < task_.buffers.size(); ++a)
      outputs.emplace_back(task_.buffers[a]->data(), task_.buffers[a]->size());
    const OutputCheck check =
        checkOutputs(outputs, task_.haveReference ? &task_.referenceOutputs : nullptr, req.tolerance);
    res.maxAbsError = check.maxAbsError;
    if (check.ok) return true;
    fail(res, ErrorCode::WrongAnswer, check.message);
    return false;
  }

  // What the kernel reads and writes: an input's packed copy where it has one
  // (the plain buffer beside it is never touched, so it is not evicted).
  std::vector<CallBuffer> callBuffers(const protocol::Request& req) {
    std::vector<CallBuffer> out;
    for (size_t a = 0; a < task_.buffers.size(); ++a) {
      GuardedBuffer& b = a < packed_.size() && packed_[a] ? *packed_[a] : *task_.buffers[a];
      const bool weights = a < req.numInputs && std::count(req.constantInputs.begin(), req.constantInputs.end(), a) > 0;
      out.push_back({b.data(), b.size() * sizeof(float), weights});
    }
    return out;
  }

  LibraryCache libs_;
  CudaWorker gpu_;  // the GPU half, for requests whose device is cuda
  TaskData task_;
  std::vector<std::unique_ptr<GuardedBuffer>> packed_;  // per input of the current kernel; null: plain
  std::vector<float*> kernelArgs_;
};

}  // namespace

int runWorker(int inFd, int outFd) {
  Worker worker;
  for (;;) {
    nlohmann::json message;
    std::string error;
    const protocol::IoStatus st = protocol::readMessage(inFd, message, std::nullopt, &error);
    if (st == protocol::IoStatus::Eof) return 0;
    if (st != protocol::IoStatus::Ok) {
      std::fprintf(stderr, "tessel-worker: %s\n", error.c_str());
      return 1;
    }
    protocol::Request request;
    protocol::Response response;
    if (protocol::fromJson(message, request, &error)) {
      response = worker.handle(request);
    } else {
      response.error = ErrorCode::Unknown;
      response.message = "bad request: " + error;
    }
    if (protocol::writeMessage(outFd, protocol::toJson(response), &error) != protocol::IoStatus::Ok) {
      std::fprintf(stderr, "tessel-worker: cannot send a response: %s\n", error.c_str());
      return 1;
    }
    if (response.workerExits) return 2;
  }
}

}  // namespace tessel::measure
