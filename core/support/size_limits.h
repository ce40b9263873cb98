// Sizes checked once, where shapes enter Tessel (the CLI, the frontends, the
// operator definitions): element counts and byte sizes in checked 64-bit
// arithmetic, against the ranges the code generators handle and the
// machine's memory. Past this edge, sizes are trusted.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::support {

// A shape beyond what Tessel handles; the message names the tensor and the limit.
class LimitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Generated kernels index with 32-bit ints (C `int` loop variables and flat
// offsets, CUDA's threadIdx arithmetic): a tensor holds at most this many
// elements, and no dimension is longer.
constexpr int64_t kMaxTensorElements = 2147483647;  // INT32_MAX

// "longer than 2147483647, the most Tessel's kernels index (32-bit int)":
// how every message about a dimension or extent past the limit ends.
std::string tooLongText();

// a * b, or nothing when it overflows int64 (both operands >= 0).
std::optional<int64_t> checkedMul(int64_t a, int64_t b);
// a + b, or nothing when it overflows int64 (both operands >= 0).
std::optional<int64_t> checkedAdd(int64_t a, int64_t b);
// The product of the dimensions, or nothing when it overflows int64.
std::optional<int64_t> checkedElements(const std::vector<int64_t>& shape);

// The machine's physical memory in bytes (sysconf), 0 when unknown.
int64_t physicalMemoryBytes();

// "[1, 3, 224, 224]": for messages.
std::string shapeText(const std::vector<int64_t>& shape);
// "3.2 GiB", "512 KiB": for messages.
std::string bytesText(double bytes);

// Checks one tensor: no negative dimension, no dimension or element count
// beyond kMaxTensorElements (with overflow caught), and no more bytes than
// `memoryBytes` (the machine's; 0: unknown, not checked). Throws LimitError
// naming `what` ("tensor 'A'", "input 'x'") and the limit; returns the
// element count.
int64_t checkTensorSize(const std::string& what, const std::vector<int64_t>& shape, int64_t elementBytes = 4,
                        int64_t memoryBytes = physicalMemoryBytes());

}  // namespace tessel::support
