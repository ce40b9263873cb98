#include "user_data.h"

#include <algorithm>
#include <cmath>

#include "graph/shape_utils.h"
#include "runtime/numpy_files.h"
#include "support/tolerances.h"

namespace tessel::cli {

namespace {

using runtime::NumpyArray;
using runtime::NumpyError;

bool isInteger(graph::DType t) {
  return t == graph::DType::Int64 || t == graph::DType::Int32 || t == graph::DType::Bool;
}

void checkShape(const std::string& file, const std::string& what, const NumpyArray& a,
                const std::vector<int64_t>& shape, const std::string& hint) {
  if (a.shape != shape)
    throw NumpyError(file + ": " + what + " has shape " + graph::shapeString(a.shape) + ", the model's is " +
                     graph::shapeString(shape) + hint);
}

}  // namespace

UserInputs readUserInputs(const std::string& path, const std::vector<graph::ValueInfo>& inputs) {
  const std::vector<NumpyArray> arrays = runtime::readNumpyFile(path);
  std::vector<std::string> names;
  for (const graph::ValueInfo& v : inputs)
    names.push_back(v.name);
  const std::map<std::string, const NumpyArray*> matched = runtime::matchArrays(arrays, names, path);
  UserInputs out;
  for (const graph::ValueInfo& v : inputs) {
    const NumpyArray& a = *matched.at(v.name);
    const std::string what = "the array for input '" + v.name + "'";
    if (isInteger(v.dtype) != isInteger(a.dtype))
      throw NumpyError(path + ": " + what + " is " + graph::dtypeName(a.dtype) + ", the input is " +
                       graph::dtypeName(v.dtype));
    checkShape(path, what, a, v.shape, " (--input-shapes sets the model's symbolic dimensions)");
    if (isInteger(v.dtype))
      out.ints[v.name] = a.ints;
    else
      out.floats[v.name] = runtime::HostTensor{a.shape, a.floats};
  }
  return out;
}

std::map<std::string, runtime::HostTensor> readExpectedOutputs(const std::string& path, const graph::Graph& g) {
  const std::vector<NumpyArray> arrays = runtime::readNumpyFile(path);
  const std::map<std::string, const NumpyArray*> matched = runtime::matchArrays(arrays, g.outputs, path);
  std::map<std::string, runtime::HostTensor> out;
  for (const std::string& name : g.outputs) {
    const NumpyArray& a = *matched.at(name);
    const std::string what = "the array for output '" + name + "'";
    if (a.dtype != graph::DType::Float32)
      throw NumpyError(path + ": " + what + " is " + graph::dtypeName(a.dtype) + "; Tessel's outputs are float32");
    checkShape(path, what, a, g.value(name).shape, "");
    out[name] = runtime::HostTensor{a.shape, a.floats};
  }
  return out;
}

bool OutputComparison::withinTolerance() const {
  // Relative to the largest output, however small: a framework's logits or
  // probabilities are judged on their own scale.
  return maxAbsErr <= support::kModelRelativeTolerance * maxAbsRef;
}

OutputComparison compareOutputs(const std::map<std::string, runtime::HostTensor>& ours,
                                const std::map<std::string, runtime::HostTensor>& expected) {
  OutputComparison c;
  for (const auto& [name, want] : expected) {
    auto it = ours.find(name);
    if (it == ours.end() || it->second.data.size() != want.data.size())
      throw std::runtime_error("output '" + name + "' differs in size between Tessel and the expected values");
    for (size_t i = 0; i < want.data.size(); ++i) {
      const double d = std::fabs(double(it->second.data[i]) - double(want.data[i]));
      const double err = std::isnan(d) ? INFINITY : d;
      if (err > c.maxAbsErr || c.worstOutput.empty()) {
        if (err > c.maxAbsErr) c.maxAbsErr = err;
        if (err >= c.maxAbsErr) c.worstOutput = name;
      }
      c.maxAbsRef = std::max(c.maxAbsRef, std::fabs(double(want.data[i])));
    }
  }
  return c;
}

void saveOutputs(const std::string& path, const graph::Graph& g,
                 const std::map<std::string, runtime::HostTensor>& outputs) {
  std::vector<std::pair<std::string, runtime::HostTensor>> arrays;
  for (const std::string& name : g.outputs)
    if (auto it = outputs.find(name); it != outputs.end()) arrays.emplace_back(name, it->second);
  runtime::writeNpz(path, arrays);
}

}  // namespace tessel::cli
