// Fuzz target: an ONNX model from bytes, imported and prepared (folded, fused,
// its tasks extracted) as `tessel inspect` does. Bad input must be a
// std::exception with a message, never a crash, a hang or unbounded memory.
#include <cstdint>
#include <exception>
#include <string>

#include "frontend/model_loader.h"
#include "frontend/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    tessel::graph::Graph g = tessel::frontend::importOnnxBytes(bytes, "fuzz.onnx");
    tessel::frontend::prepareModel(std::move(g), "fuzz", "dp", tessel::target::Target::host());
  } catch (const std::exception&) {
    // A clear error: what the importer promises.
  }
  return 0;
}
