// A work folder for generated files: the one given, or a fresh temporary one
// that goes with this object unless it is to be kept (--keep-files).
#pragma once

#include <string>

#include "support/subprocess.h"

namespace tessel::support {

class ScratchDir {
 public:
  ScratchDir(const std::string& given, const std::string& prefix, bool keep)
      : path_(given.empty() ? makeTempDir(prefix, keep) : given), owned_(given.empty() && !keep) {}
  ~ScratchDir() {
    if (owned_) removeTree(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool owned_;
};

}  // namespace tessel::support
