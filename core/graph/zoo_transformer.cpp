// The zoo's transformers. Dense layers are MatMul (weight [in, out]) + Add,
// as PyTorch's Linear exports on 3-D inputs; attention splits heads with
// Reshape/Transpose and computes softmax(Q K^T / sqrt(d)) V with batched
// MatMuls, Softmax feeding the second one.
#include <cmath>

#include "graph/graph_builder.h"
#include "graph/zoo_models.h"

namespace tessel::graph::zoo {

namespace {

using Attrs = std::map<std::string, AttrValue>;
using Ints = std::vector<int64_t>;

float xavierScale(int64_t in, int64_t out) {
  return float(std::sqrt(6.0 / double(in + out)));
}

std::string linear(GraphBuilder& b, const std::string& name, const std::string& x, int64_t in, int64_t out) {
  std::string w = b.weight(name + ".weight", {in, out}, xavierScale(in, out));
  std::string bias = b.weight(name + ".bias", {out}, 0.02f);
  std::string y = b.node(name + ".matmul", "MatMul", {x, w});
  return b.node(name, "Add", {y, bias});
}

std::string layerNorm(GraphBuilder& b, const std::string& name, const std::string& x, int64_t width, double eps) {
  std::string gamma = b.weight(name + ".weight", {width}, 1.0f);
  std::string beta = b.weight(name + ".bias", {width}, 0.02f);
  return b.node(name, "LayerNormalization", {x, gamma, beta}, Attrs{{"axis", int64_t(-1)}, {"epsilon", eps}});
}

// Layout of the activations: [1, seq, width] (batch first) or [seq, 1, width].
struct Layout {
  int64_t seq, width, heads;
  bool seqFirst;
  int64_t headDim() const { return width / heads; }
};

// Multi-head self-attention; `qk` feeds queries and keys, `v` values.
std::string attention(GraphBuilder& b, const std::string& p, const std::string& qk, const std::string& v,
                      const Layout& l) {
  int64_t d = l.headDim();
  std::string tag = std::to_string(l.seq) + "x" + std::to_string(l.heads) + "x" + std::to_string(d);
  std::string split, merged;
  Ints perm, permK, permBack;
  if (l.seqFirst) {  // [S, 1, W] -> [S, H, d] -> [H, S, d]
    split = b.ints("shape.heads." + tag, {l.seq, l.heads, d});
    merged = b.ints("shape.merged." + tag, {l.seq, 1, l.width});
    perm = {1, 0, 2}, permK = {1, 2, 0}, permBack = {1, 0, 2};
  } else {  // [1, S, W] -> [1, S, H, d] -> [1, H, S, d]
    split = b.ints("shape.heads." + tag, {1, l.seq, l.heads, d});
    merged = b.ints("shape.merged." + tag, {1, l.seq, l.width});
    perm = {0, 2, 1, 3}, permK = {0, 2, 3, 1}, permBack = {0, 2, 1, 3};
  }
  auto heads = [&](const std::string& name, const std::string& x, const Ints& order) {
    std::string y = linear(b, p + name, x, l.width, l.width);
    y = b.node(p + name + ".split", "Reshape", {y, split});
    return b.node(p + name + ".heads", "Transpose", {y}, Attrs{{"perm", order}});
  };
  std::string q = heads("query", qk, perm);
  std::string kT = heads("key", qk, permK);
  std::string vh = heads("value", v, perm);
  std::string scores = b.node(p + "scores", "MatMul", {q, kT});
  scores = b.node(p + "scores.scaled", "Div",
                  {scores, b.scalar("attention.sqrt_d" + std::to_string(d), float(std::sqrt(double(d))))});
  std::string probs = b.node(p + "softmax", "Softmax", {scores}, Attrs{{"axis", int64_t(-1)}});
  std::string ctx = b.node(p + "context", "MatMul", {probs, vh});
  ctx = b.node(p + "context.merge", "Transpose", {ctx}, Attrs{{"perm", permBack}});
  ctx = b.node(p + "context.reshape", "Reshape", {ctx, merged});
  return linear(b, p + "output", ctx, l.width, l.width);
}

std::string feedForward(GraphBuilder& b, const std::string& p, const std::string& x, int64_t width, int64_t mlp,
                        const std::string& activation) {
  std::string y = linear(b, p + "fc1", x, width, mlp);
  y = b.node(p + "act", activation, {y});
  return linear(b, p + "fc2", y, mlp, width);
}

// One encoder layer: pre-norm (ViT) or post-norm (BERT, DETR).
std::string encoderLayer(GraphBuilder& b, const std::string& p, std::string x, const std::string& pos, const Layout& l,
                         int64_t mlp, bool preNorm, const std::string& activation, double eps) {
  if (preNorm) {
    std::string h = layerNorm(b, p + "ln_1", x, l.width, eps);
    x = b.node(p + "residual_1", "Add", {x, attention(b, p + "attention.", h, h, l)});
    h = layerNorm(b, p + "ln_2", x, l.width, eps);
    return b.node(p + "residual_2", "Add", {x, feedForward(b, p + "mlp.", h, l.width, mlp, activation)});
  }
  std::string qk = pos.empty() ? x : b.node(p + "with_pos", "Add", {x, pos});
  std::string y = b.node(p + "residual_1", "Add", {x, attention(b, p + "attention.", qk, x, l)});
  x = layerNorm(b, p + "ln_1", y, l.width, eps);
  y = b.node(p + "residual_2", "Add", {x, feedForward(b, p + "mlp.", x, l.width, mlp, activation)});
  return layerNorm(b, p + "ln_2", y, l.width, eps);
}

}  // namespace

Graph bert(const BertConfig& c) {
  GraphBuilder b(c.name);
  std::string ids = b.input("input_ids", {1, c.seq}, DType::Int64);
  Ints positions(size_t(c.seq), 0);
  for (size_t i = 0; i < positions.size(); ++i)
    positions[i] = int64_t(i);
  std::string posIds = b.ints("position_ids", {1, c.seq}, positions);
  std::string typeIds = b.ints("token_type_ids", {1, c.seq}, Ints(size_t(c.seq), 0));
  std::string words = b.weight("embeddings.word_embeddings.weight", {c.vocab, c.hidden}, 0.05f);
  std::string posTable = b.weight("embeddings.position_embeddings.weight", {c.maxPositions, c.hidden}, 0.05f);
  std::string typeTable = b.weight("embeddings.token_type_embeddings.weight", {c.typeVocab, c.hidden}, 0.05f);
  std::string x = b.node("embeddings.word", "Gather", {words, ids}, Attrs{{"axis", int64_t(0)}});
  x = b.node("embeddings.add_position", "Add",
             {x, b.node("embeddings.position", "Gather", {posTable, posIds}, Attrs{{"axis", int64_t(0)}})});
  x = b.node("embeddings.add_type", "Add",
             {x, b.node("embeddings.token_type", "Gather", {typeTable, typeIds}, Attrs{{"axis", int64_t(0)}})});
  x = layerNorm(b, "embeddings.LayerNorm", x, c.hidden, 1e-12);
  Layout l{c.seq, c.hidden, c.heads, false};
  for (int64_t i = 0; i < c.layers; ++i)
    x = encoderLayer(b, "encoder.layer." + std::to_string(i) + ".", x, "", l, c.intermediate, false, "Gelu", 1e-12);
  b.output(x);
  // Pooler: tanh(dense(hidden state of the first token)).
  std::string first =
      b.node("pooler.first_token", "Gather", {x, b.ints("pooler.index", {}, {0})}, Attrs{{"axis", int64_t(1)}});
  std::string w = b.weight("pooler.dense.weight", {c.hidden, c.hidden}, xavierScale(c.hidden, c.hidden));
  std::string bias = b.weight("pooler.dense.bias", {c.hidden}, 0.02f);
  std::string pooled = b.node("pooler.dense", "Gemm", {first, w, bias}, Attrs{{"transB", int64_t(1)}});
  b.output(b.node("pooler.activation", "Tanh", {pooled}));
  return b.finish();
}

Graph vitB16() {
  const int64_t width = 768, patch = 16, image = 224, tokens = (image / patch) * (image / patch) + 1;
  GraphBuilder b("vit_b16");
  std::string x = b.input("input", {1, 3, image, image});
  std::string w = b.weight("conv_proj.weight", {width, 3, patch, patch}, GraphBuilder::heScale(3 * patch * patch));
  std::string bias = b.weight("conv_proj.bias", {width}, 0.02f);
  x = b.node("conv_proj", "Conv", {x, w, bias},
             Attrs{{"kernel_shape", Ints{patch, patch}}, {"strides", Ints{patch, patch}}});
  x = b.node("patches", "Reshape", {x, b.ints("shape.patches", {1, width, tokens - 1})});
  x = b.node("patches.transpose", "Transpose", {x}, Attrs{{"perm", Ints{0, 2, 1}}});
  std::string cls = b.weight("class_token", {1, 1, width}, 0.02f);
  x = b.node("tokens", "Concat", {cls, x}, Attrs{{"axis", int64_t(1)}});
  x = b.node("encoder.add_pos", "Add", {x, b.weight("encoder.pos_embedding", {1, tokens, width}, 0.02f)});
  Layout l{tokens, width, 12, false};
  for (int i = 0; i < 12; ++i)
    x = encoderLayer(b, "encoder.layers.encoder_layer_" + std::to_string(i) + ".", x, "", l, 3072, true, "Gelu", 1e-6);
  x = layerNorm(b, "encoder.ln", x, width, 1e-6);
  x = b.node("class_token_out", "Gather", {x, b.ints("class_index", {}, {0})}, Attrs{{"axis", int64_t(1)}});
  std::string hw = b.weight("heads.head.weight", {1000, width}, xavierScale(width, 1000));
  std::string hb = b.weight("heads.head.bias", {1000}, 0.02f);
  b.output(b.node("heads.head", "Gemm", {x, hw, hb}, Attrs{{"transB", int64_t(1)}}));
  return b.finish();
}

Graph encoder(const EncoderConfig& c) {
  GraphBuilder b(c.name);
  std::string x = b.input("src", {c.seq, 1, c.width});
  std::string pos = c.positionInput ? b.input("pos", {c.seq, 1, c.width}) : "";
  Layout l{c.seq, c.width, c.heads, true};
  for (int64_t i = 0; i < c.layers; ++i)
    x = encoderLayer(b, "layers." + std::to_string(i) + ".", x, pos, l, c.mlp, c.preNorm, c.activation, c.epsilon);
  if (c.preNorm) x = layerNorm(b, "norm", x, c.width, c.epsilon);
  b.output(x);
  return b.finish();
}

}  // namespace tessel::graph::zoo
