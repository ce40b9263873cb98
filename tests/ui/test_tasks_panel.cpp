// The tasks panel: rows per task, progress updates, shares of the end-to-end
// estimate, how close each best is to its roof, numeric sorting and the
// selected task.
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QtTest>
#include <cmath>

#include "tessel_test.h"
#include "ui/tasks_panel.h"

using tessel::ui::TaskInfo;
using tessel::ui::TasksModel;
using tessel::ui::TasksPanel;

class TestTasksPanel : public QObject {
  Q_OBJECT

 private slots:
  void rowsSharesAndSorting() {
    TasksPanel panel;
    TasksModel* m = panel.model();
    m->setTasks({{"k0", "conv2d_relu", 2, 200e6}, {"k1", "max_pool2d", 1, 2e6}, {"k2", "dense", 1, 1e6}});
    QCOMPARE(m->rowCount(), 3);
    QCOMPARE(m->data(m->index(0, TasksModel::Name), Qt::DisplayRole).toString(), QString("conv2d_relu"));
    QCOMPARE(m->data(m->index(0, TasksModel::BestMs), Qt::DisplayRole).toString(), QString("-"));
    QVERIFY(std::isnan(m->estimateSeconds()));
    m->updateTask(0, 64, 1e-3);
    m->updateTask(1, 8, 0.5e-3);
    m->updateTask(2, 8, 0.5e-3);
    // 2 x 1 ms + 0.5 + 0.5 = 3 ms; task 0's share 2/3.
    QCOMPARE(m->estimateSeconds(), 3e-3);
    QVERIFY(std::fabs(m->data(m->index(0, TasksModel::Share), Qt::UserRole).toDouble() - 2.0 / 3) < 1e-12);
    QCOMPARE(m->data(m->index(0, TasksModel::Gflops), Qt::DisplayRole).toString(), QString("200.0"));
    QCOMPARE(m->data(m->index(0, TasksModel::Trials), Qt::DisplayRole).toInt(), 64);
    m->updateTask(2, 16, std::nan(""));  // a round without a better program keeps the best
    QCOMPARE(m->data(m->index(2, TasksModel::BestMs), Qt::UserRole).toDouble(), 0.5);

    // Sorting by GFLOP/s is numeric (200 > 4 > 2), not by text.
    panel.view()->sortByColumn(TasksModel::Gflops, Qt::DescendingOrder);
    auto* proxy = qobject_cast<QSortFilterProxyModel*>(panel.view()->model());
    QCOMPARE(proxy->data(proxy->index(0, TasksModel::Name)).toString(), QString("conv2d_relu"));
    QCOMPARE(proxy->data(proxy->index(2, TasksModel::Name)).toString(), QString("dense"));

    // Selecting a row (after sorting) names the task in the model's order.
    QSignalSpy selected(&panel, &TasksPanel::taskSelected);
    panel.view()->selectRow(1);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.at(0).at(0).toInt(), 1);  // max_pool2d
  }

  // "of roof": the best program's GFLOP/s over what the roofline says the task can reach.
  void roofColumnIsTheBestOverItsCeiling() {
    TasksModel m;
    m.setTasks({{"k0", "conv2d_relu", 1, 200e6}, {"k1", "dense", 1, 1e6}});
    m.updateTask(0, 8, 1e-3);                                                                  // 200 GFLOP/s
    QCOMPARE(m.data(m.index(0, TasksModel::Roof), Qt::DisplayRole).toString(), QString("-"));  // no ceilings yet
    m.setAttainable({800, 50});
    QCOMPARE(m.roofFraction(0), 0.25);
    QCOMPARE(m.data(m.index(0, TasksModel::Roof), Qt::DisplayRole).toString(), QString("25.0 %"));
    QVERIFY(std::isnan(m.roofFraction(1)));  // nothing measured yet
    QCOMPARE(m.data(m.index(1, TasksModel::Roof), Qt::DisplayRole).toString(), QString("-"));
    QCOMPARE(m.headerData(TasksModel::Roof, Qt::Horizontal, Qt::DisplayRole).toString(), QString("of roof"));
    m.setTasks({{"k2", "relu", 1, 1e6}});  // another model: its roofs are not known yet
    m.updateTask(0, 8, 1e-3);
    QVERIFY(std::isnan(m.roofFraction(0)));
  }
};

QTEST_MAIN(TestTasksPanel)
#include "test_tasks_panel.moc"
