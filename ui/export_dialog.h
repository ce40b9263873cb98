// Export from the tuning database (core/export) in a dialog: the tuned
// kernels (sources, a compiled library, a header, manifest.json and a
// CMakeLists.txt) or every record as CSV or JSON lines, of the open model,
// the selected task or every task in the database. Tasks that cannot be
// exported yet (no valid program, or the fused subgraph of a model that is
// not open) are left out and listed. A database that holds tasks of several
// targets offers the choice of one (one library holds one target's kernels;
// records may be of every target). The export runs on a worker thread,
// into a folder beside the chosen one that is renamed into place: a folder
// that holds files is replaced whole only when the user ticks "Replace".
#pragma once

#include <QDialog>
#include <QString>
#include <string>
#include <utility>
#include <vector>

#include "target/target.h"
#include "te/compute_dag.h"

class QCheckBox;
class QComboBox;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;

namespace tessel::ui {

class ExportDialog : public QDialog {
  Q_OBJECT

 public:
  enum Scope { ModelScope, SelectedTaskScope, DatabaseScope };
  using TaskDefinitions = std::vector<std::pair<std::string, te::ComputeDAG>>;  // workload key, definition

  explicit ExportDialog(const QString& database, QWidget* parent = nullptr);

  // The open model's tasks and the selected one (-1: none), tuned for
  // `target`: they enable the model and task scopes, and fused subgraphs can
  // be rebuilt from them.
  void setModelTasks(const QString& model, const TaskDefinitions& tasks, int selected,
                     const target::Target& target = target::Target::host());

  void setScope(Scope scope);
  // The target whose tasks are exported ("": every target's, for records).
  // The database's targets are read on a worker thread: targetsRead follows.
  void setTarget(const QString& target);
  QString chosenTarget() const;
  void setFormat(const QString& format);  // kernels | csv | jsonl
  void setOutputDirectory(const QString& dir);
  void setCompile(bool compile);
  // Replace a folder that holds files (all of it); unticked, such a folder is refused.
  void setReplace(bool replace);
  // Runs the export on a worker thread; exported() follows.
  void startExport();
  bool isRunning() const { return running_; }
  QString report() const;  // what the last export did, or why it failed

  QComboBox* scopeBox() const { return scope_; }
  QComboBox* formatBox() const { return format_; }
  QComboBox* targetBox() const { return targetBox_; }
  QLineEdit* outputEdit() const { return out_; }
  QPushButton* exportButton() const { return export_; }

 signals:
  void exported(bool ok, const QString& message);
  // The database's targets are listed in the target box.
  void targetsRead();

 private:
  void browse();
  void updateControls();
  // Lists the database's targets (target string -> tasks) in the target box.
  void listTargets(const std::vector<std::pair<QString, int>>& targets);

  QString database_;
  QString model_;
  TaskDefinitions tasks_;
  target::Target target_ = target::Target::host();
  int selected_ = -1;
  bool running_ = false;
  QComboBox* scope_;
  QComboBox* format_;
  QComboBox* targetBox_;
  QLineEdit* out_;
  QCheckBox* compile_;
  QCheckBox* replace_;
  QPushButton* export_;
  QPlainTextEdit* report_;
};

}  // namespace tessel::ui
