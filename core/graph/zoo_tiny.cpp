// A tiny residual CNN for demos and end-to-end tests: every stage of the
// pipeline (fusion, tasks, tuning, run against LibTorch) in seconds.
#include "graph/graph_builder.h"
#include "graph/zoo_models.h"

namespace tessel::graph::zoo {

Graph tinyCnn() {
  using Attrs = std::map<std::string, AttrValue>;
  GraphBuilder b("tiny_cnn");
  std::string x = b.input("image", {1, 3, 32, 32});
  auto conv = [&](const std::string& name, const std::string& in, int64_t cin, int64_t cout) {
    std::string w = b.weight(name + ".weight", {cout, cin, 3, 3}, GraphBuilder::heScale(cin * 9));
    std::string bias = b.weight(name + ".bias", {cout}, 0.05f);
    return b.node(name, "Conv", {in, w, bias},
                  Attrs{{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  };
  std::string y = b.node("relu1", "Relu", {conv("conv1", x, 3, 16)});
  std::string z = b.node("relu2", "Relu", {conv("conv2", y, 16, 16)});
  z = b.node("add", "Add", {conv("conv3", z, 16, 16), y});
  z = b.node("relu3", "Relu", {z});
  z = b.node("pool", "MaxPool", {z},
             Attrs{{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  z = b.node("gap", "GlobalAveragePool", {z});
  z = b.node("flatten", "Flatten", {z}, Attrs{{"axis", int64_t(1)}});
  std::string w = b.weight("fc.weight", {10, 16}, GraphBuilder::heScale(16));
  std::string bias = b.weight("fc.bias", {10}, 0.05f);
  b.output(b.node("fc", "Gemm", {z, w, bias}, Attrs{{"transB", int64_t(1)}}));
  return b.finish();
}

}  // namespace tessel::graph::zoo
