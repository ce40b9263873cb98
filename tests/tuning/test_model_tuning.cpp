// The model-tuning service the CLI and the studio share: sessions created,
// resumed and ended with the right status, one config, cost models kept,
// nothing written before the checks pass. Real tuning of a small zoo model
// into a real SQLite file.
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cost/cost_model_registry.h"
#include "store/cost_model_store.h"
#include "store/database.h"
#include "store/session_store.h"
#include "tessel_test.h"
#include "tuning/model_tuning.h"

using namespace tessel;

namespace {

tuning::TuningConfig smallConfig(int trials) {
  tuning::TuningConfig c;
  c.model = "tiny_cnn";  // 5 tasks
  c.trials = trials;
  c.batch = 2;
  c.search = "random";
  c.costModel = "random";
  c.cacheState = measure::CacheState::Warm;
  c.jobs = 2;
  c.workerPath = TESSEL_WORKER_PATH;
  return c;
}

store::SessionRow sessionOf(const std::string& db, int64_t id) {
  auto d = store::Database::open(db, store::OpenMode::ReadOnly);
  std::optional<store::SessionRow> s = d->sessions().byId(id);
  if (!s) throw std::runtime_error("no session " + std::to_string(id));
  return *s;
}

}  // namespace

class TestModelTuning : public QObject {
  Q_OBJECT

 private slots:
  void newSessionThenResumed() {
    QTemporaryDir dir;
    const std::string db = dir.filePath("t.db").toStdString();
    int64_t id = 0;
    {
      tuning::ModelTuning t(smallConfig(10));
      QCOMPARE(t.tasks().size(), size_t(5));
      t.openSession(db);
      QVERIFY(!t.resumed());
      id = t.sessionId();
      int rounds = 0, lastSessionTrials = 0;
      tuning::TuningEvents e;
      e.onRound = [&](size_t, const search::TuneResult&, double, const tuning::TuningProgress& p) {
        ++rounds;
        QCOMPARE(p.runTrials, p.sessionTrials);  // a new session
        lastSessionTrials = p.sessionTrials;
      };
      const search::ModelTuneResult r = t.run(e);
      QCOMPARE(r.trials, 10);
      QVERIFY(rounds >= 5);
      QCOMPARE(lastSessionTrials, 10);
    }
    store::SessionRow s = sessionOf(db, id);
    QCOMPARE(s.status, std::string("finished"));
    QCOMPARE(s.records, int64_t(10));
    // The config is the service's one struct: every field, the seed included.
    const nlohmann::json config = nlohmann::json::parse(s.config);
    for (const char* field : {"command", "model", "target", "fusion", "trials", "search", "cost_model", "seed", "batch",
                              "population", "cache_flush", "timeout_s", "tasks"})
      QVERIFY2(config.contains(field), field);
    QCOMPARE(config["command"].get<std::string>(), std::string("tune"));
    QCOMPARE(config["tasks"].get<int>(), 5);
    QCOMPARE(config["cache_flush"].get<std::string>(), std::string("off"));

    // It holds the records of cpu's tasks: it goes on for that target only.
    tuning::TuningConfig other = smallConfig(16);
    other.target = tessel::target::parseTarget("cpu -threads=1");
    tuning::ModelTuning elsewhere(other);
    try {
      elsewhere.openSession(db, tuning::kLastSession);
      QFAIL("a cpu session was resumed for cpu -threads=1");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString(e.what()).contains("tuned for target 'cpu', not 'cpu -threads=1'"), e.what());
    }
    QCOMPARE(config["target"].get<std::string>(), std::string("cpu"));

    // The last session goes on to 16 trials: 6 more, counted on top of the 10.
    tuning::ModelTuning more(smallConfig(16));
    more.openSession(db, tuning::kLastSession);
    QVERIFY(more.resumed());
    QCOMPARE(more.sessionId(), id);
    QCOMPARE(more.earlierTrials(), int64_t(10));
    int last = 0, lastRun = 0;
    tuning::TuningEvents e;
    e.onRound = [&](size_t, const search::TuneResult&, double, const tuning::TuningProgress& p) {
      last = p.sessionTrials;
      lastRun = p.runTrials;
    };
    const search::ModelTuneResult result = more.run(e);
    QCOMPARE(last, 16);
    QCOMPARE(lastRun, 6);
    QCOMPARE(sessionOf(db, id).records, int64_t(16));
    // The records went to the database as they came; the result holds none
    // (a long tuning would otherwise keep every one in memory).
    for (const search::TuneResult& task : result.tasks)
      QVERIFY(task.records.empty());
    QCOMPARE(sessionOf(db, id).status, std::string("finished"));
  }

  // An exception in the middle of a run marks the session failed, keeps
  // what was stored, and goes on to the caller.
  void aFailedRunIsMarkedFailed() {
    QTemporaryDir dir;
    const std::string db = dir.filePath("f.db").toStdString();
    tuning::ModelTuning t(smallConfig(10));
    t.openSession(db);
    tuning::TuningEvents e;
    e.onRecords = [](size_t, const std::vector<search::TuneRecord>&) { throw std::runtime_error("disk on fire"); };
    bool threw = false;
    try {
      t.run(e);
    } catch (const std::runtime_error& err) {
      threw = QString(err.what()).contains("disk on fire");
    }
    QVERIFY(threw);
    const store::SessionRow s = sessionOf(db, t.sessionId());
    QCOMPARE(s.status, std::string("failed"));
    QCOMPARE(s.records, int64_t(2));  // the first batch was stored before the callback
  }

  void keepGoingFalseMarksStopped() {
    QTemporaryDir dir;
    const std::string db = dir.filePath("s.db").toStdString();
    tuning::ModelTuning t(smallConfig(10));
    t.openSession(db);
    int asked = 0;
    tuning::TuningEvents e;
    e.keepGoing = [&] { return ++asked <= 2; };
    const search::ModelTuneResult r = t.run(e);
    QVERIFY(r.stopped);
    QCOMPARE(r.trials, 4);
    QCOMPARE(sessionOf(db, t.sessionId()).status, std::string("stopped"));
  }

  // Nothing is written before the checks pass: no file for a budget that
  // cannot give every task a program, no session for an unknown one.
  void checksComeBeforeWrites() {
    QTemporaryDir dir;
    const std::string db = dir.filePath("c.db").toStdString();
    tuning::ModelTuning small(smallConfig(3));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, small.openSession(db));
    QVERIFY(!std::filesystem::exists(db));

    tuning::ModelTuning t(smallConfig(10));
    try {
      t.openSession(db, 42);
      QFAIL("resuming an unknown session was accepted");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString(e.what()).contains("session 42 is not a session of tiny_cnn"), e.what());
    }
    QCOMPARE(store::Database::open(db, store::OpenMode::ReadOnly)->stats().sessions, int64_t(0));

    tuning::TuningConfig bad = smallConfig(10);
    bad.search = "genetic";
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, tuning::ModelTuning{bad});
  }

  // A model the caller prepared already (the studio shows it) is tuned as is.
  void aPreparedModelIsNotPreparedAgain() {
    auto prepared = std::make_shared<const frontend::PreparedModel>(
        frontend::prepareModel("tiny_cnn", "", "dp", tessel::target::Target::host()));
    tuning::ModelTuning t(smallConfig(10), prepared);
    QCOMPARE(&t.model(), prepared.get());
    QCOMPARE(t.tasks().size(), prepared->tasks.size());
  }

  // A guided search keeps its trained cost model in the database.
  void costModelsAreSaved() {
    // XGBoost is optional so that a minimal build (compiler and CMake only, as
    // on the GPU machine) still builds; scripts/setup.sh installs it, so CI runs
    // this. Without it no model has anything to save (random saves nothing).
    if (!cost::findCostModel("xgb")->available)
      TESSEL_SKIP("xgboost",
                  "this build has no XGBoost (libxgboost-dev): the only cost model that saves anything is absent");
    QTemporaryDir dir;
    const std::string db = dir.filePath("m.db").toStdString();
    tuning::TuningConfig c = smallConfig(20);
    c.batch = 4;
    c.search = "evolutionary";
    c.costModel = "xgb";
    c.population = 32;
    tuning::ModelTuning t(c);
    t.openSession(db);
    t.run();
    // One model served every task: it is saved once, for the session, and
    // learned from all its programs.
    const auto saved = store::Database::open(db, store::OpenMode::ReadOnly)->costModels().ofSession(t.sessionId());
    QCOMPARE(saved.size(), size_t(1));
    QCOMPARE(saved[0].taskId, int64_t(0));
    QCOMPARE(saved[0].name, std::string("xgb"));
    QCOMPARE(saved[0].trainedOn, int64_t(20));
    auto loaded = cost::makeCostModel("xgb", 1);
    loaded->load(saved[0].blob);
    QCOMPARE(loaded->predict(t.tasks()[0].task, {{}}).size(), size_t(1));
  }
};

QTEST_GUILESS_MAIN(TestModelTuning)
#include "test_model_tuning.moc"
