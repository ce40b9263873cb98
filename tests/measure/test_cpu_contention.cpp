// Qt Test suite of the contention check that flags disturbed timings: a real
// busy process beside us must show as others' CPU time; our own busy threads
// must not.
#include <sys/wait.h>
#include <unistd.h>

#include <QTest>
#include <chrono>
#include <thread>
#include <vector>

#include "support/cpu_contention.h"
#include "tessel_test.h"

using namespace tessel::support;

namespace {

void spinFor(std::chrono::milliseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  volatile unsigned long x = 0;
  while (std::chrono::steady_clock::now() < end)
    x = x + 1;
}

}  // namespace

class TestCpuContention : public QObject {
  Q_OBJECT
 private slots:
  void anotherProcessIsCounted() {
    const CpuSample before = sampleCpu();
    QVERIFY(before.valid);
    const pid_t child = fork();
    QVERIFY(child >= 0);
    if (child == 0) {
      spinFor(std::chrono::milliseconds(800));
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    const Contention c = contentionBetween(before, sampleCpu());
    QVERIFY(c.known);
    // One spinning process of N CPUs is 1/N of the window.
    const double expected = 1.0 / double(sysconf(_SC_NPROCESSORS_ONLN));
    QVERIFY2(c.othersShare > 0.6 * expected,
             qPrintable(QString("others' share %1, expected about %2").arg(c.othersShare).arg(expected)));
    QVERIFY(describeContention(c).find("other processes used") != std::string::npos);
  }

  void ourOwnThreadsAreNot() {
    const CpuSample before = sampleCpu();
    std::vector<std::thread> team;
    for (long i = 0; i < sysconf(_SC_NPROCESSORS_ONLN); ++i)
      team.emplace_back([] { spinFor(std::chrono::milliseconds(800)); });
    for (std::thread& t : team)
      t.join();
    const Contention c = contentionBetween(before, sampleCpu());
    QVERIFY(c.known);
    // Every CPU was ours, so counting our own time as others' would give about
    // 1. Well below that even if a neighbour took some CPU meanwhile (the
    // test runs alone under CTest, but a CI host may not be quiet).
    QVERIFY2(c.othersShare < 0.6, qPrintable(QString("others' share %1").arg(c.othersShare)));
  }

  void stealIsNamed() {
    Contention c;
    c.known = true;
    c.stealShare = 0.2;
    QCOMPARE(QString::fromStdString(describeContention(c)), QString("the hypervisor stole 20 % of the CPUs' time"));
    c.stealShare = 0.01;
    QVERIFY(describeContention(c).empty());
    QVERIFY(describeContention(Contention{}).empty());  // unknown is not disturbed
  }
};

QTEST_GUILESS_MAIN(TestCpuContention)
#include "test_cpu_contention.moc"
