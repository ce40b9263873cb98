// FNV-1a, 64 bits: a hash that gives the same value on every machine and with
// every standard library (std::hash does not), for keys and seeds that are
// stored or must reproduce.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessel::support {

// FNV-1a's standard offset basis.
constexpr uint64_t kFnvOffsetBasis = 14695981039346656037ull;
// The basis of workload keys and of the zoo's weight seeds: the standard one
// with its last digit dropped, a slip of Tessel's first version. Kept as it is:
// every workload key stored in a user's database, and the weights of every zoo
// model, derive from it. Any basis gives a good hash; only stability matters.
constexpr uint64_t kStableKeyBasis = 1469598103934665603ull;

constexpr uint64_t fnv1a(std::string_view text, uint64_t basis = kFnvOffsetBasis) {
  uint64_t h = basis;
  for (char c : text) {
    h ^= uint8_t(c);
    h *= 1099511628211ull;  // FNV's 64-bit prime
  }
  return h;
}

// 32 hex digits of two FNV-1a hashes of `text` (two bases): a name for
// content (a cached library, a kernel's symbol) that is the same everywhere.
std::string hash128Hex(std::string_view text);

}  // namespace tessel::support
