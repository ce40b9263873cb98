// Cost models through the CLI: a tuning guided by a learned model, and a
// dataset collected, exported, measured again, trained on, evaluated, and a
// tuning started from the trained file.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cmath>

#include "cli_test_support.h"
#include "cost/cost_model_registry.h"

using namespace cli_test;

class TestCliCostModels : public QObject {
  Q_OBJECT

 private slots:
  // The learned models (LibTorch) guide a tuning from the command line; its
  // JSON names the model, and each program carries the model's prediction.
  void tuneOpWithALearnedModel() {
#ifndef TESSEL_HAVE_LEARNED_COST
    TESSEL_SKIP("libtorch", "this build has no LibTorch: the learned cost models are unavailable");
#else
    for (const char* name : {"mlp:", "gat:", "atformer:"})
      QVERIFY2(runCli({"tune-op", "--help"}).out.contains(name), name);
    Run r = runCli({"tune-op", "matmul", "--shape", "32,24,16", "--trials", "8", "--batch", "4", "--json", "--seed",
                    "3", "--cost-model", "atformer"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["trials"].toInt(), 8);
    QVERIFY2(r.out.contains("atformer"), qPrintable(r.out));
#endif
  }

  // The cost-model workflow from the command line: collect a dataset,
  // export it, measure it again, train a model, evaluate it on a held-out model, and start a
  // tuning from the trained file. Mistakes are usage errors that say why.
  void datasetTrainEvalAndStartFromAFile() {
    QTemporaryDir dir;
    const QString db = dir.filePath("set.db"), data = dir.filePath("set.jsonl.gz"), model = dir.filePath("m.tcm");
    Run c = runCli({"dataset", "collect", "--models", "tiny_cnn", "--programs-per-task", "3", "--batch", "3", "--db",
                    db, "--json", "--cache-flush", "off"},
                   300000);
    QVERIFY2(c.code == 0, qPrintable(c.err));
    const QJsonObject cj = QJsonDocument::fromJson(c.out.toUtf8()).object();
    QCOMPARE(cj["tasks"].toInt(), 5);
    QVERIFY(cj["measured"].toInt() >= 12);
    Run e = runCli({"dataset", "export", "--db", db, "--out", data});
    QVERIFY2(e.code == 0 && e.out.contains("records"), qPrintable(e.err));
    // Measured again (once each here), every record is written back.
    const QString again = dir.filePath("again.jsonl");
    Run m = runCli({"dataset", "remeasure", "--data", data, "--out", again, "--repeat", "1", "--batch", "8",
                    "--cache-flush", "off", "--json"},
                   300000);
    QVERIFY2(m.code == 0, qPrintable(m.err));
    const QJsonObject mj = QJsonDocument::fromJson(m.out.toUtf8()).object();
    QCOMPARE(mj["tasks"].toInt(), 5);
    QCOMPARE(mj["programs"].toInt(), cj["records"].toInt());
    QVERIFY(mj["valid"].toInt() > 0);
    Run kept = runCli({"dataset", "remeasure", "--data", data, "--out", again, "--json"});
    QCOMPARE(QJsonDocument::fromJson(kept.out.toUtf8()).object()["kept"].toInt(), 5);
    Run same = runCli({"dataset", "remeasure", "--data", data, "--out", data});
    QVERIFY2(same.code == 2 && same.err.contains("--out must not be --data"), qPrintable(same.err));
    Run absent = runCli({"dataset", "remeasure", "--data", data, "--out", again, "--models", "resnet18"});
    QVERIFY2(absent.code == 2 && absent.err.contains("no records of model 'resnet18'"), qPrintable(absent.err));
    const QString name = tessel::cost::findCostModel("xgb")->available ? "xgb" : "random";
    Run t = runCli({"costmodel", "train", "--model", name, "--data", data, "--out", model, "--quiet"});
    if (name == "random") {
      QCOMPARE(t.code, 1);  // nothing to save
      TESSEL_SKIP("xgboost", "this build has no XGBoost: no trainable model to save");
    }
    QVERIFY2(t.code == 0, qPrintable(t.err));
    Run v = runCli({"costmodel", "eval", "--model", model, "--data", data, "--held-out", "tiny_cnn", "--json"});
    QVERIFY2(v.code == 0, qPrintable(v.err));
    const QJsonObject vj = QJsonDocument::fromJson(v.out.toUtf8()).object();
    QCOMPARE(vj["model"].toString(), name);
    QCOMPARE(vj["tasks"].toInt(), 5);
    QVERIFY(vj["top1"].toDouble() > 0 && vj["top1"].toDouble() <= 1);
    QVERIFY(vj["per_model"].toObject().contains("tiny_cnn"));
    // The per-task picks add up to the top-1 score (a failed pick counts 1000x the best).
    const QJsonArray perTask = vj["per_task"].toArray();
    QCOMPARE(perTask.size(), 5);
    double bestSum = 0, pickedSum = 0;
    for (const QJsonValue& p : perTask) {
      const QJsonObject o = p.toObject();
      const double w = o["weight"].toDouble(), best = o["best_seconds"].toDouble();
      const double picked = o["top1_seconds"].isNull() ? 1e3 * best : o["top1_seconds"].toDouble();
      QVERIFY(best > 0 && picked >= best);
      bestSum += w * best;
      pickedSum += w * picked;
    }
    QVERIFY(std::abs(bestSum / pickedSum - vj["top1"].toDouble()) < 1e-9);
    // --scores: a line per program; each task's highest score is its top-1 pick.
    const QString scores = dir.filePath("scores.tsv");
    Run sc = runCli({"costmodel", "eval", "--model", model, "--data", data, "--held-out", "tiny_cnn", "--scores",
                     scores, "--quiet"});
    QVERIFY2(sc.code == 0, qPrintable(sc.err));
    QFile scoresFile(scores);
    QVERIFY(scoresFile.open(QIODevice::ReadOnly));
    QList<QByteArray> lines = scoresFile.readAll().trimmed().split('\n');
    QCOMPARE(lines.takeFirst(), QByteArray("model\ttask\tprogram\tseconds\tscore"));
    // Per task: the highest score and the seconds of the programs that have it.
    std::map<QString, std::pair<double, std::vector<double>>> firstPick;
    int programs = 0;
    for (const QJsonValue& p : perTask)
      programs += p.toObject()["programs"].toInt();
    QCOMPARE(int(lines.size()), programs);
    for (const QByteArray& line : lines) {
      const QList<QByteArray> f = line.split('\t');
      QCOMPARE(f.size(), 5);
      QCOMPARE(f[0], QByteArray("tiny_cnn"));
      const double seconds = f[3].toDouble(), score = f[4].toDouble();
      auto [it, fresh] = firstPick.try_emplace(QString(f[1]), score, std::vector<double>{seconds});
      if (fresh || score < it->second.first) continue;
      if (score > it->second.first) it->second = {score, {}};
      it->second.second.push_back(seconds);
    }
    QCOMPARE(firstPick.size(), size_t(5));
    for (const QJsonValue& p : perTask) {
      const QJsonObject o = p.toObject();
      if (o["top1_seconds"].isNull()) continue;
      const double picked = o["top1_seconds"].toDouble();
      const std::vector<double>& top = firstPick.at(o["task"].toString()).second;
      QVERIFY(std::ranges::any_of(top, [&](double s) { return std::abs(s - picked) < 1e-9 * picked; }));
    }
    Run noScores = runCli({"costmodel", "eval", "--model", model, "--data", data, "--held-out", "tiny_cnn", "--scores",
                           dir.filePath("absent/scores.tsv")});
    QVERIFY2(noScores.code == 2 && noScores.err.contains("--scores"), qPrintable(noScores.err));
    Run trainScores =
        runCli({"costmodel", "train", "--model", name, "--data", data, "--out", model, "--scores", scores});
    QVERIFY2(trainScores.code == 2 && trainScores.err.contains("--scores applies to eval"),
             qPrintable(trainScores.err));
    // Scored on the labels measured again (--test-data): every task's best is
    // the lowest cost that file holds for it.
    Run w = runCli({"costmodel", "eval", "--model", model, "--data", data, "--test-data", again, "--held-out",
                    "tiny_cnn", "--json"});
    QVERIFY2(w.code == 0, qPrintable(w.err));
    std::map<std::string, double> againBest;
    QFile againFile(again);
    QVERIFY(againFile.open(QIODevice::ReadOnly));
    for (const QByteArray& line : againFile.readAll().split('\n')) {
      const QJsonObject r = QJsonDocument::fromJson(line).object();
      if (r.isEmpty() || r["cost"].isNull()) continue;
      double& best = againBest.try_emplace(r["task"].toString().toStdString(), 1e300).first->second;
      best = std::min(best, r["cost"].toDouble());
    }
    std::vector<double> expected, scoredBest, originalBest;
    for (const auto& [task, best] : againBest)
      expected.push_back(best);
    for (const QJsonValue& p : QJsonDocument::fromJson(w.out.toUtf8()).object()["per_task"].toArray())
      scoredBest.push_back(p.toObject()["best_seconds"].toDouble());
    for (const QJsonValue& p : perTask)
      originalBest.push_back(p.toObject()["best_seconds"].toDouble());
    std::ranges::sort(expected);
    std::ranges::sort(scoredBest);
    std::ranges::sort(originalBest);
    QCOMPARE(scoredBest, expected);
    QVERIFY(scoredBest != originalBest);
    Run noTest =
        runCli({"costmodel", "eval", "--model", model, "--data", data, "--test-data", again, "--held-out", "resnet18"});
    QVERIFY2(noTest.code == 2 && noTest.err.contains("--test-data") && noTest.err.contains("no records of it"),
             qPrintable(noTest.err));
    const QString tuned = dir.filePath("tuned.db");
    Run tune = runCli({"tune-op", "matmul", "--shape", "16,16,16", "--trials", "4", "--batch", "2", "--json",
                       "--cost-model-file", model, "--db", tuned});
    QVERIFY2(tune.code == 0, qPrintable(tune.err));
    QCOMPARE(QJsonDocument::fromJson(tune.out.toUtf8()).object()["cost_model"].toString(), name);
    // The model it started from, fine-tuned on the 4 programs, is kept.
    Run stats = runCli({"db", "stats", "--db", tuned, "--json"});
    QCOMPARE(QJsonDocument::fromJson(stats.out.toUtf8()).object()["cost_models"].toInt(), 1);

    Run bad = runCli({"costmodel", "eval", "--model", model, "--data", data, "--held-out", "resnet18"});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("no records of that model"), qPrintable(bad.err));
    Run notModel = runCli({"tune-op", "matmul", "--shape", "16,16,16", "--cost-model-file", data, "--no-db"});
    QCOMPARE(notModel.code, 2);
    QVERIFY2(notModel.err.contains("not a Tessel cost model file"), qPrintable(notModel.err));
    QCOMPARE(runCli({"dataset", "collect", "--models", "tiny_cnn"}).code, 2);  // no --db
    QCOMPARE(runCli({"costmodel", "fit"}).code, 2);
  }
};

QTEST_APPLESS_MAIN(TestCliCostModels)
#include "test_cli_cost_models.moc"
