#include "progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tessel::cli {

namespace {

constexpr int kBarWidth = 24;
constexpr auto kRedrawEvery = std::chrono::milliseconds(100);

}  // namespace

std::string clockText(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = long(std::lround(seconds));
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  return text;
}

ProgressBar::ProgressBar(int totalTrials, bool wanted)
    : total_(std::max(1, totalTrials)), shown_(wanted && isatty(STDERR_FILENO)) {
  start_ = std::chrono::steady_clock::now();
  lastDraw_ = start_ - kRedrawEvery;
}

ProgressBar::~ProgressBar() {
  finish();
}

void ProgressBar::update(int doneTrials, const std::string& best) {
  if (firstDone_ < 0) firstDone_ = doneTrials;  // a resumed session's earlier trials are not this run's rate
  done_ = doneTrials;
  best_ = best;
  const auto now = std::chrono::steady_clock::now();
  if (now - lastDraw_ < kRedrawEvery && done_ < total_) return;
  lastDraw_ = now;
  draw();
}

void ProgressBar::note(const std::string& line) {
  if (!shown_) return;
  std::fprintf(stderr, "\r\033[K%s\n", line.c_str());
  if (open_) draw();
}

void ProgressBar::finish() {
  if (!shown_ || !open_) return;
  draw();
  std::fputc('\n', stderr);
  open_ = false;
}

void ProgressBar::draw() {
  if (!shown_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int measured = done_ - std::max(0, firstDone_);
  const double rate = elapsed > 0 ? measured / elapsed : 0;
  const double left = rate > 0 ? (total_ - done_) / rate : NAN;
  const int filled = std::clamp(int(double(done_) / total_ * kBarWidth), 0, kBarWidth);
  std::string bar = std::string(size_t(filled), '#') + std::string(size_t(kBarWidth - filled), '.');
  std::fprintf(stderr, "\r\033[K[%s] %d/%d trials  %s elapsed  %.2f trials/s  ETA %s  best %s", bar.c_str(), done_,
               total_, clockText(elapsed).c_str(), rate, clockText(left).c_str(), best_.empty() ? "-" : best_.c_str());
  std::fflush(stderr);
  open_ = true;
}

}  // namespace tessel::cli
