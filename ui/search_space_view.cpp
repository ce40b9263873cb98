#include "ui/search_space_view.h"

#include <QApplication>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>

namespace tessel::ui {

namespace {

struct Computed {
  search::SpaceSummary summary;
  QString error;
};

constexpr int kSamples = 5;

QTreeWidgetItem* addItem(QTreeWidgetItem* parent, const QString& text, const QString& kind) {
  auto* item = new QTreeWidgetItem(parent, QStringList{text});
  item->setData(0, SearchSpaceView::kKindRole, kind);
  return item;
}

QString bestText(double seconds) {
  if (std::isnan(seconds)) return QObject::tr("Best program");
  return QObject::tr("Best program: %1 ms").arg(QString::number(seconds * 1e3, 'g', 4));
}

}  // namespace

SearchSpaceView::SearchSpaceView(QWidget* parent) : QWidget(parent) {
  tree_ = new QTreeWidget(this);
  tree_->setColumnCount(1);
  tree_->setHeaderHidden(true);
  tree_->setUniformRowHeights(false);  // the loop nest item spans many lines
  tree_->setWordWrap(false);
  tree_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  tree_->header()->setStretchLastSection(false);
  details_ = new QPlainTextEdit(this);
  details_->setReadOnly(true);
  details_->setLineWrapMode(QPlainTextEdit::NoWrap);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setStyleHint(QFont::Monospace);
  details_->setFont(mono);
  details_->setPlaceholderText(tr("Select a sketch to see its loop nest"));

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(tree_);
  split->addWidget(details_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);

  connect(tree_, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item, int) { onItemActivated(item); });
  connect(tree_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item, int) { onItemActivated(item); });
  connect(tree_, &QTreeWidget::currentItemChanged, this,
          [this](QTreeWidgetItem* item, QTreeWidgetItem*) { onCurrentChanged(item); });
}

QString SearchSpaceView::formatCount(double n) {
  if (!std::isfinite(n)) return QStringLiteral("%1").arg(n);
  if (n < 1e6) return QString::number(qint64(std::llround(n)));
  // "1.2e+09" -> "1.2e9"
  QString s = QString::number(n, 'g', 2);
  s.replace(QStringLiteral("e+0"), QStringLiteral("e")).replace(QStringLiteral("e+"), QStringLiteral("e"));
  return s;
}

void SearchSpaceView::showTask(const task::SearchTask& task, const QString& bestDecisions, double bestSeconds,
                               const QString& bestSteps) {
  const quint64 gen = ++generation_;
  ready_ = false;
  summary_ = {};
  bestItem_ = nullptr;
  lastPicked_ = nullptr;
  taskKey_ = QString::fromStdString(task.key);
  bestDecisions_ = bestDecisions;
  bestSteps_ = bestSteps;
  bestSeconds_ = bestSeconds;
  tree_->clear();
  details_->clear();
  addItem(tree_->invisibleRootItem(), tr("Computing the search space of %1…").arg(taskKey_), QStringLiteral("busy"));
  // Sketch generation and the annotation probes take a while on fused tasks.
  auto work = [task]() -> Computed {
    try {
      return {search::summarizeSpace(task, kSamples), {}};
    } catch (const std::exception& e) {
      return {{}, QString::fromUtf8(e.what())};
    }
  };
  auto* watcher = new QFutureWatcher<Computed>(this);
  connect(watcher, &QFutureWatcher<Computed>::finished, this, [this, watcher, gen] {
    watcher->deleteLater();
    if (gen != generation_) return;  // superseded
    Computed c = watcher->result();
    ready_ = true;
    lastPicked_ = nullptr;
    tree_->clear();
    if (!c.error.isEmpty()) {
      addItem(tree_->invisibleRootItem(), tr("Cannot describe the search space: %1").arg(c.error),
              QStringLiteral("error"));
      emit failed(c.error);
      return;
    }
    summary_ = std::move(c.summary);
    populate();
    emit ready();
    if (hasBest()) {
      emit programSelected(bestText(bestSeconds_), bestDecisions_, bestSteps_);
    } else if (!summary_.sampleDecisions.empty()) {
      emit programSelected(tr("Sample 1"), QString::fromStdString(summary_.sampleDecisions.front()), QString());
    }
  });
  watcher->setFuture(QtConcurrent::run(work));
}

void SearchSpaceView::populate() {
  QTreeWidgetItem* root = tree_->invisibleRootItem();
  const size_t n = summary_.sketches.size();
  auto* space = addItem(root,
                        tr("Search space: %1 programs (%2 %3)")
                            .arg(formatCount(summary_.size))
                            .arg(n)
                            .arg(n == 1 ? tr("sketch") : tr("sketches")),
                        QStringLiteral("space"));
  space->setToolTip(0, tr("Task %1. A sketch's size is the product of its parameters' domain sizes; where a "
                          "range depends on other choices the widest range seen is counted.")
                           .arg(taskKey_));
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setStyleHint(QFont::Monospace);
  for (const search::SketchSummary& s : summary_.sketches) {
    QStringList rules;
    for (const std::string& r : s.rules)
      rules << QString::fromStdString(r);
    auto* sk = addItem(space,
                       tr("Sketch %1: %2 — %3 programs")
                           .arg(s.index)
                           .arg(rules.isEmpty() ? tr("no rule") : rules.join(QStringLiteral(", ")))
                           .arg(formatCount(s.size)),
                       QStringLiteral("sketch"));
    sk->setData(0, Qt::UserRole, int(s.index));
    addItem(sk, tr("Rules: %1").arg(rules.isEmpty() ? tr("none") : rules.join(QStringLiteral(" → "))),
            QStringLiteral("rules"));
    auto* loops = addItem(sk, tr("Loop nest"), QStringLiteral("loops"));
    QString nest = QString::fromStdString(s.loopNest).trimmed();
    auto* text = addItem(loops, nest, QStringLiteral("loopText"));
    text->setFont(0, mono);
    text->setToolTip(0, nest);
    auto* params = addItem(sk, tr("Parameters (%1)").arg(s.parameters.size()), QStringLiteral("parameters"));
    for (const search::ParameterSummary& p : s.parameters) {
      auto* item =
          addItem(params,
                  QStringLiteral("%1 — %2 (%3)")
                      .arg(QString::fromStdString(p.key), QString::fromStdString(p.domain), formatCount(p.choices)),
                  QStringLiteral("parameter"));
      item->setData(0, Qt::UserRole, QString::fromStdString(p.key));
    }
    sk->setExpanded(true);
    params->setExpanded(true);
  }
  space->setExpanded(true);

  auto* samples = addItem(root, tr("Samples (%1)").arg(summary_.samples.size()), QStringLiteral("samples"));
  for (size_t i = 0; i < summary_.samples.size(); ++i) {
    QString text = QString::fromStdString(summary_.samples[i]);
    auto* item = addItem(samples, tr("Sample %1: %2").arg(i + 1).arg(text), QStringLiteral("sample"));
    item->setData(0, kDecisionsRole, QString::fromStdString(summary_.sampleDecisions[i]));
    item->setToolTip(0, tr("Click to show its code.\n%1").arg(text));
  }
  samples->setExpanded(true);
  bestItem_ = addItem(root, QString(), QStringLiteral("best"));
  updateBestItem();
  // The details pane starts on the first sketch's loop nest.
  if (space->childCount()) tree_->setCurrentItem(space->child(0));
}

void SearchSpaceView::updateBestItem() {
  if (!bestItem_) return;
  if (!hasBest()) {
    bestItem_->setText(0, tr("Best program: none yet"));
    bestItem_->setToolTip(0, tr("No program of this task has been measured"));
  } else {
    bestItem_->setText(0, bestText(bestSeconds_));
    bestItem_->setToolTip(0, tr("Click to show its code"));
  }
  bestItem_->setData(0, kDecisionsRole, bestDecisions_);
  bestItem_->setData(0, kStepsRole, bestSteps_);
}

void SearchSpaceView::setBest(const QString& bestDecisions, double bestSeconds, const QString& bestSteps) {
  bestDecisions_ = bestDecisions;
  bestSteps_ = bestSteps;
  bestSeconds_ = bestSeconds;
  updateBestItem();
}

void SearchSpaceView::clear() {
  ++generation_;
  ready_ = false;
  summary_ = {};
  bestItem_ = nullptr;
  lastPicked_ = nullptr;
  taskKey_.clear();
  bestDecisions_.clear();
  bestSteps_.clear();
  bestSeconds_ = std::nan("");
  tree_->clear();
  details_->clear();
}

void SearchSpaceView::onItemActivated(QTreeWidgetItem* item) {
  if (!item) return;
  QString kind = item->data(0, kKindRole).toString();
  QString decisions = item->data(0, kDecisionsRole).toString();
  QString steps = item->data(0, kStepsRole).toString();
  if ((kind != QLatin1String("sample") && kind != QLatin1String("best")) || (decisions.isEmpty() && steps.isEmpty()))
    return;
  // A double click (or a style that activates on single click) reports the
  // same pick twice: the code view needs it once.
  if (item == lastPicked_ && pickClock_.isValid() && pickClock_.elapsed() < QApplication::doubleClickInterval()) return;
  lastPicked_ = item;
  pickClock_.start();
  QString title =
      kind == QLatin1String("best") ? bestText(bestSeconds_) : item->text(0).section(QLatin1Char(':'), 0, 0);
  emit programSelected(title, decisions, steps);
}

void SearchSpaceView::onCurrentChanged(QTreeWidgetItem* item) {
  // The details pane: the sketch's loop nest for anything inside a sketch,
  // else the item's own text.
  QTreeWidgetItem* sketch = item;
  while (sketch && sketch->data(0, kKindRole).toString() != QLatin1String("sketch"))
    sketch = sketch->parent();
  if (sketch) {
    size_t k = size_t(sketch->data(0, Qt::UserRole).toInt());
    if (k < summary_.sketches.size()) {
      const search::SketchSummary& s = summary_.sketches[k];
      QString text = QString::fromStdString(s.loopNest);
      text += tr("\nParameters:\n");
      for (const search::ParameterSummary& p : s.parameters)
        text += QStringLiteral("  %1: %2 (%3)\n")
                    .arg(QString::fromStdString(p.key), QString::fromStdString(p.domain), formatCount(p.choices));
      details_->setPlainText(text);
      return;
    }
  }
  details_->setPlainText(item ? item->toolTip(0).isEmpty() ? item->text(0) : item->toolTip(0) : QString());
}

}  // namespace tessel::ui
