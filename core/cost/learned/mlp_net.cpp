// "mlp": TenSet's MLP cost model. Each store row is encoded by a two-layer
// perceptron, a program is the sum of its rows' codes, and a head scores it:
// Ansor's pack-sum, learned end to end with a rank loss.
#include <torch/nn.h>

#include "cost/features.h"
#include "cost/learned/torch_cost_model.h"

namespace tessel::cost::learned {

namespace {

constexpr int64_t kHidden = 256;

class MlpNet final : public ScoringNet {
 public:
  MlpNet()
      : encoder_(register_module("encoder", makeStoreEncoder(kHidden))),
        head_(register_module("head", torch::nn::Sequential(torch::nn::Linear(kHidden, kHidden), torch::nn::ReLU(),
                                                            torch::nn::Linear(kHidden, 1)))) {}

  torch::Tensor score(const std::vector<const ProgramFeatureSet*>& programs) override {
    return head_->forward(encodedStoreSum(encoder_, programs)).squeeze(1);
  }

 private:
  torch::nn::Sequential encoder_, head_;
};

}  // namespace

std::shared_ptr<ScoringNet> makeMlpNet() {
  return std::make_shared<MlpNet>();
}

}  // namespace tessel::cost::learned
