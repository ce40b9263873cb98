// "atformer": ATFormer's hierarchical attention model. Fine-grained tokens
// (one per store: Ansor's row) and coarse-grained tokens (one per loop: its
// kind, extent and the work beneath it) each pass one attention block
// (four-head self-attention and a feed-forward layer, each with a residual
// and layer norm); the stores are summed (a program's time adds over its
// stores, as in Ansor's and TenSet's pack-sum; their mean lost top-1 0.04 and
// ranked no better), the loops averaged, and a light MLP scores the two
// beside the store rows encoded by a 170-256-256 perceptron and summed
// (TenSet's pack-sum, as in gat: with attention alone atformer ranked pairs
// 0.006 below xgb on the mean of four seeds, with it 0.003 above; see
// docs/results.md).
#include <torch/nn.h>

#include "cost/features.h"
#include "cost/learned/torch_cost_model.h"

namespace tessel::cost::learned {

namespace {

constexpr int64_t kWidth = 64;  // 128 ranked no better and took twice the time
constexpr int64_t kHeads = 4;
constexpr int64_t kEncoded = 256;  // a store row's code beside the attention

class AttentionBlockImpl : public torch::nn::Module {
 public:
  explicit AttentionBlockImpl(int64_t in)
      : embed_(register_module("embed", torch::nn::Linear(in, kWidth))),
        attention_(register_module("attention", torch::nn::MultiheadAttention(kWidth, kHeads))),
        norm1_(register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kWidth})))),
        feedForward_(register_module("feed_forward",
                                     torch::nn::Sequential(torch::nn::Linear(kWidth, 2 * kWidth), torch::nn::ReLU(),
                                                           torch::nn::Linear(2 * kWidth, kWidth)))),
        norm2_(register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kWidth})))) {}

  // tokens [L, n, in], pad [n, L] (true: padding) -> pooled [n, kWidth]:
  // the sum over the real tokens, or their mean.
  torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& pad, bool sum) {
    torch::Tensor x = embed_->forward(tokens);
    x = norm1_->forward(x + std::get<0>(attention_->forward(x, x, x, pad, /*need_weights=*/false)));
    x = norm2_->forward(x + feedForward_->forward(x));
    const torch::Tensor keep = (~pad).transpose(0, 1).unsqueeze(2).to(x.dtype());  // [L, n, 1]
    if (sum) return (x * keep).sum(0);
    return (x * keep).sum(0) / keep.sum(0).clamp_min(1);
  }

 private:
  torch::nn::Linear embed_;
  torch::nn::MultiheadAttention attention_;
  torch::nn::LayerNorm norm1_;
  torch::nn::Sequential feedForward_;
  torch::nn::LayerNorm norm2_;
};
TORCH_MODULE(AttentionBlock);

// Token sequences padded to the longest: [L, n, width] and the padding
// mask [n, L]. A program without tokens gets one zero token (attention over
// nothing but padding is undefined).
template <typename TokensOf>
std::pair<torch::Tensor, torch::Tensor> padTokens(size_t n, size_t width, TokensOf tokensOf) {
  size_t longest = 1;
  for (size_t p = 0; p < n; ++p)
    longest = std::max(longest, tokensOf(p).second);
  std::vector<float> values(longest * n * width, 0.0f);
  std::vector<uint8_t> pad(n * longest, 1);
  for (size_t p = 0; p < n; ++p) {
    const auto [data, count] = tokensOf(p);
    for (size_t t = 0; t < count; ++t)
      std::copy(data(t), data(t) + width, values.begin() + long((t * n + p) * width));
    for (size_t t = 0; t < std::max<size_t>(count, 1); ++t)
      pad[p * longest + t] = 0;
  }
  const int64_t L = int64_t(longest), N = int64_t(n), W = int64_t(width);
  return {torch::from_blob(values.data(), {L, N, W}, torch::kFloat32).clone(),
          torch::from_blob(pad.data(), {N, L}, torch::kUInt8).clone().to(torch::kBool)};
}

class AtformerNet final : public ScoringNet {
 public:
  AtformerNet()
      : fine_(register_module("fine", AttentionBlock(int64_t(kNumFeatures)))),
        coarse_(register_module("coarse", AttentionBlock(int64_t(kLoopTokenFeatures)))),
        head_(register_module("head", torch::nn::Sequential(torch::nn::Linear(2 * kWidth + kEncoded, kWidth),
                                                            torch::nn::ReLU(), torch::nn::Linear(kWidth, 1)))),
        encoder_(register_module("encoder", makeStoreEncoder(kEncoded))) {}

  torch::Tensor score(const std::vector<const ProgramFeatureSet*>& programs) override {
    const size_t n = programs.size();
    const auto [stores, storePad] = padTokens(n, kNumFeatures, [&](size_t p) {
      const ProgramFeatures& rows = programs[p]->stores;
      return std::make_pair([&rows](size_t t) { return rows[t].data(); }, rows.size());
    });
    const auto [loops, loopPad] = padTokens(n, kLoopTokenFeatures, [&](size_t p) {
      const LoopTokens& l = programs[p]->loops;
      return std::make_pair([&l](size_t t) { return l.values.data() + t * kLoopTokenFeatures; }, l.size());
    });
    const torch::Tensor x = torch::cat(
        {fine_->forward(scaler_->stores(stores), storePad, /*sum=*/true),
         coarse_->forward(scaler_->tokens(loops), loopPad, /*sum=*/false), encodedStoreSum(encoder_, programs)},
        1);
    return head_->forward(x).squeeze(1);
  }

 private:
  AttentionBlock fine_, coarse_;
  torch::nn::Sequential head_, encoder_;  // head_ first: the order the weights are drawn in
};

}  // namespace

std::shared_ptr<ScoringNet> makeAtformerNet() {
  return std::make_shared<AtformerNet>();
}

}  // namespace tessel::cost::learned
