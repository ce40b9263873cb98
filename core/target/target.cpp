#include "target/target.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace tessel::target {

namespace {

constexpr int kMaxThreads = 1024;

struct CpuIsa {
  int lanes, registers;
};

// This machine's widest float vector (AVX-512F: 16 lanes, 32 registers; AVX2
// with FMA: 8 lanes, 16 registers; otherwise SSE: 4 lanes, 16 registers).
CpuIsa detectHostIsa() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {16, 32};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {8, 16};
#endif
  return {4, 16};
}

const CpuIsa& hostIsa() {
  static const CpuIsa isa = detectHostIsa();
  return isa;
}

CpuIsa isaOfArch(const std::string& arch) {
  if (arch == "native") return hostIsa();
  if (arch == "x86-64-v4") return {16, 32};
  if (arch == "x86-64-v3") return {8, 16};
  return {4, 16};  // x86-64, x86-64-v2: SSE
}

// Which of GCC's x86-64 levels this CPU reaches (0: below v2), from the
// features each level adds that kernels are likely to use.
int hostArchLevel() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!(__builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt"))) return 1;
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))) return 2;
  if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd")))
    return 3;
  return 4;
#else
  return 0;
#endif
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool isCudaArch(const std::string& arch) {
  if (arch == "native") return true;
  if (arch.size() < 5 || arch.size() > 7 || arch.compare(0, 3, "sm_") != 0) return false;
  std::string digits = arch.substr(3);
  if (digits.back() == 'a') digits.pop_back();  // sm_90a: the arch-specific features
  return digits.size() >= 2 && digits.size() <= 3 &&
         std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); });
}

int parseThreads(const std::string& value) {
  const bool digits = !value.empty() && value.size() <= 4 &&
                      std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c); });
  if (!digits || std::stoi(value) > kMaxThreads)
    throw std::invalid_argument("target option -threads=" + value + " is not a number from 0 (every core) to " +
                                std::to_string(kMaxThreads));
  return std::stoi(value);
}

void setArch(Target& t, const std::string& arch) {
  if (t.isCpu()) {
    const auto& known = cpuArchs();
    if (std::find(known.begin(), known.end(), arch) == known.end())
      throw std::invalid_argument("unknown cpu arch '" + arch + "' (known: " + joined(known) + ")");
  } else if (!isCudaArch(arch)) {
    throw std::invalid_argument("unknown cuda arch '" + arch + "' (known: native, sm_XX such as sm_80, sm_90)");
  }
  t.arch = arch;
}

// The limits that follow from kind and arch.
void deriveLimits(Target& t) {
  if (t.isCpu()) {
    const CpuIsa isa = isaOfArch(t.arch);
    t.vectorLanes = isa.lanes;
    t.vectorRegisters = isa.registers;
    return;
  }
  // Every arch since sm_30; more shared memory needs an opt-in per kernel.
  t.vectorLanes = 1;
  t.vectorRegisters = 0;
  t.maxThreadsPerBlock = 1024;
  t.sharedMemoryPerBlock = 48 * 1024;
  t.registersPerThread = 255;
  t.warpSize = 32;
}

}  // namespace

const std::vector<std::string>& cpuArchs() {
  static const std::vector<std::string> archs = {"native", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  return archs;
}

Target Target::host() {
  Target t;
  deriveLimits(t);
  return t;
}

Target Target::cpu(const std::string& arch) {
  Target t;
  setArch(t, arch);
  deriveLimits(t);
  return t;
}

Target Target::cuda(const std::string& arch) {
  Target t;
  t.kind = Kind::Cuda;
  setArch(t, arch);
  deriveLimits(t);
  return t;
}

std::string kindName(Target::Kind kind) {
  return kind == Target::Kind::Cpu ? "cpu" : "cuda";
}

std::optional<Target::Kind> parseKind(const std::string& name) {
  if (name == "cpu") return Target::Kind::Cpu;
  if (name == "cuda") return Target::Kind::Cuda;
  return std::nullopt;
}

std::string Target::kindName() const {
  return target::kindName(kind);
}

std::string Target::str() const {
  std::string s = kindName();
  if (arch != "native") s += " -arch=" + arch;
  if (threads != 0) s += " -threads=" + std::to_string(threads);
  return s;
}

std::string Target::vectorIsaName() const {
  return vectorLanes >= 16 ? "avx512" : vectorLanes >= 8 ? "avx2" : "sse";
}

bool Target::runsOnHost() const {
  if (!isCpu()) return false;
  if (arch == "native") return true;
  const int level = arch == "x86-64" ? 1 : arch.back() - '0';
  return hostArchLevel() >= level;
}

int Target::effectiveThreads() const {
  return threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
}

std::vector<std::string> Target::compilerFlags() const {
  if (!isCpu()) return {"-O3", "-arch=" + arch};
  // -fno-predictive-commoning: once the search unrolls a register tile's
  // reduction loop, GCC's -O3 keeps the next iteration's broadcast operands
  // of a convolution in registers, spills them and broadcasts from registers
  // instead of from memory (1.7x slower on Zen 4, 4.8x on Zen 3; neutral on
  // other programs, docs/results.md "Kernel flags").
  std::vector<std::string> flags = {"-O3", "-march=" + arch, "-fno-predictive-commoning", "-fopenmp", "-std=c++17"};
  if (vectorLanes >= 16) flags.push_back("-mprefer-vector-width=512");
  return flags;
}

Target parseTarget(const std::string& text) {
  std::istringstream in(text);
  std::string word;
  if (!(in >> word))
    throw std::invalid_argument("empty target (expected cpu or cuda, e.g. \"cpu -arch=x86-64-v2 -threads=1\")");
  Target t;
  if (const std::optional<Target::Kind> kind = parseKind(word))
    t.kind = *kind;
  else
    throw std::invalid_argument("unknown target kind '" + word + "' (known: cpu, cuda)");
  std::set<std::string> seen;
  while (in >> word) {
    const size_t eq = word.find('=');
    if (word.size() < 2 || word[0] != '-' || eq == std::string::npos)
      throw std::invalid_argument("target option '" + word + "' is not of the form -name=value (e.g. -arch=x86-64-v3)");
    const std::string name = word.substr(0, eq), value = word.substr(eq + 1);
    if (name != "-arch" && !(name == "-threads" && t.isCpu()))
      throw std::invalid_argument("unknown target option '" + name + "' for " + t.kindName() +
                                  (t.isCpu() ? " (known: -arch, -threads)" : " (known: -arch)"));
    if (!seen.insert(name).second) throw std::invalid_argument("target option " + name + " given twice");
    if (name == "-arch")
      setArch(t, value);
    else
      t.threads = parseThreads(value);
  }
  deriveLimits(t);
  return t;
}

}  // namespace tessel::target
