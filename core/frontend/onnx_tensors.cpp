#include "frontend/onnx_tensors.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "frontend/onnx_import.h"
#include "support/input_file.h"
#include "support/size_limits.h"

namespace tessel::frontend {

using graph::DType;
using graph::GraphError;
using graph::UnsupportedError;

namespace {

float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal
    exp = 113;
    while (!(mant & 0x400u)) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bfloat16ToFloat(uint16_t h) {
  const uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T>
std::vector<T> fromRaw(const std::string& raw, size_t n, const std::string& what) {
  if (raw.size() != n * sizeof(T))
    throw GraphError(what + ": raw_data holds " + std::to_string(raw.size()) + " bytes, expected " +
                     std::to_string(n * sizeof(T)));
  std::vector<T> out(n);
  if (n) std::memcpy(out.data(), raw.data(), raw.size());  // ONNX raw data is little-endian, as x86/ARM
  return out;
}

template <typename Field>
void checkCount(const Field& f, size_t n, const char* field, const std::string& what) {
  if (size_t(f.size()) != n)
    throw GraphError(what + ": " + field + " holds " + std::to_string(f.size()) + " values, expected " +
                     std::to_string(n));
}

}  // namespace

std::string dataTypeName(int t) {
  if (onnx::TensorProto_DataType_IsValid(t)) return onnx::TensorProto_DataType_Name(onnx::TensorProto_DataType(t));
  return "data type " + std::to_string(t);
}

DType mapDType(int t) {
  switch (t) {
    case onnx::TensorProto_DataType_FLOAT:
      return DType::Float32;
    case onnx::TensorProto_DataType_DOUBLE:
      return DType::Float64;
    case onnx::TensorProto_DataType_INT64:
      return DType::Int64;
    case onnx::TensorProto_DataType_INT32:
      return DType::Int32;
    case onnx::TensorProto_DataType_BOOL:
      return DType::Bool;
    default:
      return DType::Other;
  }
}

TensorValues convertTensor(const onnx::TensorProto& t, const std::string& what) {
  TensorValues v;
  v.onnxType = t.data_type();
  for (int64_t d : t.dims()) {
    if (d < 0) throw GraphError(what + ": negative dimension " + std::to_string(d));
    v.shape.push_back(d);
  }
  int64_t n = 0;  // checked before the data is read or sized by it
  try {
    n = support::checkTensorSize(what, v.shape, graph::dtypeBytes(mapDType(t.data_type())));
  } catch (const support::LimitError& e) {
    throw GraphError(e.what());
  }
  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    std::string file;
    for (const auto& kv : t.external_data())
      if (kv.key() == "location") file = kv.value();
    throw UnsupportedError(what + ": its data is stored in an external file ('" + file +
                           "'); Tessel reads models whose tensors are inside the .onnx file");
  }
  if (t.has_segment()) throw UnsupportedError(what + ": segmented tensors are not supported");
  const size_t count = size_t(n);
  const bool raw = t.has_raw_data();
  const std::string& r = t.raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto_DataType_FLOAT:
      v.isFloat = true;
      if (raw) {
        v.floats = fromRaw<float>(r, count, what);
      } else {
        checkCount(t.float_data(), count, "float_data", what);
        v.floats.assign(t.float_data().begin(), t.float_data().end());
      }
      break;
    case onnx::TensorProto_DataType_DOUBLE: {
      v.isFloat = true;
      std::vector<double> d;
      if (raw) {
        d = fromRaw<double>(r, count, what);
      } else {
        checkCount(t.double_data(), count, "double_data", what);
        d.assign(t.double_data().begin(), t.double_data().end());
      }
      v.floats.assign(d.begin(), d.end());
      break;
    }
    case onnx::TensorProto_DataType_FLOAT16:
    case onnx::TensorProto_DataType_BFLOAT16: {
      v.isFloat = true;
      std::vector<uint16_t> bits;
      if (raw) {
        bits = fromRaw<uint16_t>(r, count, what);
      } else {
        checkCount(t.int32_data(), count, "int32_data", what);
        for (int32_t x : t.int32_data())
          bits.push_back(uint16_t(x));
      }
      const bool half = t.data_type() == onnx::TensorProto_DataType_FLOAT16;
      for (uint16_t b : bits)
        v.floats.push_back(half ? halfToFloat(b) : bfloat16ToFloat(b));
      break;
    }
    case onnx::TensorProto_DataType_INT64:
      if (raw) {
        v.ints = fromRaw<int64_t>(r, count, what);
      } else {
        checkCount(t.int64_data(), count, "int64_data", what);
        v.ints.assign(t.int64_data().begin(), t.int64_data().end());
      }
      break;
    case onnx::TensorProto_DataType_INT32:
    case onnx::TensorProto_DataType_INT16:
    case onnx::TensorProto_DataType_INT8:
    case onnx::TensorProto_DataType_UINT16:
    case onnx::TensorProto_DataType_UINT8:
    case onnx::TensorProto_DataType_BOOL:
      if (raw) {
        switch (t.data_type()) {
          case onnx::TensorProto_DataType_INT32:
            for (int32_t x : fromRaw<int32_t>(r, count, what))
              v.ints.push_back(x);
            break;
          case onnx::TensorProto_DataType_INT16:
            for (int16_t x : fromRaw<int16_t>(r, count, what))
              v.ints.push_back(x);
            break;
          case onnx::TensorProto_DataType_INT8:
            for (int8_t x : fromRaw<int8_t>(r, count, what))
              v.ints.push_back(x);
            break;
          case onnx::TensorProto_DataType_UINT16:
            for (uint16_t x : fromRaw<uint16_t>(r, count, what))
              v.ints.push_back(x);
            break;
          default:  // UINT8, BOOL: one byte each
            for (uint8_t x : fromRaw<uint8_t>(r, count, what))
              v.ints.push_back(x);
            break;
        }
      } else {
        checkCount(t.int32_data(), count, "int32_data", what);
        v.ints.assign(t.int32_data().begin(), t.int32_data().end());
      }
      break;
    case onnx::TensorProto_DataType_UINT32:
    case onnx::TensorProto_DataType_UINT64:
      if (raw) {
        if (t.data_type() == onnx::TensorProto_DataType_UINT32) {
          for (uint32_t x : fromRaw<uint32_t>(r, count, what))
            v.ints.push_back(x);
        } else {
          for (uint64_t x : fromRaw<uint64_t>(r, count, what))
            v.ints.push_back(int64_t(x));
        }
      } else {
        checkCount(t.uint64_data(), count, "uint64_data", what);
        for (uint64_t x : t.uint64_data())
          v.ints.push_back(int64_t(x));
      }
      break;
    default:
      throw UnsupportedError(what + ": tensors of " + dataTypeName(t.data_type()) + " are not supported");
  }
  return v;
}

graph::Initializer makeInitializer(const std::string& name, const TensorValues& v, const std::string& what) {
  graph::Initializer init;
  init.info.name = name;
  init.info.shape = v.shape;
  switch (v.onnxType) {
    case onnx::TensorProto_DataType_FLOAT:
    case onnx::TensorProto_DataType_DOUBLE:
      init.info.dtype = DType::Float32;
      init.data = v.floats;
      break;
    case onnx::TensorProto_DataType_INT64:
    case onnx::TensorProto_DataType_INT32:
    case onnx::TensorProto_DataType_BOOL:
      init.info.dtype = mapDType(v.onnxType);
      init.ints = v.ints;
      break;
    default:
      throw UnsupportedError(what + " has dtype " + dataTypeName(v.onnxType) +
                             "; Tessel's tensors are float32, int64, int32 or bool");
  }
  return init;
}

LoadedTensor loadTensorProto(const std::string& path) {
  std::string bytes;
  try {
    bytes = support::readRegularFile(path, "tensor file", kMaxProtobufBytes);
  } catch (const support::InputFileError& e) {
    throw GraphError(e.what());
  }
  onnx::TensorProto t;
  if (!t.ParseFromString(bytes))
    throw GraphError("'" + path + "' is not a valid ONNX TensorProto (the protobuf does not parse)");
  TensorValues v = convertTensor(t, "tensor '" + path + "'");
  LoadedTensor out;
  out.name = t.name();
  out.dtype = mapDType(v.onnxType);
  out.shape = v.shape;
  out.floats = std::move(v.floats);
  out.ints = std::move(v.ints);
  return out;
}

}  // namespace tessel::frontend
