// The knowledge base and the warm start from the command line: built from the
// committed dataset and shown, a tuning started from it (first round only),
// the shipped one found by its class, refusals that name both classes before
// anything is written, --cold and the time budget's usage errors, and a
// --minutes budget that ends a tuning.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <filesystem>

#include "cli_test_support.h"
#include "knowledge/knowledge_base.h"
#include "target/host_cpu.h"
#include "target/target.h"

using namespace cli_test;

namespace {

QJsonObject jsonOf(const Run& r) {
  return QJsonDocument::fromJson(r.out.toUtf8()).object();
}

const QString kDataset = QString(TESSEL_SOURCE_DIR) + "/tests/data/cost-dataset-cpu-zen4.jsonl.gz";

}  // namespace

class TestCliKnowledge : public QObject {
  Q_OBJECT

 private slots:
  // Built from the committed Zen 4 set for this machine's class: every task
  // of its six models, nearly every program with its decisions.
  void buildShowAndStartFromIt() {
    QTemporaryDir dir;
    const QString kb = dir.filePath("kb.tkb");
    Run b = runCli({"knowledge", "build", "--data", kDataset, "--out", kb, "--json"});
    QVERIFY2(b.code == 0, qPrintable(b.err));
    const QJsonObject bj = jsonOf(b);
    QCOMPARE(bj["records"].toInt(), 21008);
    QCOMPARE(bj["tasks"].toInt(), 131);  // 137 tasks of six models, some shared
    QVERIFY(bj["programs"].toInt() >= 131 * 12);
    QVERIFY(bj["with_decisions"].toInt() * 100 >= bj["programs"].toInt() * 98);
    const QString host = QString::fromStdString(tessel::knowledge::targetClass(tessel::target::Target::host()));
    QCOMPARE(bj["target_class"].toString(), host);
    // Measured here, as far as the build knows: this machine's microarchitecture.
    const QString cpu = QString::fromStdString(tessel::target::hostMicroarchitecture());
    QCOMPARE(bj["cpu"].toString(), cpu);

    Run s = runCli({"knowledge", "show", kb, "--json"});
    QVERIFY2(s.code == 0, qPrintable(s.err));
    const QJsonObject sj = jsonOf(s);
    QCOMPARE(sj["tasks"].toArray().size(), 131);
    QCOMPARE(sj["built_from"].toArray().at(0).toString(), QString("cost-dataset-cpu-zen4.jsonl.gz"));
    QCOMPARE(sj["cpu"].toString(), cpu);
    QVERIFY(runCli({"knowledge", "show", kb}).out.contains("131 tasks"));

    // ResNet-18's max pool is stored: the first round replays it.
    const QString db = dir.filePath("t.db");
    Run t = runCli({"tune", "resnet18", "--trials", "0", "--transfer", "1", "--knowledge", kb, "--db", db, "--json",
                    "--search", "random", "--cache-flush", "off"},
                   600000);
    QVERIFY2(t.code == 0, qPrintable(t.err));
    const QJsonObject tj = jsonOf(t);
    QCOMPARE(tj["trials"].toInt(), 18);  // one program of each task
    const QJsonObject w = tj["warm_start"].toObject();
    QVERIFY(w["warm"].toBool());
    QCOMPARE(w["knowledge"].toString(), kb);
    QCOMPARE(w["exact_tasks"].toInt(), 18);
    QVERIFY2(t.err.contains("started from") && t.err.contains("18 seen before"), qPrintable(t.err));
    // The summary says which CPU measured the base, against this one.
    QCOMPARE(w["knowledge_cpu"].toString(), cpu);
    QCOMPARE(w["host_cpu"].toString(), cpu);
    QVERIFY2(t.err.contains("as this CPU is"), qPrintable(t.err));
    const QString session = query(db, "SELECT config FROM sessions");
    QVERIFY2(session.contains("\"knowledge\"") && session.contains("\"warm\":true"), qPrintable(session));
  }

  // One of another class is refused naming both classes, before the database
  // file exists; a damaged one is an error naming the file.
  void knowledgeThatDoesNotFitIsRefused() {
    QTemporaryDir dir;
    const std::string host = tessel::knowledge::targetClass(tessel::target::Target::host());
    const QString other = host == "cpu-sse" ? "cpu -arch=x86-64-v4" : "cpu -arch=x86-64-v2";
    const QString kb = dir.filePath("other.tkb");
    Run b = runCli({"knowledge", "build", "--data", kDataset, "--measured-on", other, "--out", kb});
    QVERIFY2(b.code == 0, qPrintable(b.err));
    const QString db = dir.filePath("t.db");
    Run t = runCli({"tune", "tiny_cnn", "--knowledge", kb, "--db", db});
    QVERIFY(t.code != 0);
    QVERIFY2(
        t.err.contains(QString::fromStdString(host)) && t.err.contains(host == "cpu-sse" ? "cpu-avx512" : "cpu-sse"),
        qPrintable(t.err));
    QVERIFY(!QFile::exists(db));
    const QString damaged = dir.filePath("damaged.tkb");
    QFile f(damaged);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"tessel_knowledge\": 1,");
    f.close();
    Run d = runCli({"tune", "tiny_cnn", "--knowledge", damaged, "--db", db});
    QVERIFY(d.code != 0 && d.code != -2);
    QVERIFY2(d.err.contains(damaged), qPrintable(d.err));
    QVERIFY(!QFile::exists(db));
  }

  // Without --knowledge, a tuning looks for the base of its class where the
  // build (and the package) puts it, and says what it found.
  void theShippedKnowledgeBaseIsFound() {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("TESSEL_DB", scratch().filePath("shipped.db"));
    env.remove("TESSEL_KNOWLEDGE_DIR");
    p.setProcessEnvironment(env);
    p.start(TESSEL_CLI_PATH, {"tune", "tiny_cnn", "--trials", "5", "--batch", "1", "--search", "random", "--no-db",
                              "--json", "--cache-flush", "off"});
    QVERIFY(p.waitForFinished(300000));
    QCOMPARE(p.exitCode(), 0);
    const QJsonObject w = QJsonDocument::fromJson(p.readAllStandardOutput()).object()["warm_start"].toObject();
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY(w["warm"].toBool());
    const std::string cls = tessel::knowledge::targetClass(tessel::target::Target::host());
    // Of the class's shipped bases, the one of this CPU's microarchitecture
    // (else its vendor's, else the default).
    const std::string shipped = tessel::knowledge::chooseKnowledgeBase(TESSEL_SOURCE_DIR "/resources/knowledge", cls,
                                                                       tessel::target::hostMicroarchitecture());
    if (!shipped.empty()) {
      const QString name = QString::fromStdString(std::filesystem::path(shipped).filename().string());
      QVERIFY2(w["knowledge"].toString().endsWith("share/tessel/knowledge/" + name), qPrintable(err));
      QVERIFY2(err.contains(name + ", measured on an "), qPrintable(err));
    } else {
      // This machine's class has none shipped: the database alone, and the message says where it looked.
      QVERIFY(w["knowledge"].isNull());
      QVERIFY2(err.contains(QString::fromStdString("no knowledge base for " + cls)), qPrintable(err));
    }
  }

  void usageErrorsNameTheProblem() {
    Run a = runCli({"tune", "tiny_cnn", "--cold", "--knowledge", "x.tkb"});
    QVERIFY2(a.code == 2 && a.err.contains("--cold"), qPrintable(a.err));
    Run b = runCli({"tune", "tiny_cnn", "--trials", "0", "--cold", "--no-db"});
    QVERIFY2(b.code != 0 && b.err.contains("warm start"), qPrintable(b.err));
    Run c = runCli({"tune", "tiny_cnn", "--minutes", "0"});
    QVERIFY2(c.code == 2 && c.err.contains("--minutes"), qPrintable(c.err));
    Run d = runCli({"tune", "tiny_cnn", "--minutes", "soon"});
    QVERIFY2(d.code == 2 && d.err.contains("--minutes"), qPrintable(d.err));
    Run e = runCli({"tune", "tiny_cnn", "--knowledge", "/nonexistent.tkb"});
    QVERIFY2(e.code == 2 && e.err.contains("/nonexistent.tkb"), qPrintable(e.err));
    Run f = runCli({"knowledge", "build", "--out", "x.tkb"});
    QVERIFY2(f.code == 2 && f.err.contains("--data"), qPrintable(f.err));
    Run h = runCli({"knowledge", "build", "--data", "x.jsonl", "--cpu", "Zen 4", "--out", "x.tkb"});
    QVERIFY2(h.code == 2 && h.err.contains("--cpu 'Zen 4'"), qPrintable(h.err));
    Run g = runCli({"knowledge", "frobnicate"});
    QVERIFY2(g.code == 2 && g.err.contains("build, show"), qPrintable(g.err));
  }

  // --minutes alone: as many trials as fit, and the JSON says the budget ended it.
  void aTimeBudgetEndsTheTuning() {
    QElapsedTimer clock;
    clock.start();
    Run r = runCli({"tune", "tiny_cnn", "--minutes", "0.2", "--batch", "2", "--search", "random", "--no-db", "--json",
                    "--cache-flush", "off"},
                   300000);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject j = jsonOf(r);
    QVERIFY(j["time_up"].toBool());
    QVERIFY(j["trials"].toInt() >= 5);
    QVERIFY(clock.elapsed() < (12 + 60) * 1000);
  }
};

QTEST_GUILESS_MAIN(TestCliKnowledge)
#include "test_cli_knowledge.moc"
