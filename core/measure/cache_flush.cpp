#include "measure/cache_flush.h"

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

}  // namespace

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
