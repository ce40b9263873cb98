// The folder an export writes, replaced whole or not at all: the export is
// written into a staging folder beside the target (same file system), which
// is then renamed into place. An export interrupted at any point leaves the
// old folder or the new one, never a mix; a staging folder left by a killed
// export carries its owner's process id and is removed by the next export
// beside it.
#pragma once

#include <string>

namespace tessel::exporter {

class StagedFolder {
 public:
  // Checks the target before anything is written: its parent must be a
  // folder, and the target nothing, an empty folder, or (with `replace`,
  // --force) a folder to replace. Throws std::runtime_error naming what is in
  // the way (up to a few of the files an export would replace), ending with
  // `replaceHint` (how this front end replaces a folder: "give --force ...").
  StagedFolder(const std::string& target, bool replace, const std::string& replaceHint);
  ~StagedFolder();  // an export not committed leaves the target as it was
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  // Where the export writes until commit().
  const std::string& path() const { return staging_; }
  // Puts the staged folder in the target's place (the old one, if any, is
  // swapped out in the same rename and then removed).
  void commit();

 private:
  std::string target_, staging_;
  bool committed_ = false;
};

}  // namespace tessel::exporter
