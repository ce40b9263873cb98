#include "ui/tasks_panel.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>
#include <cmath>

namespace tessel::ui {

void TasksModel::setTasks(const QVector<TaskInfo>& tasks) {
  beginResetModel();
  rows_.clear();
  for (const TaskInfo& t : tasks)
    rows_.push_back({t, 0, 0});
  attainable_.clear();
  endResetModel();
}

void TasksModel::setAttainable(const QVector<double>& gflops) {
  attainable_ = gflops;
  if (!rows_.isEmpty()) emit dataChanged(index(0, Roof), index(rowCount() - 1, Roof));
}

double TasksModel::roofFraction(int task) const {
  if (task < 0 || task >= rows_.size() || task >= attainable_.size() || rows_[task].best <= 0) return std::nan("");
  const double roof = attainable_[task];
  return roof > 0 ? rows_[task].info.flops / rows_[task].best / 1e9 / roof : std::nan("");
}

void TasksModel::updateTask(int task, int trials, double bestSeconds) {
  if (task < 0 || task >= rows_.size()) return;
  rows_[task].trials = trials;
  if (std::isfinite(bestSeconds) && bestSeconds > 0) rows_[task].best = bestSeconds;
  // Every share changes with one task's latency.
  emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

double TasksModel::estimateSeconds() const {
  double total = 0;
  for (const Row& r : rows_) {
    if (r.best <= 0) return std::nan("");
    total += r.info.weight * r.best;
  }
  return total;
}

int TasksModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(rows_.size());
}

int TasksModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant TasksModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rows_.size()) return {};
  const Row& r = rows_[index.row()];
  const double total = estimateSeconds();
  const bool has = r.best > 0;
  // Qt::UserRole gives numbers for sorting; the display role gives text.
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case Name:
        return r.info.name;
      case Weight:
        return r.info.weight;
      case Mflop:
        return r.info.flops / 1e6;
      case Trials:
        return r.trials;
      case BestMs:
        return has ? r.best * 1e3 : INFINITY;
      case Gflops:
        return has ? r.info.flops / r.best / 1e9 : 0.0;
      case Roof: {
        const double f = roofFraction(index.row());
        return std::isfinite(f) ? f : -1.0;
      }
      case Share:
        return has && std::isfinite(total) ? r.info.weight * r.best / total : 0.0;
    }
  }
  if (role == Qt::ToolTipRole && index.column() == Roof)
    return tr(
        "The best program's GFLOP/s over what this machine can reach at the task's arithmetic intensity "
        "(the roofline: the peak FMA throughput, or the memory or last-level cache bandwidth)");
  if (role == Qt::ToolTipRole) return r.info.key;
  if (role == Qt::TextAlignmentRole && index.column() != Name) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Name:
      return r.info.name;
    case Weight:
      return QString::number(r.info.weight, 'g', 4);
    case Mflop:
      return QString::number(r.info.flops / 1e6, 'f', 2);
    case Trials:
      return r.trials;
    case BestMs:
      return has ? QString::number(r.best * 1e3, 'f', 4) : QString("-");
    case Gflops:
      return has ? QString::number(r.info.flops / r.best / 1e9, 'f', 1) : QString("-");
    case Roof: {
      const double f = roofFraction(index.row());
      return std::isfinite(f) ? QString::number(100 * f, 'f', 1) + " %" : QString("-");
    }
    case Share:
      return has && std::isfinite(total) ? QString::number(100 * r.info.weight * r.best / total, 'f', 1) + " %"
                                         : QString("-");
  }
  return {};
}

QVariant TasksModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"task", "weight", "MFLOP", "trials", "best ms", "GFLOP/s", "of roof", "share"};
  return section >= 0 && section < ColumnCount ? QString(names[section]) : QVariant();
}

TasksPanel::TasksPanel(QWidget* parent)
    : QWidget(parent), model_(new TasksModel(this)), proxy_(new QSortFilterProxyModel(this)), view_(new QTableView) {
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(Qt::UserRole);
  view_->setModel(proxy_);
  view_->setSortingEnabled(true);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->horizontalHeader()->setStretchLastSection(true);
  view_->verticalHeader()->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view_);
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
    if (current.isValid()) emit taskSelected(proxy_->mapToSource(current).row());
  });
  view_->setToolTip(tr("Double-click a task to inspect its measured programs"));
  connect(view_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    if (index.isValid()) emit programsRequested(proxy_->mapToSource(index).row());
  });
}

void TasksPanel::follow(TuningSession* session) {
  // The tasks of the model being tuned; when they are those shown (the
  // studio opened the model, or a resumed session), their progress stays.
  connect(session, &TuningSession::tasksReady, model_, [this](const QVector<TaskInfo>& tasks) {
    bool same = tasks.size() == model_->rowCount();
    for (int i = 0; same && i < tasks.size(); ++i)
      same = tasks[i].key == model_->task(i).key;
    if (!same) model_->setTasks(tasks);
  });
  connect(session, &TuningSession::roundFinished, model_,
          [this](int task, int trials, double best, double, int) { model_->updateTask(task, trials, best); });
}

}  // namespace tessel::ui
