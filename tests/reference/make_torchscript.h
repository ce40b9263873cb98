// TorchScript modules for test_reference, written with LibTorch's C++ API.
// A plain C++ interface: the Qt test must not include LibTorch's headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::testing {

// conv 3x3 (3 -> 8) + batch_norm + relu + max_pool 2x2 + adaptive_avg_pool(1)
// + flatten + linear (8 -> 10); input [N, 3, H, W].
void writeConvNet(const std::string& path);
// One attention block: q/k/v linear, 2 heads (view + permute), q k^T scaled,
// softmax, matmul with v, back to [B, T, 8], residual + layer_norm, linear +
// gelu; input [B, T, 8].
void writeAttention(const std::string& path);
// Many smaller ops: avg_pool2d, dropout, relu_ (in place), sigmoid, tanh,
// add with alpha, scalar operands, cat, size + reshape, addmm, mm, t, div,
// chunk, slice, select, unsqueeze, mean, max_pool2d (ceil_mode), view,
// flatten, rsub; input [2, 4, 6, 6].
void writeMisc(const std::string& path);
// F.interpolate's ATen ops: nearest by scale factors and to sizes, bilinear
// to sizes (align_corners off and on) and by scale factors; input [N, C, H, W].
void writeUpsample(const std::string& path);
// forward uses torch.cumsum, which the importer does not convert.
void writeUnsupported(const std::string& path);

struct ModuleOutput {
  std::vector<int64_t> shape;
  std::vector<float> data;
};
// Loads the module and returns forward(inputs) (a single tensor output).
ModuleOutput runModule(const std::string& path, const std::vector<std::vector<int64_t>>& shapes,
                       const std::vector<std::vector<float>>& inputs);

}  // namespace tessel::testing
