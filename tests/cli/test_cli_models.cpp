// Whole models through the CLI: the zoo listed, models inspected, run on the
// user's own data, tuned and run.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <fstream>

#include "cli_test_support.h"
#include "graph/zoo.h"
#include "runtime/numpy_files.h"

using namespace cli_test;

class TestCliModels : public QObject {
  Q_OBJECT

 private slots:
  void modelsListsTheZoo() {
    Run r = runCli({"models", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    bool found = false;
    for (const QJsonValue& m : QJsonDocument::fromJson(r.out.toUtf8()).object()["models"].toArray())
      if (m.toObject()["name"].toString() == "resnet18") {
        found = true;
        QCOMPARE(m.toObject()["params"].toDouble(), 11689512.0);
      }
    QVERIFY(found);
  }

  // The acceptance figures for resnet18 and bert_tiny.
  void inspectResnet18AndBertTiny() {
    const QString dot = scratch().filePath("r18.dot");
    Run r = runCli({"inspect", "resnet18", "--json", "--dot", dot});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    for (const char* f : {"model", "nodes", "params", "flops", "partitions", "tasks"})
      QVERIFY2(j.contains(f), f);
    QCOMPARE(j["params"].toDouble(), 11689512.0);
    QVERIFY(j["flops"].toDouble() > 3.5e9 && j["flops"].toDouble() < 3.7e9);
    QJsonArray tasks = j["tasks"].toArray();
    QVERIFY2(tasks.size() >= 15 && tasks.size() <= 35, qPrintable(QString::number(tasks.size())));
    int weights = 0;
    for (const QJsonValue& t : tasks) {
      for (const char* f : {"key", "ops", "flops", "weight"})
        QVERIFY2(t.toObject().contains(f), f);
      weights += t.toObject()["weight"].toInt();
    }
    QVERIFY(weights > tasks.size());
    QFile f(dot);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QByteArray text = f.readAll();
    QVERIFY(text.startsWith("digraph") && text.contains("subgraph cluster_"));

    Run b = runCli({"inspect", "bert_tiny", "--fusion", "dp", "--json"});
    QVERIFY2(b.code == 0, qPrintable(b.err));
    bool fused = false;
    for (const QJsonValue& p : QJsonDocument::fromJson(b.out.toUtf8()).object()["partitions"].toArray()) {
      QStringList ops;
      for (const QJsonValue& op : p.toObject()["ops"].toArray())
        ops << op.toString();
      int softmax = ops.indexOf("Softmax");
      if (softmax >= 0 && ops.indexOf("MatMul", softmax) > softmax) fused = true;
    }
    QVERIFY2(fused, "no partition fuses attention's softmax with the batch matmul after it");
  }

  // tessel run on a user's NumPy data: the same inputs give the same
  // outputs, --expect judges them, and bad files name what is wrong.
  void runOnTheUsersData() {
    const tessel::graph::Graph g = tessel::graph::makeZooModel("tiny_cnn");
    QCOMPARE(g.inputs.size(), size_t(1));
    tessel::runtime::HostTensor x{g.inputs[0].shape, {}};
    for (int64_t i = 0; i < g.inputs[0].numElements(); ++i)
      x.data.push_back(float(std::sin(0.37 * double(i))));
    const QString inputs = scratch().filePath("x.npz"), outputs = scratch().filePath("y.npz");
    tessel::runtime::writeNpz(inputs.toStdString(), {{g.inputs[0].name, x}});
    Run first = runCli({"run", "tiny_cnn", "--inputs", inputs, "--save-outputs", outputs, "--repeats", "1", "--json"});
    QVERIFY2(first.code == 0, qPrintable(first.err));
    const std::vector<tessel::runtime::NumpyArray> saved = tessel::runtime::readNumpyFile(outputs.toStdString());
    QCOMPARE(saved.size(), g.outputs.size());
    QCOMPARE(saved[0].name, g.outputs[0]);

    // The same data as a lone .npy; the saved outputs as the expectation.
    const QString npy = scratch().filePath("x.npy");
    {
      std::ofstream f(npy.toStdString(), std::ios::binary);
      f << tessel::runtime::formatNpy(x);
    }
    Run again = runCli({"run", "tiny_cnn", "--inputs", npy, "--expect", outputs, "--repeats", "1", "--json"});
    QVERIFY2(again.code == 0, qPrintable(again.err));
    QJsonObject o = QJsonDocument::fromJson(again.out.toUtf8()).object();
    QVERIFY(o["expect_correct"].toBool());
    QVERIFY(o["expect_max_abs_err"].toDouble() <= 1e-6 * o["expect_max_abs_ref"].toDouble());
    QVERIFY(o["expect_max_abs_ref"].toDouble() > 0);

    // An expectation off by 1 % of the largest output is wrong, and says where.
    tessel::runtime::HostTensor off{saved[0].shape, saved[0].floats};
    float largest = 0;
    for (float v : off.data)
      largest = std::max(largest, std::fabs(v));
    off.data[0] += 0.01f * largest;
    const QString wrong = scratch().filePath("wrong.npz");
    tessel::runtime::writeNpz(wrong.toStdString(), {{"arr_0", off}});  // positional, as np.savez(f, y) names it
    Run bad = runCli({"run", "tiny_cnn", "--inputs", inputs, "--expect", wrong, "--repeats", "1"});
    QCOMPARE(bad.code, 1);
    QVERIFY2(bad.out.contains("against " + wrong) && bad.out.contains("WRONG") &&
                 bad.out.contains("'" + QString::fromStdString(g.outputs[0]) + "'"),
             qPrintable(bad.out));

    // Files that do not fit: each message names the file and the problem.
    tessel::runtime::writeNpz(scratch().filePath("named.npz").toStdString(), {{"not_an_input", x}, {"other", x}});
    Run unnamed = runCli({"run", "tiny_cnn", "--inputs", scratch().filePath("named.npz")});
    QCOMPARE(unnamed.code, 1);
    QVERIFY2(unnamed.err.contains("no array for '" + QString::fromStdString(g.inputs[0].name) + "'") &&
                 unnamed.err.contains("'not_an_input'"),
             qPrintable(unnamed.err));
    tessel::runtime::HostTensor flat{{int64_t(x.data.size())}, x.data};
    tessel::runtime::writeNpz(scratch().filePath("flat.npz").toStdString(), {{"arr_0", flat}});
    Run shape = runCli({"run", "tiny_cnn", "--inputs", scratch().filePath("flat.npz")});
    QCOMPARE(shape.code, 1);
    QVERIFY2(shape.err.contains("has shape [" + QString::number(x.data.size()) + "]") &&
                 shape.err.contains("--input-shapes"),
             qPrintable(shape.err));
    Run missing = runCli({"run", "tiny_cnn", "--inputs", scratch().filePath("absent.npz")});
    QCOMPARE(missing.code, 1);
    QVERIFY2(missing.err.contains("absent.npz: no such file"), qPrintable(missing.err));
    Run zooShapes = runCli({"run", "tiny_cnn", "--input-shapes", "1,3,8,8"});
    QCOMPARE(zooShapes.code, 1);
    QVERIFY2(zooShapes.err.contains("fixed input shapes"), qPrintable(zooShapes.err));
  }

  void tuneAndRunASmallModel() {
    const QString db = scratch().filePath("model.db");
    const QStringList tune = {"tune",     "tiny_cnn", "--trials", "20", "--batch", "4",
                              "--search", "random",   "--db",     db,   "--json"};
    Run r = runCli(tune, 300000);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["trials"].toInt(), 20);
    QCOMPARE(j["cache_flush"].toString(), QString("model"));  // the default of model tuning
    QJsonArray tasks = j["tasks"].toArray();
    QCOMPARE(tasks.size(), 5);
    double estimate = 0, share = 0;
    for (const QJsonValue& t : tasks) {
      QVERIFY(t.toObject()["trials"].toInt() >= 4);  // warm-up: every task one round
      estimate += t.toObject()["weight"].toDouble() * t.toObject()["best_ms"].toDouble();
      share += t.toObject()["share"].toDouble();
    }
    QVERIFY(qAbs(estimate - j["estimated_ms"].toDouble()) < 1e-9 * estimate + 1e-12);
    QVERIFY(qAbs(share - 1) < 1e-9);

    Run more = runCli(QStringList{"tune", "tiny_cnn", "--trials", "28", "--batch", "4", "--search", "random", "--db",
                                  db, "--json", "--resume"},
                      300000);
    QVERIFY2(more.code == 0, qPrintable(more.err));
    QJsonObject m = QJsonDocument::fromJson(more.out.toUtf8()).object();
    QVERIFY(m["resumed"].toBool());
    QCOMPARE(m["trials"].toInt(), 28);
    Run stats = runCli({"db", "stats", "--db", db, "--json"});
    QJsonObject s = QJsonDocument::fromJson(stats.out.toUtf8()).object();
    QCOMPARE(s["records"].toInt(), 28);
    QCOMPARE(s["distinct_programs"].toInt(), 28);
    QCOMPARE(s["models"].toInt(), 1);
    QCOMPARE(s["sessions"].toInt(), 1);

    // db sessions: a model session's figure is its end-to-end estimate, as tune printed it.
    Run sessions = runCli({"db", "sessions", "--db", db, "--json"});
    QVERIFY2(sessions.code == 0, qPrintable(sessions.err));
    const QJsonObject session =
        QJsonDocument::fromJson(sessions.out.toUtf8()).object()["sessions"].toArray().at(0).toObject();
    QVERIFY(qAbs(session["estimated_ms"].toDouble() - m["estimated_ms"].toDouble()) <
            1e-9 * m["estimated_ms"].toDouble());
    QVERIFY(session["estimated_ms"].toDouble() > session["best_ms"].toDouble());  // not its fastest task
    Run table = runCli({"db", "sessions", "--db", db});
    QVERIFY2(table.out.contains(QString::number(m["estimated_ms"].toDouble(), 'f', 4) + " e2e"), qPrintable(table.out));

    // db show: a task of the model, its best program and its code.
    const QString key = m["tasks"].toArray().at(0).toObject()["key"].toString();
    Run show = runCli({"db", "show", "--task", key, "--code", "--db", db, "--json"}, 120000);
    QVERIFY2(show.code == 0, qPrintable(show.err));
    const QJsonObject shown = QJsonDocument::fromJson(show.out.toUtf8()).object()["task"].toObject();
    QCOMPARE(shown["model"].toString(), QString("tiny_cnn"));
    QVERIFY(qAbs(shown["best"].toObject()["latency_ms"].toDouble() -
                 m["tasks"].toArray().at(0).toObject()["best_ms"].toDouble()) < 1e-9);
    QVERIFY(shown["best"].toObject()["steps"].isArray());
    const QString code = shown["code"].toString();
    QVERIFY2(code.contains("Schedule: ") && code.contains("tessel_" + key) && code.contains("#pragma omp"),
             qPrintable(code.left(2000)));
    Run unknown = runCli({"db", "show", "--task", "nope_1", "--db", db});
    QCOMPARE(unknown.code, 1);
    QVERIFY2(unknown.err.contains("no task 'nope_1'"), qPrintable(unknown.err));

    Run run = runCli({"run", "tiny_cnn", "--db", db, "--json", "--repeats", "3", "--profile"}, 300000);
    QVERIFY2(run.code == 0, qPrintable(run.err + run.out));
    QJsonObject o = QJsonDocument::fromJson(run.out.toUtf8()).object();
    for (const char* f : {"tessel_ms", "libtorch_ms", "max_abs_err", "correct", "estimate_ms", "tessel_ms_min",
                          "tessel_ms_median", "tessel_ms_max", "libtorch_ms_min", "libtorch_ms_median",
                          "libtorch_ms_max", "disturbed", "contention", "memory", "partitions"})
      QVERIFY2(o.contains(f), f);
    // Both sides' windows were read from /proc/stat; shares are of the whole machine.
    for (const char* side : {"tessel", "libtorch"}) {
      const QJsonObject c = o["contention"].toObject()[side].toObject();
      QVERIFY2(c.contains("others_share") && c.contains("steal_share"), side);
      QVERIFY(c["others_share"].toDouble() >= 0 && c["others_share"].toDouble() <= 1.0);
    }
    QVERIFY(o["correct"].toBool());
    QCOMPARE(o["tasks_tuned"].toInt(), 5);
    QVERIFY(o["tessel_ms"].toDouble() > 0 && o["libtorch_ms"].toDouble() > 0);
    QVERIFY(o["max_abs_err"].toDouble() < 1e-3);
    QVERIFY(o["tessel_ms_min"].toDouble() <= o["tessel_ms_median"].toDouble() &&
            o["tessel_ms_median"].toDouble() <= o["tessel_ms_max"].toDouble());
    QCOMPARE(o["tessel_ms"].toDouble(), o["tessel_ms_median"].toDouble());
    QVERIFY(o["libtorch_ms_min"].toDouble() <= o["libtorch_ms_max"].toDouble());
    // The estimate is the resumed tuning's: sum of weight x best measured latency.
    QVERIFY2(qAbs(o["estimate_ms"].toDouble() - m["estimated_ms"].toDouble()) < 1e-9 * m["estimated_ms"].toDouble(),
             qPrintable(QString("run %1, tune %2").arg(o["estimate_ms"].toDouble()).arg(m["estimated_ms"].toDouble())));
    // Per partition: the kernels' times, each tuned one with its estimate.
    QJsonArray parts = o["partitions"].toArray();
    int tunedSteps = 0;
    for (const QJsonValue& p : parts) {
      const QJsonObject row = p.toObject();
      QVERIFY(row["measured_ms"].toDouble() > 0);
      if (!row.contains("group")) continue;
      ++tunedSteps;
      QVERIFY2(row["estimate_ms"].toDouble() > 0, qPrintable(row["step"].toString()));
      QVERIFY(qAbs(row["ratio"].toDouble() - row["measured_ms"].toDouble() / row["estimate_ms"].toDouble()) < 1e-9);
    }
    QVERIFY(tunedSteps >= 5);
    QJsonObject mem = o["memory"].toObject();
    QVERIFY(mem["arena_bytes"].toDouble() > 0 && mem["arena_bytes"].toDouble() <= mem["unshared_bytes"].toDouble());

    // --compare onednn: the oneDNN executor beside LibTorch, checked like Tessel.
    Run vs = runCli({"run", "tiny_cnn", "--db", db, "--json", "--repeats", "3", "--compare", "onednn"}, 300000);
    QVERIFY2(vs.code == 0, qPrintable(vs.err + vs.out));
    o = QJsonDocument::fromJson(vs.out.toUtf8()).object();
    if (o["onednn_ms"].isNull()) {
      QVERIFY2(o["onednn_note"].toString().contains("no oneDNN"), qPrintable(vs.out));
    } else {
      QVERIFY2(o["onednn_correct"].toBool(), qPrintable(vs.out));
      QVERIFY(o["onednn_max_abs_err"].toDouble() < 1e-3);
      QVERIFY(o["onednn_ms_min"].toDouble() > 0 && o["onednn_ms_min"].toDouble() <= o["onednn_ms_max"].toDouble());
      QCOMPARE(o["onednn_ms"].toDouble(), o["onednn_ms_median"].toDouble());
      QVERIFY(qAbs(o["onednn_speedup"].toDouble() - o["onednn_ms"].toDouble() / o["tessel_ms"].toDouble()) < 1e-9);
      QVERIFY(o["contention"].toObject().contains("onednn"));
    }
    Run badPeer = runCli({"run", "tiny_cnn", "--db", db, "--compare", "tvm"});
    QCOMPARE(badPeer.code, 2);
    QVERIFY2(badPeer.err.contains("unknown peer 'tvm'"), qPrintable(badPeer.err));

    Run ex = runCli({"export", "--db", db, "--model", "tiny_cnn", "--out", scratch().filePath("tiny_export"),
                     "--format", "jsonl", "--json"});
    QVERIFY2(ex.code == 0, qPrintable(ex.err));
    QCOMPARE(QJsonDocument::fromJson(ex.out.toUtf8()).object()["records"].toInt(), 28);

    // The model's kernels (fused subgraphs, rebuilt from the model as tuned).
    const QString kernels = scratch().filePath("tiny_kernels");
    Run k = runCli({"export", "--db", db, "--model", "tiny_cnn", "--out", kernels, "--json"});
    QVERIFY2(k.code == 0, qPrintable(k.err));
    QCOMPARE(QJsonDocument::fromJson(k.out.toUtf8()).object()["kernels"].toArray().size(), 5);
    QVERIFY(QFile::exists(kernels + "/lib/libtessel_kernels.so"));

    // A task stored for an earlier form of the model (its key is no task of the
    // model as prepared now) is skipped with a word, the others exported.
    {
      sqlite3* raw = nullptr;
      QCOMPARE(sqlite3_open_v2(db.toUtf8().constData(), &raw, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
      char* error = nullptr;
      const int rc = sqlite3_exec(
          raw, "UPDATE tasks SET workload_key = workload_key || '_earlier' WHERE id = (SELECT MIN(id) FROM tasks)",
          nullptr, nullptr, &error);
      sqlite3_free(error);
      sqlite3_close(raw);
      QCOMPARE(rc, SQLITE_OK);
    }
    Run stale = runCli({"export", "--db", db, "--model", "tiny_cnn", "--out", scratch().filePath("tiny_stale"),
                        "--json", "--no-compile"});
    QVERIFY2(stale.code == 0, qPrintable(stale.err));
    QVERIFY2(stale.err.contains("_earlier") && stale.err.contains("skipped"), qPrintable(stale.err));
    QCOMPARE(QJsonDocument::fromJson(stale.out.toUtf8()).object()["kernels"].toArray().size(), 4);
  }
};

QTEST_APPLESS_MAIN(TestCliModels)
#include "test_cli_models.moc"
