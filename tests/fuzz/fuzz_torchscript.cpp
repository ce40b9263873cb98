// Fuzz target: a TorchScript archive (.pt) from bytes, imported as `tessel
// inspect model.pt` does (the importer reads files: the bytes go to a file in
// a private folder first). Bad input must be a std::exception, never a crash.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>

#include "frontend/torchscript_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    char folder[] = "/tmp/tessel-fuzz-pt-XXXXXX";
    return std::string(::mkdtemp(folder)) + "/model.pt";
  }();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  }
  try {
    tessel::frontend::importTorchScript(path, {});
  } catch (const std::exception&) {
  }
  return 0;
}
