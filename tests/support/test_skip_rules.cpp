// The rules every suite's main follows (tessel_test.h), on a real suite run
// as a process: every case skipped is exit 77 (CTest's "Skipped"); one case
// passed is a pass; TESSEL_REQUIRE turns the skip of a need it names into a
// failure, and "all" any skip; each function gets CTest's limit, not Qt's 300 s.
#include <QProcess>
#include <QtTest>

#include "tessel_test.h"

namespace {

struct Run {
  int exitCode = -1;
  QString output;
};

Run runFixture(const QMap<QString, QString>& env) {
  QProcess p;
  QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
  for (const QString& k : {"TESSEL_REQUIRE", "TESSEL_REQUIRE_GPU", "FIXTURE_PASS", "QTEST_FUNCTION_TIMEOUT"})
    e.remove(k);
  for (auto it = env.begin(); it != env.end(); ++it)
    e.insert(it.key(), it.value());
  p.setProcessEnvironment(e);
  p.setProcessChannelMode(QProcess::MergedChannels);
  p.start(TESSEL_SKIP_FIXTURE, {});
  if (!p.waitForFinished(60000)) return {};
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAll())};
}

}  // namespace

class TestSkipRules : public QObject {
  Q_OBJECT

 private slots:
  void everyCaseSkippedIsASkip() {
    const Run r = runFixture({});
    QVERIFY2(r.exitCode == 77, qPrintable(r.output));
    QVERIFY(r.output.contains("fixture: no Redis here"));
  }

  void oneCasePassedIsAPass() {
    const Run r = runFixture({{"FIXTURE_PASS", "1"}});
    QVERIFY2(r.exitCode == 0, qPrintable(r.output));
  }

  void aRequiredNeedFails() {
    const Run r = runFixture({{"FIXTURE_PASS", "1"}, {"TESSEL_REQUIRE", "gpu,redis"}});
    QVERIFY2(r.exitCode == 1, qPrintable(r.output));
    QVERIFY(r.output.contains("TESSEL_REQUIRE names redis"));
    const Run other = runFixture({{"FIXTURE_PASS", "1"}, {"TESSEL_REQUIRE", "gpu,libtorch"}});
    QVERIFY2(other.exitCode == 0, qPrintable(other.output));
  }

  void requiringAllFailsOnAnySkip() {
    const Run r = runFixture({{"FIXTURE_PASS", "1"}, {"TESSEL_REQUIRE", "all"}});
    QVERIFY2(r.exitCode != 0 && r.exitCode != 77, qPrintable(r.output));
    QVERIFY(r.output.contains("TESSEL_REQUIRE=all"));
  }

  void eachFunctionGetsTheSuitesLimit() {
    const Run r = runFixture({{"FIXTURE_PASS", "1"}});
    QVERIFY2(r.output.contains("function timeout 86400000"), qPrintable(r.output));
  }
};

QTEST_GUILESS_MAIN(TestSkipRules)
#include "test_skip_rules.moc"
