// tune-op's tuning service, through real tunings into a real SQLite file:
// the session holds the configuration and every measured program, a resumed
// session goes on to the trials asked, a set cancel flag stops it (marked
// so), and an op that makes no task is refused before any file is written.
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "store/database.h"
#include "store/record_store.h"
#include "store/session_store.h"
#include "support/cancellation.h"
#include "tessel_test.h"
#include "tuning/operator_tuning.h"
#include "tuning/tuning_recorder.h"

using namespace tessel;

namespace {

tuning::OperatorTuningConfig matmulConfig(const std::string& db, int trials) {
  tuning::OperatorTuningConfig c;
  c.op = "matmul";
  c.shape = {32, 32, 32};
  c.options.trials = trials;
  c.options.batchSize = 4;
  c.options.search = "random";
  c.options.seed = 3;
  c.options.measurer.run.workerPath = TESSEL_WORKER_PATH;
  c.options.measurer.build.jobs = 2;
  c.database = db;
  return c;
}

}  // namespace

class TestOperatorTuning : public QObject {
  Q_OBJECT

 private slots:
  void aTuningIsStoredAndResumed() {
    QTemporaryDir dir;
    const std::string db = dir.filePath("t.db").toStdString();
    int64_t session = 0;
    {
      tuning::OperatorTuning t(matmulConfig(db, 8));
      QVERIFY(t.recorder() && !t.recorder()->resumed());
      session = t.recorder()->sessionId();
      const tuning::OperatorTuningResult r = t.run();
      QVERIFY(!r.stopped);
      QCOMPARE(r.tune.trials, 8);
      QVERIFY(r.tune.validTrials > 0);
    }
    auto d = store::Database::open(db, store::OpenMode::ReadOnly);
    QCOMPARE(d->records().ofSession(session).size(), size_t(8));
    const nlohmann::json config = nlohmann::json::parse(d->sessions().byId(session)->config);
    QCOMPARE(config["command"].get<std::string>(), std::string("tune-op"));
    QCOMPARE(config["trials"].get<int>(), 8);
    QCOMPARE(d->sessions().byId(session)->status, std::string("finished"));
    d.reset();

    tuning::OperatorTuningConfig more = matmulConfig(db, 12);
    more.resume = true;
    tuning::OperatorTuning again(more);
    QVERIFY(again.recorder()->resumed());
    QCOMPARE(again.recorder()->sessionId(), session);
    again.run();
    QCOMPARE(store::Database::open(db, store::OpenMode::ReadOnly)->records().ofSession(session).size(), size_t(12));
  }

  void aCancelStopsTheSession() {
    QTemporaryDir dir;
    const std::string db = dir.filePath("t.db").toStdString();
    tuning::OperatorTuningConfig c = matmulConfig(db, 64);
    auto flag = std::make_shared<std::atomic<bool>>(false);
    c.options.cancel = flag;
    c.options.onBatch = [flag](int, double) { flag->store(true); };  // after the first round
    tuning::OperatorTuning t(c);
    const tuning::OperatorTuningResult r = t.run();
    QVERIFY(r.stopped);
    QVERIFY(r.tune.trials < 64);
    QCOMPARE(store::Database::open(db, store::OpenMode::ReadOnly)->sessions().byId(t.recorder()->sessionId())->status,
             std::string("stopped"));
  }

  void anOpThatMakesNoTaskIsRefused() {
    QTemporaryDir dir;
    const std::string db = dir.filePath("t.db").toStdString();
    tuning::OperatorTuningConfig c = matmulConfig(db, 4);
    c.shape = {32, 32};
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, tuning::OperatorTuning{c});
    QVERIFY(!std::filesystem::exists(db));
  }
};

QTEST_GUILESS_MAIN(TestOperatorTuning)
#include "test_operator_tuning.moc"
