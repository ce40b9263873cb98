#include "ui/export_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <map>

#include "export/kernel_export.h"
#include "export/staged_folder.h"
#include "store/database.h"

namespace tessel::ui {
namespace {

struct Outcome {
  bool ok = false;
  QString message;
};

struct Job {
  std::string database, out, format;
  int scope = 0;
  bool compile = true, replace = false;
  ExportDialog::TaskDefinitions tasks;  // of the open model
  std::string target;                   // what they were tuned for (the database's string; "": every target)
  int selected = -1;
};

// The targets of the database's tasks, with how many tasks each.
std::vector<std::pair<QString, int>> databaseTargets(const std::string& database) {
  std::map<QString, int> count;
  try {
    auto db = store::Database::open(database, store::OpenMode::ReadOnly);
    for (const store::TaskRow& t : db->tasks())
      ++count[QString::fromStdString(t.target)];
  } catch (const std::exception&) {
    // An unreadable database says why when the export reads it.
  }
  return {count.begin(), count.end()};
}

Outcome runExport(const Job& job) {
  Outcome o;
  try {
    auto db = store::Database::open(job.database, store::OpenMode::ReadOnly);
    std::vector<store::TaskRow> rows;
    std::vector<std::string> notes;
    auto addKey = [&](const std::string& key) {
      if (auto t = db->taskByKey(key, job.target))
        rows.push_back(*t);
      else
        notes.push_back(key + ": not tuned yet (not in the database)");
    };
    if (job.scope == ExportDialog::ModelScope) {
      for (const auto& [key, dag] : job.tasks)
        addKey(key);
    } else if (job.scope == ExportDialog::SelectedTaskScope) {
      if (job.selected < 0 || job.selected >= int(job.tasks.size())) throw std::runtime_error("no task is selected");
      addKey(job.tasks[size_t(job.selected)].first);
    } else {
      rows = db->tasks();
      if (!job.target.empty()) std::erase_if(rows, [&](const store::TaskRow& t) { return t.target != job.target; });
    }

    exporter::StagedFolder staged(job.out, job.replace,
                                  "tick \"Replace the folder\" to replace it, or choose another folder");
    QStringList lines;
    if (job.format == "kernels") {
      exporter::KernelExportOptions options;
      options.compile = job.compile;
      for (const auto& [key, dag] : job.tasks)
        options.definitions[key] = dag;
      exporter::KernelExportPlan plan = exporter::planKernelExport(*db, rows, options);
      for (const auto& [row, why] : plan.skipped)
        notes.push_back(row.key + ": " + why);
      if (plan.tasks.empty()) throw std::runtime_error("nothing to export: no task has a kernel that can be exported");
      exporter::ExportResult r = exporter::exportKernels(*db, plan.tasks, staged.path(), options);
      staged.commit();
      lines << QObject::tr("Exported %1 kernels to %2").arg(r.kernels.size()).arg(QString::fromStdString(job.out));
      for (const exporter::ExportedKernel& k : r.kernels)
        lines << QStringLiteral("  %1  %2 ms  %3 GFLOP/s")
                     .arg(QString::fromStdString(k.function))
                     .arg(k.latencyMs, 0, 'f', 4)
                     .arg(k.gflops, 0, 'f', 2);
      lines << QObject::tr("Header: %1").arg(QString::fromStdString(r.header));
      lines << (r.library.empty() ? QObject::tr("Library: not compiled")
                                  : QObject::tr("Library: %1").arg(QString::fromStdString(r.library)));
      lines << QObject::tr("manifest.json and CMakeLists.txt beside them");
    } else {
      if (rows.empty()) throw std::runtime_error("nothing to export: no task");
      exporter::ExportResult r = exporter::exportRecords(*db, rows, staged.path(), job.format);
      staged.commit();
      lines << QObject::tr("Wrote %1 records of %2 tasks to %3/records.%4")
                   .arg(r.records)
                   .arg(rows.size())
                   .arg(QString::fromStdString(job.out), QString::fromStdString(job.format));
    }
    if (!notes.empty()) {
      lines << QObject::tr("Left out (%1):").arg(notes.size());
      for (const std::string& n : notes)
        lines << QStringLiteral("  ") + QString::fromStdString(n);
    }
    o.ok = true;
    o.message = lines.join('\n');
  } catch (const std::exception& e) {
    o.message = QObject::tr("Export failed: %1").arg(QString::fromStdString(e.what()));
  }
  return o;
}

}  // namespace

ExportDialog::ExportDialog(const QString& database, QWidget* parent) : QDialog(parent), database_(database) {
  setObjectName(QStringLiteral("exportDialog"));
  setWindowTitle(tr("Export from %1").arg(QDir::toNativeSeparators(database)));
  resize(640, 420);

  scope_ = new QComboBox(this);
  scope_->setObjectName(QStringLiteral("exportScope"));
  scope_->addItem(tr("The open model's tasks"), ModelScope);
  scope_->addItem(tr("The selected task"), SelectedTaskScope);
  scope_->addItem(tr("Every task in the database"), DatabaseScope);
  format_ = new QComboBox(this);
  format_->setObjectName(QStringLiteral("exportFormat"));
  format_->addItem(tr("Kernels: sources, library, header, manifest, CMakeLists.txt"), QStringLiteral("kernels"));
  format_->addItem(tr("Records as CSV"), QStringLiteral("csv"));
  format_->addItem(tr("Records as JSON lines"), QStringLiteral("jsonl"));
  targetBox_ = new QComboBox(this);
  targetBox_->setObjectName(QStringLiteral("exportTarget"));
  out_ = new QLineEdit(QDir::home().filePath(QStringLiteral("tessel-export")), this);
  out_->setObjectName(QStringLiteral("exportDirectory"));
  auto* browse = new QPushButton(tr("&Browse..."), this);
  connect(browse, &QPushButton::clicked, this, &ExportDialog::browse);
  auto* outRow = new QHBoxLayout;
  outRow->addWidget(out_, 1);
  outRow->addWidget(browse);
  compile_ = new QCheckBox(tr("Compile the library (lib/libtessel_kernels.so)"), this);
  compile_->setChecked(true);
  replace_ = new QCheckBox(tr("Replace the folder if it holds files (all of it)"), this);
  replace_->setObjectName(QStringLiteral("exportReplace"));

  auto* form = new QFormLayout;
  form->addRow(tr("What:"), scope_);
  form->addRow(tr("Format:"), format_);
  form->addRow(tr("Tuned for:"), targetBox_);
  form->addRow(tr("Into folder:"), outRow);
  form->addRow(QString(), compile_);
  form->addRow(QString(), replace_);

  report_ = new QPlainTextEdit(this);
  report_->setObjectName(QStringLiteral("exportReport"));
  report_->setReadOnly(true);
  report_->setPlaceholderText(tr("What was exported shows here."));

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  export_ = buttons->addButton(tr("&Export"), QDialogButtonBox::ActionRole);
  export_->setObjectName(QStringLiteral("exportButton"));
  connect(export_, &QPushButton::clicked, this, &ExportDialog::startExport);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(report_, 1);
  layout->addWidget(buttons);

  connect(scope_, &QComboBox::currentIndexChanged, this, &ExportDialog::updateControls);
  connect(format_, &QComboBox::currentIndexChanged, this, &ExportDialog::updateControls);
  connect(targetBox_, &QComboBox::currentIndexChanged, this, &ExportDialog::updateControls);
  setModelTasks({}, {}, -1);
  // The database's targets, read off the UI thread.
  auto* watcher = new QFutureWatcher<std::vector<std::pair<QString, int>>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
    watcher->deleteLater();
    listTargets(watcher->result());
  });
  watcher->setFuture(QtConcurrent::run(databaseTargets, database.toStdString()));
}

void ExportDialog::listTargets(const std::vector<std::pair<QString, int>>& targets) {
  QString chosen = chosenTarget();
  if (chosen.isEmpty() && targets.size() <= 1) chosen = QString::fromStdString(target_.str());
  targetBox_->blockSignals(true);
  targetBox_->clear();
  for (const auto& [target, tasks] : targets)
    targetBox_->addItem(tasks == 1 ? tr("%1 (1 task)").arg(target) : tr("%1 (%2 tasks)").arg(target).arg(tasks),
                        target);
  // Several: records may be of every one (a library holds one target's kernels).
  if (targets.size() > 1) targetBox_->addItem(tr("Every target (records only)"), QString());
  if (targetBox_->findData(chosen) < 0) targetBox_->addItem(tr("%1 (no task yet)").arg(chosen), chosen);
  targetBox_->setCurrentIndex(targetBox_->findData(chosen));
  targetBox_->blockSignals(false);
  targetBox_->setEnabled(targetBox_->count() > 1);
  updateControls();
  emit targetsRead();
}

void ExportDialog::setTarget(const QString& target) {
  if (targetBox_->findData(target) < 0) targetBox_->addItem(tr("%1 (no task yet)").arg(target), target);
  targetBox_->setCurrentIndex(targetBox_->findData(target));
  updateControls();
}

QString ExportDialog::chosenTarget() const {
  return targetBox_->count() ? targetBox_->currentData().toString() : QString::fromStdString(target_.str());
}

void ExportDialog::setModelTasks(const QString& model, const TaskDefinitions& tasks, int selected,
                                 const target::Target& target) {
  model_ = model;
  tasks_ = tasks;
  target_ = target;
  selected_ = selected;
  setTarget(QString::fromStdString(target.str()));  // the open model's, unless the user chooses another
  scope_->setItemText(0, model.isEmpty() ? tr("The open model's tasks (no model is open)")
                                         : tr("The tasks of %1 (%2)").arg(model).arg(tasks.size()));
  scope_->setItemText(1, selected >= 0 && selected < int(tasks.size())
                             ? tr("The selected task (%1)").arg(QString::fromStdString(tasks[size_t(selected)].first))
                             : tr("The selected task (none)"));
  setScope(model.isEmpty() ? DatabaseScope : ModelScope);
}

void ExportDialog::setScope(Scope scope) {
  scope_->setCurrentIndex(scope_->findData(scope));
  updateControls();
}

void ExportDialog::setFormat(const QString& format) {
  format_->setCurrentIndex(format_->findData(format));
  updateControls();
}

void ExportDialog::setOutputDirectory(const QString& dir) {
  out_->setText(dir);
}

void ExportDialog::setCompile(bool compile) {
  compile_->setChecked(compile);
}

void ExportDialog::setReplace(bool replace) {
  replace_->setChecked(replace);
}

QString ExportDialog::report() const {
  return report_->toPlainText();
}

void ExportDialog::updateControls() {
  const int scope = scope_->currentData().toInt();
  const bool scopeOk = scope == DatabaseScope || (scope == ModelScope && !tasks_.empty()) ||
                       (scope == SelectedTaskScope && selected_ >= 0 && selected_ < int(tasks_.size()));
  const bool kernels = format_->currentData().toString() == QLatin1String("kernels");
  compile_->setEnabled(kernels);
  // One library holds one target's kernels.
  const bool targetOk = !kernels || !chosenTarget().isEmpty();
  export_->setEnabled(!running_ && scopeOk && targetOk);
  export_->setToolTip(targetOk ? QString() : tr("A library holds one target's kernels: choose a target"));
}

void ExportDialog::browse() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Export into"), out_->text());
  if (!dir.isEmpty()) out_->setText(dir);
}

void ExportDialog::startExport() {
  if (running_) return;
  Job job;
  job.database = database_.toStdString();
  job.out = out_->text().trimmed().toStdString();
  job.format = format_->currentData().toString().toStdString();
  job.scope = scope_->currentData().toInt();
  job.compile = compile_->isChecked();
  job.replace = replace_->isChecked();
  job.tasks = tasks_;
  job.target = chosenTarget().toStdString();
  job.selected = selected_;
  if (job.out.empty()) {
    report_->setPlainText(tr("Export failed: choose a folder to export into"));
    emit exported(false, report_->toPlainText());
    return;
  }
  running_ = true;
  updateControls();
  report_->setPlainText(tr("Exporting into %1...").arg(out_->text()));
  auto* watcher = new QFutureWatcher<Outcome>(this);
  connect(watcher, &QFutureWatcher<Outcome>::finished, this, [this, watcher] {
    watcher->deleteLater();
    const Outcome o = watcher->result();
    running_ = false;
    updateControls();
    report_->setPlainText(o.message);
    emit exported(o.ok, o.message);
  });
  watcher->setFuture(QtConcurrent::run(runExport, job));
}

}  // namespace tessel::ui
