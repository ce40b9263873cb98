#include "support/compressed_lines.h"

#include <zlib.h>

#include <memory>
#include <stdexcept>

#include "support/input_file.h"

namespace tessel::support {

namespace {

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

}  // namespace

void writeLines(const std::string& path, const std::function<bool(std::string& line)>& next) {
  const bool compressed = endsWith(path, ".gz") || endsWith(path, ".tkb");
  gzFile f = gzopen(path.c_str(), compressed ? "wb9" : "wbT");  // T: plain, not compressed
  if (!f) throw std::runtime_error("cannot write " + path);
  std::string line;
  while (next(line)) {
    line += '\n';
    if (gzwrite(f, line.data(), unsigned(line.size())) != int(line.size())) {
      gzclose(f);
      throw std::runtime_error("cannot write " + path + " (disk full?)");
    }
    line.clear();
  }
  if (gzclose(f) != Z_OK) throw std::runtime_error("cannot write " + path);
}

void readLines(const std::string& path, const std::string& what,
               const std::function<void(const std::string& line, size_t number)>& take) {
  checkRegularFile(path, what, defaultMaxInputBytes());
  std::unique_ptr<gzFile_s, GzCloser> f(gzopen(path.c_str(), "rb"));  // reads plain files as they are
  if (!f) throw std::runtime_error("cannot read " + what + " " + path);
  std::string line;
  char buf[1 << 16];
  size_t number = 0;
  auto give = [&] {
    ++number;
    if (!line.empty()) take(line, number);
    line.clear();
  };
  while (gzgets(f.get(), buf, sizeof buf)) {
    line += buf;
    if (!line.empty() && line.back() == '\n') {
      line.pop_back();
      give();
    }
  }
  int err = Z_OK;
  gzerror(f.get(), &err);
  if (err != Z_OK && err != Z_STREAM_END)
    throw std::runtime_error("cannot read " + what + " " + path + ": damaged compressed data");
  give();
}

}  // namespace tessel::support
