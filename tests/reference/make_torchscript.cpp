// LibTorch side of test_reference: writes TorchScript modules with the C++
// API (torch::jit::Module::define) and runs them. Kept apart from the Qt test.
#include "make_torchscript.h"

#include <torch/script.h>

#include <cstring>

namespace tessel::testing {

namespace {

at::Tensor uniform(std::vector<int64_t> shape, double scale) {
  return (torch::rand(shape) * 2 - 1) * scale;
}

}  // namespace

void writeConvNet(const std::string& path) {
  torch::manual_seed(1);
  torch::jit::Module m("ConvNet");
  m.register_parameter("conv_w", uniform({8, 3, 3, 3}, 0.3), false);
  m.register_parameter("conv_b", uniform({8}, 0.1), false);
  m.register_parameter("bn_w", 1 + uniform({8}, 0.2), false);
  m.register_parameter("bn_b", uniform({8}, 0.2), false);
  m.register_buffer("bn_mean", uniform({8}, 0.2));
  m.register_buffer("bn_var", 0.5 + torch::rand({8}));
  m.register_parameter("fc_w", uniform({10, 8}, 0.4), false);
  m.register_parameter("fc_b", uniform({10}, 0.1), false);
  m.define(R"(
def forward(self, x):
    y = torch.conv2d(x, self.conv_w, self.conv_b, [1, 1], [1, 1], [1, 1], 1)
    y = torch.batch_norm(y, self.bn_w, self.bn_b, self.bn_mean, self.bn_var, False, 0.1, 1e-5, False)
    y = torch.relu(y)
    y = torch.max_pool2d(y, [2, 2], [2, 2], [0, 0], [1, 1], False)
    y = torch.adaptive_avg_pool2d(y, [1, 1])
    y = torch.flatten(y, 1)
    return torch.linear(y, self.fc_w, self.fc_b)
)");
  m.save(path);
}

void writeAttention(const std::string& path) {
  torch::manual_seed(2);
  torch::jit::Module m("Attention");
  for (const char* p : {"q", "k", "v", "o"}) {
    m.register_parameter(std::string("w") + p, uniform({8, 8}, 0.4), false);
    m.register_parameter(std::string("b") + p, uniform({8}, 0.1), false);
  }
  m.register_parameter("ln_w", 1 + uniform({8}, 0.2), false);
  m.register_parameter("ln_b", uniform({8}, 0.2), false);
  m.define(R"(
def forward(self, x):
    B = x.size(0)
    T = x.size(1)
    q = torch.linear(x, self.wq, self.bq).view([B, T, 2, 4]).permute([0, 2, 1, 3])
    k = torch.linear(x, self.wk, self.bk).view([B, T, 2, 4]).permute([0, 2, 1, 3])
    v = torch.linear(x, self.wv, self.bv).view([B, T, 2, 4]).permute([0, 2, 1, 3])
    s = torch.matmul(q, k.transpose(-2, -1)) * 0.5
    p = torch.softmax(s, -1)
    o = torch.matmul(p, v).transpose(1, 2).contiguous().view([B, T, 8])
    o = torch.layer_norm(o + x, [8], self.ln_w, self.ln_b, 1e-5, False)
    return torch.gelu(torch.linear(o, self.wo, self.bo))
)");
  m.save(path);
}

void writeMisc(const std::string& path) {
  torch::manual_seed(3);
  torch::jit::Module m("Misc");
  m.register_parameter("w", uniform({72, 6}, 0.2), false);
  m.register_parameter("bias", uniform({6}, 0.2), false);
  m.register_parameter("w2", uniform({5, 6}, 0.4), false);
  m.define(R"(
def forward(self, x):
    a = torch.avg_pool2d(x, [2, 2], [2, 2], [0, 0], False, True, None)
    a = torch.dropout(a, 0.5, False)
    a.relu_()
    b = torch.sigmoid(a) - 0.25
    c = torch.add(torch.tanh(a), b, alpha=2.0)
    d = torch.cat([b, c], 1)
    n = d.size(0)
    f = d.reshape([n, -1])
    g = torch.addmm(self.bias, f, self.w, beta=0.5, alpha=2.0)
    h = torch.mm(g, self.w2.t()) / 3.0
    p, q = h.chunk(2, 1)
    s = h[:, 1:4]
    t = h.select(1, 0).unsqueeze(1)
    m = torch.mean(x, [2, 3], False)
    y = torch.cat([s, t, p, q, m], 1)
    return 1 - torch.max_pool2d(y.view([2, 1, 1, 13]), [1, 3], [1, 2], [0, 1], [1, 1], True).flatten(1) * 2
)");
  m.save(path);
}

void writeUpsample(const std::string& path) {
  torch::jit::Module m("Upsample");
  m.define(R"(
def forward(self, x):
    a = torch.upsample_nearest2d(x, None, [2.0, 3.0])
    b = torch.upsample_bilinear2d(x, [9, 11], False, None)
    c = torch.upsample_bilinear2d(x, [9, 11], True, None)
    d = torch.upsample_nearest2d(x, [3, 5], None)
    e = torch.upsample_bilinear2d(x, None, False, [0.5, 1.5])
    return torch.cat([a.flatten(1), b.flatten(1), c.flatten(1), d.flatten(1), e.flatten(1)], 1)
)");
  m.save(path);
}

void writeUnsupported(const std::string& path) {
  torch::jit::Module m("Unsupported");
  m.define(R"(
def forward(self, x):
    y = torch.relu(x)
    return torch.cumsum(y, 1)
)");
  m.save(path);
}

ModuleOutput runModule(const std::string& path, const std::vector<std::vector<int64_t>>& shapes,
                       const std::vector<std::vector<float>>& inputs) {
  torch::NoGradGuard noGrad;
  torch::jit::Module m = torch::jit::load(path);
  m.eval();
  std::vector<torch::jit::IValue> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    at::Tensor t = torch::empty(shapes[i], at::kFloat);
    std::memcpy(t.data_ptr<float>(), inputs[i].data(), inputs[i].size() * sizeof(float));
    args.emplace_back(t);
  }
  const at::Tensor y = m.forward(args).toTensor().contiguous();
  ModuleOutput out;
  out.shape.assign(y.sizes().begin(), y.sizes().end());
  out.data.assign(y.data_ptr<float>(), y.data_ptr<float>() + y.numel());
  return out;
}

}  // namespace tessel::testing
