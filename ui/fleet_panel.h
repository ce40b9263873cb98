// The fleet panel: the measurement agents and queues of the Redis the next
// tuning measures through (core/fleet/fleet_status.h), read every two
// seconds off the UI thread, as `tessel fleet status` prints them. With
// "local" measurement it says so and reads nothing.
#pragma once

#include <QString>
#include <QTimer>
#include <QWidget>

class QLabel;
class QTableWidget;

namespace tessel::ui {

class FleetPanel : public QWidget {
  Q_OBJECT

 public:
  explicit FleetPanel(QWidget* parent = nullptr);
  // "local" or a Redis URL (redis://[:PASSWORD@]HOST:PORT): the fleet shown.
  void setMeasure(const QString& where);
  QTableWidget* agents() const { return agents_; }
  QTableWidget* queues() const { return queues_; }
  // What the panel says above its tables: the fleet's URL, or why it
  // cannot be read.
  QString statusText() const;
  // Small: beside the log, it must not make the window taller than the
  // log alone does (its tables scroll instead).
  QSize minimumSizeHint() const override { return {160, 60}; }

 signals:
  // After each reading, shown or failed.
  void refreshed();

 private:
  void refresh();
  QString where_ = QStringLiteral("local");
  QLabel* status_;
  QTableWidget* agents_;
  QTableWidget* queues_;
  QTimer timer_;
  bool reading_ = false;
  int generation_ = 0;  // readings of an earlier URL are dropped
};

}  // namespace tessel::ui
