// Tessel Studio's main window, what it keeps between starts: the window's
// layout (geometry, docks, toolbar) and the models opened recently, in
// QSettings.
#include <QAction>
#include <QCloseEvent>
#include <QDockWidget>
#include <QMenu>
#include <QSettings>

#include "ui/main_window.h"

namespace tessel::ui {

namespace {

QSettings layoutSettings() {
  return QSettings(MainWindow::kSettingsOrganization, MainWindow::kSettingsApplication);
}

}  // namespace

QStringList MainWindow::recentModels() const {
  return layoutSettings().value(kRecentModelsKey).toStringList();
}

void MainWindow::rememberModel(const QString& model) {
  QStringList recent = recentModels();
  recent.removeAll(model);
  recent.prepend(model);
  while (recent.size() > 8)
    recent.removeLast();
  if (!persistent_) return;
  layoutSettings().setValue(kRecentModelsKey, recent);
  updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
  if (!recentMenu_) return;
  recentMenu_->clear();
  const QStringList recent = recentModels();
  for (int i = 0; i < recent.size(); ++i) {
    QAction* a = recentMenu_->addAction(tr("&%1 %2").arg(i + 1).arg(recent[i]));
    const QString model = recent[i];
    connect(a, &QAction::triggered, this, [this, model] { setModelPath(model); });
  }
  recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::saveLayout() const {
  QSettings settings = layoutSettings();
  settings.setValue(kGeometryKey, saveGeometry());
  settings.setValue(kStateKey, saveState(kStateVersion));
}

bool MainWindow::restoreLayout() {
  QSettings settings = layoutSettings();
  const QByteArray geometry = settings.value(kGeometryKey).toByteArray();
  const QByteArray state = settings.value(kStateKey).toByteArray();
  bool restored = !geometry.isEmpty() && restoreGeometry(geometry);
  restored = !state.isEmpty() && restoreState(state, kStateVersion) && restored;
  return restored;
}

void MainWindow::resetLayout() {
  restoreState(defaultState_, kStateVersion);
  for (QDockWidget* dock : docks_)
    dock->show();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (persistent_) saveLayout();
  event->accept();
}

}  // namespace tessel::ui
