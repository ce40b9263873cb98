#include "support/size_limits.h"

#include <unistd.h>

#include <cstdio>

namespace tessel::support {

std::string tooLongText() {
  return "longer than " + std::to_string(kMaxTensorElements) + ", the most Tessel's kernels index (32-bit int)";
}

std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> checkedElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    const std::optional<int64_t> next = checkedMul(n, d);
    if (!next) return std::nullopt;
    n = *next;
  }
  return n;
}

int64_t physicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), pageBytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageBytes <= 0) return 0;
  return checkedMul(pages, pageBytes).value_or(INT64_MAX);
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string bytesText(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

int64_t checkTensorSize(const std::string& what, const std::vector<int64_t>& shape, int64_t elementBytes,
                        int64_t memory) {
  const std::string named = what + " " + shapeText(shape);
  for (int64_t d : shape) {
    if (d < 0) throw LimitError(named + ": dimension " + std::to_string(d) + " is negative");
    if (d > kMaxTensorElements) throw LimitError(named + ": dimension " + std::to_string(d) + " is " + tooLongText());
  }
  const std::optional<int64_t> n = checkedElements(shape);
  if (!n || *n > kMaxTensorElements)
    throw LimitError(named + ": " + (n ? std::to_string(*n) : std::string("more than 2^63")) +
                     " elements, more than the " + std::to_string(kMaxTensorElements) +
                     " Tessel's kernels index (32-bit int)");
  const double bytes = double(*n) * double(elementBytes);
  if (memory > 0 && bytes > double(memory))
    throw LimitError(named + ": " + bytesText(bytes) + ", more than this machine's memory (" +
                     bytesText(double(memory)) + ")");
  return *n;
}

}  // namespace tessel::support
