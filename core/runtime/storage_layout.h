// How the executor stores a 4-D value in memory: as in the graph (NCHW), as
// NHWC activations, or as RSCK ("HWIO") convolution weights: the layouts that
// graph::LoweringOptions::imageLayout = NHWC gives a kernel's arguments.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace tessel::runtime {

enum class Storage { Plain, NHWC, RSCK };

const char* storageName(Storage s);

// Copies `src` (stored as `from`) into `dst` (stored as `to`); `shape` is the
// logical (graph) shape. Values of rank other than 4 are copied as they are.
// `src` and `dst` must not overlap.
void convertStorage(const float* src, float* dst, const std::vector<int64_t>& shape, Storage from, Storage to);

}  // namespace tessel::runtime
