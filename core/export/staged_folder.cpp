#include "export/staged_folder.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace tessel::exporter {

namespace fs = std::filesystem;

namespace {

// ".NAME.tessel-export-": the staging folders of target NAME, before the pid.
std::string stagingPrefix(const fs::path& target) {
  return "." + target.filename().string() + ".tessel-export-";
}

// Staging folders beside `target` whose owner process has gone (a killed
// export, or one killed between its swap and the removal of the old folder).
void removeAbandoned(const fs::path& target) {
  const std::string prefix = stagingPrefix(target);
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(target.parent_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::kill(pid_t(std::stol(pid)), 0) == 0 || errno == EPERM) continue;  // its owner still runs
    fs::remove_all(e.path(), ec);
  }
}

// "CMakeLists.txt, include, lib and 3 more": what a replaced folder holds.
std::string someEntries(const fs::path& folder) {
  std::string names;
  size_t count = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) {
    if (++count <= 4) names += (names.empty() ? "" : ", ") + e.path().filename().string();
  }
  if (count > 4) names += " and " + std::to_string(count - 4) + " more";
  return names;
}

}  // namespace

StagedFolder::StagedFolder(const std::string& target, bool replace, const std::string& replaceHint) {
  fs::path t = fs::absolute(target).lexically_normal();
  if (t.filename().empty()) t = t.parent_path();  // "out/"
  target_ = t.string();
  std::error_code ec;
  const fs::path parent = t.parent_path();
  if (!fs::is_directory(parent, ec))
    throw std::runtime_error("cannot export to " + target + ": " + parent.string() +
                             (fs::exists(parent, ec) ? " is not a folder" : " does not exist"));
  const fs::file_status status = fs::symlink_status(t, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status))
      throw std::runtime_error("cannot export to " + target + ": it is a file, not a folder");
    if (!replace && !fs::is_empty(t, ec))
      throw std::runtime_error("cannot export to " + target + ": the folder is not empty (it holds " + someEntries(t) +
                               "); an export replaces the whole folder: " + replaceHint);
  }
  removeAbandoned(t);
  staging_ = (parent / (stagingPrefix(t) + std::to_string(::getpid()))).string();
  fs::remove_all(staging_, ec);
  if (!fs::create_directory(staging_, ec))
    throw std::runtime_error("cannot export to " + target + ": cannot create " + staging_ + ": " + ec.message());
}

StagedFolder::~StagedFolder() {
  std::error_code ec;
  fs::remove_all(staging_, ec);  // after commit(): the old folder, swapped out
}

void StagedFolder::commit() {
  if (committed_) return;
  // An empty folder or none: one rename. A folder with files: both names
  // swapped in one step (Linux's renameat2), then the old one removed.
  if (::rename(staging_.c_str(), target_.c_str()) == 0) {
    committed_ = true;
    return;
  }
  if (errno != ENOTEMPTY && errno != EEXIST)
    throw std::runtime_error("cannot move the export into " + target_ + ": " + std::strerror(errno));
  if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) != 0)
    throw std::runtime_error("cannot replace " + target_ + ": " + std::strerror(errno));
  committed_ = true;
}

}  // namespace tessel::exporter
