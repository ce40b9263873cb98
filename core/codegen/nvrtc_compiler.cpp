#include "codegen/nvrtc_compiler.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace tessel::codegen {

namespace {

// The few NVRTC entry points used, declared as in nvrtc.h (CUDA 13): nothing
// of the toolkit is needed to build Tessel.
using NvrtcResult = int;
using NvrtcProgram = struct _nvrtcProgram*;
struct Nvrtc {
  const char* (*getErrorString)(NvrtcResult);
  NvrtcResult (*version)(int*, int*);
  NvrtcResult (*createProgram)(NvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  NvrtcResult (*destroyProgram)(NvrtcProgram*);
  NvrtcResult (*compileProgram)(NvrtcProgram, int, const char* const*);
  NvrtcResult (*getCubinSize)(NvrtcProgram, size_t*);
  NvrtcResult (*getCubin)(NvrtcProgram, char*);
  NvrtcResult (*getProgramLogSize)(NvrtcProgram, size_t*);
  NvrtcResult (*getProgramLog)(NvrtcProgram, char*);
};

// Where NVRTC is looked for: the loader's path first, then the toolkit's folder.
std::vector<std::string> candidates() {
  std::vector<std::string> c = {"libnvrtc.so.13", "libnvrtc.so"};
  if (const char* home = std::getenv("CUDA_HOME")) c.push_back(std::string(home) + "/lib64/libnvrtc.so.13");
  c.push_back("/usr/local/cuda/lib64/libnvrtc.so.13");
  return c;
}

struct Loaded {
  Nvrtc api{};
  std::string error;  // empty: loaded
};

const Loaded& nvrtc() {
  static const Loaded loaded = [] {
    Loaded l;
    void* handle = nullptr;
    for (const std::string& path : candidates())
      if ((handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!handle) {
      std::string tried;
      for (const std::string& path : candidates())
        tried += (tried.empty() ? "" : ", ") + path;
      l.error = "NVRTC (the CUDA runtime compiler) is not installed: none of " + tried +
                " could be loaded (install the CUDA toolkit, or set CUDA_HOME)";
      return l;
    }
    auto bind = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
      if (!fn && l.error.empty()) l.error = std::string("NVRTC lacks ") + name + " (an older toolkit than CUDA 12?)";
    };
    bind(l.api.getErrorString, "nvrtcGetErrorString");
    bind(l.api.version, "nvrtcVersion");
    bind(l.api.createProgram, "nvrtcCreateProgram");
    bind(l.api.destroyProgram, "nvrtcDestroyProgram");
    bind(l.api.compileProgram, "nvrtcCompileProgram");
    bind(l.api.getCubinSize, "nvrtcGetCUBINSize");
    bind(l.api.getCubin, "nvrtcGetCUBIN");
    bind(l.api.getProgramLogSize, "nvrtcGetProgramLogSize");
    bind(l.api.getProgramLog, "nvrtcGetProgramLog");
    return l;
  }();
  return loaded;
}

const Nvrtc& api() {
  const Loaded& l = nvrtc();
  if (!l.error.empty()) throw std::runtime_error(l.error);
  return l.api;
}

CudaCompileOutput compileOne(const Nvrtc& n, const std::string& source, const std::vector<std::string>& options) {
  CudaCompileOutput out;
  const auto start = std::chrono::steady_clock::now();
  NvrtcProgram program = nullptr;
  if (NvrtcResult r = n.createProgram(&program, source.c_str(), "tessel_kernels.cu", 0, nullptr, nullptr); r != 0) {
    out.error = support::ErrorCode::CompileDevice;
    out.message = std::string("nvrtcCreateProgram: ") + n.getErrorString(r);
    return out;
  }
  std::vector<const char*> argv;
  for (const std::string& o : options)
    argv.push_back(o.c_str());
  const NvrtcResult compiled = n.compileProgram(program, int(argv.size()), argv.data());
  size_t logSize = 0;
  std::string log;
  if (n.getProgramLogSize(program, &logSize) == 0 && logSize > 1) {
    log.resize(logSize);
    n.getProgramLog(program, log.data());
    log.resize(logSize - 1);  // its terminating NUL
  }
  size_t cubinSize = 0;
  if (compiled == 0 && n.getCubinSize(program, &cubinSize) == 0 && cubinSize > 0) {
    out.cubin.resize(cubinSize);
    n.getCubin(program, out.cubin.data());
    out.kernels = parsePtxasReport(log);
  } else {
    out.error = support::ErrorCode::CompileDevice;
    out.message = std::string(n.getErrorString(compiled)) + ":\n" + log;
  }
  n.destroyProgram(&program);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace

bool nvrtcAvailable(std::string* why) {
  const Loaded& l = nvrtc();
  if (why) *why = l.error;
  return l.error.empty();
}

std::string nvrtcVersion() {
  int major = 0, minor = 0;
  api().version(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<CudaCompileOutput> compileCuda(const std::vector<std::string>& sources, const CudaCompileOptions& options) {
  const Nvrtc& n = api();
  if (options.arch.rfind("sm_", 0) != 0)
    throw std::invalid_argument("CUDA kernels are compiled for a named arch (sm_80, sm_90, ...), not '" + options.arch +
                                "'");
  std::vector<std::string> flags = {"--gpu-architecture=" + options.arch, "--ptxas-options=--verbose", "-std=c++17"};
  flags.insert(flags.end(), options.flags.begin(), options.flags.end());
  std::vector<CudaCompileOutput> out(sources.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < sources.size();) {
      if (support::isCancelled(options.cancel)) {
        out[i].error = support::ErrorCode::CompileDevice;
        out[i].message = "cancelled";
        continue;
      }
      out[i] = compileOne(n, sources[i], flags);
    }
  };
  std::vector<std::thread> threads;
  const size_t jobs = std::min(sources.size(), size_t(std::max(1, options.jobs)));
  for (size_t j = 1; j < jobs; ++j)
    threads.emplace_back(work);
  work();
  for (std::thread& t : threads)
    t.join();
  return out;
}

std::vector<CudaKernelResources> parsePtxasReport(const std::string& log) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex stack(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::vector<CudaKernelResources> kernels;
  std::istringstream in(log);
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, entry)) {
      kernels.push_back({});
      kernels.back().name = m[1];
      continue;
    }
    if (kernels.empty()) continue;
    CudaKernelResources& k = kernels.back();
    if (std::regex_search(line, m, stack)) {
      k.stackBytes = std::stoll(m[1]);
      k.spillStoreBytes = std::stoll(m[2]);
      k.spillLoadBytes = std::stoll(m[3]);
    }
    if (std::regex_search(line, m, used)) k.registers = std::stoi(m[1]);
    if (std::regex_search(line, m, smem)) k.sharedBytes = std::stoll(m[1]);
  }
  return kernels;
}

std::string cudaLimitViolation(const CudaKernelResources& kernel, int64_t threadsPerBlock,
                               const target::Target& target) {
  // The register file of one block: 64 K 32-bit registers on every arch since sm_30.
  constexpr int64_t kRegistersPerBlock = 64 * 1024;
  std::ostringstream why;
  if (threadsPerBlock > target.maxThreadsPerBlock)
    why << kernel.name << ": " << threadsPerBlock << " threads per block, over the target's "
        << target.maxThreadsPerBlock;
  else if (kernel.sharedBytes > target.sharedMemoryPerBlock)
    why << kernel.name << ": " << kernel.sharedBytes << " bytes of shared memory per block, over the target's "
        << target.sharedMemoryPerBlock;
  else if (kernel.registers > target.registersPerThread)
    why << kernel.name << ": " << kernel.registers << " registers per thread, over the target's "
        << target.registersPerThread;
  else if (int64_t(kernel.registers) * threadsPerBlock > kRegistersPerBlock)
    why << kernel.name << ": " << kernel.registers << " registers x " << threadsPerBlock
        << " threads = " << int64_t(kernel.registers) * threadsPerBlock << ", over the " << kRegistersPerBlock
        << " registers of a block";
  return why.str();
}

}  // namespace tessel::codegen
