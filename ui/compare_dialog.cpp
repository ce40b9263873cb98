#include "ui/compare_dialog.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>

#include "fusion/task_extraction.h"
#include "store/database.h"

namespace tessel::ui {

struct CompareDialog::Histories {
  store::SessionHistory a, b;
  store::SessionComparison comparison;
  QString error;  // "" if both were read
};

namespace {

const QColor kColour[2] = {QColor(31, 119, 180), QColor(255, 127, 14)};  // A blue, B orange
// The tasks marked as those the sessions differ most on: at most this many,
// each at least this share of the summed difference.
constexpr int kMarkedTasks = 3;
constexpr double kMarkedShare = 0.1;

struct Listing {
  std::vector<store::SessionRow> sessions;  // newest first
  QString error;
};

Listing listSessions(const std::string& database) {
  Listing l;
  try {
    if (database.empty()) throw std::runtime_error("no database is chosen");
    auto db = store::Database::open(database, store::OpenMode::ReadOnly);
    l.sessions = db->sessions().all();
    std::reverse(l.sessions.begin(), l.sessions.end());
  } catch (const std::exception& e) {
    l.error = QString::fromStdString(e.what());
  }
  return l;
}

QString sessionText(const store::SessionRow& s) {
  const double objective = s.kind == "model" ? s.estimateSeconds : s.bestCost;
  return QObject::tr("#%1  %2 %3, %4 trials%5")
      .arg(s.id)
      .arg(QString::fromStdString(s.kind), QString::fromStdString(s.subject).left(48))
      .arg(s.records)
      .arg(std::isfinite(objective) ? QObject::tr(", %1 ms").arg(objective * 1e3, 0, 'f', 3) : QString());
}

// (x, ms) wherever the objective improved, against trials or seconds since
// the session began; flat on to its last trial or round.
void objectivePoints(const store::SessionHistory& h, bool wallTime, QVector<double>& x, QVector<double>& ms) {
  const bool model = h.session.kind == "model";
  double best = INFINITY, lastX = 0;
  for (const store::SessionRound& r : h.rounds) {
    const double v = model ? r.estimateSeconds : r.bestSeconds;
    lastX = wallTime ? r.elapsedSeconds : double(r.totalTrials);
    if (!std::isfinite(v) || v >= best) continue;
    best = v;
    x << lastX;
    ms << v * 1e3;
  }
  if (!x.isEmpty() && lastX > x.back()) {
    x << lastX;
    ms << ms.back();
  }
}

QString milliseconds(double seconds) {
  return std::isfinite(seconds) ? QString::number(seconds * 1e3, 'f', 4) : QStringLiteral("—");
}

QTableWidgetItem* numberItem(double value, const QString& text) {
  auto* item = new QTableWidgetItem(text);
  item->setData(Qt::UserRole, value);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

CompareDialog::CompareDialog(QWidget* parent)
    : QDialog(parent), comparison_(std::make_shared<store::SessionComparison>()) {
  setObjectName(QStringLiteral("compareDialog"));
  setWindowTitle(tr("Compare sessions"));
  resize(900, 720);
  auto* form = new QFormLayout;
  form->addRow(tr("Session &A:"), createSideRow(A));
  form->addRow(tr("Session &B:"), createSideRow(B));

  axis_ = new QComboBox(this);
  axis_->setObjectName(QStringLiteral("compareAxis"));
  axis_->addItem(tr("against trials"), Trials);
  axis_->addItem(tr("against wall time"), WallTime);
  connect(axis_, &QComboBox::currentIndexChanged, this, [this] { drawCurves(); });
  summary_ = new QLabel(tr("Choose two sessions."), this);
  summary_->setObjectName(QStringLiteral("compareSummary"));
  summary_->setWordWrap(true);
  auto* top = new QHBoxLayout;
  top->addWidget(summary_, 1);
  top->addWidget(axis_);

  plot_ = new QCustomPlot(this);
  plot_->setObjectName(QStringLiteral("comparePlot"));
  plot_->setMinimumHeight(200);
  plot_->yAxis->setLabel(tr("objective (ms)"));
  plot_->legend->setVisible(true);
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);

  table_ = new QTableWidget(0, ColumnCount, this);
  table_->setObjectName(QStringLiteral("compareTable"));
  table_->setHorizontalHeaderLabels({tr("Task"), tr("Weight"), tr("A best (ms)"), tr("B best (ms)"), tr("B / A"),
                                     tr("Model Δ (ms)"), tr("Trials A"), tr("Trials B")});
  table_->horizontalHeaderItem(ModelDelta)
      ->setToolTip(tr("What B's best costs the model against A's: weight x (B - A); negative: B is faster"));
  table_->horizontalHeader()->setSectionResizeMode(TaskColumn, QHeaderView::Stretch);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->hide();

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(plot_);
  split->addWidget(table_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(top);
  layout->addWidget(split, 1);
  layout->addWidget(buttons);
}

QWidget* CompareDialog::createSideRow(Side side) {
  auto* row = new QWidget(this);
  auto* h = new QHBoxLayout(row);
  h->setContentsMargins(0, 0, 0, 0);
  SideWidgets& w = sides_[side];
  const QString name = side == A ? QStringLiteral("A") : QStringLiteral("B");
  w.database = new QLineEdit(row);
  w.database->setObjectName(QStringLiteral("compareDatabase") + name);
  w.database->setReadOnly(true);
  w.database->setToolTip(tr("The database this session is read from (Browse: another one)"));
  auto* browse = new QPushButton(tr("Browse..."), row);
  connect(browse, &QPushButton::clicked, this, [this, side] { this->browse(side); });
  w.sessions = new QComboBox(row);
  w.sessions->setObjectName(QStringLiteral("compareSession") + name);
  w.sessions->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  connect(w.sessions, &QComboBox::currentIndexChanged, this, [this] { compareNow(); });
  h->addWidget(w.database, 2);
  h->addWidget(browse);
  h->addWidget(w.sessions, 3);
  return row;
}

void CompareDialog::browse(Side side) {
  const QString file = QFileDialog::getOpenFileName(this, tr("Database of session %1").arg(side == A ? "A" : "B"),
                                                    QFileInfo(database(side)).absolutePath(),
                                                    tr("Tuning databases (*.db *.sqlite);;All files (*)"));
  if (!file.isEmpty()) setDatabase(side, file);
}

void CompareDialog::setDatabase(Side side, const QString& database, qint64 wanted) {
  SideWidgets& w = sides_[side];
  w.database->setText(database);
  wanted_[side] = wanted;
  w.sessions->blockSignals(true);
  w.sessions->clear();
  w.sessions->blockSignals(false);
  auto* watcher = new QFutureWatcher<Listing>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, side, database] {
    watcher->deleteLater();
    if (this->database(side) != database) return;  // another database was chosen meanwhile
    const Listing l = watcher->result();
    if (!l.error.isEmpty()) {
      summary_->setText(tr("Cannot read %1: %2").arg(database, l.error));
      emit failed(summary_->text());
      return;
    }
    SideWidgets& w = sides_[side];
    w.sessions->blockSignals(true);
    for (const store::SessionRow& s : l.sessions)
      w.sessions->addItem(sessionText(s), qint64(s.id));
    // The one asked for, else the newest that is not the other side's.
    int chosen = w.sessions->findData(wanted_[side]);
    const Side other = side == A ? B : A;
    const bool sameFile = this->database(other) == database;
    const qint64 taken = session(other) ? session(other) : wanted_[other];  // the other side may still be listing
    for (int i = 0; chosen < 0 && i < w.sessions->count(); ++i)
      if (!sameFile || w.sessions->itemData(i).toLongLong() != taken) chosen = i;
    w.sessions->setCurrentIndex(chosen);
    w.sessions->blockSignals(false);
    emit sessionsListed(side);
    compareNow();
  });
  watcher->setFuture(QtConcurrent::run(listSessions, database.toStdString()));
}

bool CompareDialog::setSession(Side side, qint64 session) {
  const int index = sides_[side].sessions->findData(session);
  if (index < 0) return false;
  sides_[side].sessions->setCurrentIndex(index);
  return true;
}

QString CompareDialog::database(Side side) const {
  return sides_[side].database->text();
}

qint64 CompareDialog::session(Side side) const {
  const QComboBox* box = sides_[side].sessions;
  return box->currentIndex() < 0 ? 0 : box->currentData().toLongLong();
}

void CompareDialog::setAxis(Axis axis) {
  axis_->setCurrentIndex(axis_->findData(axis));
}

void CompareDialog::compareNow() {
  const qint64 a = session(A), b = session(B);
  if (!a || !b) return;
  const quint64 generation = ++generation_;
  summary_->setText(tr("Reading sessions %1 and %2...").arg(a).arg(b));
  auto work = [pathA = database(A).toStdString(), pathB = database(B).toStdString(), a, b] {
    auto h = std::make_shared<Histories>();
    try {
      h->a = store::loadSessionHistory(*store::Database::open(pathA, store::OpenMode::ReadOnly), a);
      h->b = store::loadSessionHistory(*store::Database::open(pathB, store::OpenMode::ReadOnly), b);
      h->comparison = store::compareSessions(h->a, h->b);
    } catch (const std::exception& e) {
      h->error = QString::fromStdString(e.what());
    }
    return std::shared_ptr<const Histories>(h);
  };
  auto* watcher = new QFutureWatcher<std::shared_ptr<const Histories>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
    watcher->deleteLater();
    if (generation != generation_) return;  // another pair was chosen meanwhile
    showComparison(*watcher->result());
    histories_ = watcher->result();
    drawCurves();
    emit compared();
  });
  watcher->setFuture(QtConcurrent::run(work));
}

void CompareDialog::showComparison(const Histories& h) {
  if (!h.error.isEmpty()) {
    *comparison_ = {};
    table_->setRowCount(0);
    summary_->setText(tr("Cannot compare: %1").arg(h.error));
    emit failed(summary_->text());
    return;
  }
  *comparison_ = h.comparison;
  const store::SessionComparison& c = *comparison_;
  const double ratio = c.objectiveB / c.objectiveA;
  summary_->setText(tr("A: #%1 %2, %3 ms.  B: #%4 %5, %6 ms%7.")
                        .arg(h.a.session.id)
                        .arg(QString::fromStdString(h.a.session.subject), milliseconds(c.objectiveA))
                        .arg(h.b.session.id)
                        .arg(QString::fromStdString(h.b.session.subject), milliseconds(c.objectiveB))
                        .arg(std::isfinite(ratio) ? tr(" (%1x A)").arg(ratio, 0, 'f', 3) : QString()));
  fillTable();
}

void CompareDialog::fillTable() {
  const store::SessionComparison& c = *comparison_;
  table_->setSortingEnabled(false);
  table_->setRowCount(int(c.tasks.size()));
  for (int row = 0; row < int(c.tasks.size()); ++row) {
    const store::TaskComparison& t = c.tasks[size_t(row)];
    const double ratio = t.ratio(), delta = t.weightedDifference();
    auto* name = new QTableWidgetItem(QString::fromStdString(fusion::taskLabel(t.task.op, t.task.shape)));
    name->setToolTip(QString::fromStdString(t.task.key));
    table_->setItem(row, TaskColumn, name);
    table_->setItem(row, Weight, numberItem(t.weight, QString::number(t.weight)));
    table_->setItem(row, BestA, numberItem(t.secondsA, milliseconds(t.secondsA)));
    table_->setItem(row, BestB, numberItem(t.secondsB, milliseconds(t.secondsB)));
    table_->setItem(row, Ratio,
                    numberItem(ratio, std::isfinite(ratio) ? QString::number(ratio, 'f', 3) : QStringLiteral("—")));
    table_->setItem(
        row, ModelDelta,
        numberItem(delta, std::isfinite(delta) ? QString::number(delta * 1e3, 'f', 4) : QStringLiteral("—")));
    table_->setItem(row, TrialsA, numberItem(t.trialsA, QString::number(t.trialsA)));
    table_->setItem(row, TrialsB, numberItem(t.trialsB, QString::number(t.trialsB)));
    // The tasks that differ most (the first rows): marked, as in the graph.
    const bool marked = row < kMarkedTasks && c.differenceShare(t.task.key) >= kMarkedShare;
    for (int col = 0; col < ColumnCount; ++col) {
      QTableWidgetItem* item = table_->item(row, col);
      item->setData(Qt::UserRole + 1, marked);
      if (marked) item->setBackground(QColor(255, 224, 214));
    }
  }
}

int CompareDialog::markedRows() const {
  int marked = 0;
  for (int row = 0; row < table_->rowCount(); ++row)
    marked += table_->item(row, TaskColumn)->data(Qt::UserRole + 1).toBool();
  return marked;
}

void CompareDialog::drawCurves() {
  plot_->clearGraphs();
  const bool wallTime = axis_->currentData().toInt() == WallTime;
  plot_->xAxis->setLabel(wallTime ? tr("wall time (s)") : tr("trials"));
  if (histories_ && histories_->error.isEmpty()) {
    const store::SessionHistory* side[2] = {&histories_->a, &histories_->b};
    for (int i = 0; i < 2; ++i) {
      QVector<double> x, ms;
      objectivePoints(*side[i], wallTime, x, ms);
      QCPGraph* g = plot_->addGraph();
      g->setName(tr("%1: #%2 %3")
                     .arg(i == 0 ? "A" : "B")
                     .arg(side[i]->session.id)
                     .arg(QString::fromStdString(side[i]->session.subject).left(32)));
      g->setLineStyle(QCPGraph::lsStepLeft);
      g->setPen(QPen(kColour[i], 1.5));
      g->setData(x, ms, true);
    }
  }
  plot_->rescaleAxes();
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace tessel::ui
