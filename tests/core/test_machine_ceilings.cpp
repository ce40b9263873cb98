// The roofline's ceilings: what the CPU says of itself, a kernel's
// compulsory traffic, the attainable throughput under each roof, and the
// bandwidths measured once and kept in the cache file, for this machine only.
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <nlohmann/json.hpp>

#include "measure/machine_ceilings.h"
#include "support/cpu_info.h"
#include "task/search_task.h"
#include "tessel_test.h"

using namespace tessel;

class TestMachineCeilings : public QObject {
  Q_OBJECT

 private slots:
  void cpuDescribesItself() {
    const support::CpuInfo cpu = support::hostCpu();
    QVERIFY(!cpu.model.empty() && cpu.model != "unknown CPU");
    QVERIFY(cpu.threads >= 1);
    QVERIFY2(cpu.maxMHz > 100, qPrintable(QString::number(cpu.maxMHz)));
    QVERIFY(!cpu.vendor.empty());
  }

  // C[32, 24] = A[32, 16] x B[16, 24]: each element of A, B and C once.
  void compulsoryTrafficIsEachTensorOnce() {
    const task::SearchTask t = task::makeOperatorTask("matmul", {32, 24, 16}, target::Target::host());
    QCOMPARE(t.dag.compulsoryBytes(), 4.0 * (32 * 16 + 16 * 24 + 32 * 24));
    QCOMPARE(t.dag.flops(), 2.0 * 32 * 24 * 16);
  }

  void attainableIsUnderTheRightRoof() {
    measure::MachineCeilings m;
    m.peakGflops = 100;
    m.dramGBps = 10;
    m.llcGBps = 50;
    m.llcBytes = 1 << 20;
    QCOMPARE(m.attainableGflops(1, 2e6), 10.0);     // beyond the cache: DRAM's roof
    QCOMPARE(m.attainableGflops(1, 1e5), 50.0);     // in it: the cache's
    QCOMPARE(m.attainableGflops(100, 1e5), 100.0);  // compute-bound: the peak
    m.llcBytes = 0;                                 // cache unknown: DRAM's
    QCOMPARE(m.attainableGflops(1, 1e5), 10.0);
  }

  void measuredOnceAndKeptForThisMachine() {
    target::Target t = target::Target::host();
    t.threads = 1;
    QTemporaryDir dir;
    const std::string file = dir.filePath("tessel/ceilings.json").toStdString();
    const measure::MachineCeilings first = measure::cachedCeilings(t, file);
    QVERIFY(first.peakGflops > 0);
    QVERIFY2(first.dramGBps > 0.1 && first.dramGBps < 1000, qPrintable(QString::number(first.dramGBps)));
    if (first.llcBytes > 0) QVERIFY2(first.llcGBps > first.dramGBps * 0.8, qPrintable(QString::number(first.llcGBps)));
    QCOMPARE(first.threads, 1);
    QVERIFY(QFile::exists(QString::fromStdString(file)));
    // Read back: the same figures, not measured again.
    QElapsedTimer timer;
    timer.start();
    const measure::MachineCeilings again = measure::cachedCeilings(t, file);
    QVERIFY(timer.elapsed() < 50);
    QCOMPARE(again.dramGBps, first.dramGBps);
    QCOMPARE(again.measured, first.measured);
    // Another machine's file (or another thread count): measured again and replaced.
    nlohmann::json other;
    {
      std::ifstream in(file);
      other = nlohmann::json::parse(in);
    }
    other["cpu"] = "another CPU";
    other["dram_GBps"] = 12345.0;
    {
      std::ofstream out(file);
      out << other.dump();
    }
    const measure::MachineCeilings remeasured = measure::cachedCeilings(t, file);
    QVERIFY(remeasured.dramGBps < 1000);
    std::ifstream in(file);
    QCOMPARE(nlohmann::json::parse(in).value("cpu", ""), remeasured.cpu);
    // A damaged file is measured over, never an error.
    {
      std::ofstream out(file);
      out << "{ not json";
    }
    QVERIFY(measure::cachedCeilings(t, file).dramGBps > 0);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, measure::cachedCeilings(target::Target::cuda(), file));
  }
};

QTEST_GUILESS_MAIN(TestMachineCeilings)
#include "test_machine_ceilings.moc"
