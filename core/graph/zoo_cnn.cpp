// The zoo's CNNs, laid out like torchvision's modules (and their ONNX
// export): Conv without bias, BatchNormalization in inference form with its
// running statistics as initializers, Relu / Clip(0, 6), Gemm classifier.
#include <cmath>

#include "graph/graph_builder.h"
#include "graph/zoo_models.h"

namespace tessel::graph::zoo {

namespace {

using Attrs = std::map<std::string, AttrValue>;

// Positive running variances in [0.5, 1.5): BN divides by their square root.
std::vector<float> runningVariance(int64_t channels) {
  std::vector<float> v(static_cast<size_t>(channels));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = 0.5f + float(std::fmod(double(i) * 0.6180339887, 1.0));
  return v;
}

// Conv (no bias) -> BatchNormalization [-> activation]. `conv` and `bn` are
// the torchvision module names; returns the last value.
std::string convBn(GraphBuilder& b, const std::string& conv, const std::string& bn, const std::string& x, int64_t cin,
                   int64_t cout, int64_t k, int64_t stride, int64_t group, const std::string& activation) {
  int64_t pad = (k - 1) / 2;
  std::string w = b.weight(conv + ".weight", {cout, cin / group, k, k}, GraphBuilder::heScale(cin / group * k * k));
  std::string y = b.node(conv, "Conv", {x, w},
                         Attrs{{"kernel_shape", std::vector<int64_t>{k, k}},
                               {"strides", std::vector<int64_t>{stride, stride}},
                               {"pads", std::vector<int64_t>{pad, pad, pad, pad}},
                               {"dilations", std::vector<int64_t>{1, 1}},
                               {"group", group}});
  std::string gamma = b.weight(bn + ".weight", {cout}, 1.0f);
  std::string beta = b.weight(bn + ".bias", {cout}, 0.1f);
  std::string mean = b.weight(bn + ".running_mean", {cout}, 0.1f);
  std::string var = b.floats(bn + ".running_var", {cout}, runningVariance(cout));
  y = b.node(bn, "BatchNormalization", {y, gamma, beta, mean, var}, Attrs{{"epsilon", 1e-5}, {"momentum", 0.9}});
  if (activation == "Relu") return b.node(bn + ".relu", "Relu", {y});
  if (activation == "Relu6")
    return b.node(bn + ".relu6", "Clip", {y, b.scalar("relu6.min", 0.0f), b.scalar("relu6.max", 6.0f)});
  return y;
}

// avgpool -> flatten -> fc (torchvision's Linear exports as Gemm with transB).
std::string classifier(GraphBuilder& b, const std::string& x, int64_t features, bool dropout) {
  std::string y = b.node("avgpool", "GlobalAveragePool", {x});
  y = b.node("flatten", "Flatten", {y}, Attrs{{"axis", int64_t(1)}});
  if (dropout) y = b.node("classifier.dropout", "Dropout", {y});
  std::string fc = dropout ? "classifier.1" : "fc";
  std::string w = b.weight(fc + ".weight", {1000, features}, GraphBuilder::heScale(features));
  std::string bias = b.weight(fc + ".bias", {1000}, 0.01f);
  return b.node(fc, "Gemm", {y, w, bias}, Attrs{{"transB", int64_t(1)}});
}

}  // namespace

Graph resnet(int depth) {
  bool bottleneck = depth >= 50;
  std::vector<int> blocks = depth == 18 ? std::vector<int>{2, 2, 2, 2} : std::vector<int>{3, 4, 6, 3};
  GraphBuilder b("resnet" + std::to_string(depth));
  std::string x = b.input("input", {1, 3, 224, 224});
  x = convBn(b, "conv1", "bn1", x, 3, 64, 7, 2, 1, "Relu");
  x = b.node("maxpool", "MaxPool", {x},
             Attrs{{"kernel_shape", std::vector<int64_t>{3, 3}},
                   {"strides", std::vector<int64_t>{2, 2}},
                   {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  int64_t inplanes = 64;
  int64_t expansion = bottleneck ? 4 : 1;
  for (int layer = 0; layer < 4; ++layer) {
    int64_t planes = 64 << layer;
    for (int i = 0; i < blocks[size_t(layer)]; ++i) {
      std::string p = "layer" + std::to_string(layer + 1) + "." + std::to_string(i) + ".";
      int64_t stride = (layer > 0 && i == 0) ? 2 : 1;
      std::string identity = x, y;
      if (bottleneck) {
        y = convBn(b, p + "conv1", p + "bn1", x, inplanes, planes, 1, 1, 1, "Relu");
        y = convBn(b, p + "conv2", p + "bn2", y, planes, planes, 3, stride, 1, "Relu");
        y = convBn(b, p + "conv3", p + "bn3", y, planes, planes * expansion, 1, 1, 1, "");
      } else {
        y = convBn(b, p + "conv1", p + "bn1", x, inplanes, planes, 3, stride, 1, "Relu");
        y = convBn(b, p + "conv2", p + "bn2", y, planes, planes, 3, 1, 1, "");
      }
      if (stride != 1 || inplanes != planes * expansion)
        identity = convBn(b, p + "downsample.0", p + "downsample.1", x, inplanes, planes * expansion, 1, stride, 1, "");
      y = b.node(p + "add", "Add", {y, identity});
      x = b.node(p + "relu", "Relu", {y});
      inplanes = planes * expansion;
    }
  }
  b.output(classifier(b, x, inplanes, false));
  return b.finish();
}

Graph mobilenetV2() {
  GraphBuilder b("mobilenet_v2");
  std::string x = b.input("input", {1, 3, 224, 224});
  x = convBn(b, "features.0.0", "features.0.1", x, 3, 32, 3, 2, 1, "Relu6");
  // t (expansion), c (channels), n (repeats), s (first stride)
  const int64_t settings[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                  {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int64_t inp = 32;
  int feature = 1;
  for (const auto& s : settings)
    for (int64_t i = 0; i < s[2]; ++i, ++feature) {
      std::string p = "features." + std::to_string(feature) + ".conv.";
      int64_t stride = i == 0 ? s[3] : 1, hidden = inp * s[0], out = s[1];
      std::string y = x;
      int part = 0;
      auto name = [&](int k) {
        std::string s = p;
        s += std::to_string(part);
        if (k >= 0) s.append(".").append(std::to_string(k));
        return s;
      };
      if (s[0] != 1) {
        y = convBn(b, name(0), name(1), y, inp, hidden, 1, 1, 1, "Relu6");
        ++part;
      }
      y = convBn(b, name(0), name(1), y, hidden, hidden, 3, stride, hidden, "Relu6");
      ++part;
      std::string conv = name(-1), bn = p + std::to_string(part + 1);
      y = convBn(b, conv, bn, y, hidden, out, 1, 1, 1, "");
      if (stride == 1 && inp == out) y = b.node(p + "add", "Add", {x, y});
      x = y;
      inp = out;
    }
  x = convBn(b, "features.18.0", "features.18.1", x, 320, 1280, 1, 1, 1, "Relu6");
  b.output(classifier(b, x, 1280, true));
  return b.finish();
}

}  // namespace tessel::graph::zoo
