// The studio suites' shared set-up: the settings and the default database
// in the test's temporary folder (nothing of the user's is read or written),
// a tuning of tiny_cnn by the studio recorded into a database, and a window
// opened on that database with its stored session shown.
#pragma once

#include <QSettings>
#include <QSignalSpy>
#include <QString>
#include <QTemporaryDir>

#include "ui/main_window.h"

namespace tessel::testing {

// No run after each tuning (it would compete with the tests); `batch`
// programs per round (0: the default).
inline void isolateStudio(const QTemporaryDir& tmp, int batch = 0) {
  using ui::MainWindow;
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, tmp.filePath("settings"));
  QSettings settings(MainWindow::kSettingsOrganization, MainWindow::kSettingsApplication);
  settings.setValue(MainWindow::kRunAfterTuningKey, false);
  if (batch > 0) settings.setValue("tuning/batch", batch);
  qputenv("TESSEL_DB", tmp.filePath("default.db").toUtf8());
}

// Tunes tiny_cnn for `trials` in a studio window, into `db`: the session
// recorded, or 0 with *error saying why.
inline qint64 tuneTinyCnn(const QString& db, int trials, QString* error) {
  using ui::MainWindow;
  MainWindow window;
  window.setPersistent(false);
  QSignalSpy ready(&window, &MainWindow::modelReady);
  window.setModelPath("tiny_cnn");
  if (!ready.wait(60000)) return *error = "tiny_cnn did not open", 0;
  if (!window.setDatabasePath(db)) return *error = "the database was refused", 0;
  window.setTrialBudget(trials);
  QSignalSpy done(&window, &MainWindow::tuningFinished);
  window.startTuning();
  if (!done.wait(300000)) return *error = "the tuning did not end", 0;
  if (!done.at(0).at(0).toBool()) return *error = done.at(0).at(1).toString(), 0;
  return window.resumableSession();
}

// tiny_cnn opened on `db`, its stored session shown.
inline bool openTinyCnn(ui::MainWindow& window, const QString& db) {
  window.setPersistent(false);
  if (!window.setDatabasePath(db)) return false;
  QSignalSpy shown(&window, &ui::MainWindow::sessionReopened);
  window.setModelPath("tiny_cnn");
  return shown.wait(60000);
}

}  // namespace tessel::testing
