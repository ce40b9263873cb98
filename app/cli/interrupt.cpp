#include "interrupt.h"

#include <atomic>
#include <csignal>
#include <memory>

namespace tessel::cli {

namespace {

// Lock-free atomics: safe to store from a signal handler.
std::atomic<int> gSignal{0};
std::shared_ptr<std::atomic<bool>> gFlag;
std::atomic<bool>* gRawFlag = nullptr;
struct sigaction gPreviousInt, gPreviousTerm;

void onSignal(int sig) {
  if (gSignal.load() != 0) {  // the second one: no more waiting
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  gSignal.store(sig);
  if (gRawFlag) gRawFlag->store(true);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  gSignal = 0;
  gFlag = std::make_shared<std::atomic<bool>>(false);
  gRawFlag = gFlag.get();
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &gPreviousInt);
  sigaction(SIGTERM, &sa, &gPreviousTerm);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &gPreviousInt, nullptr);
  sigaction(SIGTERM, &gPreviousTerm, nullptr);
  gRawFlag = nullptr;
}

support::CancelFlag InterruptGuard::flag() const {
  return gFlag;
}

int InterruptGuard::signal() const {
  return gSignal.load();
}

const char* InterruptGuard::signalName() const {
  return signal() == SIGTERM ? "SIGTERM" : "SIGINT";
}

}  // namespace tessel::cli
