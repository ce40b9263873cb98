// The studio's fleet: the panel that shows a Redis's agents and queues, and
// a tuning started from the main window with a Redis URL as where to measure,
// its programs measured by a real tessel-agent (a real redis-server, started
// here on a loopback port).
#include <QComboBox>
#include <QLineEdit>
#include <QMessageBox>
#include <QSettings>
#include <QTableWidget>
#include <QtTest>
#include <memory>
#include <nlohmann/json.hpp>

#include "../fleet/db_query.h"
#include "../fleet/redis_server.h"
#include "tessel_test.h"
#include "ui/fleet_panel.h"
#include "ui/main_window.h"
#include "ui/tasks_panel.h"

using tessel::ui::FleetPanel;
using tessel::ui::MainWindow;

class TestFleetPanel : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  RedisServer redis_;
  bool up_ = false;
  QString why_;
  std::unique_ptr<QProcess> agent_;

  void needRedis() {
    if (!up_) TESSEL_SKIP("redis", qPrintable("the fleet needs a Redis server: " + why_));
  }

  bool startAgent() {
    agent_ = std::make_unique<QProcess>();
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("TMPDIR", tmp_.path());
    agent_->setProcessEnvironment(env);
    agent_->start(TESSEL_AGENT_PATH, {"--redis", redis_.url(), "--target", "cpu", "--name", "studio-agent"});
    return agent_->waitForStarted(5000);
  }

 private slots:
  void initTestCase() {
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, tmp_.filePath("settings"));
    // No run after each tuning: it would compete with these tests (test_run_panel tests it).
    QSettings(MainWindow::kSettingsOrganization, MainWindow::kSettingsApplication)
        .setValue(MainWindow::kRunAfterTuningKey, false);
    qputenv("TESSEL_DB", tmp_.filePath("default.db").toUtf8());
    up_ = redis_.start(&why_);
  }

  void cleanupTestCase() {
    if (agent_) {
      agent_->terminate();
      agent_->waitForFinished(10000);
    }
  }

  void localSaysSoAndReadsNothing() {
    FleetPanel panel;
    QVERIFY(panel.statusText().contains("this machine"));
    QCOMPARE(panel.agents()->rowCount(), 0);
  }

  void badUrlIsNamed() {
    FleetPanel panel;
    panel.setMeasure("redis://host:99999");
    QVERIFY2(panel.statusText().contains("port"), qPrintable(panel.statusText()));
  }

  // Nobody listens there: an error within the connect timeout, off the UI thread.
  void unreachableRedisIsAnErrorNotAHang() {
    FleetPanel panel;
    QSignalSpy refreshed(&panel, &FleetPanel::refreshed);
    QElapsedTimer t;
    t.start();
    panel.setMeasure("redis://127.0.0.1:" + QString::number(RedisServer::freePort()));
    QVERIFY(t.elapsed() < 500);  // the reading runs elsewhere
    QVERIFY(refreshed.wait(10000));
    QVERIFY2(panel.statusText().contains("cannot reach Redis"), qPrintable(panel.statusText()));
  }

  void showsTheAgents() {
    needRedis();
    QVERIFY(startAgent());
    FleetPanel panel;
    panel.setMeasure(redis_.url());
    QTRY_COMPARE_WITH_TIMEOUT(panel.agents()->rowCount(), 1, 15000);
    QCOMPARE(panel.agents()->item(0, 0)->text(), QString("studio-agent"));
    QCOMPARE(panel.agents()->item(0, 1)->text(), QString("cpu"));
    QVERIFY(!panel.agents()->item(0, 2)->text().isEmpty());  // the device
    QVERIFY2(panel.statusText().contains(redis_.url()), qPrintable(panel.statusText()));
  }

  // Start with the fleet's URL as where to measure: the agent measures every
  // program, the session says so, the panel in the window shows the agent.
  void studioTunesThroughTheFleet() {
    needRedis();
    if (!agent_ || agent_->state() != QProcess::Running) QVERIFY(startAgent());
    MainWindow window;
    window.setPersistent(false);
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.setModelPath("tiny_cnn");
    QVERIFY(ready.wait(60000));
    const QString db = tmp_.filePath("fleet.db");
    window.setDatabasePath(db);
    window.setTrialBudget(80);  // a round per task
    auto* measure = window.findChild<QComboBox*>("measureBox");
    QVERIFY(measure);
    measure->setEditText(redis_.url());
    emit measure->lineEdit()->editingFinished();
    auto* panel = window.findChild<FleetPanel*>();
    QVERIFY(panel);
    QTRY_COMPARE_WITH_TIMEOUT(panel->agents()->rowCount(), 1, 15000);
    QSignalSpy done(&window, &MainWindow::tuningFinished);
    window.findChild<QAction*>("actionStart")->trigger();
    QVERIFY(done.wait(300000));
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
    const int records = queryFirst(db, "SELECT COUNT(*) FROM records").toInt();
    QVERIFY2(records >= 80, qPrintable(QString::number(records)));
    const auto config = nlohmann::json::parse(queryFirst(db, "SELECT config FROM sessions").toStdString());
    QCOMPARE(QString::fromStdString(config.value("measure", "")), redis_.url());
    // Every program was the agent's: its count of programs matches the records.
    QTRY_VERIFY_WITH_TIMEOUT(panel->agents()->item(0, 5) && panel->agents()->item(0, 5)->text().toInt() == records,
                             10000);
  }

  // A URL that does not parse stops Start with a message, and nothing starts.
  void badUrlDoesNotStart() {
    MainWindow window;
    window.setPersistent(false);
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.setModelPath("tiny_cnn");
    QVERIFY(ready.wait(60000));
    window.setDatabasePath(tmp_.filePath("bad.db"));
    window.findChild<QComboBox*>("measureBox")->setEditText("redis://:pw@");
    QTimer::singleShot(0, [] {
      QTRY_VERIFY_WITH_TIMEOUT(qobject_cast<QMessageBox*>(QApplication::activeModalWidget()), 5000);
      auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
      QVERIFY(box->text().contains("names no host"));
      box->accept();
    });
    window.findChild<QAction*>("actionStart")->trigger();
    QVERIFY(window.findChild<QAction*>("actionStart")->isEnabled());
    QVERIFY(!QFile::exists(tmp_.filePath("bad.db")));
  }
};

QTEST_MAIN(TestFleetPanel)
#include "test_fleet_panel.moc"
