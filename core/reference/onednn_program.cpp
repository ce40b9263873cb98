// The oneDNN executor's values: constants materialised on first use,
// activations in their producers' layouts, reorders where a reader wants
// another layout (once, at compile time, for a constant).
#include "reference/onednn_program.h"

#include <algorithm>
#include <cstring>

namespace tessel::reference::onednn {

memory::desc plainDesc(const Dims& dims) {
  using Tag = memory::format_tag;
  static const Tag tags[] = {Tag::a, Tag::ab, Tag::abc, Tag::abcd, Tag::abcde, Tag::abcdef};
  if (dims.empty()) return memory::desc({1}, memory::data_type::f32, Tag::a);
  if (dims.size() > 6) throw GraphError("the oneDNN executor handles tensors of rank 6 at most");
  return memory::desc(dims, memory::data_type::f32, tags[dims.size() - 1]);
}

memory::desc anyDesc(const Dims& dims) {
  return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
}

int64_t elementsOf(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

Program::Program(const graph::Graph& g, dnnl::engine& engine, dnnl::stream& stream)
    : g_(g), engine_(engine), stream_(stream) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& in : g.nodes[i].inputs)
      if (!in.empty()) lastReader_[in] = i;
  // Graph outputs are read after the last node; inputs are read again by
  // the next run: neither is ever written in place.
  for (const std::string& out : g.outputs)
    lastReader_[out] = g.nodes.size();
  for (const graph::ValueInfo& in : g.inputs)
    lastReader_[in.name] = g.nodes.size();
}

Dims Program::dimsOf(const std::string& name) const {
  auto it = g_.values.find(name);
  if (it == g_.values.end()) throw GraphError("value '" + name + "' has no shape in the graph");
  if (it->second.shape.empty()) return {1};
  return it->second.shape;
}

bool Program::isConstant(const std::string& name) const {
  return g_.initializers.count(name) != 0;
}

bool Program::isFloatConstant(const std::string& name) const {
  auto it = g_.initializers.find(name);
  return it != g_.initializers.end() && it->second.info.dtype == graph::DType::Float32;
}

std::vector<float> Program::constantFloats(const std::string& name) const {
  auto it = g_.initializers.find(name);
  if (it == g_.initializers.end()) throw GraphError("value '" + name + "' is not a constant");
  if (it->second.isInt()) return std::vector<float>(it->second.ints.begin(), it->second.ints.end());
  graph::Initializer copy = it->second;  // the graph is const: materialise a copy
  copy.materialise();
  if (int64_t(copy.data.size()) != copy.info.numElements())
    throw GraphError("initializer '" + name + "' has " + std::to_string(copy.data.size()) + " values for " +
                     std::to_string(copy.info.numElements()) + " elements");
  return copy.data;
}

std::vector<int64_t> Program::constantInts(const std::string& name) const {
  auto it = g_.initializers.find(name);
  if (it == g_.initializers.end() || !it->second.isInt())
    throw GraphError("value '" + name + "' is not an integer constant");
  return it->second.ints;
}

memory Program::value(const std::string& name) {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  auto init = g_.initializers.find(name);
  if (init == g_.initializers.end()) throw GraphError("value '" + name + "' is read before any node computes it");
  if (init->second.info.dtype != graph::DType::Float32)
    throw GraphError("constant '" + name + "' is " + graph::dtypeName(init->second.info.dtype) +
                     ": the oneDNN executor computes with float32 values");
  const std::vector<float> data = constantFloats(name);
  memory m(plainDesc(dimsOf(name)), engine_);
  std::memcpy(m.get_data_handle(), data.data(), data.size() * sizeof(float));
  define(name, m);
  return m;
}

void Program::define(const std::string& name, const memory& m) {
  values_[name] = m;
  views_[m.get_data_handle()].insert(name);
}

void Program::reorderInto(const memory& from, const memory& to) {
  add({"reorder", dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}, {}});
}

memory Program::reorderStep(const memory& from, const memory::desc& wanted) {
  memory to(wanted, engine_);
  reorderInto(from, to);
  return to;
}

memory Program::constantAs(const std::string& name, const memory::desc& given, const memory::desc& wanted) {
  memory seen(given, engine_, value(name).get_data_handle());
  if (given == wanted) return seen;
  memory to(wanted, engine_);
  dnnl::reorder(seen, to).execute(stream_, seen, to);
  stream_.wait();
  return to;
}

memory Program::valueAs(const std::string& name, const memory::desc& wanted) {
  memory m = value(name);
  if (m.get_desc() == wanted) return m;
  return isConstant(name) ? constantAs(name, m.get_desc(), wanted) : reorderStep(m, wanted);
}

memory Program::plainValue(const std::string& name) {
  const memory::desc plain = plainDesc(dimsOf(name));
  memory m = value(name);
  if (m.get_desc() == plain) return m;
  if (auto it = plain_.find(name); it != plain_.end()) return it->second;
  memory converted = valueAs(name, plain);
  plain_[name] = converted;
  return converted;
}

memory Program::viewOf(const std::string& name, const Dims& dims) {
  const memory source = plainValue(name);
  if (elementsOf(dims) != elementsOf(dimsOf(name)))
    throw GraphError("a view of '" + name + "' with another number of elements");
  return memory(plainDesc(dims), engine_, source.get_data_handle());
}

bool Program::lastReadAt(const std::string& name, size_t at) const {
  auto m = values_.find(name);
  if (m == values_.end() || isConstant(name)) return false;
  auto sharing = views_.find(m->second.get_data_handle());
  const std::set<std::string> names = sharing == views_.end() ? std::set<std::string>{name} : sharing->second;
  for (const std::string& v : names) {
    auto last = lastReader_.find(v);
    if (last != lastReader_.end() && last->second > at) return false;
  }
  return true;
}

void Program::run() {
  for (const Step& s : steps_) {
    if (s.host) {
      stream_.wait();
      s.host();
    } else {
      s.primitive.execute(stream_, s.args);
    }
  }
  stream_.wait();
}

}  // namespace tessel::reference::onednn
