// Model files in the studio, as a user opens them from the file dialog: a
// TorchScript .pt asks for its input shapes (it records none) and the shapes
// it opened with are remembered per file; an ONNX file with a dynamic batch
// opens with the batch taken as 1, says so, and is sized by the shapes given.
// Both tune, export and reopen without the CLI, their shapes stored with the
// session.
#ifdef TESSEL_HAVE_ONNX
#include <onnx/onnx_pb.h>
#endif

#include <QAction>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <nlohmann/json.hpp>

#include "frontend/model_loader.h"
#include "frontend/torchscript_import.h"
#include "store/database.h"
#include "store/session_store.h"
#include "tessel_test.h"
#include "ui/export_dialog.h"
#include "ui/input_shapes_dialog.h"
#include "ui/log_panel.h"
#include "ui/main_window.h"
#include "ui/model_loader.h"
#include "ui/tuning_options_bar.h"

using tessel::ui::InputShapesDialog;
using tessel::ui::MainWindow;

namespace {

QMessageBox* visibleErrorDialog(const QWidget& window) {
  for (QMessageBox* box : window.findChildren<QMessageBox*>("errorDialog"))
    if (box->isVisible()) return box;
  return nullptr;
}

// The input shapes dialog the window opened (null until it is shown).
InputShapesDialog* shapesDialog(const QWidget& window) {
  for (InputShapesDialog* d : window.findChildren<InputShapesDialog*>("inputShapesDialog"))
    if (d->isVisible()) return d;
  return nullptr;
}

QPushButton* okButton(InputShapesDialog* d) {
  return d->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
}

std::vector<int64_t> firstInputShape(const MainWindow& w) {
  return w.preparedModel() ? w.preparedModel()->graph.inputs.at(0).shape : std::vector<int64_t>{};
}

// Answers the dialog with `shapes` and waits for the model to open.
bool answer(MainWindow& window, const QString& shapes) {
  InputShapesDialog* d = shapesDialog(window);
  if (!d) return false;
  d->findChild<QLineEdit*>("inputShapesEdit")->setText(shapes);
  if (!okButton(d)->isEnabled()) return false;
  QSignalSpy ready(&window, &MainWindow::modelReady);
  okButton(d)->click();
  return ready.wait(60000);
}

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestModelFiles : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  QString torchScript_;  // a copy of the fuzz corpus' conv + linear model (input 1x3x8x8)
  QString onnx_;         // x[batch,16] x W[16,8], then Relu: the batch is symbolic

#ifdef TESSEL_HAVE_ONNX
  // A dense layer exported with a dynamic batch, as torch.onnx.export writes one with dynamic_axes.
  static void writeDynamicBatchOnnx(const QString& path) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    onnx::GraphProto* g = m.mutable_graph();
    g->set_name("dense_dynamic_batch");
    auto value = [](onnx::ValueInfoProto* v, const char* name, int64_t columns) {
      v->set_name(name);
      auto* t = v->mutable_type()->mutable_tensor_type();
      t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
      t->mutable_shape()->add_dim()->set_dim_param("batch");
      t->mutable_shape()->add_dim()->set_dim_value(columns);
    };
    value(g->add_input(), "x", 16);
    value(g->add_output(), "y", 8);
    onnx::TensorProto* w = g->add_initializer();
    w->set_name("W");
    w->set_data_type(onnx::TensorProto_DataType_FLOAT);
    w->add_dims(16);
    w->add_dims(8);
    for (int i = 0; i < 16 * 8; ++i)
      w->add_float_data(float(i % 7) * 0.1f - 0.3f);
    // Names as std::string: GCC 12 warns (-Wrestrict, wrongly) on the const char* overloads inlined.
    auto node = [g](const std::string& op, std::vector<std::string> inputs, const std::string& output) {
      onnx::NodeProto* n = g->add_node();
      n->set_op_type(op);
      n->set_name(op + "_" + output);
      for (const std::string& in : inputs)
        n->add_input(in);
      n->add_output(output);
    };
    node("MatMul", {"x", "W"}, "h");
    node("Relu", {"h"}, "y");
    std::ofstream f(path.toStdString(), std::ios::binary);
    m.SerializeToOstream(&f);
  }
#endif

  // Tunes the open model into `db` (8 programs a round, 8 per task) and
  // returns its session (0 if the tuning failed).
  static qint64 tune(MainWindow& window, const QString& db) {
    if (!window.setDatabasePath(db)) return 0;
    window.setTrialBudget(8 * int(window.preparedModel()->tasks.size()));
    QSignalSpy done(&window, &MainWindow::tuningFinished);
    window.startTuning();
    if (!done.wait(300000) || !done.at(0).at(0).toBool()) return 0;
    return window.resumableSession();
  }

  // The input_shapes the session's stored configuration holds.
  static std::string storedShapes(const QString& db, qint64 session) {
    auto d = tessel::store::Database::open(db.toStdString(), tessel::store::OpenMode::ReadOnly);
    const auto row = d->sessions().byId(session);
    if (!row) return "no session";
    return nlohmann::json::parse(row->config).value("input_shapes", "");
  }

  // Exports the open model's tuned kernels; their count (-1 on failure).
  int exportKernels(MainWindow& window, const QString& out) {
    tessel::ui::ExportDialog* dialog = window.showExport();
    if (!dialog) return -1;
    dialog->setOutputDirectory(out);
    dialog->setFormat("kernels");
    QSignalSpy exported(dialog, &tessel::ui::ExportDialog::exported);
    dialog->startExport();
    if (!exported.wait(240000) || !exported.at(0).at(0).toBool()) {
      qWarning("%s", qPrintable(dialog->report()));
      return -1;
    }
    dialog->close();
    return int(QJsonDocument::fromJson(readAll(out + "/manifest.json")).object()["kernels"].toArray().size());
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, tmp_.filePath("settings"));
    QSettings settings(MainWindow::kSettingsOrganization, MainWindow::kSettingsApplication);
    settings.setValue(MainWindow::kRunAfterTuningKey, false);  // test_run_panel runs models
    settings.setValue("tuning/batch", 8);                      // a round per task, soon
    qputenv("TESSEL_DB", tmp_.filePath("default.db").toUtf8());
    torchScript_ = tmp_.filePath("conv_fc.pt");
    QVERIFY(QFile::copy(TESSEL_TORCHSCRIPT_MODEL, torchScript_));
#ifdef TESSEL_HAVE_ONNX
    onnx_ = tmp_.filePath("dense_dynamic_batch.onnx");
    writeDynamicBatchOnnx(onnx_);
#endif
  }

  // The dialog's own rule: shapes are positive integers, commas and semicolons.
  void shapesAreCheckedAsTyped() {
    QVERIFY(InputShapesDialog::wellFormed("1,3,224,224"));
    QVERIFY(InputShapesDialog::wellFormed("1,3,224,224;1,16"));
    QVERIFY(InputShapesDialog::wellFormed(" 4, 16 "));
    for (const char* bad : {"", "1,,3", "0,3", "1;", "a,b", "1.5", "-1,3", ";1"})
      QVERIFY2(!InputShapesDialog::wellFormed(bad), bad);
    InputShapesDialog pt("model.pt", "", {});
    QVERIFY(!okButton(&pt)->isEnabled());  // a .pt cannot open without them
    QVERIFY(pt.findChild<QLabel*>("inputShapesProblem")->text().contains("TorchScript needs"));
    InputShapesDialog onnx("model.onnx", "", {"input 'x': symbolic 'batch' taken as 1"});
    QVERIFY(okButton(&onnx)->isEnabled());  // empty: as the file declares them
    QVERIFY(onnx.findChild<QLabel*>("inputShapesNotes")->text().contains("'batch' taken as 1"));
    onnx.findChild<QLineEdit*>("inputShapesEdit")->setText("4,x");
    QVERIFY(!okButton(&onnx)->isEnabled());
  }

  void torchScriptAsksForItsInputShapes() {
    if (!tessel::frontend::torchscriptAvailable())
      TESSEL_SKIP("libtorch", "built without LibTorch: a TorchScript model cannot be read");
    {
      MainWindow window;
      window.show();
      QSignalSpy opening(window.findChild<tessel::ui::ModelLoader*>(), &tessel::ui::ModelLoader::modelOpening);
      window.setModelPath(torchScript_);
      QTRY_VERIFY(shapesDialog(window));
      QCOMPARE(opening.count(), 0);  // nothing is prepared before the shapes are known
      QVERIFY(!okButton(shapesDialog(window))->isEnabled());

      // Shapes the model does not take: the error names the file, nothing is remembered.
      shapesDialog(window)->findChild<QLineEdit*>("inputShapesEdit")->setText("1,3");
      QSignalSpy failed(&window, &MainWindow::modelFailed);
      okButton(shapesDialog(window))->click();
      QVERIFY(failed.wait(60000));
      QMessageBox* box = visibleErrorDialog(window);
      QVERIFY(box);
      QVERIFY2(box->text().contains("conv_fc.pt"), qPrintable(box->text()));
      box->accept();
      QVERIFY(window.findChild<tessel::ui::ModelLoader*>()->rememberedInputShapes(torchScript_).isEmpty());

      // File > Input shapes... asks again, from the shapes tried.
      QAction* again = window.findChild<QAction*>("actionInputShapes");
      QVERIFY(again->isEnabled());
      again->trigger();
      QTRY_VERIFY(shapesDialog(window));
      QCOMPARE(shapesDialog(window)->findChild<QLineEdit*>("inputShapesEdit")->text(), QString("1,3"));
      QVERIFY(answer(window, "1,3,8,8"));
      QCOMPARE(window.inputShapes(), QString("1,3,8,8"));
      QCOMPARE(firstInputShape(window), (std::vector<int64_t>{1, 3, 8, 8}));
      QVERIFY(!window.preparedModel()->tasks.empty());
      QVERIFY(window.logPanel()->toPlainText().contains("input shapes 1,3,8,8"));
    }
    // Opened again: the shapes it opened with, no question.
    MainWindow window;
    window.show();
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.setModelPath(torchScript_);
    QVERIFY(ready.wait(60000));
    QVERIFY(!shapesDialog(window));
    QCOMPARE(window.inputShapes(), QString("1,3,8,8"));
  }

  void onnxDynamicBatchIsTakenAsOneThenSized() {
#ifndef TESSEL_HAVE_ONNX
    TESSEL_SKIP("onnx", "built without ONNX import (libonnx-dev was not found): no .onnx model can be opened");
#else
    MainWindow window;
    window.setPersistent(false);
    window.show();
    QAction* shapes = window.findChild<QAction*>("actionInputShapes");
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.setModelPath("tiny_cnn");
    QVERIFY(ready.wait(60000));
    QVERIFY(!shapes->isEnabled());  // a zoo model's shapes are fixed

    window.setModelPath(onnx_);  // no question: the file declares its inputs
    QVERIFY(ready.wait(60000));
    QVERIFY(!shapesDialog(window));
    QCOMPARE(firstInputShape(window), (std::vector<int64_t>{1, 16}));
    QVERIFY2(window.logPanel()->toPlainText().contains("Assumed: input 'x': symbolic dimension 0 'batch' taken as 1"),
             qPrintable(window.logPanel()->toPlainText()));
    QVERIFY2(window.statusBar()->currentMessage().contains("File > Input shapes"),
             qPrintable(window.statusBar()->currentMessage()));

    QVERIFY(shapes->isEnabled());
    shapes->trigger();
    QTRY_VERIFY(shapesDialog(window));
    InputShapesDialog* d = shapesDialog(window);
    QCOMPARE(d->findChild<QLineEdit*>("inputShapesEdit")->text(), QString("1,16"));
    QVERIFY(d->findChild<QLabel*>("inputShapesNotes")->text().contains("'batch' taken as 1"));
    QVERIFY(answer(window, "4,16"));
    QCOMPARE(firstInputShape(window), (std::vector<int64_t>{4, 16}));
    QVERIFY(window.preparedModel()->graph.assumptions.empty());
    const double flops = window.preparedModel()->flops;
    QCOMPARE(flops, 2.0 * 4 * 16 * 8);  // the dense layer's multiply-adds at batch 4

    // Another fusion keeps the shapes.
    window.setModelPath(window.modelPath());
    QVERIFY(ready.wait(60000));
    QCOMPARE(firstInputShape(window), (std::vector<int64_t>{4, 16}));
#endif
  }

  // Tuned, exported and reopened from the studio alone; the session keeps its shapes.
  void modelFilesTuneExportAndReopen() {
    struct Case {
      QString model, shapes;
      std::vector<int64_t> input;
    };
    std::vector<Case> cases;
#ifdef TESSEL_HAVE_ONNX
    cases.push_back({onnx_, "4,16", { 4, 16 }});
#endif
    if (tessel::frontend::torchscriptAvailable()) cases.push_back({torchScript_, "2,3,8,8", {2, 3, 8, 8}});
    if (cases.empty()) TESSEL_SKIP("onnx", "built without ONNX import and LibTorch: no model file can be opened");
    const QString db = tmp_.filePath("files.db");
    int n = 0;
    for (const Case& c : cases) {
      const QString name = QFileInfo(c.model).completeBaseName();
      qint64 session = 0;
      {
        MainWindow window;
        window.setPersistent(false);
        window.show();
        QSignalSpy ready(&window, &MainWindow::modelReady);
        window.setModelPath(c.model, c.shapes);
        QVERIFY(ready.wait(60000));
        session = tune(window, db);
        QVERIFY2(session > 0, qPrintable(name));
        QCOMPARE(storedShapes(db, session), c.shapes.toStdString());
        const int tasks = int(window.preparedModel()->tasks.size());
        QCOMPARE(exportKernels(window, tmp_.filePath("export-" + name)), tasks);
      }
      // Another batch is another model: opened so, the session is not shown
      // as its tuning; with the session's shapes, it is.
      {
        MainWindow window;
        window.setPersistent(false);
        QVERIFY(window.setDatabasePath(db));
        QSignalSpy ready(&window, &MainWindow::modelReady);
        QSignalSpy shown(&window, &MainWindow::sessionReopened);
        window.setModelPath(c.model, "1" + c.shapes.mid(c.shapes.indexOf(',')));
        QVERIFY(ready.wait(60000));
        QVERIFY(!shown.wait(2000));  // the stored tuning is looked for off the UI thread
        QCOMPARE(window.shownSession(), qint64(0));
        window.setModelPath(c.model, c.shapes);
        QVERIFY(shown.wait(60000));
        QCOMPARE(window.shownSession(), session);
      }
      // Reopened: its model opens with the session's shapes.
      MainWindow window;
      window.setPersistent(false);
      QVERIFY(window.setDatabasePath(db));
      QSignalSpy reopened(&window, &MainWindow::sessionReopened);
      window.reopenSession(session);
      QVERIFY(reopened.wait(60000));
      QCOMPARE(window.inputShapes(), c.shapes);
      QCOMPARE(firstInputShape(window), c.input);
      QCOMPARE(window.resumableSession(), session);
      ++n;
    }
    QCOMPARE(n, int(cases.size()));
  }

  // The database now holds the dense layer tuned for this CPU; tuned again
  // for baseline x86-64 (the target box), the export offers the choice.
  void exportChoosesATargetWhenTheDatabaseHoldsSeveral() {
#ifndef TESSEL_HAVE_ONNX
    TESSEL_SKIP("onnx", "built without ONNX import (libonnx-dev was not found): the dense layer cannot be opened");
#else
    const QString db = tmp_.filePath("files.db");
    QVERIFY2(QFileInfo::exists(db), "modelFilesTuneExportAndReopen tunes into it first");
    MainWindow window;
    window.setPersistent(false);
    window.show();
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.setModelPath(onnx_, "4,16");
    QVERIFY(ready.wait(60000));
    auto* targets = window.findChild<QComboBox*>("targetBox");
    int baseline = -1;
    for (int i = 0; i < targets->count(); ++i)
      if (targets->itemText(i).endsWith("x86-64")) baseline = i;
    QVERIFY(baseline >= 0);
    targets->setCurrentIndex(baseline);  // the model is prepared again for it
    QVERIFY(ready.wait(60000));
    const QString chosen = QString::fromStdString(window.tuningOptions()->target().str());
    QVERIFY(tune(window, db) > 0);

    tessel::ui::ExportDialog* dialog = window.showExport();
    QSignalSpy read(dialog, &tessel::ui::ExportDialog::targetsRead);
    QVERIFY(read.wait(30000));
    QComboBox* box = dialog->targetBox();
    QVERIFY(box->isEnabled());
    QCOMPARE(box->count(), 3);                 // this CPU, x86-64, every target (records only)
    QCOMPARE(dialog->chosenTarget(), chosen);  // the window's
    // Every target: records yes, a library no.
    dialog->setTarget("");
    dialog->setScope(tessel::ui::ExportDialog::DatabaseScope);
    QVERIFY(!dialog->exportButton()->isEnabled());
    dialog->setFormat("jsonl");
    QVERIFY(dialog->exportButton()->isEnabled());
    // One target's kernels: only its tasks.
    dialog->setFormat("kernels");
    dialog->setTarget(chosen);
    QVERIFY(dialog->exportButton()->isEnabled());
    dialog->setOutputDirectory(tmp_.filePath("export-baseline"));
    QSignalSpy exported(dialog, &tessel::ui::ExportDialog::exported);
    dialog->startExport();
    QVERIFY(exported.wait(240000));
    QVERIFY2(exported.at(0).at(0).toBool(), qPrintable(dialog->report()));
    const QJsonArray kernels =
        QJsonDocument::fromJson(readAll(tmp_.filePath("export-baseline/manifest.json"))).object()["kernels"].toArray();
    QCOMPARE(kernels.size(), qsizetype(window.preparedModel()->tasks.size()));
#endif
  }
};

QTEST_MAIN(TestModelFiles)
#include "test_model_files.moc"
