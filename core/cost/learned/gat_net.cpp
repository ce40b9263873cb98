// "gat": GTuner's graph attention network. Structural features come from two
// WL-GCN layers (Morris et al.: h' = relu(W_self h + W_nbr sum of the
// neighbours' h), edges taken both ways) over the program graph, mean-pooled
// per program; they are concatenated with the statistical features (Ansor's
// store rows, each encoded by a 170-256-256 perceptron and summed, as in
// TenSet's MLP: the plain sum of the rows ranked pairs 0.03 worse), projected
// to 512, reshaped into 8 tokens of 64 that a four-head self-attention
// relates, and an MLP 200-100-20-1 scores it.
#include <torch/nn.h>

#include "cost/features.h"
#include "cost/learned/torch_cost_model.h"

namespace tessel::cost::learned {

namespace {

constexpr int64_t kGraphHidden = 64;
constexpr int64_t kProjected = 512;
constexpr int64_t kTokens = 8;  // kProjected = kTokens x kTokenWidth
constexpr int64_t kTokenWidth = kProjected / kTokens;
constexpr int64_t kHeads = 4;

// The programs' graphs as one: node attributes, edges (both ways) with the
// node indices offset per program, and each node's program.
struct GraphBatch {
  torch::Tensor nodes, from, to, program, nodesPerProgram;
};

GraphBatch batchGraphs(const std::vector<const ProgramFeatureSet*>& programs) {
  std::vector<float> attrs;
  std::vector<int64_t> from, to, owner, counts;
  int64_t offset = 0;
  for (size_t p = 0; p < programs.size(); ++p) {
    const ProgramGraph& g = programs[p]->graph;
    attrs.insert(attrs.end(), g.attributes.begin(), g.attributes.end());
    for (const auto& e : g.edges) {
      from.push_back(offset + e.from), to.push_back(offset + e.to);
      from.push_back(offset + e.to), to.push_back(offset + e.from);
    }
    owner.insert(owner.end(), g.numNodes(), int64_t(p));
    counts.push_back(std::max<int64_t>(1, int64_t(g.numNodes())));
    offset += int64_t(g.numNodes());
  }
  auto ints = [](std::vector<int64_t>& v) {
    return torch::from_blob(v.data(), {int64_t(v.size())}, torch::kInt64).clone();
  };
  return {torch::from_blob(attrs.data(), {offset, int64_t(kGraphNodeFeatures)}, torch::kFloat32).clone(), ints(from),
          ints(to), ints(owner), ints(counts)};
}

class WlGcnLayerImpl : public torch::nn::Module {
 public:
  WlGcnLayerImpl(int64_t in, int64_t out)
      : self_(register_module("self", torch::nn::Linear(in, out))),
        neighbours_(register_module("neighbours", torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false)))) {}
  torch::Tensor forward(const torch::Tensor& h, const torch::Tensor& from, const torch::Tensor& to) {
    const torch::Tensor sum = torch::zeros_like(h).index_add(0, to, h.index_select(0, from));
    return torch::relu(self_->forward(h) + neighbours_->forward(sum));
  }

 private:
  torch::nn::Linear self_, neighbours_;
};
TORCH_MODULE(WlGcnLayer);

constexpr int64_t kEncoded = 256;  // a store row's code (TenSet's MLP encoder)

class GatNet final : public ScoringNet {
 public:
  GatNet()
      : gcn1_(register_module("gcn1", WlGcnLayer(int64_t(kGraphNodeFeatures), kGraphHidden))),
        gcn2_(register_module("gcn2", WlGcnLayer(kGraphHidden, kGraphHidden))),
        project_(register_module("project", torch::nn::Linear(kGraphHidden + kEncoded, kProjected))),
        attention_(register_module("attention", torch::nn::MultiheadAttention(kTokenWidth, kHeads))),
        mlp_(register_module(
            "mlp", torch::nn::Sequential(torch::nn::Linear(kProjected, 200), torch::nn::ReLU(),
                                         torch::nn::Linear(200, 100), torch::nn::ReLU(), torch::nn::Linear(100, 20),
                                         torch::nn::ReLU(), torch::nn::Linear(20, 1)))),
        encoder_(register_module("encoder", makeStoreEncoder(kEncoded))) {}

  torch::Tensor score(const std::vector<const ProgramFeatureSet*>& programs) override {
    const int64_t n = int64_t(programs.size());
    const GraphBatch g = batchGraphs(programs);
    torch::Tensor h = gcn1_->forward(scaler_->nodes(g.nodes), g.from, g.to);
    h = gcn2_->forward(h, g.from, g.to);
    const torch::Tensor structural = sumByProgram(h, g.program, n) / g.nodesPerProgram.unsqueeze(1).to(h.dtype());
    const torch::Tensor statistical = encodedStoreSum(encoder_, programs);
    const torch::Tensor x = torch::relu(project_->forward(torch::cat({structural, statistical}, 1)));
    const torch::Tensor tokens = x.view({n, kTokens, kTokenWidth}).transpose(0, 1);  // [tokens, n, width]
    const torch::Tensor attended = std::get<0>(attention_->forward(tokens, tokens, tokens)) + tokens;
    return mlp_->forward(attended.transpose(0, 1).reshape({n, kProjected})).squeeze(1);
  }

 private:
  WlGcnLayer gcn1_, gcn2_;
  torch::nn::Linear project_;
  torch::nn::MultiheadAttention attention_;
  torch::nn::Sequential mlp_, encoder_;
};

}  // namespace

std::shared_ptr<ScoringNet> makeGatNet() {
  return std::make_shared<GatNet>();
}

}  // namespace tessel::cost::learned
