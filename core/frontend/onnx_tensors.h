// ONNX TensorProto decoding, shared by the model importer (initializers,
// Constant nodes) and the conformance runner (the backend tests' .pb
// inputs and outputs): data types, raw and typed fields, float16/bfloat16.
// Internal to core/frontend/ (it needs libonnx's protobuf classes).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace tessel::frontend {

// The largest protobuf message the library parses (2 GiB less a byte): larger
// ONNX files keep their tensors in external data, which Tessel does not read.
constexpr uint64_t kMaxProtobufBytes = 2147483647;

// A TensorProto's values: floats for floating-point types, ints otherwise.
struct TensorValues {
  int onnxType = 0;
  std::vector<int64_t> shape;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  bool isFloat = false;
};

// "FLOAT", "INT64", ... or "data type N".
std::string dataTypeName(int t);
// Tessel's dtype of an ONNX data type (DType::Other where it has none).
graph::DType mapDType(int t);
// The values of a tensor (GraphError naming `what` for malformed data,
// UnsupportedError for external data and unsupported types).
TensorValues convertTensor(const onnx::TensorProto& t, const std::string& what);
// A graph initializer from a tensor: float32 (doubles converted), int64,
// int32 or bool; anything else is unsupported.
graph::Initializer makeInitializer(const std::string& name, const TensorValues& v, const std::string& what);

}  // namespace tessel::frontend
