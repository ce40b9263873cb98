// Runs CUDA C (the subset cuda_codegen.h emits) on the host: included before
// the CUDA source, it makes the source ordinary C++ that g++ compiles, so
// generated kernels can be checked without a GPU.
//
// The blocks of a launch run one after another. The threads of a block are
// coroutines (ucontext, each on its own stack) that a scheduler runs in turn,
// each until it finishes or waits at a barrier: __syncthreads() releases
// when every thread of the block waits at it, a warp barrier (__syncwarp,
// the shuffles) when every thread of the warp does. A thread that finishes
// while others wait at __syncthreads(), or threads that wait at barriers no
// one can release, fail the launch (the GPU would hang or misbehave).
// __shared__ is `static`: one block runs at a time, so the block's threads
// share it. Not thread-safe across host threads launching at once (the
// __shared__ statics are per process).
//
// Launches go through TESSEL_LAUNCH, which the host function of
// cuda_codegen.h calls; TESSEL_LAUNCH_STATUS() returns (and clears) the first
// failure since the last call, 0 for none; tessel_emulation_error() says what
// it was.
#pragma once

#include <ucontext.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#ifndef TESSEL_EMULATION_STACK_BYTES
#define TESSEL_EMULATION_STACK_BYTES (256 * 1024)  // per thread: its local arrays live there
#endif

#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};

struct uint3 {
  unsigned x, y, z;
};

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace tessel_emu {

constexpr unsigned kWarpSize = 32;

struct Thread {
  enum State { Ready, AtBlockBarrier, AtWarpBarrier, Done };
  ucontext_t context;
  uint3 index;
  unsigned linear = 0;  // x + y * blockDim.x + z * blockDim.x * blockDim.y
  State state = Ready;
};

struct Block {
  uint3 blockIdx;
  dim3 blockDim, gridDim;
  std::vector<Thread> threads;
  Thread* current = nullptr;
  ucontext_t scheduler;
  std::function<void()> kernel;
  std::vector<uint64_t> lanes;  // one slot per thread: values exchanged by shuffles
};

inline thread_local Block* block = nullptr;
inline thread_local int status = 0;
inline thread_local std::string error;

inline void fail(const std::string& what) {
  if (!status) status = 1, error = what;
}

inline void entry() {
  block->kernel();
  block->current->state = Thread::Done;  // uc_link returns to the scheduler
}

inline void wait(Thread::State at) {
  Thread* t = block->current;
  t->state = at;
  swapcontext(&t->context, &block->scheduler);
}

// Releases the threads a barrier holds: __syncthreads() once every thread of
// the block waits at it, a warp barrier once every thread of the warp does.
// False when none can be released.
inline bool release(Block& b) {
  const size_t n = b.threads.size();
  size_t atBlock = 0;
  for (const Thread& t : b.threads)
    atBlock += t.state == Thread::AtBlockBarrier;
  if (atBlock == n) {
    for (Thread& t : b.threads)
      t.state = Thread::Ready;
    return true;
  }
  bool any = false;
  for (size_t w = 0; w < n; w += kWarpSize) {
    const size_t end = std::min(n, w + kWarpSize);
    bool all = true;
    for (size_t i = w; i < end; ++i)
      all &= b.threads[i].state == Thread::AtWarpBarrier;
    if (!all) continue;
    for (size_t i = w; i < end; ++i)
      b.threads[i].state = Thread::Ready;
    any = true;
  }
  return any;
}

// Runs one block to the end; false (and fail()) when its barriers cannot complete.
inline bool runBlock(Block& b, std::vector<std::unique_ptr<char[]>>& stacks) {
  for (size_t i = 0; i < b.threads.size(); ++i) {
    Thread& t = b.threads[i];
    t.state = Thread::Ready;
    getcontext(&t.context);
    t.context.uc_stack.ss_sp = stacks[i].get();
    t.context.uc_stack.ss_size = TESSEL_EMULATION_STACK_BYTES;
    t.context.uc_link = &b.scheduler;
    makecontext(&t.context, entry, 0);
  }
  for (;;) {
    for (Thread& t : b.threads)
      if (t.state == Thread::Ready) {
        b.current = &t;
        swapcontext(&b.scheduler, &t.context);
      }
    size_t done = 0, atBlock = 0;
    for (const Thread& t : b.threads)
      done += t.state == Thread::Done, atBlock += t.state == Thread::AtBlockBarrier;
    if (done == b.threads.size()) return true;
    if (!release(b)) {
      fail(done > 0 && atBlock > 0 ? "a __syncthreads() that not every thread of the block reaches"
                                   : "threads wait at barriers that cannot complete (divergent warp operations)");
      return false;
    }
  }
}

template <class... Params, class... Args>
int launch(void (*kernel)(Params...), dim3 grid, dim3 blockDim, Args... args) {
  if (status) return status;  // an earlier launch failed: the program stops there
  const size_t n = size_t(blockDim.x) * blockDim.y * blockDim.z;
  if (n == 0 || n > 1024) {
    fail("a block of " + std::to_string(n) + " threads");
    return status;
  }
  Block b;
  b.blockDim = blockDim;
  b.gridDim = grid;
  b.threads.resize(n);
  b.lanes.resize(n);
  b.kernel = [&] { kernel(args...); };
  std::vector<std::unique_ptr<char[]>> stacks;
  for (size_t i = 0; i < n; ++i) {
    stacks.emplace_back(new char[TESSEL_EMULATION_STACK_BYTES]);
    Thread& t = b.threads[i];
    t.linear = unsigned(i);
    t.index = {unsigned(i % blockDim.x), unsigned(i / blockDim.x % blockDim.y), unsigned(i / blockDim.x / blockDim.y)};
  }
  Block* outer = block;
  block = &b;
  for (unsigned z = 0; z < grid.z && !status; ++z)
    for (unsigned y = 0; y < grid.y && !status; ++y)
      for (unsigned x = 0; x < grid.x && !status; ++x) {
        b.blockIdx = {x, y, z};
        runBlock(b, stacks);
      }
  block = outer;
  return status;
}

// A shuffle: every lane publishes `v`, reads lane `src(lane)` (its own value
// when that lane does not exist), and waits until the warp has read.
template <class T, class Src>
T shuffle(T v, const Src& src) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "shuffles of up to 8 bytes");
  Block& b = *block;
  const unsigned me = b.current->linear, warp = me / kWarpSize * kWarpSize;
  std::memcpy(&b.lanes[me], &v, sizeof(T));
  wait(Thread::AtWarpBarrier);
  const long from = long(warp) + src(long(me - warp));
  T r = v;
  if (from >= long(warp) && from < long(std::min<size_t>(warp + kWarpSize, b.threads.size())))
    std::memcpy(&r, &b.lanes[size_t(from)], sizeof(T));
  wait(Thread::AtWarpBarrier);
  return r;
}

}  // namespace tessel_emu

#define threadIdx (::tessel_emu::block->current->index)
#define blockIdx (::tessel_emu::block->blockIdx)
#define blockDim (::tessel_emu::block->blockDim)
#define gridDim (::tessel_emu::block->gridDim)
#define warpSize 32

inline void __syncthreads() {
  tessel_emu::wait(tessel_emu::Thread::AtBlockBarrier);
}
inline void __syncwarp(unsigned = 0xffffffffu) {
  tessel_emu::wait(tessel_emu::Thread::AtWarpBarrier);
}

template <class T>
T __shfl_down_sync(unsigned, T v, unsigned delta, int = 32) {
  return tessel_emu::shuffle(v, [&](long lane) { return lane + long(delta); });
}
template <class T>
T __shfl_xor_sync(unsigned, T v, int mask, int = 32) {
  return tessel_emu::shuffle(v, [&](long lane) { return lane ^ long(mask); });
}
template <class T>
T __shfl_sync(unsigned, T v, int srcLane, int = 32) {
  return tessel_emu::shuffle(v, [&](long) { return long(srcLane); });
}

// Device memory is host memory here (an exported entry point allocates its
// temporaries with these).
inline int cudaMalloc(void** p, size_t bytes) {
  *p = std::malloc(bytes);
  return *p ? 0 : 2;  // cudaErrorMemoryAllocation
}
inline int cudaFree(void* p) {
  std::free(p);
  return 0;
}

// Vector accesses as the GPU makes them, with the GPU's rule checked: the
// address a multiple of the vector's size (a misaligned one fails the launch).
#define TESSEL_VECTOR_ACCESS
template <class V>
inline bool tessel_aligned(const float* p) {
  if (reinterpret_cast<uintptr_t>(p) % sizeof(V) == 0) return true;
  tessel_emu::fail("a misaligned " + std::to_string(sizeof(V)) + "-byte vector access");
  return false;
}
template <class V>
inline V tessel_load(const float* p) {
  V v{};
  if (tessel_aligned<V>(p)) std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
inline void tessel_store(float* p, V v) {
  if (tessel_aligned<V>(p)) std::memcpy(p, &v, sizeof v);
}

#define TESSEL_LAUNCH(kernel, grid, block, ...) ::tessel_emu::launch(kernel, grid, block, __VA_ARGS__)
#define TESSEL_LAUNCH_STATUS() std::exchange(::tessel_emu::status, 0)

// What failed (empty: nothing since the program started).
extern "C" __attribute__((used)) inline const char* tessel_emulation_error() {
  return tessel_emu::error.c_str();
}
