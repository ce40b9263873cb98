// The zoo's model builders (zoo.cpp lists them). Each returns the graph with
// shapes inferred.
#pragma once

#include <string>

#include "graph/graph.h"

namespace tessel::graph::zoo {

// torchvision resnet18 / resnet50 (v1.5: stride in the 3x3 conv), batch 1, 3x224x224.
Graph resnet(int depth);
// torchvision mobilenet_v2, batch 1, 3x224x224.
Graph mobilenetV2();
// Three 3x3 convs with a residual add, pooling and a classifier on 1x3x32x32.
Graph tinyCnn();

// A BERT encoder with embeddings and pooler (Hugging Face BertModel), token
// ids [1, seq] as input.
struct BertConfig {
  std::string name;
  int64_t layers, hidden, heads, intermediate;
  int64_t seq = 128, vocab = 30522, maxPositions = 512, typeVocab = 2;
};
Graph bert(const BertConfig& c);

// torchvision vit_b_16: patch conv, class token, 12 pre-norm layers, head.
Graph vitB16();

// A stack of transformer encoder layers on an already embedded sequence
// "src" [seq, 1, width] (sequence first, like PyTorch's nn.Transformer and
// the "encoder input" column of AutoGTCO's table).
struct EncoderConfig {
  std::string name;
  int64_t layers, width, mlp, heads, seq;
  bool preNorm;            // ViT / SETR: x + f(LN(x)), final LN; DETR: LN(x + f(x)), no final LN
  bool positionInput;      // DETR: "pos" [seq, 1, width] added to queries and keys in every layer
  std::string activation;  // "Relu" (DETR) or "Gelu"
  double epsilon;
};
Graph encoder(const EncoderConfig& c);

}  // namespace tessel::graph::zoo
