// The main window's roofline: its dock, the machine's ceilings measured once
// off the UI thread, and the programs it is fed (live rounds, a reopened
// session's records).
#include <QDockWidget>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include "measure/machine_ceilings.h"
#include "store/session_history.h"
#include "ui/log_panel.h"
#include "ui/main_window.h"
#include "ui/model_loader.h"
#include "ui/roofline_view.h"
#include "ui/tasks_panel.h"
#include "ui/tuning_controller.h"
#include "ui/tuning_options_bar.h"
#include "ui/tuning_session.h"

namespace tessel::ui {

void MainWindow::createRooflineDock(QDockWidget* tabbedWith) {
  roofline_ = new RooflineView(this);
  QDockWidget* dock = addPanel(tr("Roofline"), "rooflineDock", roofline_, Qt::RightDockWidgetArea);
  tabifyDockWidget(tabbedWith, dock);
  // The model's tasks, as the tasks panel has them.
  connect(tasks_->model(), &QAbstractItemModel::modelReset, this, [this] {
    std::vector<RooflineTask> tasks;
    for (int i = 0; i < tasks_->model()->rowCount(); ++i) {
      const TaskInfo& t = tasks_->model()->task(i);
      tasks.push_back({t.name, t.flops, t.bytes});
    }
    roofline_->setTasks(tasks);
    tasks_->model()->setAttainable(roofline_->attainable());
  });
  connect(tuning_->session(), &TuningSession::programsMeasured, roofline_,
          [this](int task, const QVector<double>&, const QVector<double>& seconds) {
            roofline_->addPrograms(task, seconds);
          });
  connect(loader_, &ModelLoader::historyRead, this, [this](const store::SessionHistory& h, const QVector<int>& taskOf) {
    roofline_->clearPrograms();
    QVector<QVector<double>> byTask(tasks_->model()->rowCount());  // the roofline's tasks are the table's
    for (const store::SessionProgram& p : h.programs) {
      const int task = taskOf.value(int(p.task), -1);
      if (task >= 0 && task < byTask.size()) byTask[task] << p.seconds;
    }
    for (int t = 0; t < byTask.size(); ++t)
      if (!byTask[t].isEmpty()) roofline_->addPrograms(t, byTask[t]);
  });
  // A target that is not this machine's CPU has no ceilings measured here.
  connect(options_, &TuningOptionsBar::targetChanged, this, &MainWindow::measureCeilings);
  measureCeilings();
}

void MainWindow::measureCeilings() {
  const target::Target target = options_->target();  // the box's: the loader may not have it yet
  if (!target.isCpu()) {
    roofline_->setUnavailable(tr("The roofline is drawn for CPU targets: choose one in the target box"));
    tasks_->model()->setAttainable({});
    return;
  }
  roofline_->setUnavailable({});
  auto* watcher = new QFutureWatcher<measure::MachineCeilings>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, target] {
    watcher->deleteLater();
    if (!(options_->target() == target)) return;  // another target was chosen meanwhile
    const measure::MachineCeilings c = watcher->result();
    roofline_->setCeilings(c);
    tasks_->model()->setAttainable(roofline_->attainable());
    log_->appendMessage(tr("Roofline: peak %1 GFLOP/s, memory %2 GB/s, last-level cache %3 GB/s (measured %4)")
                            .arg(c.peakGflops, 0, 'f', 0)
                            .arg(c.dramGBps, 0, 'f', 1)
                            .arg(c.llcGBps, 0, 'f', 1)
                            .arg(QString::fromStdString(c.measured)));
    emit ceilingsReady();
  });
  // Measured once per machine (about a second), then read from the cache file.
  watcher->setFuture(QtConcurrent::run([target] { return measure::cachedCeilings(target); }));
}

}  // namespace tessel::ui
