// A cache of compiled kernel libraries, as ccache is for C++: keyed by what
// made a library (the compiler binary, its flags and the translation unit's
// source), so `tessel run` of a model it ran before, or of the same model in
// another format, loads its kernels instead of compiling them again. A hit is
// checked against the stored key text in full, never by hash alone; entries
// are written whole (renamed into place), so processes share one folder; the
// least recently used go when it grows past its size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::codegen {

inline constexpr uint64_t kKernelCacheMaxBytes = 1ull << 30;  // 1 GiB

class KernelCache {
 public:
  // `dir` is created when first written; empty: a cache that holds nothing.
  explicit KernelCache(std::string dir, uint64_t maxBytes = kKernelCacheMaxBytes);

  // $TESSEL_KERNEL_CACHE when set ("off" or "0": none), else
  // $XDG_CACHE_HOME/tessel/kernels, else ~/.cache/tessel/kernels.
  static std::string defaultDir();

  const std::string& dir() const { return dir_; }

  // The text a library is keyed by: the compile command (without its output
  // and input paths), the compiler binary's identity, and the source.
  static std::string keyText(const std::vector<std::string>& compileCommand, const std::string& source);

  // Puts the library cached for `key` at `destination` (a hard link where
  // the file systems allow, else a copy); false when there is none.
  bool fetch(const std::string& key, const std::string& destination) const;

  // Stores a library built for `key`; false (and the cache unchanged) when it
  // cannot be written. Then trims the cache to its size.
  bool store(const std::string& key, const std::string& library) const;
  // Stores one library (a unit of several kernels) under each of `keys`: the
  // file is held once, the keys share it.
  bool store(const std::vector<std::string>& keys, const std::string& library) const;

 private:
  std::string entryBase(const std::string& key) const;
  void trim() const;

  std::string dir_;
  uint64_t maxBytes_;
};

}  // namespace tessel::codegen
