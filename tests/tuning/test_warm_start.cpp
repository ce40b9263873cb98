// A model tuning's warm start, through real tunings into real SQLite files:
// a task seen before replays its stored programs in its first round, a task of
// the same structure gets them re-fitted (and the worker checks them like any
// other), a database's other model trains the cost model first, --cold and a
// warm start with nothing to transfer tune exactly as before, a knowledge base
// that does not fit is refused, and a time budget ends the tuning.
#include <onnx/onnx_pb.h>

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "cost/cost_model_registry.h"
#include "knowledge/knowledge_base.h"
#include "store/database.h"
#include "store/record_store.h"
#include "target/target.h"
#include "tessel_test.h"
#include "tuning/knowledge_build.h"
#include "tuning/model_tuning.h"

using namespace tessel;

namespace {

tuning::TuningConfig smallConfig(const std::string& model, int trials) {
  tuning::TuningConfig c;
  c.model = model;
  c.trials = trials;
  c.batch = 4;
  c.search = "evolutionary";  // records keep their decisions
  c.costModel = "random";
  c.population = 16;
  c.cacheState = measure::CacheState::Warm;
  c.jobs = 2;
  c.workerPath = TESSEL_WORKER_PATH;
  return c;
}

struct Tuned {
  search::ModelTuneResult result;
  tuning::WarmStartSummary warm;
  int64_t session = 0;
};

Tuned tune(const tuning::TuningConfig& c, const std::string& db) {
  tuning::ModelTuning t(c);
  t.openSession(db);
  Tuned out;
  out.result = t.run();
  out.warm = t.warmStart();
  out.session = t.sessionId();
  return out;
}

// Per task key, the steps of its records in a session, in the order measured.
std::map<std::string, std::vector<std::string>> stepsOf(const std::string& db, int64_t session) {
  auto d = store::Database::open(db, store::OpenMode::ReadOnly);
  std::map<std::string, std::vector<std::string>> out;
  for (const store::RecordRow& r : d->records().ofSession(session))
    out[d->taskById(r.taskId)->key].push_back(r.steps);
  return out;
}

std::string knowledgeOf(const std::vector<std::string>& databases, const std::string& path,
                        knowledge::KnowledgeBase* kb = nullptr) {
  tuning::KnowledgeBuildConfig c;
  c.databases = databases;
  knowledge::KnowledgeBase built = tuning::buildKnowledgeBase(c, nullptr);
  knowledge::writeKnowledgeBase(path, built);
  if (kb) *kb = std::move(built);
  return path;
}

// x [m, k] -> MatMul W [k, n] -> Add b -> Relu: one fused task, whose
// structure is the same at every size.
void writeDenseReluModel(const std::string& path, int64_t m, int64_t k, int64_t n) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  auto* g = model.mutable_graph();
  g->set_name("dense_relu");
  auto value = [](onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : dims)
      t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  value(g->add_input(), "x", {m, k});
  value(g->add_output(), "y", {m, n});
  auto constant = [&](const std::string& name, std::vector<int64_t> dims) {
    auto* c = g->add_initializer();
    c->set_name(name);
    c->set_data_type(onnx::TensorProto_DataType_FLOAT);
    int64_t size = 1;
    for (int64_t d : dims) {
      c->add_dims(d);
      size *= d;
    }
    for (int64_t i = 0; i < size; ++i)
      c->add_float_data(float((i * 37) % 11) * 0.01f - 0.05f);
  };
  constant("W", {k, n});
  constant("b", {n});
  auto node = [&](const char* op, std::vector<std::string> in, const std::string& out) {
    auto* nd = g->add_node();
    nd->set_op_type(op);
    nd->set_name(out + "_node");
    for (const auto& i : in)
      nd->add_input(i);
    nd->add_output(out);
  };
  node("MatMul", {"x", "W"}, "mm");
  node("Add", {"mm", "b"}, "biased");
  node("Relu", {"biased"}, "y");
  std::ofstream f(path, std::ios::binary);
  QVERIFY(model.SerializeToOstream(&f));
}

}  // namespace

class TestWarmStart : public QObject {
  Q_OBJECT

 private slots:
  // A task seen before: its first round measures the knowledge base's
  // programs of it, fastest first, as they were stored.
  void tasksSeenBeforeReplayTheirPrograms() {
    QTemporaryDir dir;
    const std::string first = dir.filePath("first.db").toStdString();
    tuning::TuningConfig cold = smallConfig("tiny_cnn", 40);
    cold.cold = true;
    tune(cold, first);
    knowledge::KnowledgeBase kb;
    const std::string path = knowledgeOf({first}, dir.filePath("kb.tkb").toStdString(), &kb);
    QCOMPARE(kb.library.tasks().size(), size_t(5));

    tuning::TuningConfig warm = smallConfig("tiny_cnn", 0);  // the first round only
    warm.knowledge = path;
    warm.transfer = 2;
    const std::string second = dir.filePath("second.db").toStdString();
    const Tuned t = tune(warm, second);
    QVERIFY(t.warm.warm);
    QCOMPARE(t.warm.knowledge, path);
    QCOMPARE(t.warm.tasks, size_t(5));
    QCOMPARE(t.warm.exactTasks, size_t(5));
    QCOMPARE(t.warm.tasksWithPrograms, size_t(5));
    QVERIFY2(QString::fromStdString(t.warm.text()).contains("5 seen before"), t.warm.text().c_str());
    QCOMPARE(t.result.trials, 10);  // two programs of each of the five tasks
    size_t replayed = 0;
    for (const auto& [key, steps] : stepsOf(second, t.session)) {
      const knowledge::LibraryTask* stored = kb.library.find(key, tessel::target::Target::host());
      QVERIFY(stored);
      std::set<std::string> known;
      for (const knowledge::LibraryProgram& p : stored->programs)
        known.insert(p.steps);
      QCOMPARE(steps.size(), size_t(2));
      // The stored programs first (a task with one valid program fills its
      // round from the search).
      for (size_t i = 0; i < std::min<size_t>(2, known.size()); ++i, ++replayed)
        QVERIFY2(known.count(steps[i]), steps[i].c_str());
    }
    QVERIFY(replayed >= 8);
    for (const search::TuneResult& r : t.result.tasks)
      QVERIFY(r.validTrials > 0);
  }

  // A task never seen gets the programs of the stored task of the same
  // structure, its tiles re-fitted; the worker verifies each.
  void tasksOfTheSameStructureGetTransferredPrograms() {
    QTemporaryDir dir;
    const std::string small = dir.filePath("small.onnx").toStdString();
    const std::string large = dir.filePath("large.onnx").toStdString();
    writeDenseReluModel(small, 8, 32, 48);
    writeDenseReluModel(large, 16, 24, 64);
    const std::string first = dir.filePath("first.db").toStdString();
    tuning::TuningConfig cold = smallConfig(small, 24);
    cold.cold = true;
    tune(cold, first);
    const std::string path = knowledgeOf({first}, dir.filePath("kb.tkb").toStdString());

    tuning::TuningConfig warm = smallConfig(large, 0);
    warm.knowledge = path;
    warm.transfer = 4;
    const std::string second = dir.filePath("second.db").toStdString();
    const Tuned t = tune(warm, second);
    QCOMPARE(t.warm.exactTasks, size_t(0));
    QCOMPARE(t.warm.tasksWithPrograms, t.warm.tasks);
    QCOMPARE(t.warm.similarTasks, size_t(1));
    QVERIFY(t.warm.transferred >= 4);
    // Every transferred program built, ran and matched the naive program.
    auto d = store::Database::open(second, store::OpenMode::ReadOnly);
    const auto records = d->records().ofSession(t.session);
    QCOMPARE(records.size(), size_t(4));
    for (const store::RecordRow& r : records) {
      QVERIFY2(r.ok(), r.errorMessage.c_str());
      QVERIFY(!r.decisions.empty());  // a population can evolve from it
    }
  }

  // The database's records of another model's task of the same structure
  // feed the transfer and train the cost model before the first round.
  void theDatabaseOfAnotherModelCountsToo() {
    if (!cost::findCostModel("xgb")->available)
      TESSEL_SKIP("xgboost", "this build has no XGBoost (libxgboost-dev): no cost model here learns from records");
    QTemporaryDir dir;
    const std::string small = dir.filePath("small.onnx").toStdString();
    const std::string large = dir.filePath("large.onnx").toStdString();
    writeDenseReluModel(small, 8, 32, 48);
    writeDenseReluModel(large, 16, 24, 64);
    const std::string db = dir.filePath("history.db").toStdString();
    tuning::TuningConfig first = smallConfig(small, 12);
    first.cold = true;
    tune(first, db);
    const std::string before = dir.filePath("before.db").toStdString();
    std::filesystem::copy_file(db, before);

    tuning::TuningConfig warm = smallConfig(large, 8);  // no knowledge base: the database alone
    warm.costModel = "xgb";
    const Tuned t = tune(warm, db);
    QVERIFY(t.warm.warm);
    QVERIFY(t.warm.knowledge.empty());
    QCOMPARE(t.warm.historyTasks, size_t(1));
    QCOMPARE(t.warm.historyRecords, size_t(12));
    QCOMPARE(t.warm.similarTasks, size_t(1));
    QVERIFY(t.warm.transferred > 0);
    // The shared model learned the 12 stored records, then the 8 measured.
    QCOMPARE(t.result.tasks.at(0).costModelTrainedOn, size_t(20));

    tuning::TuningConfig coldAgain = warm;
    coldAgain.cold = true;
    const Tuned c = tune(coldAgain, before);
    QVERIFY(!c.warm.warm);
    QCOMPARE(c.warm.historyRecords, size_t(0));
    QCOMPARE(c.result.tasks.at(0).costModelTrainedOn, size_t(8));
  }

  // --cold, and a warm start that finds nothing to transfer, tune exactly as
  // a tuning did before there was a warm start: each task gets the same
  // programs in the same order. (The seed fixes a random search's sequence
  // of each task, but not how many rounds the scheduler gives a task, which
  // follows the timings; and only the first round of a guided search, whose
  // later rounds evolve from the programs measured fastest.)
  void coldTunesAsBefore_data() {
    QTest::addColumn<QString>("search");
    QTest::addColumn<int>("fixedRounds");  // per task; 0: all
    QTest::newRow("random") << "random" << 0;
    QTest::newRow("evolutionary") << "evolutionary" << 1;
  }

  void coldTunesAsBefore() {
    QFETCH(QString, search);
    QFETCH(int, fixedRounds);
    QTemporaryDir dir;
    const std::string seen = dir.filePath("seen.db").toStdString();
    tuning::TuningConfig c = smallConfig("tiny_cnn", 40);
    c.search = search.toStdString();
    c.cold = true;
    const Tuned firstRun = tune(c, seen);
    c.knowledge = knowledgeOf({seen}, dir.filePath("kb.tkb").toStdString());  // ignored: cold
    const std::string a = dir.filePath("a.db").toStdString(), b = dir.filePath("b.db").toStdString();
    const Tuned coldRun = tune(c, a);
    QVERIFY(!coldRun.warm.warm);
    QCOMPARE(coldRun.warm.why, std::string("--cold"));
    tuning::TuningConfig nothing = c;  // warm, but no base and a fresh database
    nothing.cold = false;
    nothing.knowledge.clear();
    const Tuned warmRun = tune(nothing, b);
    QVERIFY(warmRun.warm.warm);
    QCOMPARE(warmRun.warm.transferred, size_t(0));
    // Per task: the programs both measured, in order, agree.
    auto agree = [&](const std::string& x, int64_t sx, const std::string& y, int64_t sy) {
      const auto px = stepsOf(x, sx), py = stepsOf(y, sy);
      QCOMPARE(px.size(), size_t(5));
      QCOMPARE(py.size(), size_t(5));
      for (const auto& [key, steps] : px) {
        const std::vector<std::string>& other = py.at(key);
        size_t n = std::min(steps.size(), other.size());
        QVERIFY(n >= size_t(c.batch));
        if (fixedRounds) n = std::min(n, size_t(fixedRounds * c.batch));
        for (size_t i = 0; i < n; ++i)
          QCOMPARE(other[i], steps[i]);
      }
    };
    agree(a, coldRun.session, b, warmRun.session);
    agree(a, coldRun.session, seen, firstRun.session);

    tuning::TuningConfig zero = smallConfig("tiny_cnn", 0);
    zero.cold = true;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, tuning::ModelTuning{zero});
  }

  // Another class or format is refused naming both, and a damaged file is an
  // error: before any database is created.
  void knowledgeThatDoesNotFitIsRefused() {
    QTemporaryDir dir;
    const std::string host = knowledge::targetClass(target::Target::host());
    knowledge::KnowledgeBase kb;
    kb.info.targetClass = host == "cpu-sse" ? "cpu-avx512" : "cpu-sse";
    const std::string other = dir.filePath("other.tkb").toStdString();
    knowledge::writeKnowledgeBase(other, kb);
    tuning::TuningConfig c = smallConfig("tiny_cnn", 10);
    c.knowledge = other;
    try {
      tuning::ModelTuning t(c);
      QFAIL("a knowledge base of another class was taken");
    } catch (const knowledge::KnowledgeMismatch& e) {
      QVERIFY2(QString(e.what()).contains(QString::fromStdString(kb.info.targetClass)) &&
                   QString(e.what()).contains(QString::fromStdString(host)),
               e.what());
    }
    const std::string damaged = dir.filePath("damaged.tkb").toStdString();
    std::ofstream(damaged) << "{\"tessel_knowledge\": 1, \"target_class\": ";
    c.knowledge = damaged;
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, tuning::ModelTuning{c});
  }

  // A wall-clock budget ends the tuning within about a round of it, with
  // every task given a program.
  void aTimeBudgetEndsTheTuning() {
    QTemporaryDir dir;
    tuning::TuningConfig c = smallConfig("tiny_cnn", tuning::kMaxTrials);
    c.minutes = 0.25;
    QElapsedTimer clock;
    clock.start();
    const Tuned t = tune(c, dir.filePath("t.db").toStdString());
    const double seconds = clock.elapsed() / 1e3;
    QVERIFY(t.result.timeUp);
    QVERIFY2(seconds >= 15 && seconds < 15 + 30, qPrintable(QString::number(seconds)));
    QVERIFY(std::isfinite(t.result.estimatedSeconds));
    for (const search::TuneResult& r : t.result.tasks)
      QVERIFY(r.validTrials > 0);
  }
};

QTEST_GUILESS_MAIN(TestWarmStart)
#include "test_warm_start.moc"
