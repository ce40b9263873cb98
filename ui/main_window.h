// The main window of Tessel Studio: dockable panels around the tuning
// workflow, a toolbar to drive a tuning session, and a layout that persists.
#pragma once

#include <QByteArray>
#include <QMainWindow>
#include <QString>

class QAction;
class QCloseEvent;
class QDockWidget;
class QLabel;
class QToolBar;

namespace tessel::ui {

class LogPanel;
class TasksPanel;
class TuningSession;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // QSettings keys of the persisted layout, under organisation "Tessel",
  // application "Tessel Studio".
  static constexpr const char* kSettingsOrganization = "Tessel";
  static constexpr const char* kSettingsApplication = "Tessel Studio";
  static constexpr const char* kGeometryKey = "MainWindow/geometry";
  static constexpr const char* kStateKey = "MainWindow/state";

  explicit MainWindow(QWidget* parent = nullptr);

  // The model (zoo name or file) and the tuning database the window shows.
  // Loading them is not implemented yet: they are shown in the title, the
  // status bar and the log.
  void setModelPath(const QString& model);
  void setDatabasePath(const QString& database);
  QString modelPath() const { return model_; }
  QString databasePath() const { return database_; }

  LogPanel* logPanel() const { return log_; }
  TasksPanel* tasksPanel() const { return tasks_; }
  TuningSession* tuningSession() const { return session_; }
  // Trials of the next tuning (the toolbar's budget).
  void setTrialBudget(int trials) { trialBudget_ = trials; }
  int trialBudget() const { return trialBudget_; }

  // Start, pause/resume and stop of the toolbar.
  void startTuning();
  void togglePause();
  void stopTuning();

  // Window geometry and dock/toolbar state, in QSettings. restoreLayout()
  // returns false (and keeps the default layout) when nothing valid is saved.
  void saveLayout() const;
  bool restoreLayout();
  void resetLayout();

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void createActions();
  void createToolBar();
  void createMenus();
  void createDocks();
  void createStatusBar();
  QDockWidget* addPanel(const QString& title, const QString& objectName, QWidget* panel, Qt::DockWidgetArea area);
  void openModel();
  void updateTitle();

  void onRound(int task, int taskTrials, double bestSeconds, double estimateSeconds, int totalTrials);
  void onFinished(bool ok, const QString& message);
  void updateActions();

  QString model_;
  QString database_;
  int trialBudget_ = 256;
  TasksPanel* tasks_ = nullptr;
  TuningSession* session_ = nullptr;
  QByteArray defaultState_;

  QAction* openModelAction_ = nullptr;
  QAction* startAction_ = nullptr;
  QAction* pauseAction_ = nullptr;
  QAction* stopAction_ = nullptr;
  QAction* exportAction_ = nullptr;
  QAction* resetLayoutAction_ = nullptr;
  QAction* quitAction_ = nullptr;
  QToolBar* toolBar_ = nullptr;
  LogPanel* log_ = nullptr;
  QLabel* modelLabel_ = nullptr;
  QLabel* databaseLabel_ = nullptr;
  QList<QDockWidget*> docks_;
};

}  // namespace tessel::ui
