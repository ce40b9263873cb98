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
// cancellation the whole group is killed.
ProcessResult runProcess(const std::vector<std::string>& argv, double timeoutSeconds, const CancelFlag& cancel = {});

// Runs several commands, at most `jobs` at a time; once cancelled, the rest
// are not started (their results say cancelled, not started).
std::vector<ProcessResult> runProcesses(const std::vector<std::vector<std::string>>& commands, int jobs,
                                        double timeoutSeconds, const CancelFlag& cancel = {});

// A fresh directory under $TMPDIR (or /tmp) with the given prefix.
std::string makeTempDir(const std::string& prefix);
void removeTree(const std::string& path);

}  // namespace tessel::support
