#include "ui/sessions_dialog.h"

#include <qcustomplot.h>

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>

#include "store/database.h"
#include "store/session_history.h"

namespace tessel::ui {
namespace {

struct Curve {
  qint64 session = 0;
  QString label;
  QVector<double> trials, ms;
};

struct Comparison {
  QVector<Curve> curves;
  QString error;
};

// Text shown, number sorted by (Qt::UserRole).
QStandardItem* cell(const QString& text, const QVariant& sortKey) {
  auto* item = new QStandardItem(text);
  item->setData(sortKey, Qt::UserRole);
  item->setEditable(false);
  return item;
}

QColor curveColor(int i) {
  static const QColor colors[] = {QColor(31, 119, 180), QColor(255, 127, 14),  QColor(44, 160, 44),
                                  QColor(214, 39, 40),  QColor(148, 103, 189), QColor(140, 86, 75)};
  return colors[i % 6];
}

}  // namespace

SessionsDialog::SessionsDialog(const QString& database, QWidget* parent) : QDialog(parent), database_(database) {
  setObjectName(QStringLiteral("sessionsDialog"));
  setWindowTitle(tr("Sessions of %1").arg(QFileInfo(database).fileName()));
  resize(900, 620);

  model_ = new QStandardItemModel(0, ColumnCount, this);
  model_->setHorizontalHeaderLabels({tr("Session"), tr("Kind"), tr("Model or task"), tr("Status"), tr("Started (UTC)"),
                                     tr("Duration (s)"), tr("Trials"), tr("Valid"), tr("Best (ms)")});
  model_->setSortRole(Qt::UserRole);
  table_ = new QTableView(this);
  table_->setObjectName(QStringLiteral("sessionsTable"));
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->setSortingEnabled(true);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setToolTip(tr("Select sessions to compare them; double-click one to reopen it"));

  plot_ = new QCustomPlot(this);
  plot_->setObjectName(QStringLiteral("comparePlot"));
  plot_->setMinimumHeight(200);
  plot_->xAxis->setLabel(tr("trials"));
  plot_->yAxis->setLabel(tr("latency (ms): end-to-end estimate, or the task's best"));
  plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
  plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  plot_->legend->setVisible(true);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  plot_->setNotAntialiasedElements(QCP::aeAll);
  plot_->setAntialiasedElements(QCP::aePlottables);

  note_ = new QLabel(this);
  note_->setObjectName(QStringLiteral("sessionsNote"));
  note_->setWordWrap(true);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  reopen_ = buttons->addButton(tr("&Reopen"), QDialogButtonBox::AcceptRole);
  reopen_->setObjectName(QStringLiteral("reopenButton"));
  reopen_->setEnabled(false);
  reopen_->setToolTip(tr("Show the session's tasks, curves and best programs in the main window"));
  compare_ = buttons->addButton(tr("&Compare..."), QDialogButtonBox::ActionRole);
  compare_->setObjectName(QStringLiteral("compareButton"));
  compare_->setEnabled(false);
  compare_->setToolTip(tr("Two selected sessions side by side: curves against trials and wall time, task by task"));
  connect(compare_, &QPushButton::clicked, this, [this] {
    const QList<qint64> ids = selectedSessions();
    if (ids.size() == 2) emit compareRequested(ids[0], ids[1]);
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(reopen_, &QPushButton::clicked, this, &SessionsDialog::reopenSelected);
  connect(table_, &QTableView::doubleClicked, this, &SessionsDialog::reopenSelected);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(table_);
  splitter->addWidget(plot_);
  splitter->setSizes({300, 260});
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(splitter, 1);
  layout->addWidget(note_);
  layout->addWidget(buttons);

  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
    reopen_->setEnabled(selectedSessions().size() == 1);
    compare_->setEnabled(selectedSessions().size() == 2);
    compareSelected();
  });
}

void SessionsDialog::load() {
  loaded_ = false;
  note_->setText(tr("Reading the sessions of %1...").arg(database_));
  using Result = std::pair<std::vector<store::SessionRow>, QString>;
  auto work = [path = database_.toStdString()]() -> Result {
    try {
      return {store::Database::open(path, store::OpenMode::ReadOnly)->sessions().all(), {}};
    } catch (const std::exception& e) {
      return {{}, QString::fromStdString(e.what())};
    }
  };
  auto* watcher = new QFutureWatcher<Result>(this);
  connect(watcher, &QFutureWatcher<Result>::finished, this, [this, watcher] {
    watcher->deleteLater();
    const auto [sessions, error] = watcher->result();
    if (!error.isEmpty()) {
      note_->setText(tr("Cannot read %1: %2").arg(database_, error));
      emit loadFailed(error);
      return;
    }
    fill(sessions);
    loaded_ = true;
    emit loaded();
  });
  watcher->setFuture(QtConcurrent::run(work));
}

void SessionsDialog::fill(const std::vector<store::SessionRow>& sessions) {
  model_->removeRows(0, model_->rowCount());
  for (const store::SessionRow& s : sessions) {
    const double duration = s.ended.empty() ? std::nan("") : store::secondsBetween(s.started, s.ended);
    const QString started = QString::fromStdString(s.started).left(19).replace('T', ' ');
    const double bestMs = std::isfinite(s.bestCost) ? s.bestCost * 1e3 : std::nan("");
    QStandardItem* status = cell(QString::fromStdString(s.status), QString::fromStdString(s.status));
    status->setToolTip(QString::fromStdString(s.message));  // why it failed or was interrupted
    model_->appendRow({
        cell(QString::number(s.id), qint64(s.id)),
        cell(QString::fromStdString(s.kind), QString::fromStdString(s.kind)),
        cell(QString::fromStdString(s.subject), QString::fromStdString(s.subject)),
        status,
        cell(started, started),
        cell(std::isfinite(duration) ? QString::number(duration, 'f', 1) : QStringLiteral("—"),
             std::isfinite(duration) ? duration : -1.0),
        cell(tr("%1 / %2").arg(s.records).arg(s.trialsTarget), qint64(s.records)),
        cell(QString::number(s.validRecords), qint64(s.validRecords)),
        cell(std::isfinite(bestMs) ? QString::number(bestMs, 'f', 4) : QStringLiteral("—"),
             std::isfinite(bestMs) ? bestMs : 1e300),
    });
  }
  table_->resizeColumnsToContents();
  note_->setText(sessions.empty()
                     ? tr("%1 has no session yet.").arg(database_)
                     : tr("%1 sessions in %2. Select sessions to compare them.").arg(sessions.size()).arg(database_));
}

void SessionsDialog::selectSessions(const QList<qint64>& ids) {
  QItemSelection selection;
  for (int row = 0; row < model_->rowCount(); ++row)
    if (ids.contains(model_->item(row, Id)->data(Qt::UserRole).toLongLong()))
      selection.select(model_->index(row, 0), model_->index(row, ColumnCount - 1));
  table_->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
}

QList<qint64> SessionsDialog::selectedSessions() const {
  QList<qint64> ids;
  for (const QModelIndex& index : table_->selectionModel()->selectedRows(Id))
    ids << model_->itemFromIndex(index)->data(Qt::UserRole).toLongLong();
  std::sort(ids.begin(), ids.end());
  return ids;
}

int SessionsDialog::comparedCurves() const {
  int n = 0;
  for (int i = 0; i < plot_->graphCount(); ++i)
    n += plot_->graph(i)->dataCount() > 0;
  return n;
}

void SessionsDialog::compareSelected() {
  const quint64 gen = ++generation_;
  const QList<qint64> ids = selectedSessions();
  const std::string path = database_.toStdString();
  auto work = [path, ids]() -> Comparison {
    Comparison c;
    try {
      auto db = store::Database::open(path, store::OpenMode::ReadOnly);
      for (qint64 id : ids) {
        const store::SessionHistory h = store::loadSessionHistory(*db, id);
        Curve curve;
        curve.session = id;
        curve.label = QStringLiteral("#%1 %2 (%3)")
                          .arg(id)
                          .arg(QString::fromStdString(h.session.subject).left(40))
                          .arg(h.session.kind == "model" ? QStringLiteral("estimate") : QStringLiteral("best"));
        for (const auto& [trials, seconds] : h.objectiveCurve()) {
          curve.trials << trials;
          curve.ms << seconds * 1e3;
        }
        // The curve goes on flat to the session's last trial.
        if (!curve.trials.isEmpty() && h.programs.size() > size_t(curve.trials.back())) {
          curve.trials << double(h.programs.size());
          curve.ms << curve.ms.back();
        }
        c.curves << curve;
      }
    } catch (const std::exception& e) {
      c.error = QString::fromStdString(e.what());
    }
    return c;
  };
  auto* watcher = new QFutureWatcher<Comparison>(this);
  connect(watcher, &QFutureWatcher<Comparison>::finished, this, [this, watcher, gen] {
    watcher->deleteLater();
    if (gen != generation_) return;  // a newer selection
    const Comparison c = watcher->result();
    plot_->clearGraphs();
    int shown = 0;
    for (const Curve& curve : c.curves) {
      QCPGraph* g = plot_->addGraph();
      g->setName(curve.label);
      g->setLineStyle(QCPGraph::lsStepLeft);
      g->setPen(QPen(curveColor(shown++), 1.5));
      g->setData(curve.trials, curve.ms, true);
    }
    plot_->rescaleAxes();
    plot_->replot(QCustomPlot::rpQueuedReplot);
    if (!c.error.isEmpty()) note_->setText(tr("Cannot compare: %1").arg(c.error));
    emit comparisonReady();
  });
  watcher->setFuture(QtConcurrent::run(work));
}

void SessionsDialog::reopenSelected() {
  const QList<qint64> ids = selectedSessions();
  if (ids.size() != 1) return;
  emit reopenRequested(ids.front());
  accept();
}

}  // namespace tessel::ui
