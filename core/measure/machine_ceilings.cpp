#include "measure/machine_ceilings.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/cpu_info.h"

namespace tessel::measure {

namespace {

// Bytes one triad pass moves over `n` floats per array: two reads, one write
// (STREAM's count; the write-allocate read is not counted).
double triadBytes(size_t n) {
  return 3.0 * 4.0 * double(n);
}

// The best of `trials` timings (GB/s) of `passes` triads over arrays of `n`
// floats, split between `threads` threads.
double triadGBps(size_t n, int threads, int passes, int trials) {
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), c(new float[n]);
  auto run = [&](size_t begin, size_t end) {
    for (int p = 0; p < passes; ++p) {
      float* __restrict x = a.get();
      const float* __restrict y = b.get();
      const float* __restrict z = c.get();
      for (size_t i = begin; i < end; ++i)
        x[i] = y[i] + 3.0f * z[i];
    }
  };
  // First touch on the threads that use each part (pages land near them).
  auto fill = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      a[i] = 0;
      b[i] = 1;
      c[i] = 2;
    }
  };
  auto parallel = [&](auto body) {
    std::vector<std::thread> pool;
    const size_t chunk = (n + size_t(threads) - 1) / size_t(threads);
    for (int t = 0; t < threads; ++t) {
      const size_t begin = std::min(n, size_t(t) * chunk), end = std::min(n, begin + chunk);
      pool.emplace_back(body, begin, end);
    }
    for (std::thread& t : pool)
      t.join();
  };
  parallel(fill);
  double best = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const auto start = std::chrono::steady_clock::now();
    parallel(run);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, triadBytes(n) * passes / seconds / 1e9);
  }
  volatile float sink = a[n / 2];  // the stores are used
  (void)sink;
  return best;
}

std::string nowUtc() {
  char text[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

}  // namespace

double MachineCeilings::attainableGflops(double intensity, double workingSetBytes) const {
  const double bandwidth = fitsInCache(workingSetBytes) && llcGBps > 0 ? llcGBps : dramGBps;
  return std::min(peakGflops, intensity * bandwidth);
}

namespace {

// Everything but the bandwidths, from the CPU's description.
MachineCeilings describedCeilings(const target::Target& target) {
  if (!target.isCpu()) throw std::invalid_argument("the roofline's ceilings are measured for a CPU target");
  const support::CpuInfo cpu = support::hostCpu();
  MachineCeilings m;
  m.cpu = cpu.model;
  m.threads = target.effectiveThreads();
  m.vectorLanes = target.vectorLanes;
  // Two FMA pipes a core (x86 since Haswell and Zen); AMD before Zen 5
  // (family 26) runs a 512-bit FMA as two 256-bit halves.
  const bool splitsWideFma = cpu.vendor == "AuthenticAMD" && cpu.family < 26;
  m.fmaLanesPerCycle = 2 * (splitsWideFma ? std::min(m.vectorLanes, 8) : m.vectorLanes);
  m.clockGHz = cpu.maxMHz / 1000;
  m.peakGflops = 2.0 * m.fmaLanesPerCycle * m.clockGHz * m.threads;
  m.llcBytes = cpu.lastLevelCacheBytes;
  return m;
}

// Measures the bandwidths of `m` (described) on its threads.
void measureBandwidths(MachineCeilings& m) {
  // DRAM: three arrays of 64 MiB at least, of the cache's size at least.
  const size_t dramFloats = std::max<size_t>(16u << 20, m.llcBytes);
  m.dramGBps = triadGBps(dramFloats, m.threads, 1, 5);
  // The cache: the three arrays in half of it, passed over repeatedly.
  if (m.llcBytes > 0) {
    const size_t llcFloats = std::max<size_t>(1024, m.llcBytes / 2 / 3 / 4);
    const int passes = int(std::max<size_t>(4, (256u << 20) / (llcFloats * 12)));
    m.llcGBps = triadGBps(llcFloats, m.threads, passes, 5);
  }
  m.measured = nowUtc();
}

}  // namespace

MachineCeilings measureCeilings(const target::Target& target) {
  MachineCeilings m = describedCeilings(target);
  measureBandwidths(m);
  return m;
}

std::string defaultCeilingsFile() {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string base = cache && *cache ? cache : std::string(home && *home ? home : "/tmp") + "/.cache";
  return base + "/tessel/ceilings.json";
}

MachineCeilings cachedCeilings(const target::Target& target, const std::string& cacheFile) {
  MachineCeilings m = describedCeilings(target);
  std::ifstream in(cacheFile);
  const nlohmann::json kept = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  // Kept for this CPU, these threads and this vector width: used as they are.
  if (kept.is_object() && kept.value("cpu", "") == m.cpu && kept.value("threads", 0) == m.threads &&
      kept.value("vector_lanes", 0) == m.vectorLanes && kept.value("dram_GBps", 0.0) > 0) {
    m.dramGBps = kept.value("dram_GBps", 0.0);
    m.llcGBps = kept.value("llc_GBps", 0.0);
    m.measured = kept.value("measured", "");
    return m;
  }
  measureBandwidths(m);  // the CPU is described already
  const nlohmann::json out = {
      {"cpu", m.cpu},          {"threads", m.threads},  {"vector_lanes", m.vectorLanes}, {"dram_GBps", m.dramGBps},
      {"llc_GBps", m.llcGBps}, {"measured", m.measured}};
  std::error_code ignored;
  std::filesystem::create_directories(std::filesystem::path(cacheFile).parent_path(), ignored);
  // Written whole or not at all: beside it, then renamed into place.
  const std::string part = cacheFile + ".part";
  if (std::ofstream f(part); f << out.dump(2) << '\n') std::filesystem::rename(part, cacheFile, ignored);
  return m;
}

}  // namespace tessel::measure
