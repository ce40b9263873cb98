// Runs external programs (the compiler) with a time limit, capturing output.
#pragma once

#include <string>
#include <vector>

#include "support/cancellation.h"

namespace tessel::support {

struct ProcessResult {
  int exitCode = -1;  // valid when neither signalled nor timed out
  int signal = 0;
  bool timedOut = false;
  bool cancelled = false;  // killed because `cancel` was set
  bool started = false;
  std::string output;  // stdout and stderr together (truncated to 64 KiB)
  double seconds = 0;
  bool ok() const { return started && !timedOut && signal == 0 && exitCode == 0; }
};

// Runs argv[0] (looked up in PATH) in its own process group; on timeout or
// cancellation the whole group is killed, and so it is when this process
// dies (a guardian process leads the group, see subprocess.cpp). A non-empty
// tmpDir is the command's TMPDIR (a compiler's own temporary files).
ProcessResult runProcess(const std::vector<std::string>& argv, double timeoutSeconds, const CancelFlag& cancel = {},
                         const std::string& tmpDir = {});

// Runs several commands, at most `jobs` at a time; once cancelled, the rest
// are not started (their results say cancelled, not started).
std::vector<ProcessResult> runProcesses(const std::vector<std::vector<std::string>>& commands, int jobs,
                                        double timeoutSeconds, const CancelFlag& cancel = {},
                                        const std::string& tmpDir = {});

// A fresh directory under $TMPDIR (or /tmp): PREFIX-PID-XXXXXX, holding a
// `.owner` file this process keeps locked (flock) until removeTree(). The
// first call of a process also removes the folders of this kind that a
// killed or crashed Tessel left: their lock is free (the kernel drops it with
// its process, in any pid namespace) and older than a few seconds. A folder
// to keep (--keep-files) is made without an owner file: never swept.
std::string makeTempDir(const std::string& prefix, bool keep = false);
// Removes a folder (and drops its owner lock, if makeTempDir made it).
void removeTree(const std::string& path);

}  // namespace tessel::support
