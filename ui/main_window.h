// The main window of Tessel Studio: dockable panels around the tuning
// workflow, a toolbar to drive a tuning session and to run the tuned model
// against LibTorch, menus, a status bar, and a layout that persists. The
// window holds the actions and wires its parts together: the model and its
// stored sessions are the ModelLoader's (ui/model_loader.h), a tuning is
// the TuningController's (ui/tuning_controller.h), the next tuning's
// choices are the TuningOptionsBar's, a run is the RunController's; its API
// forwards to them.
#pragma once

#include <QByteArray>
#include <QMainWindow>
#include <QString>
#include <memory>

#include "target/target.h"
#include "task/search_task.h"
#include "ui/model_loader.h"
#include "ui/studio_settings.h"
#include "ui/tuning_controller.h"
#include "ui/tuning_options_bar.h"

class QAction;
class QCloseEvent;
class QIcon;
class QKeySequence;
class QMenu;
class QProgressBar;
class QDockWidget;
class QLabel;
class QToolBar;

namespace tessel::frontend {
struct PreparedModel;
}
namespace tessel::store {
struct SessionComparison;
}

namespace tessel::ui {

class CodeView;
class CompareDialog;
class ExportDialog;
class FleetPanel;
class SessionsDialog;
class GraphView;
class LogPanel;
class PlotsPanel;
class ProgramInspector;
class RooflineView;
class RunController;
class RunPanel;
class SearchSpaceView;
class TasksPanel;
class TuningSession;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // QSettings keys of the persisted layout, under organisation "Tessel",
  // application "Tessel Studio".
  static constexpr const char* kSettingsOrganization = kStudioOrganization;
  static constexpr const char* kSettingsApplication = kStudioApplication;
  static constexpr const char* kGeometryKey = "MainWindow/geometry";
  static constexpr const char* kStateKey = "MainWindow/state";
  // The Run's repeats, and whether a tuning that ends normally is run at once.
  static constexpr const char* kRunRepeatsKey = "run/repeats";
  static constexpr const char* kRunAfterTuningKey = "run/afterTuning";
  static constexpr int kDefaultRunRepeats = 30;

  explicit MainWindow(QWidget* parent = nullptr);

  // The model (zoo name or file): prepared (loaded, folded, fused, cut into
  // tasks) on a worker thread, then shown in the graph, tasks and plots;
  // modelReady or modelFailed (with an error dialog) follows. The model open
  // keeps its input shapes (opened again for another fusion or target), a
  // file takes the ones it opened with last time; a .pt with none asks for
  // them first (the input shapes dialog, File > Input shapes...).
  void setModelPath(const QString& model);
  // The same with `inputShapes` as --input-shapes takes them ("": none).
  void setModelPath(const QString& model, const QString& inputShapes);
  QString inputShapes() const { return loader_->inputShapes(); }
  // Asks for `model`'s input shapes (the dialog opens and returns at once);
  // accepted, the model opens with them.
  void askInputShapes(const QString& model);
  // The database tuning writes to and sessions are read from. An existing
  // file that is not a readable Tessel database is refused with an error
  // dialog naming the problem (false), and left as it was.
  bool setDatabasePath(const QString& database);
  // A trained cost model (`tessel costmodel train`) the next tuning starts
  // from: the cost-model box then shows its model and is locked. A file that
  // cannot be read is refused with an error dialog naming the problem
  // (false); "" goes back to a fresh model.
  bool setCostModelFile(const QString& path);
  QString costModelFile() const { return options_->costModelFile(); }
  QString modelPath() const { return loader_->modelPath(); }
  QString databasePath() const { return loader_->database(); }
  // Why a file cannot be used as the database ("" if it can: missing, empty
  // or a readable Tessel database).
  static QString checkDatabase(const QString& database) { return ModelLoader::checkDatabase(database); }
  // The database in use: the one set, else the CLI's default ($TESSEL_DB,
  // else ~/.local/share/tessel/tessel.db).
  QString effectiveDatabase() const { return loader_->effectiveDatabase(); }

  LogPanel* logPanel() const { return log_; }
  TasksPanel* tasksPanel() const { return tasks_; }
  TuningSession* tuningSession() const { return tuning_->session(); }
  RooflineView* rooflineView() const { return roofline_; }
  GraphView* graphView() const { return graph_; }
  PlotsPanel* plotsPanel() const { return plots_; }
  SearchSpaceView* searchSpaceView() const { return space_; }
  CodeView* codeView() const { return code_; }
  RunPanel* runPanel() const { return runPanel_; }
  RunController* runController() const { return run_; }
  // The prepared model (null until modelReady).
  std::shared_ptr<const frontend::PreparedModel> preparedModel() const { return loader_->prepared(); }
  // The tasks shown: the open model's, or a reopened operator session's one.
  const std::vector<task::SearchTask>& tasks() const { return loader_->tasks(); }
  // Drives the views from a task (index into the model's tasks).
  void selectTask(int task);
  int selectedTask() const { return selected_; }
  // The sessions of the database in a dialog (window-modal, returns at
  // once; they are read on a worker thread). If the database cannot be
  // read, the dialog closes and an error dialog names the problem.
  SessionsDialog* showSessions();
  // The export dialog over the database, for the open model and task.
  ExportDialog* showExport();
  // Two sessions side by side (modeless): `a` (0: the session shown, else
  // the newest) and `b` (0: the newest other one) of the database, either
  // side free to read another database. Each comparison colours the open
  // model's graph by what the sessions differ by (heat: sessions compared).
  CompareDialog* showCompare(qint64 a = 0, qint64 b = 0);
  // The programs the session shown in the plots (tuned or reopened)
  // measured for `task`, in the program inspector (modeless, one for the
  // window), with program `ordinal` shown (-1: the task's fastest). Null,
  // with an error dialog, when the session has none.
  ProgramInspector* inspectProgram(int task, int ordinal = -1);
  // Reads a session on a worker thread and shows it: its model (opened
  // with the session's fusion), tasks, curves, scatter and best programs.
  // sessionReopened or an error dialog follows. Start then resumes it.
  void reopenSession(qint64 session) { loader_->reopenSession(session); }
  // The session Start resumes (0: Start begins a new one).
  qint64 resumableSession() const { return loader_->resumableSession(); }
  // A task's best program known to the studio (from the tuning or a reopened session).
  using BestProgram = TuningController::BestProgram;
  BestProgram bestProgram(int task) const { return tuning_->bestProgram(task); }
  // Shows an error in a window-modal dialog (never blocks the caller) and the log.
  void showError(const QString& title, const QString& message);
  // Trials of the next tuning (the toolbar's budget).
  void setTrialBudget(int trials) {
    tuning_->setTrialBudget(trials);
    options_->setTrials(trials);
  }
  int trialBudget() const { return tuning_->trialBudget(); }
  // The toolbar's choices for the next tuning (target, fusion, cost model, the Options dialog's).
  TuningOptionsBar* tuningOptions() const { return options_; }
  // A wall-clock budget of the next tunings beside the trials (minutes; 0:
  // none), as `tessel tune --minutes`: no round starts once it is spent.
  void setTimeBudget(double minutes) {
    TuningDetails d = options_->details();
    d.minutes = minutes;
    options_->setDetails(d);  // the dialog shows it; detailsChanged sets the tuning's
  }
  double timeBudget() const { return tuning_->timeBudget(); }
  // Models opened before, newest first (QSettings "recentModels", at most 8).
  QStringList recentModels() const { return loader_->recentModels(); }
  static constexpr const char* kRecentModelsKey = ModelLoader::kRecentModelsKey;
  // false: nothing is written to QSettings (screenshots leave them alone).
  void setPersistent(bool persistent) {
    persistent_ = persistent;
    loader_->setPersistent(persistent);
  }
  QProgressBar* progressBar() const { return progress_; }

  // Start, pause/resume and stop of the toolbar.
  void startTuning();
  void togglePause() { tuning_->togglePause(); }
  void stopTuning() { tuning_->stop(); }
  // Run (Ctrl+R): the open model with the database's best kernels against
  // LibTorch in a `tessel run` child process (ui/run_controller.h); its
  // Stop kills the child. Not while a tuning runs: each would disturb the
  // other's measurements. A tuning started meanwhile stops the run.
  void startRun();
  void stopRun();
  // The session the window shows (tuned or reopened), that runs are stored with (0: none).
  qint64 shownSession() const { return loader_->shownSession(); }

  // Window geometry and dock/toolbar state, in QSettings. restoreLayout()
  // returns false (and keeps the default layout) when nothing valid is saved.
  void saveLayout() const;
 signals:
  void modelReady();
  void modelFailed(const QString& message);
  void sessionReopened(qint64 session);
  // The window has taken in the end of a tuning (after every round it reported).
  void tuningFinished(bool ok, const QString& message);
  void sessionFailed(const QString& message);
  // The roofline's ceilings are known (measured or read from the cache).
  void ceilingsReady();

 public:
  bool restoreLayout();
  void resetLayout();

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void createViews();
  void createActions();
  QAction* createAction(const QIcon& icon, const QString& text, const char* name, const QKeySequence& shortcut,
                        const QString& tip);
  void createToolBar();
  void createMenus();
  void createDocks();
  void createStatusBar();
  QDockWidget* addPanel(const QString& title, const QString& objectName, QWidget* panel, Qt::DockWidgetArea area);
  // The loader's and the tuning controller's signals to the window.
  void connectLoader();
  void connectTuning();
  void connectViews();
  void openModel();
  void openDatabase();
  void onModelOpening();
  void onModelReady();
  void onSessionReopened(qint64 session);
  void onTuningFinished(bool ok, const QString& message);
  void updateTitle();
  void updateRecentMenu();
  void updateActions();
  // The Run's part (main_window_run.cpp).
  void createRunActions();
  void createRunDock(QDockWidget* tabbedWith);
  void updateRunActions();
  // Colours the graph by what two compared sessions differ by, task by task.
  void showComparisonInGraph(const store::SessionComparison& comparison);
  // The roofline's part (main_window_roofline.cpp).
  void createRooflineDock(QDockWidget* tabbedWith);
  // The ceilings of the target's machine (cached; measured on a worker thread once).
  void measureCeilings();
  // The program inspector's action and the views that open it (main_window_inspector.cpp).
  void createInspectorAction();
  // The latest run stored with the session shown (none: the panel cleared).
  void showStoredRun();

  bool persistent_ = true;
  TasksPanel* tasks_ = nullptr;
  GraphView* graph_ = nullptr;
  PlotsPanel* plots_ = nullptr;
  SearchSpaceView* space_ = nullptr;
  CodeView* code_ = nullptr;
  RunPanel* runPanel_ = nullptr;
  RunController* run_ = nullptr;
  RooflineView* roofline_ = nullptr;
  ProgramInspector* inspector_ = nullptr;
  task::SearchTask selectedTask_;
  int selected_ = -1;
  ModelLoader* loader_ = nullptr;
  TuningController* tuning_ = nullptr;
  TuningOptionsBar* options_ = nullptr;
  // Of saveState(): bump when the docks change in a way an old saved state
  // should not restore.
  static constexpr int kStateVersion = 4;  // 3: the Run dock; 4: the Roofline dock
  QByteArray defaultState_;

  QAction* openModelAction_ = nullptr;
  QAction* inputShapesAction_ = nullptr;
  QAction* openDatabaseAction_ = nullptr;
  QAction* sessionsAction_ = nullptr;
  QAction* compareAction_ = nullptr;
  QAction* inspectAction_ = nullptr;
  QAction* startAction_ = nullptr;
  QAction* pauseAction_ = nullptr;
  QAction* stopAction_ = nullptr;
  QAction* exportAction_ = nullptr;
  QAction* runAction_ = nullptr;
  QAction* stopRunAction_ = nullptr;
  QAction* runAfterTuningAction_ = nullptr;
  QAction* resetLayoutAction_ = nullptr;
  QAction* quitAction_ = nullptr;
  QToolBar* toolBar_ = nullptr;
  LogPanel* log_ = nullptr;
  QLabel* modelLabel_ = nullptr;
  QLabel* rateLabel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  FleetPanel* fleet_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QMenu* zooMenu_ = nullptr;
  QLabel* databaseLabel_ = nullptr;
  QList<QDockWidget*> docks_;
};

}  // namespace tessel::ui
