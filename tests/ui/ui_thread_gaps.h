// Measures how long the studio's UI thread is ever kept from its event loop.
// A 10 ms timer ticks on the UI thread; the longest gap between two ticks is
// the answer, less the time the thread was runnable but waiting for a CPU
// (the kernel's run-queue wait, /proc/thread-self/schedstat): on a loaded
// two-core machine the scheduler alone can delay a tick past 100 ms, and that
// is the machine, not the studio. Work done on the UI thread and waits on
// locks or I/O still count.
#pragma once

#include <QElapsedTimer>
#include <QFile>
#include <QTimer>
#include <algorithm>

namespace tessel::ui::test {

class UiThreadGaps {
 public:
  UiThreadGaps() {
    QObject::connect(&tick_, &QTimer::timeout, [this] { sample(); });
  }

  void start() {
    clock_.start();
    lastMs_ = 0;
    lastWaitNs_ = runQueueWaitNs();
    tick_.start(10);
  }
  void stop() { tick_.stop(); }

  // Longest gap between ticks, in ms, without the run-queue wait.
  qint64 worstMs() const { return worstMs_; }
  // The same gap as the wall clock saw it, in ms (for the log).
  qint64 worstWallMs() const { return worstWallMs_; }

 private:
  // Nanoseconds this thread spent runnable but not running; 0 where the
  // kernel does not report it (then the wall-clock gap is used as it is).
  static qint64 runQueueWaitNs() {
    QFile f("/proc/thread-self/schedstat");
    if (!f.open(QIODevice::ReadOnly)) return 0;
    const QList<QByteArray> fields = f.readAll().simplified().split(' ');
    return fields.size() >= 2 ? fields[1].toLongLong() : 0;
  }

  void sample() {
    const qint64 now = clock_.elapsed();
    const qint64 wait = runQueueWaitNs();
    const qint64 wall = now - lastMs_;
    worstWallMs_ = std::max(worstWallMs_, wall);
    worstMs_ = std::max(worstMs_, wall - (wait - lastWaitNs_) / 1000000);
    lastMs_ = now;
    lastWaitNs_ = wait;
  }

  QTimer tick_;
  QElapsedTimer clock_;
  qint64 lastMs_ = 0, lastWaitNs_ = 0;
  qint64 worstMs_ = 0, worstWallMs_ = 0;
};

}  // namespace tessel::ui::test
