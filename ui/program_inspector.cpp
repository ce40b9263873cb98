#include "ui/program_inspector.h"

#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextEdit>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "schedule/step_words.h"
#include "search/space_summary.h"
#include "store/task_rows.h"
#include "ui/code_view.h"

namespace tessel::ui {
namespace {

constexpr int kOrdinalRole = Qt::UserRole;   // on the Number column: the program's ordinal
constexpr int kSortRole = Qt::UserRole + 1;  // the number a column sorts by
constexpr double kMissing = HUGE_VAL;        // sorts last

// A cell shown as text and sorted by a number.
class NumberItem : public QTableWidgetItem {
 public:
  NumberItem(const QString& text, double sortKey) : QTableWidgetItem(text) { setData(kSortRole, sortKey); }
  bool operator<(const QTableWidgetItem& other) const override {
    return data(kSortRole).toDouble() < other.data(kSortRole).toDouble();
  }
};

QString ordinalText(int n) {
  const int tens = n % 100;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : n % 10 == 1              ? "st"
                       : n % 10 == 2              ? "nd"
                       : n % 10 == 3              ? "rd"
                                                  : "th";
  return QString::number(n) + QLatin1String(suffix);
}

QString ms(double seconds) {
  return QString::number(seconds * 1e3, 'f', seconds < 1e-3 ? 4 : 3);
}

// (max - min) / median of the repeats, in percent (0 with one repeat).
double spreadPercent(const store::RecordRow& r) {
  if (!r.ok()) return kMissing;
  const auto [lo, hi] = std::minmax_element(r.costs.begin(), r.costs.end());
  return 100.0 * (*hi - *lo) / r.medianCost();
}

QString modelState(const store::RecordRow& r) {
  const QString name = QString::fromStdString(r.costModel.empty() ? std::string("the model") : r.costModel);
  if (r.modelPretrained) return QObject::tr("%1, loaded pre-trained").arg(name);
  if (r.scoredUntrained()) return QObject::tr("%1, untrained: the score says nothing yet").arg(name);
  if (r.modelTrainedOn > 0) return QObject::tr("%1, trained on %2 measured programs").arg(name).arg(r.modelTrainedOn);
  return name;  // a file older than schema 4 does not say
}

QPlainTextEdit* monospaced(QWidget* parent, const QString& placeholder) {
  auto* e = new QPlainTextEdit(parent);
  e->setReadOnly(true);
  e->setLineWrapMode(QPlainTextEdit::NoWrap);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setStyleHint(QFont::Monospace);
  e->setFont(mono);
  e->setPlaceholderText(placeholder);
  return e;
}

}  // namespace

ProgramInspector::ProgramInspector(QWidget* parent) : QDialog(parent) {
  setObjectName(QStringLiteral("programInspector"));
  setWindowTitle(tr("Program inspector"));
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("inspectorSummary"));
  summary_->setTextFormat(Qt::PlainText);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_->setWordWrap(true);

  table_ = new QTableWidget(0, ColumnCount, this);
  table_->setObjectName(QStringLiteral("inspectorPrograms"));
  table_->setHorizontalHeaderLabels({tr("#"), tr("Median (ms)"), tr("Repeats"), tr("Spread"), tr("Score"),
                                     tr("By score"), tr("By time"), tr("Model trained on")});
  table_->horizontalHeaderItem(Spread)->setToolTip(tr("(slowest - fastest repeat) / median"));
  table_->horizontalHeaderItem(ScoreRank)->setToolTip(tr("Rank by the cost model's score (1 = predicted fastest)"));
  table_->horizontalHeaderItem(TimeRank)->setToolTip(tr("Rank by measured time (1 = fastest)"));
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSortIndicator(Number, Qt::AscendingOrder);  // as measured, until the user sorts
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  connect(table_, &QTableWidget::currentCellChanged, this, [this](int row) {
    if (row < 0) return;
    if (QTableWidgetItem* item = table_->item(row, Number)) {
      const int ordinal = item->data(kOrdinalRole).toInt();
      if (ordinal != current_) showProgram(ordinal);
    }
  });

  tabs_ = new QTabWidget(this);
  tabs_->setObjectName(QStringLiteral("inspectorTabs"));
  steps_ = monospaced(tabs_, tr("The program's schedule steps"));
  loops_ = monospaced(tabs_, tr("The program's loop nest"));
  code_ = new CodeView(tabs_);
  diffText_ = new QTextEdit(tabs_);
  diffText_->setReadOnly(true);
  diffText_->setLineWrapMode(QTextEdit::NoWrap);
  diffText_->setFont(steps_->font());
  tabs_->insertTab(StepsTab, steps_, tr("Steps"));
  tabs_->insertTab(LoopNestTab, loops_, tr("Loop nest"));
  tabs_->insertTab(CodeTab, code_, tr("Code"));
  tabs_->insertTab(DiffTab, diffText_, tr("Against the fastest"));

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(table_);
  split->addWidget(tabs_);
  split->setStretchFactor(1, 1);
  split->setSizes({560, 540});
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addWidget(split, 1);
  resize(1100, 640);
}

ProgramInspector::~ProgramInspector() = default;

bool ProgramInspector::inspect(const QString& database, qint64 session, const task::SearchTask& task,
                               const QString& taskLabel, int ordinal) {
  error_.clear();
  try {
    const store::TaskRow row = store::taskRowOf(task);
    auto db = store::Database::open(database.toStdString(), store::OpenMode::ReadOnly);
    listing_ = store::listPrograms(*db, row.key, row.target, session);
  } catch (const std::exception& e) {
    error_ = tr("Cannot read the programs of %1 from %2: %3").arg(taskLabel, database, QString::fromUtf8(e.what()));
    return false;
  }
  if (listing_.programs.empty()) {
    error_ = tr("Session %1 has measured no program of %2").arg(session).arg(taskLabel);
    return false;
  }
  task_ = task;
  taskLabel_ = taskLabel;
  setWindowTitle(tr("Programs of %1 — session %2").arg(taskLabel).arg(session));
  fastestWords_.clear();
  if (listing_.fastest >= 0) {
    QString why;  // its steps do not replay: nothing to diff against
    fastestWords_ = replayed(listing_.programs[size_t(listing_.fastest)].record, nullptr, &why);
  }
  current_ = -1;
  fillTable();
  const int wanted = ordinal >= 0 && ordinal < int(listing_.programs.size()) ? ordinal
                     : listing_.fastest >= 0                                 ? listing_.fastest
                                                                             : 0;
  return showProgram(wanted);
}

std::vector<std::string> ProgramInspector::replayed(const store::RecordRow& record, schedule::State* end,
                                                    QString* why) const {
  try {
    return schedule::stepsInWords(task_.dag, schedule::deserializeSteps(record.steps), end);
  } catch (const std::exception& e) {
    // Not only ScheduleError: damaged steps must never take the inspector down.
    *why = QString::fromUtf8(e.what());
    return {};
  }
}

void ProgramInspector::fillTable() {
  const QSignalBlocker block(table_);
  table_->setSortingEnabled(false);
  table_->setRowCount(int(listing_.programs.size()));
  for (const store::ListedProgram& p : listing_.programs) {
    const store::RecordRow& r = p.record;
    const int row = p.ordinal;
    auto* number = new NumberItem(QString::number(p.ordinal + 1), p.ordinal);
    number->setData(kOrdinalRole, p.ordinal);
    if (p.ordinal == listing_.fastest) number->setToolTip(tr("The fastest program of the task in this session"));
    table_->setItem(row, Number, number);
    table_->setItem(row, Median,
                    new NumberItem(r.ok() ? ms(r.medianCost()) : tr("failed"), r.ok() ? r.medianCost() : kMissing));
    table_->setItem(row, Repeats, new NumberItem(QString::number(r.costs.size()), double(r.costs.size())));
    const double spread = spreadPercent(r);
    table_->setItem(row, Spread, new NumberItem(r.ok() ? QString::number(spread, 'f', 1) + " %" : QString(), spread));
    const bool scored = std::isfinite(r.predicted);
    table_->setItem(
        row, Score,
        new NumberItem(scored ? QString::number(r.predicted, 'g', 4) : QString(), scored ? -r.predicted : kMissing));
    table_->setItem(
        row, ScoreRank,
        new NumberItem(p.scoreRank ? QString::number(p.scoreRank) : QString(), p.scoreRank ? p.scoreRank : kMissing));
    table_->setItem(
        row, TimeRank,
        new NumberItem(p.timeRank ? QString::number(p.timeRank) : QString(), p.timeRank ? p.timeRank : kMissing));
    const QString trained = r.modelPretrained       ? tr("pre-trained")
                            : r.modelTrainedOn >= 0 ? QString::number(r.modelTrainedOn)
                                                    : QString();
    table_->setItem(row, TrainedOn, new NumberItem(trained, r.modelPretrained ? 1e18 : double(r.modelTrainedOn)));
    if (r.scoredUntrained())
      for (int c = Score; c <= ScoreRank; ++c)
        table_->item(row, c)->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
  }
  table_->setSortingEnabled(true);
}

bool ProgramInspector::showProgram(int ordinal) {
  if (ordinal < 0 || ordinal >= int(listing_.programs.size())) return false;
  current_ = ordinal;
  const store::ListedProgram& p = listing_.programs[size_t(ordinal)];
  for (int row = 0; row < table_->rowCount(); ++row)
    if (table_->item(row, Number)->data(kOrdinalRole).toInt() == ordinal) {
      const QSignalBlocker block(table_);
      table_->setCurrentCell(row, Number);
      table_->scrollToItem(table_->item(row, Number));
    }
  summary_->setText(summaryText(p));

  QString why;
  schedule::State end;
  words_ = replayed(p.record, &end, &why);
  if (words_.empty() && !why.isEmpty()) {
    steps_->setPlainText(tr("The stored steps do not replay on this task: %1").arg(why));
    loops_->clear();
    code_->showText(tr("Program %1").arg(ordinal + 1), {});
    diffText_->clear();
    diff_.clear();
    emit programShown(ordinal);
    return true;
  }
  QStringList numbered;
  for (size_t i = 0; i < words_.size(); ++i)
    numbered << QStringLiteral("%1  %2").arg(i + 1, 3).arg(QString::fromStdString(words_[i]));
  steps_->setPlainText(words_.empty() ? tr("No steps: the naive program") : numbered.join('\n'));
  loops_->setPlainText(QString::fromStdString(search::loopNestText(end)));
  const QString title = tr("%1, program %2").arg(taskLabel_).arg(ordinal + 1);
  code_->showProgram(task_, title, QString::fromStdString(p.record.decisions), QString::fromStdString(p.record.steps));
  showDiff(p, words_);
  emit programShown(ordinal);
  return true;
}

QStringList ProgramInspector::stepLines() const {
  QStringList out;
  for (const std::string& w : words_)
    out << QString::fromStdString(w);
  return out;
}

QString ProgramInspector::summaryText(const store::ListedProgram& p) const {
  const store::RecordRow& r = p.record;
  QStringList lines;
  lines << tr("%1: program %2 of %3 in session %4 (record %5)")
               .arg(taskLabel_)
               .arg(p.ordinal + 1)
               .arg(listing_.programs.size())
               .arg(listing_.session)
               .arg(r.id);
  if (r.ok()) {
    const auto [lo, hi] = std::minmax_element(r.costs.begin(), r.costs.end());
    lines << tr("%1 ms, the median of %2 repeats (%3 to %4 ms); %5 of %6 measured")
                 .arg(ms(r.medianCost()))
                 .arg(r.costs.size())
                 .arg(ms(*lo), ms(*hi), p.timeRank == 1 ? tr("the fastest") : ordinalText(p.timeRank) + tr(" fastest"))
                 .arg(listing_.measured);
  } else {
    lines << tr("Failed: %1").arg(QString::fromStdString(r.errorMessage.empty() ? "no valid repeat" : r.errorMessage));
  }
  if (std::isfinite(r.predicted))
    lines << tr("Score %1: %2 of %3 by the model's score (%4)")
                 .arg(r.predicted, 0, 'g', 4)
                 .arg(ordinalText(p.scoreRank))
                 .arg(listing_.scored)
                 .arg(modelState(r));
  else
    lines << tr("Not scored by a cost model (measured as proposed: a transferred or random program)");
  lines << tr("Built in %1 s, run in %2 s; largest error against the reference %3")
               .arg(r.buildSeconds, 0, 'f', 2)
               .arg(r.runSeconds, 0, 'f', 2)
               .arg(r.maxAbsError, 0, 'g', 3);
  return lines.join('\n');
}

void ProgramInspector::showDiff(const store::ListedProgram& p, const std::vector<std::string>& words) {
  diff_.clear();
  if (listing_.fastest < 0) {
    diffText_->setPlainText(tr("No program of the task has a valid measurement yet."));
    return;
  }
  const int fastest = listing_.fastest + 1;
  if (p.ordinal == listing_.fastest) {
    diffText_->setPlainText(tr("This is the fastest program (%1).").arg(fastest));
    return;
  }
  diff_ = support::diffLines(fastestWords_, words);
  // "-" lines are the fastest program's only, "+" lines this one's only.
  QString html = QStringLiteral("<p>%1</p><pre>")
                     .arg(tr("%1 of %2 lines differ: <span style='background:#fdd'>- program %3 (the fastest)</span>, "
                             "<span style='background:#dfd'>+ program %4 (this one)</span>")
                              .arg(support::changedLines(diff_))
                              .arg(diff_.size())
                              .arg(fastest)
                              .arg(p.ordinal + 1));
  for (const support::DiffLine& d : diff_) {
    const QString text = QString(QChar(d.kind)) + ' ' + QString::fromStdString(d.text).toHtmlEscaped();
    if (d.kind == support::DiffLine::Same)
      html += text + '\n';
    else
      html += QStringLiteral("<span style='background:%1'>%2</span>\n")
                  .arg(d.kind == support::DiffLine::Removed ? "#fdd" : "#dfd", text);
  }
  diffText_->setHtml(html + QStringLiteral("</pre>"));
}

}  // namespace tessel::ui
