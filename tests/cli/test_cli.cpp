// The tessel CLI as a user runs it: a real process, its exit code, stderr
// messages and the JSON it prints.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

namespace {

struct Run {
  int code;
  QString out, err;
};

Run tessel(const QStringList& args, int timeoutMs = 120000) {
  QProcess p;
  p.start(TESSEL_CLI_PATH, args);
  if (!p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished();
    return {-1, {}, "timed out"};
  }
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

}  // namespace

class TestCli : public QObject {
  Q_OBJECT

 private slots:
  void badInputFailsWithAMessage_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown op") << QStringList{"tune-op", "matmull", "--shape", "8,8,8"} << "unknown op 'matmull'";
    QTest::newRow("malformed shape") << QStringList{"tune-op", "matmul", "--shape", "8,x,8"} << "'x' is not an integer";
    QTest::newRow("empty part") << QStringList{"tune-op", "matmul", "--shape", "8,,8"} << "'' is not an integer";
    QTest::newRow("negative shape") << QStringList{"tune-op", "matmul", "--shape", "8,-8,8"} << "is negative";
    QTest::newRow("zero shape") << QStringList{"tune-op", "matmul", "--shape", "8,0,8"} << "dimension 0";
    QTest::newRow("arity") << QStringList{"tune-op", "matmul", "--shape", "8,8"} << "needs 3 values";
    QTest::newRow("unknown flag") << QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--bogus"}
                                  << "unknown option --bogus";
    QTest::newRow("missing value") << QStringList{"tune-op", "matmul", "--shape"} << "--shape needs a value";
    QTest::newRow("missing shape") << QStringList{"tune-op", "matmul"} << "missing --shape";
    QTest::newRow("missing op") << QStringList{"tune-op", "--shape", "8,8,8"} << "missing OP";
    QTest::newRow("bad trials") << QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--trials", "ten"}
                                << "--trials needs an integer";
    QTest::newRow("zero trials") << QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--trials", "0"}
                                 << "must be between 1";
    QTest::newRow("unknown search") << QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--search", "genetic"}
                                    << "--search genetic";
    QTest::newRow("unknown target") << QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--target", "tpu"}
                                    << "unknown target 'tpu'";
    QTest::newRow("unknown command") << QStringList{"tune-ops"} << "unknown command 'tune-ops'";
  }

  void badInputFailsWithAMessage() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    Run r = tessel(args);
    QVERIFY2(r.code > 0, qPrintable(QString("exit code %1").arg(r.code)));
    QVERIFY2(r.err.contains(message), qPrintable("stderr: " + r.err));
    QVERIFY(r.out.isEmpty());
  }

  void helpListsOps() {
    Run r = tessel({"tune-op", "--help"});
    QCOMPARE(r.code, 0);
    for (const char* op : {"matmul", "conv2d", "softmax", "layernorm", "batch_matmul"})
      QVERIFY(r.out.contains(op));
    QCOMPARE(tessel({"--help"}).code, 0);
  }

  void tuneOpPrintsTheContractsJson() {
    Run r =
        tessel({"tune-op", "matmul", "--shape", "32,24,16", "--trials", "6", "--batch", "3", "--json", "--seed", "3"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonParseError pe;
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8(), &pe).object();
    QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(r.out));
    for (const char* f :
         {"op", "shape", "target", "flops", "trials", "valid_trials", "best_ms", "best_gflops", "correct", "curve"})
      QVERIFY2(j.contains(f), f);
    QCOMPARE(j["op"].toString(), QString("matmul"));
    QCOMPARE(j["shape"].toArray().size(), 3);
    QCOMPARE(j["flops"].toDouble(), 2.0 * 32 * 24 * 16);
    QCOMPARE(j["trials"].toInt(), 6);
    QVERIFY(j["valid_trials"].toInt() >= 1);
    QVERIFY(j["correct"].toBool());
    QVERIFY(j["best_ms"].toDouble() > 0);
    QVERIFY(qAbs(j["best_gflops"].toDouble() - j["flops"].toDouble() / j["best_ms"].toDouble() / 1e6) <
            1e-6 * j["best_gflops"].toDouble() + 1e-9);
    QJsonArray curve = j["curve"].toArray();
    QVERIFY(!curve.isEmpty());
    double last = 1e30;
    for (const QJsonValue& v : curve) {  // best so far never gets worse
      QVERIFY(v.toArray()[1].toDouble() <= last);
      last = v.toArray()[1].toDouble();
    }
    QCOMPARE(last, j["best_ms"].toDouble());
  }

  // The default search: evolutionary, guided by the cost model.
  void evolutionarySearchRunsEndToEnd() {
    Run r = tessel(
        {"tune-op", "softmax", "--shape", "8,64", "--trials", "8", "--batch", "4", "--population", "64", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["search"].toString(), QString("evolutionary"));
    QCOMPARE(j["trials"].toInt(), 8);
    QVERIFY(j["correct"].toBool());
    QVERIFY(j["predictions"].toInt() > 64);  // the model scored every generation
  }
};

QTEST_APPLESS_MAIN(TestCli)
#include "test_cli.moc"
