// The program inspector on a real CPU session: a studio tuning of tiny_cnn
// recorded into a SQLite file, reopened. A click on a point of the scatter,
// on a round of the best-latency curve, a double-click in the tasks table
// and Tuning > Inspect programs each open the program they stand for; the
// inspector's time, score and ranks are those of the stored records; its
// steps, loop nest and code are the stored program's (replayed); its diff
// against the fastest program lists what differs. Bad input is named.
#include <qcustomplot.h>

#include <QAction>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextEdit>
#include <QtTest>
#include <algorithm>
#include <cmath>

#include "schedule/steps.h"
#include "store/database.h"
#include "store/record_store.h"
#include "store/task_rows.h"
#include "studio_fixture.h"
#include "tessel_test.h"
#include "ui/code_view.h"
#include "ui/main_window.h"
#include "ui/plots_panel.h"
#include "ui/program_inspector.h"
#include "ui/tasks_panel.h"

using tessel::ui::MainWindow;
using tessel::ui::PlotsPanel;
using tessel::ui::ProgramInspector;

class TestProgramInspector : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  QString db_;
  qint64 session_ = 0;

  bool openTinyCnn(MainWindow& window) { return tessel::testing::openTinyCnn(window, db_); }

  // The stored records of the session for a task of the window's model, oldest first.
  std::vector<tessel::store::RecordRow> recordsOf(MainWindow& window, int task) {
    auto db = tessel::store::Database::open(db_.toStdString(), tessel::store::OpenMode::ReadOnly);
    const tessel::store::TaskRow row = tessel::store::taskRowOf(window.tasks()[size_t(task)]);
    return db->records().ofTask(db->taskByKey(row.key, row.target)->id, session_);
  }

  // Checks the inspector shows `record` as program `ordinal` of `task`, in full.
  void checkShows(ProgramInspector* inspector, MainWindow& window, int task, int ordinal) {
    QCOMPARE(inspector->current(), ordinal);
    const std::vector<tessel::store::RecordRow> records = recordsOf(window, task);
    QCOMPARE(inspector->listing().programs.size(), records.size());
    QCOMPARE(inspector->table()->rowCount(), int(records.size()));
    const tessel::store::RecordRow& r = records[size_t(ordinal)];
    QCOMPARE(inspector->listing().programs[size_t(ordinal)].record.id, r.id);
    const QString summary = inspector->summary()->text();
    QVERIFY2(summary.contains(QString("program %1 of %2 in session %3 (record %4)")
                                  .arg(ordinal + 1)
                                  .arg(records.size())
                                  .arg(session_)
                                  .arg(r.id)),
             qPrintable(summary));
    if (r.ok()) {
      const QString ms = QString::number(r.medianCost() * 1e3, 'f', r.medianCost() < 1e-3 ? 4 : 3);
      QVERIFY2(summary.contains(QString("%1 ms, the median of %2 repeats").arg(ms).arg(r.costs.size())),
               qPrintable(summary));
      // Its rank by time, counted here from the records.
      const int faster = int(std::count_if(records.begin(), records.end(), [&](const tessel::store::RecordRow& o) {
        return o.ok() && o.medianCost() < r.medianCost();
      }));
      QCOMPARE(inspector->listing().programs[size_t(ordinal)].timeRank, faster + 1);
    }
    if (std::isfinite(r.predicted)) {
      const int higher = int(std::count_if(records.begin(), records.end(), [&](const tessel::store::RecordRow& o) {
        return std::isfinite(o.predicted) && o.predicted > r.predicted;
      }));
      QCOMPARE(inspector->listing().programs[size_t(ordinal)].scoreRank, higher + 1);
    }
    // One line of words per stored step, the loop nest, the code.
    const size_t steps = tessel::schedule::deserializeSteps(r.steps).size();
    QCOMPARE(size_t(inspector->stepLines().size()), steps);
    QCOMPARE(inspector->stepsText()->document()->blockCount(), int(std::max<size_t>(steps, 1)));
    QVERIFY2(inspector->loopNestText()->toPlainText().contains("for "),
             qPrintable(inspector->loopNestText()->toPlainText()));
    QTRY_VERIFY_WITH_TIMEOUT(inspector->code()->isReady(), 60000);
    QVERIFY2(inspector->code()->code().contains("extern \"C\""), qPrintable(inspector->code()->code().left(400)));
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    tessel::testing::isolateStudio(tmp_, 8);
    db_ = tmp_.filePath("inspect.db");
    QString error;
    session_ = tessel::testing::tuneTinyCnn(db_, 48, &error);
    QVERIFY2(session_ > 0, qPrintable(error));
  }

  // A click on a scatter point opens that program.
  void scatterPointOpensItsProgram() {
    MainWindow window;
    QVERIFY(openTinyCnn(window));
    window.resize(1400, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    PlotsPanel* plots = window.plotsPanel();
    plots->costModelTabs()->setCurrentIndex(0);
    plots->replotNow();
    // The trained model's points, else the untrained model's (grey): both are programs.
    QCustomPlot* plot = plots->scatterPlot();
    QCPGraph* scatter = plots->scatterGraph()->dataCount() > 0 ? plots->scatterGraph() : plot->graph(2);
    QVERIFY2(scatter->dataCount() > 0, "the tuning left no scored program in the scatter");
    const QCPGraphData point = *scatter->data()->at(scatter->dataCount() / 2);
    const QPoint pixel(int(std::lround(plot->xAxis->coordToPixel(point.key))),
                       int(std::lround(plot->yAxis->coordToPixel(point.value))));
    const tessel::ui::PickedProgram expected = plots->scatterProgramAt(pixel);
    QVERIFY(expected.valid());
    QSignalSpy picked(plots, &PlotsPanel::programPicked);
    QTest::mouseClick(plot, Qt::LeftButton, {}, pixel);
    QCOMPARE(picked.count(), 1);
    QCOMPARE(picked.at(0).at(0).toInt(), expected.task);
    QCOMPARE(picked.at(0).at(1).toInt(), expected.ordinal);
    auto* inspector = window.findChild<ProgramInspector*>("programInspector");
    QVERIFY(inspector && inspector->isVisible());
    checkShows(inspector, window, expected.task, expected.ordinal);
    QCOMPARE(window.selectedTask(), expected.task);
    // A point of the scatter is a scored, valid program, grey if an untrained model scored it.
    const tessel::store::RecordRow& r = inspector->listing().programs[size_t(expected.ordinal)].record;
    QVERIFY(std::isfinite(r.predicted) && r.ok());
    QCOMPARE(r.scoredUntrained(), scatter != plots->scatterGraph());
    // A drag is not a click: nothing is picked.
    QTest::mousePress(plot, Qt::LeftButton, {}, pixel);
    QTest::mouseRelease(plot, Qt::LeftButton, {}, pixel + QPoint(30, 0));
    QCOMPARE(picked.count(), 1);
  }

  // A round of the best-latency curve opens the best program after it.
  void bestCurveOpensTheBestProgramSoFar() {
    MainWindow window;
    QVERIFY(openTinyCnn(window));
    window.resize(1400, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const int task = 0;
    window.selectTask(task);
    PlotsPanel* plots = window.plotsPanel();
    plots->replotNow();
    QCustomPlot* plot = plots->bestPlot();
    QCOMPARE(plot->graphCount(), 1);
    const QCPGraphData round = *plot->graph(0)->data()->at(0);  // the first round
    const QPoint pixel(int(std::lround(plot->xAxis->coordToPixel(round.key))),
                       int(std::lround(plot->yAxis->coordToPixel(round.value))));
    QSignalSpy picked(plots, &PlotsPanel::programPicked);
    QTest::mouseClick(plot, Qt::LeftButton, {}, pixel);
    QCOMPARE(picked.count(), 1);
    const int ordinal = picked.at(0).at(1).toInt();
    // The fastest of the task's first round.key programs, from the records.
    const std::vector<tessel::store::RecordRow> records = recordsOf(window, task);
    int best = -1;
    for (int i = 0; i < int(round.key) && i < int(records.size()); ++i)
      if (records[size_t(i)].ok() && (best < 0 || records[size_t(i)].medianCost() < records[size_t(best)].medianCost()))
        best = i;
    QCOMPARE(ordinal, best);
    QVERIFY(std::abs(records[size_t(best)].medianCost() * 1e3 - round.value) < 1e-9);
    auto* inspector = window.findChild<ProgramInspector*>("programInspector");
    QVERIFY(inspector);
    checkShows(inspector, window, task, ordinal);
  }

  // The tasks table (double-click) and Tuning > Inspect programs open the
  // task's fastest program; another program's steps are diffed against it.
  void tasksTableOpensTheFastestAndDiffs() {
    MainWindow window;
    QVERIFY(openTinyCnn(window));
    QTableView* table = window.tasksPanel()->view();
    const QModelIndex row = table->model()->index(1, 0);
    table->setCurrentIndex(row);
    QSignalSpy requested(window.tasksPanel(), &tessel::ui::TasksPanel::programsRequested);
    emit table->doubleClicked(row);
    QCOMPARE(requested.count(), 1);
    auto* inspector = window.findChild<ProgramInspector*>("programInspector");
    QVERIFY(inspector);
    const int selected = requested.at(0).at(0).toInt();
    QCOMPARE(window.selectedTask(), selected);
    const tessel::store::ProgramListing& listing = inspector->listing();
    QVERIFY(listing.fastest >= 0);
    checkShows(inspector, window, selected, listing.fastest);
    QVERIFY(inspector->diff().empty());
    QVERIFY(inspector->diffText()->toPlainText().contains("This is the fastest program"));

    // Another valid program: its diff against the fastest.
    int other = -1;
    for (const tessel::store::ListedProgram& p : listing.programs)
      if (p.ordinal != listing.fastest && p.record.ok() &&
          p.record.steps != listing.programs[size_t(listing.fastest)].record.steps)
        other = p.ordinal;
    QVERIFY(other >= 0);
    QVERIFY(inspector->showProgram(other));
    checkShows(inspector, window, selected, other);
    const auto& diff = inspector->diff();
    QVERIFY(tessel::support::changedLines(diff) > 0);
    // Its "+" and kept lines are this program's steps, in order; "-" and kept ones the fastest's.
    QStringList mine;
    for (const tessel::support::DiffLine& d : diff)
      if (d.kind != tessel::support::DiffLine::Removed) mine << QString::fromStdString(d.text);
    QCOMPARE(mine, inspector->stepLines());
    QVERIFY(inspector->diffText()->toPlainText().contains(QString("+ program %1 (this one)").arg(other + 1)));
    // Choosing a row of the table shows that program.
    QSignalSpy shown(inspector, &ProgramInspector::programShown);
    for (int r = 0; r < inspector->table()->rowCount(); ++r)
      if (inspector->table()->item(r, ProgramInspector::Number)->text() == QString::number(listing.fastest + 1))
        inspector->table()->setCurrentCell(r, ProgramInspector::Median);
    QCOMPARE(shown.count(), 1);
    QCOMPARE(inspector->current(), listing.fastest);

    // Tuning > Inspect programs: the selected task's fastest.
    window.selectTask(0);
    window.findChild<QAction*>("actionInspect")->trigger();
    QCOMPARE(inspector->listing().programs.size(), recordsOf(window, 0).size());
    QCOMPARE(inspector->current(), inspector->listing().fastest);
  }

  // Bad input is named; damaged steps are said to be so, nothing crashes.
  void badInputIsNamed() {
    {
      MainWindow window;
      window.setPersistent(false);
      QSignalSpy ready(&window, &MainWindow::modelReady);
      window.setModelPath("tiny_cnn");
      QVERIFY(ready.wait(60000));
      QVERIFY(window.setDatabasePath(tmp_.filePath("empty.db")));
      QVERIFY(!window.inspectProgram(0));  // no session shown
      auto* box = window.findChild<QMessageBox*>("errorDialog");
      QVERIFY(box);
      QVERIFY2(box->text().contains("no program of"), qPrintable(box->text()));
    }
    MainWindow window;
    QVERIFY(openTinyCnn(window));
    const tessel::task::SearchTask task = window.tasks()[0];
    ProgramInspector inspector;
    QVERIFY(!inspector.inspect(tmp_.filePath("missing/none.db"), session_, task, "t0"));
    QVERIFY2(inspector.error().contains("none.db"), qPrintable(inspector.error()));
    QVERIFY(!inspector.inspect(db_, session_ + 100, task, "t0"));
    QVERIFY2(inspector.error().contains("has measured no program of t0"), qPrintable(inspector.error()));

    // A record whose steps do not replay on the task (a damaged file).
    const QString damaged = tmp_.filePath("damaged.db");
    QVERIFY(QFile::copy(db_, damaged));
    {
      auto db = tessel::store::Database::open(damaged.toStdString(), tessel::store::OpenMode::ReadWrite);
      tessel::store::RecordRow r = recordsOf(window, 0).back();
      r.steps = R"([["SP",99,0,[2]]])";
      db->records().add({r});
    }
    QVERIFY(inspector.inspect(damaged, session_, task, "t0", int(recordsOf(window, 0).size())));
    QVERIFY2(inspector.stepsText()->toPlainText().contains("do not replay"),
             qPrintable(inspector.stepsText()->toPlainText()));
    QVERIFY(inspector.stepLines().isEmpty());
  }

  // tessel-studio --reopen S --inspect TASK[:PROGRAM] --screenshot: the inspector grabbed.
  void commandLineGrabsTheInspector() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("XDG_CONFIG_HOME", tmp_.filePath("child-config"));
    QProcess studio;
    studio.setProcessEnvironment(env);
    const QString png = tmp_.filePath("inspect.png");
    const QString session = QString::number(session_);
    studio.start(TESSEL_STUDIO_EXE, {"--db", db_, "--reopen", session, "--inspect", "1:2", "--screenshot", png});
    QVERIFY(studio.waitForFinished(120000));
    QVERIFY2(studio.exitCode() == 0, studio.readAllStandardError().constData());
    QImage image;
    QVERIFY(image.load(png, "PNG"));
    QVERIFY(image.width() >= 800 && image.height() >= 500);  // the inspector, not an empty grab
    // A task the session does not have: named, exit 1.
    studio.start(TESSEL_STUDIO_EXE, {"--db", db_, "--reopen", session, "--inspect", "99", "--screenshot", png});
    QVERIFY(studio.waitForFinished(120000));
    QCOMPARE(studio.exitCode(), 1);
    QVERIFY2(studio.readAllStandardError().contains("has no task 99"), "");
    for (const QStringList& bad :
         {QStringList{"--reopen", session, "--inspect", "0"}, QStringList{"--reopen", session, "--inspect", "1:x"},
          QStringList{"tiny_cnn", "--inspect", "1"}}) {
      studio.start(TESSEL_STUDIO_EXE, QStringList{"--db", db_} + bad + QStringList{"--screenshot", png});
      QVERIFY(studio.waitForFinished(60000));
      QVERIFY(studio.exitCode() != 0);
      QVERIFY2(studio.readAllStandardError().contains("--inspect needs TASK[:PROGRAM]"), qPrintable(bad.join(' ')));
    }
  }
};

QTEST_MAIN(TestProgramInspector)
#include "test_program_inspector.moc"
