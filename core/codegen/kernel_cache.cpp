#include "codegen/kernel_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <system_error>

#include "support/hash.h"

namespace tessel::codegen {

namespace fs = std::filesystem;

namespace {

std::atomic<int> tempCounter{0};

// The compiler as found on PATH, with its links resolved, its size and its
// time: another compiler (an upgrade too) is another key.
std::string compilerIdentity(const std::string& compiler) {
  std::error_code ec;
  fs::path found = compiler;
  if (compiler.find('/') == std::string::npos) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    for (std::string d; std::getline(dirs, d, ':');)
      if (!d.empty() && fs::exists(fs::path(d) / compiler, ec)) {
        found = fs::path(d) / compiler;
        break;
      }
  }
  const fs::path real = fs::canonical(found, ec);
  if (ec) return compiler;
  const auto size = fs::file_size(real, ec);
  const auto time = fs::last_write_time(real, ec).time_since_epoch().count();
  return real.string() + " " + std::to_string(size) + " " + std::to_string(time);
}

std::string readFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Writes `text` (or copies `from`, or links it where `link` and the file
// system allow) to a temporary name beside `to`, then renames it into place:
// readers see a whole file or none.
bool writeWhole(const fs::path& to, const std::string* text, const fs::path* from, bool link = false) {
  std::error_code ec;
  const fs::path tmp = to.string() + ".tmp" + std::to_string(getpid()) + "_" + std::to_string(tempCounter++);
  if (text) {
    std::ofstream f(tmp, std::ios::binary);
    f << *text;
    if (!f.flush()) ec = std::make_error_code(std::errc::io_error);
  } else {
    if (link) fs::create_hard_link(*from, tmp, ec);
    if (!link || ec) ec.clear(), fs::copy_file(*from, tmp, fs::copy_options::overwrite_existing, ec);
  }
  if (!ec) fs::rename(tmp, to, ec);
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

}  // namespace

KernelCache::KernelCache(std::string dir, uint64_t maxBytes) : dir_(std::move(dir)), maxBytes_(maxBytes) {}

std::string KernelCache::defaultDir() {
  if (const char* v = std::getenv("TESSEL_KERNEL_CACHE"); v && *v) {
    const std::string s = v;
    return s == "off" || s == "0" ? "" : s;
  }
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/tessel/kernels";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/tessel/kernels";
  return "";
}

std::string KernelCache::keyText(const std::vector<std::string>& command, const std::string& source) {
  std::string key = "tessel kernel cache 1\n";
  if (!command.empty()) key += compilerIdentity(command[0]) + "\n";
  for (size_t i = 1; i < command.size(); ++i)
    if (command[i] == "-o")
      ++i;  // the output path is the build's own
    else if (!command[i].ends_with(".cpp"))
      key += command[i] + "\n";
  return key + "\n" + source;
}

std::string KernelCache::entryBase(const std::string& key) const {
  return dir_ + "/" + support::hash128Hex(key);
}

bool KernelCache::fetch(const std::string& key, const std::string& destination) const {
  if (dir_.empty()) return false;
  const std::string base = entryBase(key);
  std::error_code ec;
  if (!fs::exists(base + ".so", ec) || readFile(base + ".key") != key) return false;
  fs::last_write_time(base + ".so", fs::file_time_type::clock::now(), ec);  // recently used
  fs::remove(destination, ec);
  fs::create_hard_link(base + ".so", destination, ec);
  if (ec) fs::copy_file(base + ".so", destination, fs::copy_options::overwrite_existing, ec);
  return !ec;
}

bool KernelCache::store(const std::string& key, const std::string& library) const {
  return store(std::vector<std::string>{key}, library);
}

bool KernelCache::store(const std::vector<std::string>& keys, const std::string& library) const {
  if (dir_.empty() || keys.empty()) return false;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  // The library is copied in once; the other keys share its file (hard links).
  fs::path from = library;
  bool linked = false;
  for (const std::string& key : keys) {
    const std::string base = entryBase(key);
    // The key first: a library is never found without the text it was built from.
    if (!writeWhole(base + ".key", &key, nullptr) || !writeWhole(base + ".so", nullptr, &from, linked)) return false;
    from = base + ".so";
    linked = true;
  }
  trim();
  return true;
}

void KernelCache::trim() const {
  // Keys that share one library (the kernels of one unit) are hard links to
  // one file: its bytes count once, and are freed when its last key goes.
  struct Entry {
    fs::path so;
    fs::file_time_type used;
    ino_t inode;
  };
  std::vector<Entry> entries;
  std::map<ino_t, std::pair<uint64_t, int>> files;  // inode -> bytes, keys left
  uint64_t total = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    struct stat st {};
    if (e.path().extension() != ".so" || ::stat(e.path().c_str(), &st) != 0) continue;
    std::error_code ignored;
    entries.push_back({e.path(), e.last_write_time(ignored), st.st_ino});
    auto [it, added] = files.emplace(st.st_ino, std::make_pair(uint64_t(st.st_size), 0));
    it->second.second += 1;
    if (added) total += uint64_t(st.st_size);
  }
  if (total <= maxBytes_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  // Down to three quarters, so a full cache is not trimmed on every store.
  for (const Entry& e : entries) {
    if (total <= maxBytes_ / 4 * 3) break;
    fs::path key = e.so;
    key.replace_extension(".key");
    fs::remove(e.so, ec);
    fs::remove(key, ec);
    auto& [bytes, keys] = files[e.inode];
    if (--keys == 0) total -= bytes;
  }
}

}  // namespace tessel::codegen
