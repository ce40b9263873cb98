// Fuzz target: NumPy inputs as `tessel run --inputs` reads them: the bytes as
// one .npy array, and as an .npz archive (through a file in a private folder,
// since archives are read from files). Bad input must be a std::exception.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>

#include "runtime/numpy_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    char folder[] = "/tmp/tessel-fuzz-npz-XXXXXX";
    return std::string(::mkdtemp(folder)) + "/inputs.npz";
  }();
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    tessel::runtime::parseNpy(bytes, "fuzz.npy");
  } catch (const std::exception&) {
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
  }
  try {
    tessel::runtime::readNumpyFile(path);
  } catch (const std::exception&) {
  }
  return 0;
}
