// The zoo's table: names, descriptions, published figures, builders.
//
// Figures (FLOPs are 2 x multiply-adds of Conv/Gemm/MatMul, Graph::flops()):
//  - resnet18, resnet50, mobilenet_v2, vit_b16: parameters and "GFLOPS" of
//    torchvision's model tables (which are multiply-adds: resnet18 1.81,
//    resnet50 4.09, mobilenet_v2 0.30, vit_b_16 17.56), doubled here.
//  - bert_tiny, bert_base: Hugging Face BertModel parameters of
//    google/bert_uncased_L-2_H-128_A-2 (4,385,920) and bert-base-uncased
//    (109,482,240), both with embeddings and pooler. FLOPs at sequence 128:
//    2 x [L (4 S H^2 + 2 S^2 H + 2 S H I) + H^2] multiply-adds (no published
//    per-sequence-length figure to quote).
//  - AutoGTCO encoders: the table gives each whole model's parameters (with
//    backbone, embeddings and decoder); for the encoder alone the figures are
//    those of its architecture: L x (4 W^2 + 4 W + 2 W M + M + W + 4 W)
//    (+ 2 W for the final LayerNorm of the pre-norm ones) and
//    2 x L (4 S W^2 + 2 S^2 W + 2 S W M). Cross-check with the table:
//    DETR E6 - E3 = 41.30 M - 37.40 M = 3.90 M for 3 layers of 1.315 M.
//    SETR-Naive-Base uses the table's mlp-dim 4096 (its 87.69 M total fits
//    ViT-B's 3072 better; the table is followed as given).
#include "graph/zoo.h"

#include <functional>

#include "graph/zoo_models.h"

namespace tessel::graph {

namespace {

struct ZooModel {
  ZooEntry entry;
  std::function<Graph()> build;
};

zoo::EncoderConfig detr(int64_t layers) {
  return {"detr_encoder_e" + std::to_string(layers), layers, 256, 2048, 8, 1050, false, true, "Relu", 1e-5};
}

const std::vector<ZooModel>& models() {
  static const std::vector<ZooModel> list = {
      {{"resnet18", "torchvision ResNet-18, input 1x3x224x224", 11689512, 3.62}, [] { return zoo::resnet(18); }},
      // Counted by hand: conv 448 + 2 x 2,320, fc 170; 2 x (27 + 2 x 144) x 16 x 32 x 32 + 2 x 160.
      {{"tiny_cnn", "a tiny residual CNN for demos and tests (not a published model), input 1x3x32x32", 5258,
        0.01032224},
       [] { return zoo::tinyCnn(); }},
      {{"resnet50", "torchvision ResNet-50 (v1.5), input 1x3x224x224", 25557032, 8.18}, [] { return zoo::resnet(50); }},
      {{"mobilenet_v2", "torchvision MobileNetV2, input 1x3x224x224", 3504872, 0.60},
       [] { return zoo::mobilenetV2(); }},
      {{"bert_tiny", "BERT-Tiny (L=2, H=128, A=2) with embeddings and pooler, token ids 1x128", 4385920, 0.1175},
       [] {
         return zoo::bert({"bert_tiny", 2, 128, 2, 512});
       }},
      {{"bert_base", "BERT-Base uncased (L=12, H=768, A=12) with embeddings and pooler, token ids 1x128", 109482240,
        22.35},
       [] {
         return zoo::bert({"bert_base", 12, 768, 12, 3072});
       }},
      {{"vit_b16", "torchvision ViT-B/16 with 1000-class head, input 1x3x224x224", 86567656, 35.12},
       [] { return zoo::vitB16(); }},
      {{"detr_encoder_e3", "DETR-ResNet50-E3 encoder: 3 post-norm layers, width 256, mlp 2048, 8 heads, src 1050x1x256",
        3945216, 11.64},
       [] { return zoo::encoder(detr(3)); }},
      {{"detr_encoder_e6", "DETR-ResNet50-E6 encoder: 6 post-norm layers, width 256, mlp 2048, 8 heads, src 1050x1x256",
        7890432, 23.29},
       [] { return zoo::encoder(detr(6)); }},
      {{"setr_naive_base_encoder",
        "SETR-Naive-Base encoder: 12 pre-norm layers, width 768, mlp 4096, 12 heads, src 576x1x768", 103942656, 131.82},
       [] {
         return zoo::encoder({"setr_naive_base_encoder", 12, 768, 4096, 12, 576, true, false, "Gelu", 1e-6});
       }},
      {{"vit_base_encoder", "ViT-Base-16 encoder: 12 pre-norm layers, width 768, mlp 3072, 12 heads, src 197x1x768",
        85056000, 34.89},
       [] {
         return zoo::encoder({"vit_base_encoder", 12, 768, 3072, 12, 197, true, false, "Gelu", 1e-6});
       }},
      {{"vit_large_encoder", "ViT-Large-16 encoder: 24 pre-norm layers, width 1024, mlp 4096, 16 heads, src 197x1x1024",
        302311424, 122.80},
       [] {
         return zoo::encoder({"vit_large_encoder", 24, 1024, 4096, 16, 197, true, false, "Gelu", 1e-6});
       }},
      {{"vit_huge_encoder", "ViT-Huge-14 encoder: 32 pre-norm layers, width 1280, mlp 5120, 16 heads, src 257x1x1280",
        629680640, 334.20},
       [] {
         return zoo::encoder({"vit_huge_encoder", 32, 1280, 5120, 16, 257, true, false, "Gelu", 1e-6});
       }},
  };
  return list;
}

}  // namespace

const std::vector<ZooEntry>& zooModels() {
  static const std::vector<ZooEntry> entries = [] {
    std::vector<ZooEntry> e;
    for (const ZooModel& m : models())
      e.push_back(m.entry);
    return e;
  }();
  return entries;
}

bool isZooModel(const std::string& name) {
  for (const ZooModel& m : models())
    if (m.entry.name == name) return true;
  return false;
}

Graph makeZooModel(const std::string& name) {
  for (const ZooModel& m : models())
    if (m.entry.name == name) return m.build();
  std::string known;
  for (const ZooModel& m : models())
    known += (known.empty() ? "" : ", ") + m.entry.name;
  throw GraphError("unknown zoo model '" + name + "'; known models: " + known);
}

}  // namespace tessel::graph
