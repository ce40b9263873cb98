// Blocks SIGPIPE in the calling thread for the object's lifetime, so a write
// to a closed pipe or socket fails with EPIPE instead of killing the process.
// A library must not change process-wide signal dispositions behind the
// application's back, so this masks the signal per thread and consumes one it
// raised itself before the mask is restored.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <ctime>

namespace tessel::support {

class SigpipeBlocker {
 public:
  SigpipeBlocker() {
    sigemptyset(&pipeSet_);
    sigaddset(&pipeSet_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    wasPending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipeSet_, &oldMask_);
  }
  ~SigpipeBlocker() {
    if (gotEpipe_ && !wasPending_) {
      const timespec zero{0, 0};
      while (sigtimedwait(&pipeSet_, nullptr, &zero) == -1 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &oldMask_, nullptr);
  }
  SigpipeBlocker(const SigpipeBlocker&) = delete;
  SigpipeBlocker& operator=(const SigpipeBlocker&) = delete;
  // A write failed with EPIPE: the signal it raised is consumed on the way out.
  void noteEpipe() { gotEpipe_ = true; }

 private:
  sigset_t pipeSet_;
  sigset_t oldMask_;
  bool wasPending_ = false;
  bool gotEpipe_ = false;
};

}  // namespace tessel::support
