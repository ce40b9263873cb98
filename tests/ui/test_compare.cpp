// Two sessions compared in the studio: a real tuning of tiny_cnn by the
// studio (A), and B, the same records stored again as another session with
// one task twice as slow (written with the store into the same SQLite file).
// The comparison names that task first, marks it, and colours its
// partitions in the graph; the same session read from a copy of the file
// compares equal; the sessions dialog's Compare... opens it, and so does
// tessel-studio --compare A,B (grabbed with --screenshot).
#include <qcustomplot.h>

#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "store/database.h"
#include "store/record_store.h"
#include "store/session_history.h"
#include "store/session_store.h"
#include "studio_fixture.h"
#include "tessel_test.h"
#include "ui/compare_dialog.h"
#include "ui/graph_view.h"
#include "ui/main_window.h"
#include "ui/sessions_dialog.h"

using tessel::ui::CompareDialog;
using tessel::ui::GraphView;
using tessel::ui::MainWindow;

class TestCompare : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  QString db_;
  qint64 a_ = 0, b_ = 0;
  std::string slowerKey_;  // the task B measured twice as slow

  bool openTinyCnn(MainWindow& window) { return tessel::testing::openTinyCnn(window, db_); }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    tessel::testing::isolateStudio(tmp_, 8);  // a round for each of the five tasks
    db_ = tmp_.filePath("compare.db");
    QString error;
    a_ = tessel::testing::tuneTinyCnn(db_, 40, &error);
    QVERIFY2(a_ > 0, qPrintable(error));
    // B: A's records again, one task's times doubled.
    auto db = tessel::store::Database::open(db_.toStdString(), tessel::store::OpenMode::ReadWrite);
    const tessel::store::SessionHistory a = tessel::store::loadSessionHistory(*db, a_);
    QCOMPARE(a.tasks.size(), size_t(5));
    const int64_t slower = a.tasks[0].task.id;
    slowerKey_ = a.tasks[0].task.key;
    b_ = db->sessions().start("model", 0, a.session.modelId, a.session.config, a.session.trialsTarget);
    std::vector<tessel::store::RecordRow> records = db->records().ofSession(a_);
    for (tessel::store::RecordRow& r : records) {
      r.sessionId = b_;
      if (r.taskId == slower)
        for (double& c : r.costs)
          c *= 2;
    }
    db->records().add(records);
    QVERIFY(QFile::copy(db_, tmp_.filePath("copy.db")));
  }

  void comparesTaskByTaskAndColoursTheGraph() {
    MainWindow window;
    QVERIFY(openTinyCnn(window));
    CompareDialog* dialog = window.showCompare(a_, b_);
    QSignalSpy compared(dialog, &CompareDialog::compared);
    QVERIFY(compared.wait(60000));
    QCOMPARE(dialog->session(CompareDialog::A), a_);
    QCOMPARE(dialog->session(CompareDialog::B), b_);
    const tessel::store::SessionComparison& c = dialog->comparison();
    QCOMPARE(c.tasks.size(), size_t(5));
    QCOMPARE(c.tasks[0].task.key, slowerKey_);  // the one task that differs comes first
    QVERIFY(std::abs(c.tasks[0].ratio() - 2) < 1e-9);
    for (size_t i = 1; i < c.tasks.size(); ++i)
      QVERIFY(std::abs(c.tasks[i].ratio() - 1) < 1e-9);
    QVERIFY(std::abs(c.objectiveB - c.objectiveA - c.tasks[0].weightedDifference()) < 1e-12);
    QCOMPARE(dialog->table()->rowCount(), 5);
    QCOMPARE(dialog->table()->item(0, CompareDialog::Ratio)->text(), QString("2.000"));
    QCOMPARE(dialog->markedRows(), 1);
    QVERIFY2(dialog->summary()->text().contains(QString("(%1x A)").arg(c.objectiveB / c.objectiveA, 0, 'f', 3)),
             qPrintable(dialog->summary()->text()));

    // The graph: heat by the difference, all of it on the slower task.
    GraphView* graph = window.graphView();
    QCOMPARE(graph->heatMode(), GraphView::HeatMode::Comparison);
    const auto& tasks = window.preparedModel()->tasks;
    for (int t = 0; t < int(tasks.size()); ++t)
      QCOMPARE(graph->comparisonShare(t), tasks[size_t(t)].key == slowerKey_ ? 1.0 : 0.0);

    // Curves: one per session, against trials, then wall time.
    QCOMPARE(dialog->plot()->graphCount(), 2);
    QVERIFY(dialog->plot()->graph(0)->dataCount() > 0 && dialog->plot()->graph(1)->dataCount() > 0);
    QCOMPARE(dialog->plot()->xAxis->label(), QString("trials"));
    dialog->setAxis(CompareDialog::WallTime);
    QCOMPARE(dialog->plot()->xAxis->label(), QString("wall time (s)"));
    QVERIFY(dialog->plot()->graph(0)->dataCount() > 0);

    // B from another database: session A read from a copy of the file compares equal.
    dialog->setDatabase(CompareDialog::B, tmp_.filePath("copy.db"), a_);
    QVERIFY(compared.wait(60000));
    QCOMPARE(dialog->session(CompareDialog::B), a_);
    for (const tessel::store::TaskComparison& t : dialog->comparison().tasks)
      QCOMPARE(t.ratio(), 1.0);
    QCOMPARE(dialog->markedRows(), 0);
    QVERIFY(dialog->summary()->text().contains("(1.000x A)"));

    // A database that cannot be read: the dialog says so.
    QSignalSpy failed(dialog, &CompareDialog::failed);
    dialog->setDatabase(CompareDialog::B, tmp_.filePath("missing/none.db"));
    QVERIFY(failed.wait(30000));
    QVERIFY2(dialog->summary()->text().contains("none.db"), qPrintable(dialog->summary()->text()));
  }

  // The sessions dialog: two selected, Compare... opens the comparison of them.
  void sessionsDialogComparesTwoSelected() {
    MainWindow window;
    QVERIFY(openTinyCnn(window));
    tessel::ui::SessionsDialog* sessions = window.showSessions();
    QSignalSpy loaded(sessions, &tessel::ui::SessionsDialog::loaded);
    QVERIFY(loaded.wait(60000));
    QVERIFY(!sessions->compareButton()->isEnabled());
    sessions->selectSessions({a_, b_});
    QVERIFY(sessions->compareButton()->isEnabled());
    sessions->compareButton()->click();
    CompareDialog* dialog = window.findChild<CompareDialog*>("compareDialog");
    QVERIFY(dialog);
    QSignalSpy compared(dialog, &CompareDialog::compared);
    QVERIFY(compared.wait(60000));
    QCOMPARE(QSet<qint64>({dialog->session(CompareDialog::A), dialog->session(CompareDialog::B)}),
             QSet<qint64>({a_, b_}));
    QCOMPARE(dialog->comparison().tasks.size(), size_t(5));
  }

  // tessel-studio --compare A,B --screenshot: the comparison grabbed, from the command line.
  void commandLineGrabsTheComparison() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("XDG_CONFIG_HOME", tmp_.filePath("child-config"));
    QProcess studio;
    studio.setProcessEnvironment(env);
    const QString png = tmp_.filePath("compare.png");
    studio.start(TESSEL_STUDIO_EXE,
                 {"tiny_cnn", "--db", db_, "--compare", QString("%1,%2").arg(a_).arg(b_), "--screenshot", png});
    QVERIFY(studio.waitForFinished(120000));
    QVERIFY2(studio.exitCode() == 0, studio.readAllStandardError().constData());
    QImage image;
    QVERIFY(image.load(png, "PNG"));
    QVERIFY(image.width() >= 600 && image.height() >= 400);  // the dialog, not an empty grab
    // A session the database does not have: the error names it, exit 1.
    studio.start(TESSEL_STUDIO_EXE, {"--db", tmp_.filePath("missing.db"), "--compare", "1,2", "--screenshot", png});
    QVERIFY(studio.waitForFinished(60000));
    QVERIFY(studio.exitCode() != 0);
    for (const QStringList& bad : {QStringList{"--compare", "1"}, QStringList{"--compare", "1,x"},
                                   QStringList{"tiny_cnn", "--compare", "1,2", "--tune", "8"}}) {
      studio.start(TESSEL_STUDIO_EXE, bad + QStringList{"--screenshot", png});
      QVERIFY(studio.waitForFinished(60000));
      QVERIFY(studio.exitCode() != 0);
      QVERIFY2(studio.readAllStandardError().contains("--compare needs two positive session ids"),
               qPrintable(bad.join(' ')));
    }
  }
};

QTEST_MAIN(TestCompare)
#include "test_compare.moc"
