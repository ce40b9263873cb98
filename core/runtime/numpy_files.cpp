#include "runtime/numpy_files.h"

#include <zip.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <sstream>

#include "support/input_file.h"
#include "support/size_limits.h"

namespace tessel::runtime {

namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

[[noreturn]] void fail(const std::string& what, const std::string& problem) {
  throw NumpyError(what + ": " + problem);
}

// The value of `key` in the header's Python dict literal, as text.
std::string headerField(const std::string& header, const std::string& key, const std::string& what) {
  const std::string quoted[] = {"'" + key + "'", "\"" + key + "\""};
  for (const std::string& q : quoted) {
    size_t at = header.find(q);
    if (at == std::string::npos) continue;
    at = header.find(':', at + q.size());
    if (at == std::string::npos) break;
    ++at;
    while (at < header.size() && header[at] == ' ')
      ++at;
    if (at < header.size() && header[at] == '(') {
      size_t end = header.find(')', at);
      if (end == std::string::npos) fail(what, "the header's '" + key + "' is not closed");
      return header.substr(at, end - at + 1);
    }
    size_t end = at;
    if (at < header.size() && (header[at] == '\'' || header[at] == '"')) {
      end = header.find(header[at], at + 1);
      if (end == std::string::npos) fail(what, "the header's '" + key + "' is not closed");
      return header.substr(at + 1, end - at - 1);
    }
    while (end < header.size() && header[end] != ',' && header[end] != '}')
      ++end;
    return header.substr(at, end - at);
  }
  fail(what, "the header has no '" + key + "'");
}

std::vector<int64_t> parseShape(const std::string& tuple, const std::string& what) {
  std::vector<int64_t> shape;
  std::string inner = tuple.substr(1, tuple.size() - 2);
  std::stringstream ss(inner);
  std::string part;
  while (std::getline(ss, part, ',')) {
    size_t b = part.find_first_not_of(' '), e = part.find_last_not_of(' ');
    if (b == std::string::npos) continue;  // the trailing comma of (5,)
    part = part.substr(b, e - b + 1);
    if (part.back() == 'L') part.pop_back();  // Python 2's longs
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(part, &used);
    } catch (const std::exception&) {
    }
    if (used != part.size() || v < 0) fail(what, "the shape " + tuple + " has a bad dimension '" + part + "'");
    shape.push_back(v);
  }
  return shape;
}

struct ElementType {
  graph::DType dtype;
  size_t bytes;
  char kind;  // 'f' float, 'i' signed, 'u' unsigned, 'b' bool
};

ElementType elementType(const std::string& descr, bool& swap, const std::string& what) {
  if (descr.size() < 3) fail(what, "unknown dtype '" + descr + "'");
  const char order = descr[0];
  const bool little = std::endian::native == std::endian::little;
  swap = (order == '<' && !little) || (order == '>' && little);
  if (order != '<' && order != '>' && order != '|' && order != '=') fail(what, "unknown dtype '" + descr + "'");
  const std::string t = descr.substr(1);
  if (t == "f4") return {graph::DType::Float32, 4, 'f'};
  if (t == "f8") return {graph::DType::Float32, 8, 'f'};
  if (t == "i8") return {graph::DType::Int64, 8, 'i'};
  if (t == "i4") return {graph::DType::Int32, 4, 'i'};
  if (t == "i2") return {graph::DType::Int32, 2, 'i'};
  if (t == "i1") return {graph::DType::Int32, 1, 'i'};
  if (t == "u1") return {graph::DType::Int32, 1, 'u'};
  if (t == "b1") return {graph::DType::Bool, 1, 'b'};
  fail(what, "dtype '" + descr + "' is not supported (float32, float64, int64, int32, int16, int8, uint8, bool are)");
}

// One element at `p` as a double or an integer.
template <typename T>
T readScalar(const char* p, size_t bytes, bool swap) {
  char buf[8];
  std::memcpy(buf, p, bytes);
  if (swap)
    for (size_t i = 0; i < bytes / 2; ++i)
      std::swap(buf[i], buf[bytes - 1 - i]);
  T v;
  std::memcpy(&v, buf, sizeof v);
  return v;
}

void checkRegularFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw NumpyError(path + ": " + (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
}

std::string readFile(const std::string& path) {
  try {
    return support::readRegularFile(path, "NumPy file", support::defaultMaxInputBytes());
  } catch (const support::InputFileError& e) {
    throw NumpyError(e.what());
  }
}

bool hasSuffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string zipError(zip_t* z) {
  return z ? zip_strerror(z) : "unknown error";
}

}  // namespace

NumpyArray parseNpy(const std::string& bytes, const std::string& what) {
  if (bytes.size() < kMagicSize + 4 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
    fail(what, "not a NumPy .npy array (the magic string is missing)");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen = 0, start = 0;
  if (major == 1) {
    headerLen = size_t(static_cast<unsigned char>(bytes[8])) | size_t(static_cast<unsigned char>(bytes[9])) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(what, "the header is cut short");
    for (int i = 0; i < 4; ++i)
      headerLen |= size_t(static_cast<unsigned char>(bytes[size_t(8 + i)])) << (8 * i);
    start = 12;
  } else {
    fail(what, ".npy format version " + std::to_string(major) + " is not supported (1 to 3 are)");
  }
  if (headerLen > bytes.size() - start) fail(what, "the header is cut short");
  const std::string header = bytes.substr(start, headerLen);
  const size_t dataStart = start + headerLen;

  NumpyArray a;
  bool swap = false;
  const ElementType et = elementType(headerField(header, "descr", what), swap, what);
  const std::string fortran = headerField(header, "fortran_order", what);
  const std::string shapeText = headerField(header, "shape", what);
  if (shapeText.empty() || shapeText.front() != '(') fail(what, "the header's shape is not a tuple");
  a.shape = parseShape(shapeText, what);
  int64_t count = 1;
  for (int64_t d : a.shape) {
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / int64_t(et.bytes) / d)
      fail(what, "the shape " + shapeText + " is too large");
    count *= d;
  }
  if (fortran.find("True") != std::string::npos && a.shape.size() > 1)
    fail(what, "the array is in Fortran order; save np.ascontiguousarray(x) instead");
  const size_t dataBytes = size_t(count) * et.bytes;
  if (bytes.size() - dataStart != dataBytes)
    fail(what, "holds " + std::to_string(bytes.size() - dataStart) + " bytes of data, its shape " + shapeText +
                   " needs " + std::to_string(dataBytes));
  a.dtype = et.dtype;
  const char* p = bytes.data() + dataStart;
  if (et.kind == 'f') {
    a.floats.resize(size_t(count));
    for (size_t i = 0; i < a.floats.size(); ++i)
      a.floats[i] =
          et.bytes == 4 ? readScalar<float>(p + i * 4, 4, swap) : float(readScalar<double>(p + i * 8, 8, swap));
    return a;
  }
  a.ints.resize(size_t(count));
  for (size_t i = 0; i < a.ints.size(); ++i) {
    const char* e = p + i * et.bytes;
    switch (et.bytes) {
      case 8:
        a.ints[i] = readScalar<int64_t>(e, 8, swap);
        break;
      case 4:
        a.ints[i] = readScalar<int32_t>(e, 4, swap);
        break;
      case 2:
        a.ints[i] = readScalar<int16_t>(e, 2, swap);
        break;
      default:
        a.ints[i] = et.kind == 'i' ? int64_t(static_cast<signed char>(*e)) : int64_t(static_cast<unsigned char>(*e));
        if (et.kind == 'b') a.ints[i] = a.ints[i] != 0;
    }
  }
  return a;
}

std::string formatNpy(const HostTensor& t) {
  std::string shape = "(";
  for (int64_t d : t.shape)
    shape += std::to_string(d) + ", ";
  if (t.shape.size() == 1)
    shape.resize(shape.size() - 1);  // "(5,)"
  else if (!t.shape.empty())
    shape.resize(shape.size() - 2);
  shape += ")";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  // Version 1.0: magic, version, a 2-byte length; data aligned to 64 bytes.
  const size_t unpadded = kMagicSize + 4 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicSize);
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  static_assert(std::endian::native == std::endian::little, "writes little-endian float32");
  out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float));
  return out;
}

std::vector<NumpyArray> readNumpyFile(const std::string& path) {
  if (hasSuffix(path, ".npy")) return {parseNpy(readFile(path), path)};
  if (!hasSuffix(path, ".npz")) throw NumpyError(path + ": give a NumPy .npy or .npz file");
  checkRegularFile(path);
  int err = 0;
  std::unique_ptr<zip_t, decltype(&zip_discard)> z(zip_open(path.c_str(), ZIP_RDONLY, &err), zip_discard);
  if (!z) {
    zip_error_t e;
    zip_error_init_with_code(&e, err);
    const std::string why = zip_error_strerror(&e);
    zip_error_fini(&e);
    throw NumpyError(path + ": not a readable .npz archive (" + why + ")");
  }
  std::vector<NumpyArray> out;
  const zip_int64_t n = zip_get_num_entries(z.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(z.get(), zip_uint64_t(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE) || !st.name)
      throw NumpyError(path + ": member " + std::to_string(i) + " cannot be read (" + zipError(z.get()) + ")");
    std::string name = st.name;
    if (!hasSuffix(name, ".npy")) continue;  // np.savez writes only .npy members
    const std::string what = path + ": " + name;
    std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(zip_fopen_index(z.get(), zip_uint64_t(i), 0), zip_fclose);
    if (!f) throw NumpyError(what + ": cannot be opened (" + zipError(z.get()) + ")");
    // The archive's directory states the size: checked before it is allocated.
    if (st.size > support::defaultMaxInputBytes())
      throw NumpyError(what + ": states " + support::bytesText(double(st.size)) + " uncompressed, more than the " +
                       support::bytesText(double(support::defaultMaxInputBytes())) + " Tessel reads into memory");
    // Read as it comes, not allocated from the stated size: a damaged
    // directory can state gigabytes for a member of a few bytes (fuzz_numpy).
    std::string bytes;
    char chunk[1 << 16];
    while (bytes.size() < st.size) {
      const zip_int64_t n = zip_fread(f.get(), chunk, std::min<zip_uint64_t>(sizeof chunk, st.size - bytes.size()));
      if (n < 0) throw NumpyError(what + ": cannot be read (" + zip_error_strerror(zip_file_get_error(f.get())) + ")");
      if (n == 0) break;
      bytes.append(chunk, size_t(n));
    }
    if (bytes.size() != st.size) throw NumpyError(what + ": is cut short");
    NumpyArray a = parseNpy(bytes, what);
    a.name = name.substr(0, name.size() - 4);
    out.push_back(std::move(a));
  }
  if (out.empty()) throw NumpyError(path + ": the archive holds no .npy arrays");
  return out;
}

void writeNpz(const std::string& path, const std::vector<std::pair<std::string, HostTensor>>& arrays) {
  // Written beside the target and renamed into place: a failed write leaves the old file.
  const std::string tmp = path + ".tmp";
  std::filesystem::remove(tmp);
  int err = 0;
  zip_t* z = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!z) throw NumpyError(path + ": cannot be created");
  std::vector<std::string> members;  // libzip reads the buffers at zip_close
  members.reserve(arrays.size());
  for (const auto& [name, t] : arrays) {
    members.push_back(formatNpy(t));
    zip_source_t* src = zip_source_buffer(z, members.back().data(), members.back().size(), 0);
    const zip_int64_t idx =
        src ? zip_file_add(z, (name + ".npy").c_str(), src, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8) : -1;
    if (idx < 0) {
      if (src) zip_source_free(src);
      const std::string why = zipError(z);
      zip_discard(z);
      throw NumpyError(path + ": cannot add '" + name + "' (" + why + ")");
    }
    zip_set_file_compression(z, zip_uint64_t(idx), ZIP_CM_STORE, 0);
  }
  if (zip_close(z) != 0) {
    const std::string why = zipError(z);
    zip_discard(z);
    std::filesystem::remove(tmp);
    throw NumpyError(path + ": cannot be written (" + why + ")");
  }
  std::filesystem::rename(tmp, path);
}

std::map<std::string, const NumpyArray*> matchArrays(const std::vector<NumpyArray>& arrays,
                                                     const std::vector<std::string>& names, const std::string& file) {
  std::map<std::string, const NumpyArray*> byName;
  for (const NumpyArray& a : arrays)
    byName[a.name] = &a;
  std::map<std::string, const NumpyArray*> out;
  std::vector<std::string> missing;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
    const NumpyArray* a = nullptr;
    if (auto it = byName.find(n); it != byName.end())
      a = it->second;
    else if (auto p = byName.find("arr_" + std::to_string(i)); p != byName.end())
      a = p->second;  // np.savez(f, x, y): positional
    else if (names.size() == 1 && arrays.size() == 1)
      a = &arrays[0];  // one array for one name (an .npy, or an .npz of one)
    if (a)
      out[n] = a;
    else
      missing.push_back(n);
  }
  if (!missing.empty()) {
    std::string want, have;
    for (const std::string& m : missing)
      want += (want.empty() ? "'" : ", '") + m + "'";
    for (const NumpyArray& a : arrays)
      have += (have.empty() ? "'" : ", '") + (a.name.empty() ? std::string("(unnamed)") : a.name) + "'";
    throw NumpyError(file + ": no array for " + want + "; the file holds " + have +
                     " (name the arrays after the model's, or save them positionally with np.savez(f, a, b))");
  }
  return out;
}

}  // namespace tessel::runtime
