// Ctrl-C (SIGINT) and SIGTERM during a tuning: instead of dying with its
// session left `running`, the command abandons the round in flight (nothing
// of it is recorded), marks the session `stopped`, says how many trials
// were kept and how to resume, and exits 128 + the signal (130 or 143). A
// second signal ends the process at once.
#pragma once

#include "support/cancellation.h"

namespace tessel::cli {

class InterruptGuard {
 public:
  InterruptGuard();   // installs the handlers
  ~InterruptGuard();  // puts the previous ones back
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // Set by the first signal: give it to the tuner as its cancel flag.
  support::CancelFlag flag() const;
  // 0 until a signal came; then SIGINT or SIGTERM.
  int signal() const;
  // The conventional exit status: 128 + signal.
  int exitCode() const { return 128 + signal(); }
  // "SIGINT" or "SIGTERM".
  const char* signalName() const;
};

}  // namespace tessel::cli
