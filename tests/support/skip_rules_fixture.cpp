// A suite for test_skip_rules to run: one case skips for a dependency, one
// for a condition of the machine, one passes only when asked to, and one
// prints the per-function limit its main gave it.
#include <QtTest>

#include "tessel_test.h"

class SkipRulesFixture : public QObject {
  Q_OBJECT

 private slots:
  void needsRedis() { TESSEL_SKIP("redis", "fixture: no Redis here"); }
  void skipsForTheMachine() { QSKIP("fixture: a condition of this machine (skipped on purpose, for test_skip_rules)"); }
  void passesWhenAsked() {
    if (!qEnvironmentVariableIsSet("FIXTURE_PASS"))
      QSKIP("fixture: not asked to pass (skipped on purpose, for test_skip_rules)");
    qInfo("function timeout %s", qgetenv("QTEST_FUNCTION_TIMEOUT").constData());
  }
};

QTEST_APPLESS_MAIN(SkipRulesFixture)
#include "skip_rules_fixture.moc"
