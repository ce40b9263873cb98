// The main window's program inspector: opened from a point of the scatter
// or the best-latency curve, a double-click in the tasks table, or Tuning >
// Inspect programs, over the session the plots show.
#include <QAction>

#include "ui/main_window.h"
#include "ui/plots_panel.h"
#include "ui/program_inspector.h"
#include "ui/tasks_panel.h"

namespace tessel::ui {

void MainWindow::createInspectorAction() {
  inspectAction_ = createAction({}, tr("&Inspect programs..."), "actionInspect", QKeySequence(Qt::CTRL | Qt::Key_I),
                                tr("The selected task's measured programs: steps, loop nest, code, time, score "
                                   "and rank, and how each differs from the fastest"));
  connect(inspectAction_, &QAction::triggered, this, [this] { inspectProgram(selected_); });
  connect(plots_, &PlotsPanel::programPicked, this, [this](int task, int ordinal) { inspectProgram(task, ordinal); });
  connect(tasks_, &TasksPanel::programsRequested, this, [this](int task) { inspectProgram(task); });
}

ProgramInspector* MainWindow::inspectProgram(int task, int ordinal) {
  const std::vector<task::SearchTask>& tasks = loader_->tasks();
  if (task < 0 || task >= int(tasks.size())) {
    showError(tr("Nothing to inspect"), tr("select a task first"));
    return nullptr;
  }
  const QString label = plots_->tasks().value(task);
  if (tuning_->plottedSession() == 0 || plots_->programCount(task) == 0) {
    showError(tr("Nothing to inspect"), tr("no program of %1 has been measured in the session shown").arg(label));
    return nullptr;
  }
  if (!inspector_) inspector_ = new ProgramInspector(this);
  if (!inspector_->inspect(effectiveDatabase(), tuning_->plottedSession(), tasks[size_t(task)], label, ordinal)) {
    showError(tr("Cannot inspect the programs"), inspector_->error());
    return nullptr;
  }
  if (task != selected_) selectTask(task);
  inspector_->show();
  inspector_->raise();
  inspector_->activateWindow();
  return inspector_;
}

}  // namespace tessel::ui
