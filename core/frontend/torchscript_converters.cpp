// The aten ops TorchScript models use, each as ONNX-style graph nodes: one
// converter per kind of op, and the table that names them.
#include <cmath>
#include <limits>

#include "frontend/torchscript_importer.h"

namespace tessel::frontend::torchscript {

// Shapes of graph tensors are static: their sizes are constants.
void Importer::sizeOf(torch::jit::Node* n) {
  const Shape& s = shapeOf(tensor(arg(n, 0)));
  if (n->inputs().size() == 1)
    slots_[n->output()] = constSlot(c10::IValue(s));
  else
    slots_[n->output()] = constSlot(c10::IValue(s[size_t(axis(intArg(arg(n, 1), "dim"), int64_t(s.size())))]));
}

void Importer::dimOf(torch::jit::Node* n) {
  slots_[n->output()] = constSlot(c10::IValue(rankOf(tensor(arg(n, 0)))));
}

void Importer::numelOf(torch::jit::Node* n) {
  slots_[n->output()] = constSlot(c10::IValue(info(tensor(arg(n, 0))).numElements()));
}

void Importer::identity(torch::jit::Node* n) {
  slots_[n->output()] = slot(arg(n, 0));
}

void Importer::matmul(torch::jit::Node* n) {
  result(node("MatMul", {tensor(arg(n, 0)), tensor(arg(n, 1))}));
}

void Importer::addmm(torch::jit::Node* n) {
  const size_t argc = n->inputs().size();
  const double beta = argc > 3 ? floatArg(arg(n, 3), "beta") : 1.0;
  const double alpha = argc > 4 ? floatArg(arg(n, 4), "alpha") : 1.0;
  result(node("Gemm", {tensor(arg(n, 1)), tensor(arg(n, 2)), tensor(arg(n, 0))}, {{"alpha", alpha}, {"beta", beta}}));
}

// add/sub: self +- alpha * other; rsub: other - alpha * self.
void Importer::addSub(torch::jit::Node* n, bool subtract, bool reversed) {
  const double alpha = n->inputs().size() > 2 ? floatArg(arg(n, 2), "alpha") : 1.0;
  if (reversed) {
    const std::string self = operand(arg(n, 0), firstTensor(n), alpha);
    return result(node("Sub", {operand(arg(n, 1), self), self}));
  }
  const std::string self = operand(arg(n, 0), firstTensor(n));
  result(node(subtract ? "Sub" : "Add", {self, operand(arg(n, 1), self, alpha)}));
}

// Element-wise with two operands. `division`: no rounding mode; `orReduction`:
// max/min with one tensor argument are reductions, not supported.
void Importer::binary(torch::jit::Node* n, const std::string& onnxOp, bool division, bool orReduction) {
  const size_t argc = n->inputs().size();
  if (division && argc > 2 && !isNone(arg(n, 2))) fail("rounding modes are not supported");
  if (orReduction && argc != 2) unsupported();
  const std::string self = operand(arg(n, 0), firstTensor(n));
  result(node(onnxOp, {self, operand(arg(n, 1), self)}));
}

void Importer::unary(torch::jit::Node* n, const std::string& onnxOp) {
  result(node(onnxOp, {tensor(arg(n, 0))}));
}

void Importer::rsqrt(torch::jit::Node* n) {
  result(node("Reciprocal", {node("Sqrt", {tensor(arg(n, 0))}, {}, "sqrt")}));
}

void Importer::gelu(torch::jit::Node* n) {
  const std::string approximate = n->inputs().size() > 1 ? constant(arg(n, 1), "approximate").toStringRef() : "none";
  result(node("Gelu", {tensor(arg(n, 0))}, {{"approximate", approximate}}));
}

void Importer::softmax(torch::jit::Node* n) {
  if (n->inputs().size() > 2 && !isNone(arg(n, 2))) fail("a dtype argument is not supported");
  result(node("Softmax", {tensor(arg(n, 0))}, {{"axis", intArg(arg(n, 1), "dim")}}));
}

// Clip with bounds: fixed (relu6), or the arguments from `loArg` / `hiArg` (0: none).
void Importer::clamp(torch::jit::Node* n, size_t loArg, size_t hiArg, bool relu6) {
  const std::string x = tensor(arg(n, 0));
  auto bound = [&](size_t i, const char* suffix) -> std::string {
    if (i == 0 || isNone(arg(n, i))) return "";
    return floats(outName() + "/" + suffix, {}, {float(floatArg(arg(n, i), suffix))});
  };
  std::string lo = bound(loArg, "min"), hi = bound(hiArg, "max");
  if (relu6) {
    lo = floats(outName() + "/min", {}, {0.0f});
    hi = floats(outName() + "/max", {}, {6.0f});
  }
  result(node("Clip", {x, lo, hi}));
}

void Importer::mean(torch::jit::Node* n) {
  const size_t argc = n->inputs().size();
  const std::string x = tensor(arg(n, 0));
  if (argc <= 2) return result(node("ReduceMean", {x}, {{"keepdims", int64_t(0)}}));
  if (argc > 3 && !isNone(arg(n, 3))) fail("a dtype argument is not supported");
  Shape dims = intsArg(arg(n, 1), "dim");
  result(
      node("ReduceMean", {x, ints(outName() + "/axes", dims)}, {{"keepdims", int64_t(boolArg(arg(n, 2), "keepdim"))}}));
}

void Importer::reshape(torch::jit::Node* n) {
  const std::string x = tensor(arg(n, 0));
  result(node("Reshape", {x, ints(outName() + "/shape", intsArg(arg(n, 1), "shape"))}));
}

void Importer::permute(torch::jit::Node* n) {
  const std::string x = tensor(arg(n, 0));
  Shape perm = intsArg(arg(n, 1), "dims");
  for (int64_t& p : perm)
    p = axis(p, rankOf(x));
  result(node("Transpose", {x}, {{"perm", perm}}));
}

// transpose(dim0, dim1) swaps two axes; t and numpy_T reverse them all.
void Importer::transpose(torch::jit::Node* n, bool swapTwo) {
  const std::string x = tensor(arg(n, 0));
  const int64_t rank = rankOf(x);
  Shape perm(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d)
    perm[size_t(d)] = d;
  if (swapTwo)
    std::swap(perm[size_t(axis(intArg(arg(n, 1), "dim0"), rank))], perm[size_t(axis(intArg(arg(n, 2), "dim1"), rank))]);
  else
    std::reverse(perm.begin(), perm.end());
  result(node("Transpose", {x}, {{"perm", perm}}));
}

// cat along an axis; stack along a new one.
void Importer::concat(torch::jit::Node* n, bool stack) {
  const Slot& list = slot(arg(n, 0));
  if (list.kind != Slot::Kind::List) fail("the tensors must be a list");
  std::vector<std::string> parts;
  for (const Slot& s : list.items)
    parts.push_back(tensorName(s, outName() + "/part"));
  if (parts.empty()) fail("the list is empty");
  const int64_t dim = n->inputs().size() > 1 ? intArg(arg(n, 1), "dim") : 0;
  if (!stack) return result(node("Concat", parts, {{"axis", axis(dim, rankOf(parts[0]))}}));
  const int64_t at = axis(dim, rankOf(parts[0]) + 1);
  for (std::string& p : parts)
    p = node("Unsqueeze", {p, ints(outName() + "/axes", {at})}, {}, "unsqueeze");
  result(node("Concat", parts, {{"axis", at}}));
}

void Importer::slice(torch::jit::Node* n) {
  const std::string x = tensor(arg(n, 0));
  const int64_t dim = axis(intArg(arg(n, 1), "dim"), rankOf(x));
  const int64_t start = isNone(arg(n, 2)) ? 0 : intArg(arg(n, 2), "start");
  const int64_t end = isNone(arg(n, 3)) ? std::numeric_limits<int64_t>::max() : intArg(arg(n, 3), "end");
  const int64_t step = intArg(arg(n, 4), "step");
  const std::string s = outName();
  result(node("Slice", {x, ints(s + "/starts", {start}), ints(s + "/ends", {end}), ints(s + "/axes", {dim}),
                        ints(s + "/steps", {step})}));
}

void Importer::select(torch::jit::Node* n) {
  const std::string x = tensor(arg(n, 0));
  const int64_t dim = axis(intArg(arg(n, 1), "dim"), rankOf(x));
  result(node("Gather", {x, ints(outName() + "/index", {}, {intArg(arg(n, 2), "index")})}, {{"axis", dim}}));
}

void Importer::unsqueeze(torch::jit::Node* n) {
  const std::string x = tensor(arg(n, 0));
  const int64_t dim = axis(intArg(arg(n, 1), "dim"), rankOf(x) + 1);
  result(node("Unsqueeze", {x, ints(outName() + "/axes", {dim})}));
}

void Importer::squeeze(torch::jit::Node* n) {
  const std::string x = tensor(arg(n, 0));
  if (n->inputs().size() == 1) return result(node("Squeeze", {x}));
  const int64_t dim = axis(intArg(arg(n, 1), "dim"), rankOf(x));
  if (shapeOf(x)[size_t(dim)] != 1) return result(node("Identity", {x}));  // torch: a no-op
  result(node("Squeeze", {x, ints(outName() + "/axes", {dim})}));
}

void Importer::silu(torch::jit::Node* n) {
  const std::string x = tensor(arg(n, 0));
  result(node("Mul", {x, node("Sigmoid", {x}, {}, "sigmoid")}));
}

// torch's hardsigmoid is relu6(x + 3) / 6: ONNX's with alpha 1/6.
void Importer::hardsigmoid(torch::jit::Node* n) {
  result(node("HardSigmoid", {tensor(arg(n, 0))}, {{"alpha", 1.0 / 6.0}, {"beta", 0.5}}));
}

// F.pad: pairs from the last axis backwards; ONNX: all begins, then all ends.
void Importer::pad(torch::jit::Node* n) {
  const std::string x = tensor(arg(n, 0));
  const Shape p = intsArg(arg(n, 1), "pad");
  const int64_t rank = rankOf(x);
  if (p.size() % 2 || int64_t(p.size()) > 2 * rank) fail("pad has an odd length or more pairs than axes");
  Shape pads(size_t(2 * rank), 0);
  for (size_t i = 0; i < p.size() / 2; ++i) {
    pads[size_t(rank) - 1 - i] = p[2 * i];
    pads[size_t(2 * rank) - 1 - i] = p[2 * i + 1];
  }
  const std::string mode = n->inputs().size() > 2 ? constant(arg(n, 2), "mode").toStringRef() : "constant";
  static const std::map<std::string, std::string> modes = {
      {"constant", "constant"}, {"reflect", "reflect"}, {"replicate", "edge"}};
  auto m = modes.find(mode);
  if (m == modes.end()) fail("mode '" + mode + "' is not supported");
  const double value = n->inputs().size() > 3 && !isNone(arg(n, 3)) ? floatArg(arg(n, 3), "value") : 0.0;
  result(node("Pad", {x, ints(outName() + "/pads", pads), floats(outName() + "/value", {}, {float(value)})},
              {{"mode", m->second}}));
}

// roll: per axis, the last `shift` elements first (a Slice pair and a Concat).
void Importer::roll(torch::jit::Node* n) {
  std::string x = tensor(arg(n, 0));
  const Shape shifts = intsArg(arg(n, 1), "shifts");
  Shape dims = n->inputs().size() > 2 ? intsArg(arg(n, 2), "dims") : Shape{};
  const Shape original = shapeOf(x);
  if (dims.empty()) {  // the flattened tensor rolls
    if (shifts.size() != 1) fail("several shifts need as many dims");
    x = node("Reshape", {x, ints(outName() + "/flat", {-1})}, {}, "flat");
    dims = {0};
  }
  if (shifts.size() != dims.size()) fail("shifts and dims differ in length");
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = axis(dims[i], rankOf(x)), len = shapeOf(x)[size_t(d)];
    const int64_t s = ((shifts[i] % len) + len) % len;
    if (s == 0) continue;
    auto part = [&](int64_t from, int64_t to, const char* what) {
      const std::string w = outName() + "/" + what;
      return node("Slice", {x, ints(w + "_starts", {from}), ints(w + "_ends", {to}), ints(w + "_axes", {d})}, {}, what);
    };
    x = node("Concat", {part(len - s, len, "tail"), part(0, len - s, "head")}, {{"axis", d}}, "rolled");
  }
  if (original != shapeOf(x)) x = node("Reshape", {x, ints(outName() + "/shape", original)}, {}, "unflat");
  result(node("Identity", {x}));
}

// F.interpolate (upsample_*): Resize with PyTorch's coordinates. Nearest
// floors x / scale (asymmetric); linear is half_pixel, or align_corners.
// Scales are kept where given (the coordinates use them), else sizes.
void Importer::upsample(torch::jit::Node* n, bool linear) {
  const std::string x = tensor(arg(n, 0));
  const Shape in = shapeOf(x);
  if (in.size() < 3) fail("the input must have a batch, a channel and a spatial axis");
  const size_t spatial = in.size() - 2;
  const bool corners = linear && boolArg(arg(n, 2), "align_corners");
  std::vector<double> scales;
  for (size_t i = linear ? 3 : 2; i < n->inputs().size(); ++i) {
    if (isNone(arg(n, i))) continue;
    const c10::IValue& iv = constant(arg(n, i), "scale_factors");
    if (iv.isDoubleList())
      for (double f : iv.toDoubleVector())
        scales.push_back(f);
    else
      scales.push_back(floatArg(arg(n, i), "scales"));
  }
  if (!scales.empty() && scales.size() != spatial) fail("scale_factors do not match the spatial axes");
  Shape sizes;
  if (!isNone(arg(n, 1))) sizes = intsArg(arg(n, 1), "output_size", spatial);
  if (sizes.empty() && scales.empty()) fail("needs output_size or scale_factors");
  if (sizes.empty())
    for (size_t d = 0; d < spatial; ++d)
      sizes.push_back(int64_t(std::floor(double(in[d + 2]) * scales[d])));
  bool useScales = !scales.empty() && !corners;
  for (size_t d = 0; d < spatial && useScales; ++d)
    useScales = int64_t(std::floor(double(in[d + 2]) * float(scales[d]))) == sizes[d];
  std::map<std::string, AttrValue> attrs = {{"mode", std::string(linear ? "linear" : "nearest")},
                                            {"coordinate_transformation_mode", std::string(corners  ? "align_corners"
                                                                                           : linear ? "half_pixel"
                                                                                                    : "asymmetric")},
                                            {"nearest_mode", std::string("floor")}};
  if (useScales) {
    std::vector<float> all = {1.0f, 1.0f};
    for (double f : scales)
      all.push_back(float(f));
    return result(node("Resize", {x, "", floats(outName() + "/scales", {int64_t(all.size())}, all)}, attrs));
  }
  Shape all = {in[0], in[1]};
  all.insert(all.end(), sizes.begin(), sizes.end());
  result(node("Resize", {x, "", "", ints(outName() + "/sizes", all)}, attrs));
}

// new_zeros of a constant size is a constant: the in-place fills and
// slices that build Swin's masks on it are then evaluated by the JIT.
void Importer::newZeros(torch::jit::Node* n) {
  const Shape size = intsArg(arg(n, 1), "size");
  at::ScalarType type = at::kFloat;
  if (n->inputs().size() > 2 && !isNone(arg(n, 2))) type = static_cast<at::ScalarType>(intArg(arg(n, 2), "dtype"));
  slots_[n->output()] = constSlot(at::zeros(size, at::TensorOptions().dtype(type)));
}

void Importer::compare(torch::jit::Node* n, bool negate) {
  const std::string self = operand(arg(n, 0), firstTensor(n));
  const std::string eq = node("Equal", {self, operand(arg(n, 1), self)}, {}, negate ? "equal" : "");
  result(negate ? node("Not", {eq}) : eq);
}

void Importer::maskedFill(torch::jit::Node* n) {
  const std::string self = tensor(arg(n, 0));
  result(node("Where", {tensor(arg(n, 1)), operand(arg(n, 2), self), self}));
}

// expand: -1 keeps the axis; new leading axes broadcast.
void Importer::expand(torch::jit::Node* n) {
  const std::string x = tensor(arg(n, 0));
  Shape target = intsArg(arg(n, 1), "size");
  const Shape& s = shapeOf(x);
  if (target.size() < s.size()) fail("expands to fewer axes than the tensor has");
  for (size_t i = 0; i < target.size(); ++i) {
    const size_t lead = target.size() - s.size();
    if (target[i] == -1) {
      if (i < lead) fail("-1 for a new axis");
      target[i] = s[i - lead];
    }
  }
  result(node("Expand", {x, ints(outName() + "/shape", target)}));
}

// PyTorch's fused attention (nn.MultiheadAttention's and
// nn.TransformerEncoderLayer's fast paths), spelled out (attention_nodes.h).
NodeEmitter Importer::emitter() {
  NodeEmitter e;
  e.node = [this](const std::string& op, std::vector<std::string> inputs, std::map<std::string, AttrValue> attrs,
                  const std::string& suffix) { return node(op, std::move(inputs), std::move(attrs), suffix); };
  e.ints = [this](const std::string& suffix, Shape values) { return ints(outName() + "/" + suffix, values); };
  e.scalar = [this](const std::string& suffix, float v) { return floats(outName() + "/" + suffix, {}, {v}); };
  e.shapeOf = [this](const std::string& v) { return shapeOf(v); };
  return e;
}

AttentionWeights Importer::attentionWeights(torch::jit::Node* n, size_t embed) {
  AttentionWeights w;
  w.embedDim = intArg(arg(n, embed), "embed_dim");
  w.heads = intArg(arg(n, embed + 1), "num_heads");
  w.qkvWeight = tensor(arg(n, embed + 2));
  w.qkvBias = tensor(arg(n, embed + 3));
  w.projWeight = tensor(arg(n, embed + 4));
  w.projBias = tensor(arg(n, embed + 5));
  return w;
}

void Importer::nativeMultiHeadAttention(torch::jit::Node* n) {
  if (!isNone(arg(n, 9))) fail("attention masks are not supported");
  if (n->outputs().size() > 1 && n->output(1)->hasUses()) fail("the attention weights output is not supported");
  result(
      multiHeadAttention(emitter(), tensor(arg(n, 0)), tensor(arg(n, 1)), tensor(arg(n, 2)), attentionWeights(n, 3)));
}

void Importer::transformerEncoderLayer(torch::jit::Node* n) {
  if (n->inputs().size() > 18 && !isNone(arg(n, 18))) fail("attention masks are not supported");
  EncoderLayerWeights w;
  w.attention = attentionWeights(n, 1);
  w.gelu = boolArg(arg(n, 7), "use_gelu");
  w.normFirst = boolArg(arg(n, 8), "norm_first");
  w.eps = floatArg(arg(n, 9), "eps");
  w.norm1Weight = tensor(arg(n, 10));
  w.norm1Bias = tensor(arg(n, 11));
  w.norm2Weight = tensor(arg(n, 12));
  w.norm2Bias = tensor(arg(n, 13));
  w.ffn1Weight = tensor(arg(n, 14));
  w.ffn1Bias = tensor(arg(n, 15));
  w.ffn2Weight = tensor(arg(n, 16));
  w.ffn2Bias = tensor(arg(n, 17));
  result(frontend::transformerEncoderLayer(emitter(), tensor(arg(n, 0)), w));
}

void Importer::embedding(torch::jit::Node* n) {
  result(node("Gather", {tensor(arg(n, 0)), tensor(arg(n, 1))}, {{"axis", int64_t(0)}}));
}

// The first tensor operand's graph name (for the type of scalar operands).
std::string Importer::firstTensor(torch::jit::Node* n) {
  for (const Value* v : n->inputs()) {
    const Slot& s = slot(v);
    if (s.kind == Slot::Kind::Tensor) return s.name;
    if (s.kind == Slot::Kind::Const && s.value.isTensor()) return tensor(v);
  }
  fail("has no tensor operand");
}

// conv1d/2d/3d, or (full) _convolution/convolution with its transposed flag.
void Importer::conv(torch::jit::Node* n, bool full) {
  const std::string x = tensor(n->input(0)), w = tensor(n->input(1));
  const size_t sp = shapeOf(w).size() - 2;
  if (full && boolArg(n->input(6), "transposed")) fail("transposed convolution is not supported");
  const Value* groupsArg = n->input(full ? 8 : 6);
  std::map<std::string, AttrValue> attrs = {{"strides", intsArg(n->input(3), "stride", sp)},
                                            {"dilations", intsArg(n->input(5), "dilation", sp)},
                                            {"group", intArg(groupsArg, "groups")}};
  const c10::IValue& padding = constant(n->input(4), "padding");
  if (padding.isString()) {
    const std::string& mode = padding.toStringRef();
    if (mode == "same")
      attrs["auto_pad"] = std::string("SAME_UPPER");  // PyTorch pads the end more
    else if (mode == "valid")
      attrs["auto_pad"] = std::string("VALID");
    else
      fail("padding '" + mode + "' is not supported");
  } else {
    Shape p = intsArg(n->input(4), "padding", sp);
    p.insert(p.end(), p.begin(), p.end());
    attrs["pads"] = p;
  }
  std::vector<std::string> inputs = {x, w};
  if (!isNone(n->input(2))) inputs.push_back(tensor(n->input(2)));
  result(node("Conv", inputs, attrs));
}

void Importer::linear(torch::jit::Node* n) {
  const std::string x = tensor(n->input(0));
  const bool bias = n->inputs().size() > 2 && !isNone(n->input(2));
  const Slot& ws = slot(n->input(1));
  if (rankOf(x) == 2) {
    std::vector<std::string> inputs = {x, tensor(n->input(1))};
    if (bias) inputs.push_back(tensor(n->input(2)));
    return result(node("Gemm", inputs, {{"transB", int64_t(1)}}));
  }
  // Batched: x @ W^T (+ b); a constant W is transposed here.
  std::string wt;
  if (ws.kind == Slot::Kind::Const && ws.value.isTensor() && ws.value.toTensor().dim() == 2) {
    const at::Tensor t = ws.value.toTensor().t().contiguous();
    wt = initializer(t, n->input(1)->debugName() + "_t");
    keepAlive_.push_back(t);  // its address keys the initializer cache
  } else {
    wt = node("Transpose", {tensor(n->input(1))}, {{"perm", Shape{1, 0}}}, "weight_t");
  }
  if (!bias) return result(node("MatMul", {x, wt}));
  result(node("Add", {node("MatMul", {x, wt}, {}, "matmul"), tensor(n->input(2))}));
}

void Importer::layerNorm(torch::jit::Node* n) {
  const std::string x = tensor(n->input(0));
  const Shape normalized = intsArg(n->input(1), "normalized_shape");
  const double eps = floatArg(n->input(4), "eps");
  int64_t count = 1;
  for (int64_t d : normalized)
    count *= d;
  const std::string scale = isNone(n->input(2))
                                ? floats(outName() + "/scale", normalized, std::vector<float>(size_t(count), 1.0f))
                                : tensor(n->input(2));
  std::vector<std::string> inputs = {x, scale};
  if (!isNone(n->input(3))) inputs.push_back(tensor(n->input(3)));
  result(node("LayerNormalization", inputs, {{"axis", -int64_t(normalized.size())}, {"epsilon", eps}}));
}

void Importer::batchNorm(torch::jit::Node* n) {
  const std::string x = tensor(n->input(0));
  if (boolArg(n->input(5), "training")) fail("training mode is not supported");
  const double eps = floatArg(n->input(7), "eps");
  const int64_t channels = shapeOf(x).size() > 1 ? shapeOf(x)[1] : 1;
  auto param = [&](size_t i, const char* suffix, float fill) {
    if (!isNone(n->input(i))) return tensor(n->input(i));
    return floats(outName() + "/" + suffix, {channels}, std::vector<float>(size_t(channels), fill));
  };
  const std::string scale = param(1, "scale", 1.0f), bias = param(2, "bias", 0.0f);
  const std::string mean = param(3, "mean", 0.0f), var = param(4, "var", 1.0f);
  result(node("BatchNormalization", {x, scale, bias, mean, var}, {{"epsilon", eps}}));
}

void Importer::pool(torch::jit::Node* n, bool max, size_t sp) {
  const std::string x = tensor(n->input(0));
  const Shape kernel = intsArg(n->input(1), "kernel_size", sp);
  Shape stride = intsArg(n->input(2), "stride", sp);
  if (stride.empty()) stride = kernel;
  Shape pads = intsArg(n->input(3), "padding", sp);
  pads.insert(pads.end(), pads.begin(), pads.end());
  std::map<std::string, AttrValue> attrs = {{"kernel_shape", kernel}, {"strides", stride}, {"pads", pads}};
  if (max) {
    attrs["dilations"] = intsArg(n->input(4), "dilation", sp);
    attrs["ceil_mode"] = int64_t(boolArg(n->input(5), "ceil_mode"));
    return result(node("MaxPool", {x}, attrs));
  }
  attrs["ceil_mode"] = int64_t(boolArg(n->input(4), "ceil_mode"));
  attrs["count_include_pad"] = int64_t(boolArg(n->input(5), "count_include_pad"));
  if (n->inputs().size() > 6 && !isNone(n->input(6))) fail("divisor_override is not supported");
  result(node("AveragePool", {x}, attrs));
}

void Importer::adaptivePool(torch::jit::Node* n) {
  const std::string x = tensor(n->input(0));
  const Shape& s = shapeOf(x);
  if (s.size() < 3) fail("the input must have spatial axes");
  const size_t sp = s.size() - 2;
  const Shape out = intsArg(n->input(1), "output_size", sp);
  if (out.size() != sp) fail("output_size does not match the input");
  if (std::all_of(out.begin(), out.end(), [](int64_t o) { return o == 1; }))
    return result(node("GlobalAveragePool", {x}));
  Shape kernel;
  for (size_t d = 0; d < sp; ++d) {
    if (out[d] <= 0 || s[2 + d] % out[d]) fail("adaptive pooling to sizes that do not divide the input");
    kernel.push_back(s[2 + d] / out[d]);
  }
  result(node("AveragePool", {x}, {{"kernel_shape", kernel}, {"strides", kernel}}));
}

void Importer::flatten(torch::jit::Node* n) {
  const std::string x = tensor(n->input(0));
  const Shape& s = shapeOf(x);
  const int64_t rank = std::max<int64_t>(int64_t(s.size()), 1);
  const int64_t start = axis(n->inputs().size() > 1 ? intArg(n->input(1), "start_dim") : 0, rank);
  const int64_t end = axis(n->inputs().size() > 2 ? intArg(n->input(2), "end_dim") : -1, rank);
  if (start == 1 && end == rank - 1) return result(node("Flatten", {x}, {{"axis", int64_t(1)}}));
  Shape target(s.begin(), s.begin() + start);
  int64_t merged = 1;
  for (int64_t d = start; d <= end && d < int64_t(s.size()); ++d)
    merged *= s[size_t(d)];
  target.push_back(merged);
  if (end + 1 < int64_t(s.size())) target.insert(target.end(), s.begin() + end + 1, s.end());
  result(node("Reshape", {x, ints(outName() + "/shape", target)}));
}

void Importer::split(torch::jit::Node* n, SplitBy by) {
  const std::string x = tensor(n->input(0));
  const Shape& s = shapeOf(x);
  const int64_t dim = axis(n->inputs().size() > 2 ? intArg(n->input(2), "dim") : 0, int64_t(s.size()));
  const int64_t extent = s[size_t(dim)];
  Shape sizes;
  const c10::IValue& arg = constant(n->input(1), "split");
  if (by != SplitBy::SizeOrSizes) {
    if (!arg.isInt()) fail("only a number of chunks is supported");
    const int64_t chunks = arg.toInt();
    if (chunks <= 0) fail("the number of chunks must be positive");
    if (by == SplitBy::Chunks) {
      const int64_t size = (extent + chunks - 1) / chunks;
      for (int64_t at = 0; at < extent; at += size)
        sizes.push_back(std::min(size, extent - at));
    } else {
      for (int64_t i = 0; i < chunks; ++i)
        sizes.push_back(extent / chunks + (i < extent % chunks ? 1 : 0));
    }
  } else if (arg.isInt()) {
    const int64_t size = arg.toInt();
    if (size <= 0) fail("the split size must be positive");
    for (int64_t at = 0; at < extent; at += size)
      sizes.push_back(std::min(size, extent - at));
  } else {
    sizes = intsArg(n->input(1), "split_sizes");
  }
  const std::vector<std::string> outs =
      nodeN("Split", {x, ints(outName() + "/split", sizes)}, sizes.size(), {{"axis", dim}});
  Slot list;
  list.kind = Slot::Kind::List;
  for (const std::string& o : outs)
    list.items.push_back(tensorSlot(o));
  slots_[n->output()] = list;
}

const std::map<std::string, Importer::AtenConverter>& Importer::atenConverters() {
  using I = Importer;
  using N = torch::jit::Node*;
  auto method = [](void (I::*m)(N)) -> AtenConverter { return [m](I& i, N n) { (i.*m)(n); }; };
  auto unaryOp = [](std::string onnx) -> AtenConverter { return [onnx](I& i, N n) { i.unary(n, onnx); }; };
  auto binaryOp = [](std::string onnx, bool division, bool orReduction) -> AtenConverter {
    return [=](I& i, N n) { i.binary(n, onnx, division, orReduction); };
  };
  auto poolOp = [](bool max, size_t spatial) -> AtenConverter { return [=](I& i, N n) { i.pool(n, max, spatial); }; };
  auto splitOp = [](SplitBy by) -> AtenConverter { return [by](I& i, N n) { i.split(n, by); }; };
  static const std::map<std::string, AtenConverter> table = {
      {"size", method(&I::sizeOf)},
      {"dim", method(&I::dimOf)},
      {"numel", method(&I::numelOf)},
      {"contiguous", method(&I::identity)},
      {"dropout", method(&I::identity)},
      {"feature_dropout", method(&I::identity)},
      {"alpha_dropout", method(&I::identity)},
      {"detach", method(&I::identity)},
      {"clone", method(&I::identity)},
      {"conv1d", [](I& i, N n) { i.conv(n, false); }},
      {"conv2d", [](I& i, N n) { i.conv(n, false); }},
      {"conv3d", [](I& i, N n) { i.conv(n, false); }},
      {"_convolution", [](I& i, N n) { i.conv(n, true); }},
      {"convolution", [](I& i, N n) { i.conv(n, true); }},
      {"linear", method(&I::linear)},
      {"matmul", method(&I::matmul)},
      {"mm", method(&I::matmul)},
      {"bmm", method(&I::matmul)},
      {"addmm", method(&I::addmm)},
      {"add", [](I& i, N n) { i.addSub(n, false, false); }},
      {"sub", [](I& i, N n) { i.addSub(n, true, false); }},
      {"rsub", [](I& i, N n) { i.addSub(n, true, true); }},
      {"mul", binaryOp("Mul", false, false)},
      {"div", binaryOp("Div", true, false)},
      {"pow", binaryOp("Pow", false, false)},
      {"maximum", binaryOp("Max", false, false)},
      {"minimum", binaryOp("Min", false, false)},
      {"max", binaryOp("Max", false, true)},
      {"min", binaryOp("Min", false, true)},
      {"relu", unaryOp("Relu")},
      {"sigmoid", unaryOp("Sigmoid")},
      {"tanh", unaryOp("Tanh")},
      {"erf", unaryOp("Erf")},
      {"sqrt", unaryOp("Sqrt")},
      {"exp", unaryOp("Exp")},
      {"neg", unaryOp("Neg")},
      {"abs", unaryOp("Abs")},
      {"reciprocal", unaryOp("Reciprocal")},
      {"rsqrt", method(&I::rsqrt)},
      {"gelu", method(&I::gelu)},
      {"softmax", method(&I::softmax)},
      {"hardtanh", [](I& i, N n) { i.clamp(n, 1, 2, false); }},
      {"clamp", [](I& i, N n) { i.clamp(n, 1, 2, false); }},
      {"clamp_min", [](I& i, N n) { i.clamp(n, 1, 0, false); }},
      {"clamp_max", [](I& i, N n) { i.clamp(n, 0, 1, false); }},
      {"relu6", [](I& i, N n) { i.clamp(n, 0, 0, true); }},
      {"layer_norm", method(&I::layerNorm)},
      {"batch_norm", method(&I::batchNorm)},
      {"max_pool1d", poolOp(true, 1)},
      {"max_pool2d", poolOp(true, 2)},
      {"max_pool3d", poolOp(true, 3)},
      {"avg_pool1d", poolOp(false, 1)},
      {"avg_pool2d", poolOp(false, 2)},
      {"avg_pool3d", poolOp(false, 3)},
      {"adaptive_avg_pool1d", method(&I::adaptivePool)},
      {"adaptive_avg_pool2d", method(&I::adaptivePool)},
      {"adaptive_avg_pool3d", method(&I::adaptivePool)},
      {"mean", method(&I::mean)},
      {"flatten", method(&I::flatten)},
      {"reshape", method(&I::reshape)},
      {"view", method(&I::reshape)},
      {"permute", method(&I::permute)},
      {"transpose", [](I& i, N n) { i.transpose(n, true); }},
      {"t", [](I& i, N n) { i.transpose(n, false); }},
      {"numpy_T", [](I& i, N n) { i.transpose(n, false); }},
      {"cat", [](I& i, N n) { i.concat(n, false); }},
      {"concat", [](I& i, N n) { i.concat(n, false); }},
      {"stack", [](I& i, N n) { i.concat(n, true); }},
      {"slice", method(&I::slice)},
      {"select", method(&I::select)},
      {"unsqueeze", method(&I::unsqueeze)},
      {"squeeze", method(&I::squeeze)},
      {"split", splitOp(SplitBy::SizeOrSizes)},
      {"split_with_sizes", splitOp(SplitBy::SizeOrSizes)},
      {"unsafe_split", splitOp(SplitBy::SizeOrSizes)},
      {"chunk", splitOp(SplitBy::Chunks)},
      {"tensor_split", splitOp(SplitBy::TensorSplitChunks)},
      {"embedding", method(&I::embedding)},
      {"silu", method(&I::silu)},
      {"hardswish", unaryOp("HardSwish")},
      {"hardsigmoid", method(&I::hardsigmoid)},
      {"pad", method(&I::pad)},
      {"roll", method(&I::roll)},
      {"new_zeros", method(&I::newZeros)},
      {"eq", [](I& i, N n) { i.compare(n, false); }},
      {"ne", [](I& i, N n) { i.compare(n, true); }},
      {"masked_fill", method(&I::maskedFill)},
      {"expand", method(&I::expand)},
      {"upsample_nearest1d", [](I& i, N n) { i.upsample(n, false); }},
      {"upsample_nearest2d", [](I& i, N n) { i.upsample(n, false); }},
      {"upsample_nearest3d", [](I& i, N n) { i.upsample(n, false); }},
      {"upsample_linear1d", [](I& i, N n) { i.upsample(n, true); }},
      {"upsample_bilinear2d", [](I& i, N n) { i.upsample(n, true); }},
      {"upsample_trilinear3d", [](I& i, N n) { i.upsample(n, true); }},
      {"_native_multi_head_attention", method(&I::nativeMultiHeadAttention)},
      {"_transformer_encoder_layer_fwd", method(&I::transformerEncoderLayer)},
  };
  return table;
}

}  // namespace tessel::frontend::torchscript
