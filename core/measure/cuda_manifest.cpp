#include "measure/cuda_manifest.h"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tessel::measure {

namespace {

using json = nlohmann::json;

// Bounds of CUDA itself (grid.x < 2^31, y and z < 2^16, 1024 threads per
// block), so a corrupt manifest cannot ask the driver for nonsense.
constexpr int64_t kMaxGrid[3] = {(int64_t(1) << 31) - 1, 65535, 65535};
constexpr int64_t kMaxBlockThreads = 1024;
constexpr int64_t kMaxBufferElements = int64_t(1) << 36;

std::string readFile(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CudaManifestError("cannot read the " + std::string(what) + " '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json dims(const std::array<int64_t, 3>& d) {
  return json::array({d[0], d[1], d[2]});
}

std::array<int64_t, 3> readDims(const json& j) {
  std::array<int64_t, 3> d{};
  if (!j.is_array() || j.size() != 3) throw std::invalid_argument("not three dimensions");
  for (size_t i = 0; i < 3; ++i)
    d[i] = j.at(i).get<int64_t>();
  return d;
}

void validate(const CudaManifest& m) {
  if (m.cubin.empty() || m.cubin.find('/') != std::string::npos)
    throw std::invalid_argument("cubin must be a file name beside the manifest");
  if (m.kernels.empty()) throw std::invalid_argument("no kernels");
  for (const CudaManifest::Buffer& b : m.buffers)
    if (b.size < 0 || b.size > kMaxBufferElements)
      throw std::invalid_argument("buffer '" + b.name + "' has " + std::to_string(b.size) + " elements");
  for (const CudaManifest::Kernel& k : m.kernels) {
    int64_t threads = 1;
    for (int i = 0; i < 3; ++i) {
      if (k.grid[size_t(i)] < 1 || k.grid[size_t(i)] > kMaxGrid[i])
        throw std::invalid_argument("kernel '" + k.name + "' has a grid dimension of " +
                                    std::to_string(k.grid[size_t(i)]));
      if (k.block[size_t(i)] < 1 || k.block[size_t(i)] > kMaxBlockThreads)
        throw std::invalid_argument("kernel '" + k.name + "' has a block dimension of " +
                                    std::to_string(k.block[size_t(i)]));
      threads *= k.block[size_t(i)];
    }
    if (threads > kMaxBlockThreads)
      throw std::invalid_argument("kernel '" + k.name + "' has " + std::to_string(threads) + " threads per block");
    for (size_t p : k.params)
      if (p >= m.buffers.size())
        throw std::invalid_argument("kernel '" + k.name + "' names buffer " + std::to_string(p) + " of " +
                                    std::to_string(m.buffers.size()));
  }
}

}  // namespace

void writeCudaManifest(const std::string& path, const CudaManifest& m) {
  json buffers = json::array();
  for (const CudaManifest::Buffer& b : m.buffers)
    buffers.push_back({{"name", b.name}, {"size", b.size}});
  json kernels = json::array();
  for (const CudaManifest::Kernel& k : m.kernels)
    kernels.push_back({{"name", k.name},
                       {"grid", dims(k.grid)},
                       {"block", dims(k.block)},
                       {"shared_bytes", k.sharedBytes},
                       {"params", k.params},
                       {"registers", k.registers},
                       {"spill_bytes", k.spillBytes}});
  const json j = {{"format", kCudaManifestFormat},
                  {"arch", m.arch},
                  {"cubin", m.cubin},
                  {"buffers", buffers},
                  {"kernels", kernels}};
  std::ofstream out(path, std::ios::trunc);
  out << j.dump(1) << '\n';
  if (!out) throw CudaManifestError("cannot write the CUDA manifest '" + path + "'");
}

CudaManifest readCudaManifest(const std::string& path) {
  const std::string text = readFile(path, "CUDA manifest");
  CudaManifest m;
  try {
    const json j = json::parse(text);
    if (j.at("format").get<std::string>() != kCudaManifestFormat)
      throw std::invalid_argument("format '" + j.at("format").get<std::string>() + "' is not '" + kCudaManifestFormat +
                                  "'");
    m.arch = j.at("arch").get<std::string>();
    m.cubin = j.at("cubin").get<std::string>();
    for (const json& b : j.at("buffers"))
      m.buffers.push_back({b.at("name").get<std::string>(), b.at("size").get<int64_t>()});
    for (const json& k : j.at("kernels")) {
      CudaManifest::Kernel kernel;
      kernel.name = k.at("name").get<std::string>();
      kernel.grid = readDims(k.at("grid"));
      kernel.block = readDims(k.at("block"));
      kernel.sharedBytes = k.at("shared_bytes").get<int64_t>();
      kernel.params = k.at("params").get<std::vector<size_t>>();
      kernel.registers = k.value("registers", 0);
      kernel.spillBytes = k.value("spill_bytes", int64_t(0));
      m.kernels.push_back(std::move(kernel));
    }
    validate(m);
  } catch (const std::exception& e) {
    throw CudaManifestError("invalid CUDA manifest '" + path + "': " + e.what());
  }
  return m;
}

std::string readCudaCubin(const std::string& manifestPath, const CudaManifest& m) {
  const size_t slash = manifestPath.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : manifestPath.substr(0, slash + 1);
  std::string bytes = readFile(dir + m.cubin, "CUBIN");
  if (bytes.empty()) throw CudaManifestError("the CUBIN '" + dir + m.cubin + "' is empty");
  return bytes;
}

}  // namespace tessel::measure
