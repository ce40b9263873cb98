// The progress of a long command on a terminal: one line on stderr, redrawn
// in place, with the trials done of the total, the time elapsed, trials per
// second, the time left and the best so far. Off when stderr is not a
// terminal (logs and CI keep their plain lines) or with --quiet.
#pragma once

#include <chrono>
#include <string>

namespace tessel::cli {

class ProgressBar {
 public:
  // Shown when `wanted` and stderr is a terminal.
  ProgressBar(int totalTrials, bool wanted);
  ~ProgressBar();
  bool shown() const { return shown_; }
  // Redraws (at most ten times a second, and always when done == total).
  void update(int doneTrials, const std::string& best);
  // A line of its own above the bar.
  void note(const std::string& line);
  // Ends the bar's line (the destructor does it too).
  void finish();

 private:
  void draw();
  int total_, done_ = 0, firstDone_ = -1;
  std::string best_;
  bool shown_, open_ = false;
  std::chrono::steady_clock::time_point start_, lastDraw_;
};

// "1:05", "12:03:09" for a number of seconds.
std::string clockText(double seconds);

}  // namespace tessel::cli
