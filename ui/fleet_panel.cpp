#include "ui/fleet_panel.h"

#include <QDateTime>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "fleet/fleet_status.h"
#include "fleet/redis_client.h"
#include "fleet/redis_url.h"

namespace tessel::ui {

namespace {

struct Reading {
  fleet::FleetView view;
  QString error;
};

// Off the UI thread: a short connect timeout, so an unreachable host costs
// the panel two seconds, never the studio.
Reading readFleet(const QString& url) {
  Reading r;
  try {
    fleet::RedisClient redis(fleet::parseRedisUrl(url.toStdString()), 2);
    r.view = fleet::fleetStatus(redis);
  } catch (const std::exception& e) {
    r.error = QString::fromStdString(e.what());
  }
  return r;
}

QTableWidgetItem* cell(const QString& text, const QString& tip = {}) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
  if (!tip.isEmpty()) item->setToolTip(tip);
  return item;
}

QTableWidget* table(QWidget* parent, const QStringList& headers, const QString& name) {
  auto* t = new QTableWidget(0, int(headers.size()), parent);
  t->setObjectName(name);
  t->setHorizontalHeaderLabels(headers);
  t->verticalHeader()->hide();
  t->horizontalHeader()->setStretchLastSection(true);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  return t;
}

}  // namespace

FleetPanel::FleetPanel(QWidget* parent) : QWidget(parent) {
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("fleetStatus"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  agents_ = table(this,
                  {tr("Agent"), tr("Target"), tr("Device"), tr("Slots"), tr("Jobs"), tr("Programs"), tr("Programs/s"),
                   tr("In hand")},
                  QStringLiteral("fleetAgents"));
  queues_ = table(this, {tr("Target"), tr("Queued"), tr("In flight")}, QStringLiteral("fleetQueues"));
  auto* layout = new QVBoxLayout(this);
  layout->setSizeConstraint(QLayout::SetNoConstraint);  // the minimum is minimumSizeHint's
  layout->addWidget(status_);
  layout->addWidget(agents_, 3);
  layout->addWidget(queues_, 1);
  timer_.setInterval(2000);
  connect(&timer_, &QTimer::timeout, this, &FleetPanel::refresh);
  setMeasure(where_);
}

QString FleetPanel::statusText() const {
  return status_->text();
}

void FleetPanel::setMeasure(const QString& where) {
  where_ = where.trimmed();
  ++generation_;
  agents_->setRowCount(0);
  queues_->setRowCount(0);
  if (where_.isEmpty() || where_ == QLatin1String("local")) {
    timer_.stop();
    status_->setText(
        tr("Programs are built and measured on this machine. Give a Redis URL as where to measure "
           "to tune with the agents of a fleet (tessel-agent)."));
    return;
  }
  try {
    status_->setText(
        tr("Reading %1 ...").arg(QString::fromStdString(fleet::parseRedisUrl(where_.toStdString()).str())));
  } catch (const std::invalid_argument& e) {
    timer_.stop();
    status_->setText(QString::fromStdString(e.what()));
    emit refreshed();
    return;
  }
  timer_.start();
  refresh();
}

void FleetPanel::refresh() {
  if (reading_) return;  // the previous reading is still out (a slow host)
  reading_ = true;
  const int generation = generation_;
  auto* watcher = new QFutureWatcher<Reading>(this);
  connect(watcher, &QFutureWatcher<Reading>::finished, this, [this, watcher, generation] {
    watcher->deleteLater();
    reading_ = false;
    if (generation != generation_) return;
    const Reading r = watcher->result();
    if (!r.error.isEmpty()) {
      status_->setText(r.error);
      emit refreshed();
      return;
    }
    const fleet::FleetView& v = r.view;
    status_->setText(tr("Fleet at %1: %n agent(s), read at %2", nullptr, int(v.agents.size()))
                         .arg(QString::fromStdString(v.redis), QTime::currentTime().toString("HH:mm:ss")));
    agents_->setRowCount(int(v.agents.size()));
    for (int i = 0; i < int(v.agents.size()); ++i) {
      const fleet::AgentView& a = v.agents[size_t(i)];
      const QString up =
          QDateTime::fromSecsSinceEpoch(a.started).toString(QStringLiteral("'up since' yyyy-MM-dd HH:mm"));
      agents_->setItem(i, 0, cell(QString::fromStdString(a.name), QString::fromStdString(a.host) + ", " + up));
      agents_->setItem(i, 1, cell(QString::fromStdString(a.target)));
      agents_->setItem(i, 2, cell(QString::fromStdString(a.device)));
      agents_->setItem(i, 3, cell(QString::number(a.jobSlots)));
      agents_->setItem(i, 4, cell(QString::number(a.jobsDone)));
      agents_->setItem(i, 5, cell(QString::number(a.programsDone)));
      agents_->setItem(i, 6, cell(QString::number(a.programsPerSecond, 'f', 2)));
      QStringList jobs;
      for (const std::string& j : a.jobsInHand)
        jobs << QString::fromStdString(j);
      agents_->setItem(i, 7, cell(jobs.join(QStringLiteral(", "))));
    }
    queues_->setRowCount(int(v.queues.size()));
    for (int i = 0; i < int(v.queues.size()); ++i) {
      const fleet::QueueView& q = v.queues[size_t(i)];
      queues_->setItem(i, 0, cell(QString::fromStdString(q.target)));
      queues_->setItem(i, 1, cell(QString::number(q.queued)));
      queues_->setItem(i, 2, cell(QString::number(q.inFlight)));
    }
    emit refreshed();
  });
  watcher->setFuture(QtConcurrent::run(readFleet, where_));
}

}  // namespace tessel::ui
