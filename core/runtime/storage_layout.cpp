#include "runtime/storage_layout.h"

#include <algorithm>

namespace tessel::runtime {

namespace {

// Storage dim d holds logical dim perm[d].
std::array<size_t, 4> permOf(Storage s) {
  if (s == Storage::NHWC) return {0, 2, 3, 1};
  if (s == Storage::RSCK) return {2, 3, 1, 0};
  return {0, 1, 2, 3};
}

// Stride (in elements) of each logical dim within a storage order.
std::array<int64_t, 4> stridesOf(Storage s, const std::vector<int64_t>& shape) {
  const std::array<size_t, 4> perm = permOf(s);
  std::array<int64_t, 4> st{};
  int64_t acc = 1;
  for (size_t d = 4; d-- > 0;) {
    st[perm[d]] = acc;
    acc *= shape[perm[d]];
  }
  return st;
}

}  // namespace

const char* storageName(Storage s) {
  switch (s) {
    case Storage::NHWC:
      return "NHWC";
    case Storage::RSCK:
      return "RSCK";
    case Storage::Plain:
      break;
  }
  return "plain";
}

void convertStorage(const float* src, float* dst, const std::vector<int64_t>& shape, Storage from, Storage to) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  if (from == to || shape.size() != 4) {
    std::copy(src, src + count, dst);
    return;
  }
  const std::array<int64_t, 4> a = stridesOf(from, shape), b = stridesOf(to, shape);
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j)
      for (int64_t k = 0; k < shape[2]; ++k)
        for (int64_t l = 0; l < shape[3]; ++l)
          dst[i * b[0] + j * b[1] + k * b[2] + l * b[3]] = src[i * a[0] + j * a[1] + k * a[2] + l * a[3]];
}

}  // namespace tessel::runtime
