// The tessel CLI's contract as a user runs it: a real process, its exit code,
// stderr messages, help texts and the JSON it prints.
#include <sys/stat.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "cli_test_support.h"
#include "commands.h"
#include "cost/cost_model_registry.h"
#include "cost/learned/learned_models.h"
#include "measure/cuda_driver.h"
#include "target/target.h"

using namespace cli_test;

class TestCli : public QObject {
  Q_OBJECT

 private slots:
  // As the tessel binary does: help texts built here list the same models.
  void initTestCase() { tessel::cost::registerLearnedCostModels(); }

  // One version string: the project's, in every executable.
  void versionIsTheProjects() {
    Run cli = runCli({"--version"});
    QCOMPARE(cli.code, 0);
    QCOMPARE(cli.out.trimmed(), QString("tessel " TESSEL_PROJECT_VERSION));
    QProcess worker;
    worker.start(TESSEL_WORKER_PATH, {"--version"});
    QVERIFY(worker.waitForFinished(30000));
    QCOMPARE(QString::fromUtf8(worker.readAllStandardOutput()).trimmed(),
             QString("tessel-worker " TESSEL_PROJECT_VERSION));
  }

  void badInputFailsWithAMessage_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown op") << QStringList{"tune-op", "matmull", "--shape", "8,8,8"} << "unknown op 'matmull'";
    QTest::newRow("malformed shape") << QStringList{"tune-op", "matmul", "--shape", "8,x,8"} << "'x' is not an integer";
    QTest::newRow("empty part") << QStringList{"tune-op", "matmul", "--shape", "8,,8"} << "'' is not an integer";
    QTest::newRow("negative shape") << QStringList{"tune-op", "matmul", "--shape", "8,-8,8"} << "is negative";
    QTest::newRow("zero shape") << QStringList{"tune-op", "matmul", "--shape", "8,0,8"}
                                << "matmul: N (value 2) must be positive, got 0";
    // Zero is a legal padding, and nothing else is (stride, dilation, kernel).
    QTest::newRow("zero stride") << QStringList{"tune-op", "conv2d", "--shape", "1,4,8,8,4,3,3,0,1"}
                                 << "conv2d: stride (value 8) must be positive, got 0";
    QTest::newRow("zero dilation") << QStringList{"tune-op", "depthwise_conv2d", "--shape", "1,4,8,8,3,3,1,0,0"}
                                   << "depthwise_conv2d: dilation (value 9) must be positive, got 0";
    QTest::newRow("zero pool kernel") << QStringList{"tune-op", "max_pool2d", "--shape", "1,4,8,8,0,1,0"}
                                      << "max_pool2d: kernel (value 5) must be positive, got 0";
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
                                    << "--target: unknown target kind 'tpu' (known: cpu, cuda)";
    QTest::newRow("bad target arch") << QStringList{"tune-op", "matmul",   "--shape",
                                                    "8,8,8",   "--target", "cpu -arch=haswell"}
                                     << "unknown cpu arch 'haswell' (known: native, x86-64, x86-64-v2";
    QTest::newRow("bad target threads") << QStringList{"tune", "tiny_cnn", "--target", "cpu -threads=0x2", "--no-db"}
                                        << "-threads=0x2 is not a number from 0 (every core) to 1024";
    QTest::newRow("unknown command") << QStringList{"tune-ops"} << "unknown command 'tune-ops'";
    QTest::newRow("unknown layout") << QStringList{"tune-op",           "conv2d",   "--shape",
                                                   "1,4,8,8,4,3,3,1,1", "--layout", "nchwc"}
                                    << "unknown layout 'nchwc'";
    QTest::newRow("db: missing file") << QStringList{"db", "stats", "--db", "/nonexistent/t.db"}
                                      << "no such database: /nonexistent/t.db";
    QTest::newRow("db: what") << QStringList{"db", "stat"} << "unknown 'db stat'";
    QTest::newRow("export: no subject") << QStringList{"export", "--out", "x"} << "exactly one of --task";
    QTest::newRow("export: format") << QStringList{"export", "--all", "--out", "x", "--format", "xml"}
                                    << "unknown --format xml";
    QTest::newRow("inspect: unknown model") << QStringList{"inspect", "resnet19"} << "unknown model 'resnet19'";
    QTest::newRow("inspect: missing onnx") << QStringList{"inspect", "/nonexistent/m.onnx"} << "/nonexistent/m.onnx";
    QTest::newRow("inspect: fusion") << QStringList{"inspect", "resnet18", "--fusion", "greedy"}
                                     << "unknown --fusion greedy";
    QTest::newRow("tune: no model") << QStringList{"tune"} << "missing MODEL";
    QTest::newRow("run: bad db") << QStringList{"run", "tiny_cnn", "--db", "/nonexistent/x.db"}
                                 << "no such database: /nonexistent/x.db";
    QTest::newRow("no-db with db") << QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--no-db", "--resume"}
                                   << "--no-db cannot be combined";
    // Limits checked at the edge (these once hung or printed negative FLOPs).
    QTest::newRow("dimension beyond the index")
        << QStringList{"tune-op", "matmul", "--shape", "99999999999,1,1"}
        << "dimension 99999999999 is longer than 2147483647, the most Tessel's kernels index";
    QTest::newRow("overflowing dimension") << QStringList{"tune-op", "matmul", "--shape", "4611686018427387904,2,2"}
                                           << "dimension 4611686018427387904 is longer than 2147483647";
    QTest::newRow("tensor beyond the index") << QStringList{"tune-op", "matmul", "--shape", "65536,65536,2"}
                                             << "[65536, 65536]: 4294967296 elements, more than the 2147483647";
    // Only regular files are models.
    const QString folder = scratch().filePath("folder.onnx"), fifo = scratch().filePath("pipe.onnx");
    const QString ptFolder = scratch().filePath("folder.pt");
    QDir().mkpath(folder);
    QDir().mkpath(ptFolder);
    ::mkfifo(fifo.toUtf8().constData(), 0600);
    QTest::newRow("inspect: a device") << QStringList{"inspect", "/dev/zero"}
                                       << "model '/dev/zero' is a character device, not a regular file";
    QTest::newRow("inspect: a folder") << QStringList{"inspect", folder} << "folder.onnx' is a folder, not a file";
    QTest::newRow("inspect: a folder as .pt")
        << QStringList{"inspect", ptFolder} << "folder.pt' is a folder, not a file";
    QTest::newRow("inspect: a FIFO") << QStringList{"inspect", fifo} << "pipe.onnx' is a FIFO, not a regular file";
  }

  void badInputFailsWithAMessage() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    Run r = runCli(args);
    QVERIFY2(r.code > 0, qPrintable(QString("exit code %1").arg(r.code)));
    QVERIFY2(r.err.contains(message), qPrintable("stderr: " + r.err));
    QVERIFY(r.out.isEmpty());
  }

  // pad 0 is how a 1x1 convolution and an unpadded pool are written: tune-op
  // takes it and tunes them (it once refused every 0 in --shape).
  void padZeroIsTuned() {
    for (const QStringList& shape :
         {QStringList{"conv2d", "1,8,6,6,8,1,1,1,0"}, QStringList{"depthwise_conv2d", "1,4,6,6,3,3,1,0"},
          QStringList{"max_pool2d", "1,4,6,6,2,2,0"}, QStringList{"avg_pool2d", "1,4,6,6,2,2,0"}}) {
      Run r = runCli({"tune-op", shape[0], "--shape", shape[1], "--trials", "2", "--batch", "2", "--no-db", "--json"});
      QVERIFY2(r.code == 0, qPrintable(shape.join(' ') + ": " + r.err));
      const QJsonObject out = QJsonDocument::fromJson(r.out.toUtf8()).object();
      QVERIFY2(out["best_ms"].toDouble() > 0, qPrintable(r.out));
    }
  }

  // On a terminal the progress bar shows trials, elapsed time, rate, ETA and
  // the best so far (on stderr, --json or not); --quiet leaves stderr empty.
  void progressBarOnATerminalQuietOff() {
    // script(1) (bsdutils, installed by scripts/setup.sh) gives the command a terminal.
    QVERIFY2(!QStandardPaths::findExecutable("script").isEmpty(), "script(1) is missing: run scripts/setup.sh");
    QProcess p;
    isolate(p);
    // script(1) gives the command a pseudo-terminal and copies what it writes.
    p.start("script", {"-qec",
                       QString("'%1' tune-op matmul --shape 32,32,32 --trials 16 --batch 8 --search random --no-db "
                               "--json")
                           .arg(TESSEL_CLI_PATH),
                       "/dev/null"});
    QVERIFY(p.waitForFinished(120000));
    const QString shown = QString::fromUtf8(p.readAllStandardOutput());
    QCOMPARE(p.exitCode(), 0);
    for (const char* part : {"16/16 trials", "elapsed", "trials/s", "ETA", "best ", "\r"})
      QVERIFY2(shown.contains(part), qPrintable(QString("no '%1' in: %2").arg(part, shown)));

    Run quiet = runCli({"tune-op", "matmul", "--shape", "32,32,32", "--trials", "8", "--batch", "8", "--search",
                        "random", "--no-db", "--quiet"});
    QCOMPARE(quiet.code, 0);
    QCOMPARE(quiet.err, QString());
  }

  // Without an NVIDIA driver, --target cuda is an error that names what is
  // missing (exit 1), given before anything is written, for every command
  // that tunes; --arch joins --target; run executes on the CPU only.
  void cudaTargetWithoutAGpuSaysWhy() {
    if (tessel::measure::cuda::unavailableReason().empty())
      QSKIP("checks the answer where there is no NVIDIA driver; this machine has one");
    const QString db = scratch().filePath("cuda.db");
    for (const QStringList& args :
         {QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--target", "cuda", "--db", db},
          QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--target", "cuda", "--arch", "sm_90", "--db", db},
          QStringList{"tune", "tiny_cnn", "--target", "cuda -arch=sm_80", "--db", db},
          QStringList{"dataset", "collect", "--models", "tiny_cnn", "--db", db, "--target", "cuda -arch=sm_90"}}) {
      Run r = runCli(args);
      QCOMPARE(r.code, 1);
      QVERIFY2(r.err.contains("--target cuda") && r.err.contains("no NVIDIA driver"), qPrintable(r.err));
      QVERIFY2(!QFile::exists(db), qPrintable(args.join(' ')));
    }
    Run twice = runCli({"tune-op", "matmul", "--shape", "8,8,8", "--target", "cuda -arch=sm_90", "--arch", "sm_80"});
    QCOMPARE(twice.code, 2);
    QVERIFY2(twice.err.contains("both name the arch"), qPrintable(twice.err));
    Run run = runCli({"run", "tiny_cnn", "--target", "cuda", "--arch", "sm_90"});
    QCOMPARE(run.code, 2);
    QVERIFY2(run.err.contains("runs on the CPU only"), qPrintable(run.err));
    // inspect needs no GPU: a cuda target decides the tasks' layout (NCHW).
    Run inspect = runCli({"inspect", "tiny_cnn", "--target", "cuda", "--arch", "sm_90", "--json"});
    QCOMPARE(inspect.code, 0);
    QVERIFY2(inspect.out.contains("\"target\":\"cuda -arch=sm_90\""), qPrintable(inspect.out.left(400)));
  }

  // Every command's --help names every option the command accepts, and
  // shows an example; `tessel --help` lists every command.
  void helpListsEveryOption() {
    Run top = runCli({"--help"});
    QCOMPARE(top.code, 0);
    for (const tessel::cli::Command& c : tessel::cli::commands()) {
      QVERIFY2(top.out.contains("  " + QString::fromStdString(c.name) + " "), qPrintable(top.out));
      const QString help = QString::fromStdString(c.help());
      Run r = runCli({QString::fromStdString(c.name), "--help"});
      QCOMPARE(r.code, 0);
      QVERIFY2(r.out.startsWith(help), c.name.c_str());  // what runs is what the table holds
      QVERIFY2(help.contains("example"), (c.name + " --help has no example").c_str());
      const tessel::cli::OptionSpec spec = c.options();
      for (const auto* set : {&spec.valued, &spec.flags})
        for (const std::string& option : *set)
          if (option != "help")
            QVERIFY2(help.contains(QString("--%1").arg(QString::fromStdString(option))),
                     qPrintable(QString("tessel %1 --help does not list --%2")
                                    .arg(QString::fromStdString(c.name), QString::fromStdString(option))));
    }
  }

  // Help texts list the searches and cost models from their registries.
  void helpListsSearchesAndCostModels() {
    for (const char* command : {"tune", "tune-op"}) {
      Run r = runCli({command, "--help"});
      QCOMPARE(r.code, 0);
      for (const char* name : {"evolutionary (default)", "random:", "anneal:", "--cost-model NAME", "model (default)",
                               "off (default)", "example:"}) {
        if (QString(name) == (QString(command) == "tune" ? "off (default)" : "model (default)")) continue;
        QVERIFY2(r.out.contains(name), qPrintable(QString("%1 --help lacks '%2':\n%3").arg(command, name, r.out)));
      }
    }
  }

  void helpListsOps() {
    Run r = runCli({"tune-op", "--help"});
    QCOMPARE(r.code, 0);
    for (const char* op : {"matmul", "conv2d", "softmax", "layernorm", "batch_matmul"})
      QVERIFY(r.out.contains(op));
    QCOMPARE(runCli({"--help"}).code, 0);
  }

  // A target string: the task is tuned for it (its flags, its one thread) and
  // its records are stored under it, apart from the same op tuned for "cpu"
  // in the same database; the kernels are checked against the naive program.
  void tuneOpForATargetString() {
    const QString db = scratch().filePath("targets.db");
    auto tune = [&](const QString& target) {
      Run r = runCli({"tune-op", "matmul", "--shape", "64,64,64", "--trials", "8", "--target", target, "--db", db,
                      "--json", "--quiet"},
                     300000);
      if (r.code != 0) qWarning("%s", qPrintable(r.err));
      return QJsonDocument::fromJson(r.out.toUtf8()).object();
    };
    const QJsonObject one = tune("cpu -threads=1 -arch=x86-64-v2");
    const QString canonical = "cpu -arch=x86-64-v2 -threads=1";
    QCOMPARE(one["target"].toString(), canonical);
    QCOMPARE(one["trials"].toInt(), 8);
    QVERIFY(one["valid_trials"].toInt() >= 1);
    QVERIFY(one["correct"].toBool());
    for (const QString& error : one["errors"].toObject().keys())
      QVERIFY2(!error.contains("wrong"), qPrintable(error));  // every kernel computed what the naive one does
    const QJsonObject plain = tune("cpu");
    QCOMPARE(plain["target"].toString(), QString("cpu"));
    QCOMPARE(plain["workload_key"].toString(), one["workload_key"].toString());

    // Two tasks of one workload key, each with its own 8 records.
    QCOMPARE(query(db, "SELECT count(*) FROM tasks"), QString("2"));
    auto recordsOf = [&](const QString& target) {
      return query(db, qPrintable("SELECT count(*) FROM records JOIN tasks ON tasks.id = records.task_id JOIN targets "
                                  "ON targets.id = tasks.target_id WHERE targets.name = '" +
                                  target + "'"));
    };
    QCOMPARE(recordsOf(canonical), QString("8"));
    QCOMPARE(recordsOf("cpu"), QString("8"));
    QVERIFY(
        query(db, qPrintable("SELECT config FROM sessions WHERE id = " + QString::number(one["session"].toInteger())))
            .contains(canonical));

    // A bad or unrunnable target is a usage error naming it.
    Run bad = runCli({"tune-op", "matmul", "--shape", "8,8,8", "--target", "cpu -threads=2000", "--no-db"});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("-threads=2000 is not a number from 0 (every core) to 1024"), qPrintable(bad.err));
    if (!tessel::target::parseTarget("cpu -arch=x86-64-v4").runsOnHost()) {
      Run v4 = runCli({"tune-op", "matmul", "--shape", "8,8,8", "--target", "cpu -arch=x86-64-v4", "--no-db"});
      QCOMPARE(v4.code, 2);
      QVERIFY2(v4.err.contains("cannot run x86-64-v4 code"), qPrintable(v4.err));
    }
    Run help = runCli({"tune-op", "--help"});
    QVERIFY(help.out.contains("cpu -arch=x86-64-v2 -threads=1"));
  }

  void tuneOpPrintsTheContractsJson() {
    Run r =
        runCli({"tune-op", "matmul", "--shape", "32,24,16", "--trials", "6", "--batch", "3", "--json", "--seed", "3"});
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
    QVERIFY(!j["exhausted"].toBool());  // a matmul's space holds far more than 6
  }

  // tune-op says when the space ran dry before --trials (see test_tuner).
  void smallSpaceSaysExhausted() {
    Run r = runCli({"tune-op", "relu", "--shape", "1,4", "--trials", "500", "--json", "--no-db"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QVERIFY(j["exhausted"].toBool());
    QVERIFY2(j["trials"].toInt() >= 1 && j["trials"].toInt() < 64, qPrintable(r.out));
    QVERIFY(j["correct"].toBool());
    Run text = runCli({"tune-op", "relu", "--shape", "1,4", "--trials", "500", "--no-db"});
    QVERIFY2(text.out.contains("search space exhausted"), qPrintable(text.out));
  }

  // The default search: evolutionary, guided by the cost model.
  void evolutionarySearchRunsEndToEnd() {
    Run r = runCli(
        {"tune-op", "softmax", "--shape", "8,64", "--trials", "8", "--batch", "4", "--population", "64", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["search"].toString(), QString("evolutionary"));
    QCOMPARE(j["trials"].toInt(), 8);
    QVERIFY(j["correct"].toBool());
    QVERIFY(j["predictions"].toInt() > 64);  // the model scored every generation
  }

  // --trials N measures at most N programs; a budget that cannot give every
  // task a full warm-up round gives each a smaller one; one that cannot give
  // every task a program is refused before anything is written.
  void trialBudget() {
    const QString db = scratch().filePath("budget.db");
    auto tune = [&](const QString& trials) {
      return runCli({"tune", "tiny_cnn", "--trials", trials, "--batch", "4", "--search", "random", "--db", db, "--json",
                     "--cache-flush", "off"},
                    300000);
    };
    Run small = tune("3");
    QCOMPARE(small.code, 2);
    QVERIFY2(small.err.contains("at least 5") && small.err.contains("20 gives each a full warm-up round of 4"),
             qPrintable(small.err));
    QVERIFY(!QFile::exists(db));

    Run r = tune("13");  // 5 tasks: warm-up rounds of 2, then 3 more programs
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["trials"].toInt(), 13);
    QCOMPARE(j["warmup_batch"].toInt(), 2);
    QCOMPARE(j["cache_flush"].toString(), QString("off"));
    QVERIFY(!j["estimated_ms"].isNull());
    int sum = 0;
    for (const QJsonValue& t : j["tasks"].toArray()) {
      QVERIFY(t.toObject()["trials"].toInt() >= 2);
      sum += t.toObject()["trials"].toInt();
    }
    QCOMPARE(sum, 13);
    Run stats = runCli({"db", "stats", "--db", db, "--json"});
    QCOMPARE(QJsonDocument::fromJson(stats.out.toUtf8()).object()["records"].toInt(), 13);

    // Full rounds of 4 would end at 24: the last round is cut to the budget.
    const QString db2 = scratch().filePath("budget2.db");
    Run full = runCli({"tune", "tiny_cnn", "--trials", "22", "--batch", "4", "--search", "random", "--db", db2,
                       "--json", "--cache-flush", "off"},
                      300000);
    QVERIFY2(full.code == 0, qPrintable(full.err));
    QCOMPARE(QJsonDocument::fromJson(full.out.toUtf8()).object()["trials"].toInt(), 22);
    QCOMPARE(QJsonDocument::fromJson(full.out.toUtf8()).object()["warmup_batch"].toInt(), 4);
    Run bad = runCli({"tune", "tiny_cnn", "--cache-flush", "maybe"});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("--cache-flush takes model, on or off, not 'maybe'"), qPrintable(bad.err));
  }

  // tune a small model under the task scheduler, resume it, run it against LibTorch.
  // tessel ops: every op of the registry through every stage, and the
  // table of docs/models.md lists each of them.
  void opsListsEveryStage() {
    Run r = runCli({"ops", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    const QJsonArray ops = j["ops"].toArray();
    QVERIFY(ops.size() >= 70);
    QFile doc(QString(TESSEL_SOURCE_DIR) + "/docs/models.md");
    QVERIFY(doc.open(QIODevice::ReadOnly));
    const QString table = QString::fromUtf8(doc.readAll());
    for (const QJsonValue& v : ops) {
      const QJsonObject op = v.toObject();
      const QString name = op["op"].toString();
      QVERIFY2(op["shape_inference"].toBool() && op["lowering"].toBool(), qPrintable(name));
      QVERIFY2(op["libtorch_reference"].toBool(), qPrintable(name + " has no LibTorch reference"));
      QVERIFY2(op["onnx_min_opset"].toInt() >= 1 && op["onnx_min_opset"].toInt() <= 17, qPrintable(name));
      QVERIFY2(table.contains("| " + name + " |"), qPrintable(name + " is missing from docs/models.md"));
    }
    QVERIFY(j["torchscript_aten_ops"].toArray().contains("_native_multi_head_attention"));
  }
};

QTEST_APPLESS_MAIN(TestCli)
#include "test_cli.moc"
