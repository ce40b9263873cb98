// The worker's open kernel libraries (dlopen handles), cached by path: a
// tuning session loads thousands, so only the most recently used stay open,
// and a library rebuilt at the same path is loaded again, never served stale.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

namespace tessel::measure {

class LibraryCache {
 public:
  // Libraries kept open at once; the least recently used is closed first.
  static constexpr size_t kMaxOpenLibraries = 256;

  LibraryCache() = default;
  LibraryCache(const LibraryCache&) = delete;
  LibraryCache& operator=(const LibraryCache&) = delete;
  ~LibraryCache();

  // The address of `symbol` in the library at `path`, or nullptr with the reason in `error`.
  void* resolveSymbol(const std::string& path, const std::string& symbol, std::string& error);

 private:
  struct Lib {
    void* handle = nullptr;
    dev_t dev = 0;
    ino_t ino = 0;
    int64_t mtimeNs = 0;
    uint64_t lastUse = 0;
  };
  void* open(const std::string& path, std::string& error);
  void evictOldest();

  std::map<std::string, Lib> libs_;
  uint64_t clock_ = 0;
};

}  // namespace tessel::measure
