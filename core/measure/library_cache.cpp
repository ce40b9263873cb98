#include "measure/library_cache.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>

namespace tessel::measure {

LibraryCache::~LibraryCache() {
  for (auto& [path, lib] : libs_)
    dlclose(lib.handle);
}

void* LibraryCache::resolveSymbol(const std::string& path, const std::string& symbol, std::string& error) {
  void* handle = open(path, error);
  if (!handle) return nullptr;
  dlerror();
  void* fn = dlsym(handle, symbol.c_str());
  if (!fn) {
    const char* why = dlerror();
    error = "symbol '" + symbol + "' not found in '" + path + "'" + (why ? std::string(": ") + why : std::string());
    return nullptr;
  }
  return fn;
}

void* LibraryCache::open(const std::string& path, std::string& error) {
  struct stat st {};
  const bool haveStat = ::stat(path.c_str(), &st) == 0;
  const int64_t mtimeNs = haveStat ? int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec : 0;
  auto it = libs_.find(path);
  if (it != libs_.end()) {
    Lib& lib = it->second;
    // A file rebuilt at the same path must be reloaded, not served stale.
    if (haveStat && lib.dev == st.st_dev && lib.ino == st.st_ino && lib.mtimeNs == mtimeNs) {
      lib.lastUse = ++clock_;
      return lib.handle;
    }
    dlclose(lib.handle);
    libs_.erase(it);
  }
  if (libs_.size() >= kMaxOpenLibraries) evictOldest();
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    error = "cannot load kernel library '" + path + "': " + (why ? why : "unknown dlopen error");
    return nullptr;
  }
  Lib lib;
  lib.handle = handle;
  if (haveStat) {
    lib.dev = st.st_dev;
    lib.ino = st.st_ino;
    lib.mtimeNs = mtimeNs;
  }
  lib.lastUse = ++clock_;
  libs_[path] = lib;
  return handle;
}

void LibraryCache::evictOldest() {
  auto oldest = std::min_element(libs_.begin(), libs_.end(),
                                 [](const auto& a, const auto& b) { return a.second.lastUse < b.second.lastUse; });
  if (oldest == libs_.end()) return;
  dlclose(oldest->second.handle);
  libs_.erase(oldest);
}

}  // namespace tessel::measure
