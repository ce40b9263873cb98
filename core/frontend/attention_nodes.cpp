#include "frontend/attention_nodes.h"

#include <cmath>

namespace tessel::frontend {

namespace {

using Shape = std::vector<int64_t>;

// x @ W^T + b over the last axis (PyTorch's linear; W is [out, in]).
std::string linear(const NodeEmitter& e, const std::string& x, const std::string& w, const std::string& b,
                   const std::string& suffix) {
  const std::string wt = e.node("Transpose", {w}, {{"perm", Shape{1, 0}}}, suffix + "_weight_t");
  const std::string y = e.node("MatMul", {x, wt}, {}, suffix);
  return b.empty() ? y : e.node("Add", {y, b}, {}, suffix + "_bias");
}

// Rows [from, from + count) of a weight (the q, k or v part of in_proj).
std::string rows(const NodeEmitter& e, const std::string& w, int64_t from, int64_t count, const std::string& suffix) {
  return e.node(
      "Slice",
      {w, e.ints(suffix + "_starts", {from}), e.ints(suffix + "_ends", {from + count}), e.ints(suffix + "_axes", {0})},
      {}, suffix);
}

// [B, L, E] -> [B, H, L, D] (or [B, H, D, L] for keys, ready for q @ k^T).
std::string splitHeads(const NodeEmitter& e, const std::string& x, int64_t heads, bool keys,
                       const std::string& suffix) {
  const Shape s = e.shapeOf(x);
  const int64_t d = s.back() / heads;
  const std::string r =
      e.node("Reshape", {x, e.ints(suffix + "_shape", {s[0], s[1], heads, d})}, {}, suffix + "_heads");
  return e.node("Transpose", {r}, {{"perm", keys ? Shape{0, 2, 3, 1} : Shape{0, 2, 1, 3}}}, suffix);
}

std::string layerNorm(const NodeEmitter& e, const std::string& x, const std::string& w, const std::string& b,
                      double eps, const std::string& suffix) {
  return e.node("LayerNormalization", {x, w, b}, {{"axis", int64_t(-1)}, {"epsilon", eps}}, suffix);
}

}  // namespace

std::string multiHeadAttention(const NodeEmitter& e, const std::string& query, const std::string& key,
                               const std::string& value, const AttentionWeights& w) {
  const int64_t E = w.embedDim, H = w.heads;
  if (E <= 0 || H <= 0 || E % H) throw graph::GraphError("attention: embed_dim is not a multiple of the heads");
  const Shape qs = e.shapeOf(query);
  if (qs.size() != 3 || qs[2] != E) throw graph::GraphError("attention: the query is not [batch, length, embed_dim]");
  std::string q, k, v;
  if (query == key && key == value) {
    // Self-attention: one projection for q, k and v, then split.
    const std::string qkv = linear(e, query, w.qkvWeight, w.qkvBias, "qkv");
    q = e.node("Slice", {qkv, e.ints("q_starts", {0}), e.ints("q_ends", {E}), e.ints("q_axes", {-1})}, {}, "q");
    k = e.node("Slice", {qkv, e.ints("k_starts", {E}), e.ints("k_ends", {2 * E}), e.ints("k_axes", {-1})}, {}, "k");
    v = e.node("Slice", {qkv, e.ints("v_starts", {2 * E}), e.ints("v_ends", {3 * E}), e.ints("v_axes", {-1})}, {}, "v");
  } else {
    auto bias = [&](int64_t part, const char* name) {
      return w.qkvBias.empty() ? std::string() : rows(e, w.qkvBias, part * E, E, std::string(name) + "_bias_rows");
    };
    q = linear(e, query, rows(e, w.qkvWeight, 0, E, "q_rows"), bias(0, "q"), "q");
    k = linear(e, key, rows(e, w.qkvWeight, E, E, "k_rows"), bias(1, "k"), "k");
    v = linear(e, value, rows(e, w.qkvWeight, 2 * E, E, "v_rows"), bias(2, "v"), "v");
  }
  const std::string qh = splitHeads(e, q, H, false, "q_split"), kh = splitHeads(e, k, H, true, "k_split"),
                    vh = splitHeads(e, v, H, false, "v_split");
  const float scale = float(1.0 / std::sqrt(double(E / H)));
  const std::string scores =
      e.node("Mul", {e.node("MatMul", {qh, kh}, {}, "scores"), e.scalar("scale", scale)}, {}, "scores_scaled");
  const std::string probs = e.node("Softmax", {scores}, {{"axis", int64_t(-1)}}, "probs");
  const std::string ctx = e.node("MatMul", {probs, vh}, {}, "context");
  const std::string merged = e.node("Transpose", {ctx}, {{"perm", Shape{0, 2, 1, 3}}}, "context_t");
  const std::string flat = e.node("Reshape", {merged, e.ints("context_shape", {qs[0], qs[1], E})}, {}, "context_flat");
  return linear(e, flat, w.projWeight, w.projBias, "out_proj");
}

std::string transformerEncoderLayer(const NodeEmitter& e, const std::string& src, const EncoderLayerWeights& w) {
  auto attention = [&](const std::string& x) { return multiHeadAttention(e, x, x, x, w.attention); };
  auto feedForward = [&](const std::string& x) {
    const std::string h = linear(e, x, w.ffn1Weight, w.ffn1Bias, "ffn1");
    const std::string a = w.gelu ? e.node("Gelu", {h}, {}, "ffn_gelu") : e.node("Relu", {h}, {}, "ffn_relu");
    return linear(e, a, w.ffn2Weight, w.ffn2Bias, "ffn2");
  };
  if (w.normFirst) {
    const std::string x =
        e.node("Add", {src, attention(layerNorm(e, src, w.norm1Weight, w.norm1Bias, w.eps, "norm1"))}, {}, "residual1");
    return e.node("Add", {x, feedForward(layerNorm(e, x, w.norm2Weight, w.norm2Bias, w.eps, "norm2"))}, {},
                  "residual2");
  }
  const std::string x =
      layerNorm(e, e.node("Add", {src, attention(src)}, {}, "residual1"), w.norm1Weight, w.norm1Bias, w.eps, "norm1");
  return layerNorm(e, e.node("Add", {x, feedForward(x)}, {}, "residual2"), w.norm2Weight, w.norm2Bias, w.eps, "norm2");
}

}  // namespace tessel::frontend
