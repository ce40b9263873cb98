// What a tuning compiles and measures for: a typed target, parsed from and
// printed as a TVM-like target string ("cpu", "cpu -arch=x86-64-v2 -threads=1",
// "cuda -arch=sm_90"). Tasks, tuning configs and the schedules' hardware
// parameters carry a Target; the canonical string is what crosses the edges
// (the CLI, the database, the fleet's JSON, dataset and knowledge files, the
// studio's target box), so "cpu" (this machine: -march=native, every core)
// must stay exactly "cpu". The lowest folder of the pipeline: no other core/
// part.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tessel::target {

struct Target {
  enum class Kind { Cpu, Cuda };
  Kind kind = Kind::Cpu;
  // CPU: native (this machine's CPU, read from CPUID), x86-64, x86-64-v2,
  // x86-64-v3, x86-64-v4 (GCC's -march levels). CUDA: native or sm_XX.
  std::string arch = "native";
  int threads = 0;  // CPU threads a kernel runs on; 0: one per core of this machine

  // Limits the schedules are fitted to (derived from kind and arch).
  int vectorLanes = 4;           // float32 lanes of the widest vector (CPU)
  int vectorRegisters = 16;      // vector registers the compiler may allocate (CPU)
  int maxThreadsPerBlock = 0;    // CUDA: threads per block
  int sharedMemoryPerBlock = 0;  // CUDA: bytes of shared memory per block (without opt-in)
  int registersPerThread = 0;    // CUDA: 32-bit registers per thread
  int warpSize = 0;              // CUDA: threads per warp

  // This machine's CPU: the target "cpu".
  static Target host();
  // A CPU of `arch` (one of cpuArchs(); "native" is host()), every core;
  // throws std::invalid_argument for another arch, as parseTarget does.
  static Target cpu(const std::string& arch = "native");
  // A CUDA GPU of `arch` ("native": this machine's first GPU's, or sm_XX);
  // throws std::invalid_argument for another arch, as parseTarget does.
  static Target cuda(const std::string& arch = "native");

  // The canonical string: defaults left out, options in a fixed order, so that
  // parseTarget(t.str()) == t and equal targets print alike.
  std::string str() const;
  // "cpu" or "cuda".
  std::string kindName() const;
  bool isCpu() const { return kind == Kind::Cpu; }
  bool isCuda() const { return kind == Kind::Cuda; }
  // The vector instruction set of a CPU target: "avx512", "avx2" or "sse".
  std::string vectorIsaName() const;
  // Whether this machine's CPU can run the target's kernels (a CPU target
  // whose arch this CPU has; never a CUDA target, whose kernels run on a GPU
  // through the CUDA worker, measure/cuda_worker.h).
  bool runsOnHost() const;
  // The threads a CPU kernel runs on: `threads`, or one per core of this machine.
  int effectiveThreads() const;

  // The system compiler's flags for its kernels. CPU: -O3 -march=<arch>
  // -fopenmp -std=c++17, plus -mprefer-vector-width=512 with AVX-512 (GCC
  // otherwise keeps some AVX-512 CPUs' auto-vectorised loops at 256 bits).
  // CUDA: nvcc's -O3 -arch=<arch>, which the export builds its library with
  // (the tuner compiles the same kernels with NVRTC for target.arch:
  // measure/cuda_program_builder.h).
  std::vector<std::string> compilerFlags() const;

  bool operator==(const Target&) const = default;
};

// Parses a target string: a kind (cpu, cuda) then -option=value words, each at
// most once: -arch (both kinds) and -threads (cpu: 0 = every core, 1..1024).
// Throws std::invalid_argument naming the bad part and what is allowed.
Target parseTarget(const std::string& text);

// A kind's name ("cpu", "cuda") and back (none for another word): how the
// worker's protocol names the device a kernel runs on.
std::string kindName(Target::Kind kind);
std::optional<Target::Kind> parseKind(const std::string& name);

// The CPU arch names parseTarget accepts, in order.
const std::vector<std::string>& cpuArchs();

}  // namespace tessel::target
