#include "measure/cache_flush.h"

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define TESSEL_X86 1
#endif

namespace tessel::measure {

namespace {

constexpr size_t kLine = 64;

#if TESSEL_X86
bool haveClflushopt() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b >> 23) & 1;  // CPUID.(EAX=7,ECX=0):EBX[23] = CLFLUSHOPT
}

__attribute__((target("clflushopt"))) void flushOpt(const char* p, const char* end) {
  for (; p < end; p += kLine)
    _mm_clflushopt(const_cast<char*>(p));
  _mm_mfence();  // CLFLUSHOPT is weakly ordered: wait until every line is gone
}

void flushPlain(const char* p, const char* end) {
  for (; p < end; p += kLine)
    _mm_clflush(p);
  _mm_mfence();
}
#endif

size_t privateCacheBytes() {
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 <= 0) l2 = 2L << 20;  // not reported (some VMs): assume a large L2
  return size_t(l2);
}

}  // namespace

// Written only when a sweep sums to 1 (never): the reads cannot be dropped.
volatile unsigned long long gSweepSink = 0;

void evictPrivateCaches() {
  // 1.5x L2: with an LRU-like policy a sweep of that much leaves none of the
  // earlier lines behind; reads only, so no dirty lines are left to write back.
  static const size_t bytes = privateCacheBytes() * 3 / 2;
#pragma omp parallel
  {
    thread_local std::vector<unsigned long long> sweep(bytes / sizeof(unsigned long long), 1);
    unsigned long long sum = 0;
    for (size_t i = 0; i < sweep.size(); i += kLine / sizeof(unsigned long long))
      sum += sweep[i];
    if (sum == 1) gSweepSink = sum;  // never true; keeps the reads
  }
}

void enterCacheState(CacheState state, const std::vector<CallBuffer>& buffers) {
  if (state == CacheState::Warm) return;
  for (const CallBuffer& b : buffers)
    if (state == CacheState::Cold || b.weights) evictFromCaches(b.data, b.bytes);
  if (state == CacheState::Model) evictPrivateCaches();
}

const char* cacheFlushMethod() {
#if TESSEL_X86
  static const bool opt = haveClflushopt();
  return opt ? "clflushopt" : "clflush";
#else
  return "overwrite";
#endif
}

void evictFromCaches(const void* data, size_t bytes) {
  if (bytes == 0) return;
  const char* begin = reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(data) & ~uintptr_t(kLine - 1));
  const char* end = static_cast<const char*>(data) + bytes;
#if TESSEL_X86
  static const bool opt = haveClflushopt();
  if (opt)
    flushOpt(begin, end);
  else
    flushPlain(begin, end);
#else
  (void)begin;
  (void)end;
  // Larger than any last-level cache we measure on; a new value each time so
  // the writes cannot be elided.
  static std::vector<unsigned char> big(size_t(256) << 20);
  static unsigned value = 0;
  std::memset(big.data(), int(++value & 0xff), big.size());
#endif
}

}  // namespace tessel::measure
