// Fused attention ops of PyTorch's fast paths (what `torch.jit.trace` records
// for nn.MultiheadAttention and nn.TransformerEncoderLayer under no_grad)
// spelled out as ONNX-style nodes: projections, heads, scaled dot products,
// softmax, feed-forward and layer norms, so that each part is fused and tuned
// like any exported transformer. Plain C++: the TorchScript importer hands
// its own node-making functions in.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace tessel::frontend {

// How the nodes reach the graph under construction.
struct NodeEmitter {
  // Adds op(inputs, attrs); returns its output value, named with `suffix`.
  std::function<std::string(const std::string& op, std::vector<std::string> inputs,
                            std::map<std::string, graph::AttrValue> attrs, const std::string& suffix)>
      node;
  // A 1-D Int64 constant (shapes, axes, split sizes).
  std::function<std::string(const std::string& suffix, std::vector<int64_t> values)> ints;
  // A Float32 scalar constant.
  std::function<std::string(const std::string& suffix, float value)> scalar;
  // The static shape of a value.
  std::function<std::vector<int64_t>(const std::string& value)> shapeOf;
};

// nn.MultiheadAttention's weights: in_proj [3E, E] and [3E], out_proj [E, E] and [E].
struct AttentionWeights {
  int64_t embedDim = 0, heads = 0;
  std::string qkvWeight, qkvBias, projWeight, projBias;
};

// aten::_native_multi_head_attention without a mask: query, key and value
// [B, L, E] (batch first) to the attention output [B, L, E].
std::string multiHeadAttention(const NodeEmitter& e, const std::string& query, const std::string& key,
                               const std::string& value, const AttentionWeights& w);

// aten::_transformer_encoder_layer_fwd without a mask.
struct EncoderLayerWeights {
  AttentionWeights attention;
  bool gelu = false, normFirst = false;
  double eps = 1e-5;
  std::string norm1Weight, norm1Bias, norm2Weight, norm2Bias;
  std::string ffn1Weight, ffn1Bias, ffn2Weight, ffn2Bias;
};
std::string transformerEncoderLayer(const NodeEmitter& e, const std::string& src, const EncoderLayerWeights& w);

}  // namespace tessel::frontend
