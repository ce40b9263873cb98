// tessel-studio [MODEL] [--db FILE] [--reopen SESSION] [--tune TRIALS [--grab-after TRIALS]]
//               [--tune-minutes M] [--screenshot FILE.png]
//
// Opens Tessel Studio. With --screenshot, renders the main window to a PNG
// (for docs and tests) and exits: 0 when the file was written, 1 with a
// message on stderr when it was not.
#include <QApplication>
#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QImage>
#include <QImageWriter>
#include <QPixmap>
#include <QSaveFile>
#include <QTabWidget>
#include <QTimer>
#include <cstdio>
#include <memory>
#include <optional>

#include "cost/learned/learned_models.h"
#include "frontend/model_loader.h"
#include "support/version.h"
#include "ui/app_icon.h"
#include "ui/code_view.h"
#include "ui/compare_dialog.h"
#include "ui/graph_view.h"
#include "ui/input_shapes_dialog.h"
#include "ui/main_window.h"
#include "ui/program_inspector.h"
#include "ui/run_controller.h"
#include "ui/tuning_session.h"

namespace {

// How long the shown window gets to lay itself out before it is grabbed.
constexpr int kScreenshotDelayMs = 250;
// The trials of a --tune-minutes tuning without --tune: more than the
// minutes allow (the toolbar's largest budget), so that the time ends it.
constexpr int kTimeBudgetTrials = 1000000;

void printError(const QString& message) {
  std::fprintf(stderr, "tessel-studio: %s\n", qPrintable(message));
}

// Without a display (and with no Qt platform chosen), Qt would abort while
// creating the application. Render offscreen instead: --help, --version,
// argument errors and --screenshot then work anywhere, and a plain start says
// clearly why no window can open. Returns whether it did.
bool renderOffscreenWithoutDisplay() {
  if (!qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") || !qEnvironmentVariableIsEmpty("DISPLAY") ||
      !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
    return false;
  }
  qputenv("QT_QPA_PLATFORM", "offscreen");
  return true;
}

// Grabs the window and writes it as a PNG, atomically. Returns an error
// message, empty on success.
QString writeScreenshot(QWidget& window, const QString& path) {
  const QImage image = window.grab().toImage();
  if (image.isNull()) return QStringLiteral("cannot render the window");
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) {
    return QStringLiteral("cannot write screenshot '%1': %2").arg(path, file.errorString());
  }
  QImageWriter writer(&file, "png");
  if (!writer.write(image)) {
    return QStringLiteral("cannot write screenshot '%1': %2").arg(path, writer.errorString());
  }
  if (!file.commit()) {
    return QStringLiteral("cannot write screenshot '%1': %2").arg(path, file.errorString());
  }
  return {};
}

// The options of the command line, in the order --help lists them.
struct Options {
  QCommandLineOption db;
  QCommandLineOption inputShapes;
  QCommandLineOption screenshot;
  QCommandLineOption tune;
  QCommandLineOption session;
  QCommandLineOption tuneMinutes;
  QCommandLineOption grabAfter;
  QCommandLineOption compare;
  QCommandLineOption inspect;
};

// What the command line asks for, checked.
struct Arguments {
  QString model;        // empty: none
  QString inputShapes;  // --input-shapes ("": not given)
  QString db;           // empty: the default database (--db cannot be empty)
  bool screenshot = false;
  QString screenshotPath;
  qint64 session = 0;  // --reopen; 0: none
  int tuneTrials = 0;
  double tuneMinutes = 0;
  int grabAfter = 0;
  qint64 compareA = 0, compareB = 0;        // --compare A,B (0: none)
  int inspectTask = 0, inspectProgram = 0;  // --inspect TASK[:PROGRAM], from 1 (0: none; program 0: the fastest)

  // Either starts a tuning once the model (or session) is shown.
  bool tune() const { return tuneTrials > 0 || tuneMinutes > 0; }
};

void describeApplication() {
  using tessel::ui::MainWindow;
  QApplication::setOrganizationName(MainWindow::kSettingsOrganization);
  QApplication::setApplicationName(MainWindow::kSettingsApplication);
  QApplication::setApplicationVersion(QString::fromUtf8(tessel::support::version()));
  QApplication::setDesktopFileName(QStringLiteral("tessel-studio"));
  QApplication::setWindowIcon(tessel::ui::appIcon());
}

Options addOptions(QCommandLineParser& parser) {
  parser.setApplicationDescription(
      QStringLiteral("Tessel Studio: auto-tune the tensor programs of deep-learning models."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("MODEL"),
                               QStringLiteral("Model to open: a zoo name, an .onnx file or a TorchScript .pt file."),
                               QStringLiteral("[MODEL]"));
  Options options{
      QCommandLineOption(QStringLiteral("db"), QStringLiteral("Tuning database (SQLite) to open."),
                         QStringLiteral("FILE")),
      QCommandLineOption(QStringLiteral("input-shapes"),
                         QStringLiteral("The shapes of MODEL's inputs, as tessel tune --input-shapes takes them "
                                        "(1,3,224,224;1,16): needed for a TorchScript .pt (asked for otherwise), "
                                        "they size an ONNX file's symbolic dimensions."),
                         QStringLiteral("SHAPES")),
      QCommandLineOption(QStringLiteral("screenshot"),
                         QStringLiteral("Render the main window to FILE.png and exit (no display needed)."),
                         QStringLiteral("FILE.png")),
      QCommandLineOption(
          QStringLiteral("tune"),
          QStringLiteral("Start tuning MODEL with this many trials once it is open (with --screenshot: the window is "
                         "grabbed when the tuning ends, or when the run it starts ends)."),
          QStringLiteral("TRIALS")),
      // Not "--session": QApplication takes that one for X11 session management.
      QCommandLineOption(
          QStringLiteral("reopen"),
          QStringLiteral("Reopen this session of the database (tessel db sessions lists them): its model, curves and "
                         "best programs; Start resumes it."),
          QStringLiteral("SESSION")),
      QCommandLineOption(
          QStringLiteral("tune-minutes"),
          QStringLiteral("Start tuning MODEL once it is open, for at most M minutes of wall-clock time (decimals "
                         "allowed; as tessel tune --minutes; with --tune, also at most TRIALS). When it ends, the "
                         "model is run against LibTorch (Tuning > Run when a tuning ends)."),
          QStringLiteral("M")),
      QCommandLineOption(
          QStringLiteral("grab-after"),
          QStringLiteral("With --tune and --screenshot: grab the window once this many trials are measured, while the "
                         "tuning goes on, then stop it and exit."),
          QStringLiteral("TRIALS")),
      QCommandLineOption(
          QStringLiteral("compare"),
          QStringLiteral(
              "Compare two sessions of the database side by side (tessel db sessions lists them), once "
              "MODEL, if given, is open; with --screenshot, the comparison is grabbed instead of the window."),
          QStringLiteral("A,B")),
      QCommandLineOption(
          QStringLiteral("inspect"),
          QStringLiteral("With --reopen: open the program inspector on task TASK of the session (as the tasks "
                         "table numbers them, from 1), showing its program PROGRAM (from 1; default: its fastest); "
                         "with --screenshot, the inspector is grabbed instead of the window."),
          QStringLiteral("TASK[:PROGRAM]")),
  };
  parser.addOption(options.db);
  parser.addOption(options.grabAfter);
  parser.addOption(options.inputShapes);
  parser.addOption(options.session);
  parser.addOption(options.screenshot);
  parser.addOption(options.tune);
  parser.addOption(options.tuneMinutes);
  parser.addOption(options.compare);
  parser.addOption(options.inspect);
  return options;
}

// Reads --tune, --tune-minutes and --grab-after into `args` (whose model,
// session and screenshot are read). Returns false after printing the error.
bool readTuning(const QCommandLineParser& parser, const Options& options, Arguments& args) {
  const bool opensSomething = !args.model.isEmpty() || args.session > 0;
  if (parser.isSet(options.tune)) {
    bool ok = false;
    args.tuneTrials = parser.value(options.tune).toInt(&ok);
    if (!ok || args.tuneTrials <= 0 || !opensSomething) {
      printError(QStringLiteral("--tune needs a MODEL (or --reopen) and a positive number of trials"));
      return false;
    }
  }
  if (parser.isSet(options.tuneMinutes)) {
    bool ok = false;
    args.tuneMinutes = parser.value(options.tuneMinutes).toDouble(&ok);
    // A week at most, as tessel tune --minutes.
    if (!ok || !(args.tuneMinutes > 0) || args.tuneMinutes > 7 * 24 * 60 || !opensSomething) {
      printError(
          QStringLiteral("--tune-minutes needs a MODEL (or --reopen) and a positive number of minutes (at "
                         "most a week)"));
      return false;
    }
  }
  if (parser.isSet(options.grabAfter)) {
    bool ok = false;
    args.grabAfter = parser.value(options.grabAfter).toInt(&ok);
    if (!ok || args.grabAfter <= 0 || !args.tune() || !args.screenshot) {
      printError(QStringLiteral("--grab-after needs a positive number of trials, --tune and --screenshot"));
      return false;
    }
  }
  return true;
}

// Checks the command line, in the order its errors are reported. Returns
// nothing after printing the first error.
std::optional<Arguments> readArguments(const QCommandLineParser& parser, const Options& options, bool headless) {
  Arguments args;
  const QStringList positional = parser.positionalArguments();
  if (positional.size() > 1) {
    printError(QStringLiteral("expected at most one MODEL, got %1 arguments (see --help)").arg(positional.size()));
    return std::nullopt;
  }
  if (!positional.isEmpty()) args.model = positional.first();
  args.db = parser.value(options.db);
  if (parser.isSet(options.db) && args.db.isEmpty()) {
    printError(QStringLiteral("--db needs a file name"));
    return std::nullopt;
  }
  args.screenshot = parser.isSet(options.screenshot);
  args.screenshotPath = parser.value(options.screenshot);
  if (args.screenshot && args.screenshotPath.isEmpty()) {
    printError(QStringLiteral("--screenshot needs a file name"));
    return std::nullopt;
  }

  if (parser.isSet(options.inputShapes)) {
    args.inputShapes = parser.value(options.inputShapes);
    if (!tessel::frontend::takesInputShapes(args.model.toStdString()) ||
        !tessel::ui::InputShapesDialog::wellFormed(args.inputShapes)) {
      printError(QStringLiteral("--input-shapes needs a .onnx or .pt MODEL and shapes such as 1,3,224,224;1,16"));
      return std::nullopt;
    }
  } else if (args.screenshot && tessel::frontend::needsInputShapes(args.model.toStdString())) {
    printError(QStringLiteral("--screenshot of a TorchScript MODEL needs --input-shapes (nobody is there to ask)"));
    return std::nullopt;
  }

  if (headless && !args.screenshot) {
    printError(
        QStringLiteral("no display to open the window on (DISPLAY and WAYLAND_DISPLAY are not set): run it in a "
                       "desktop session or under xvfb-run, or use --screenshot FILE.png"));
    return std::nullopt;
  }

  if (parser.isSet(options.session)) {
    bool ok = false;
    args.session = parser.value(options.session).toLongLong(&ok);
    if (!ok || args.session <= 0 || !args.model.isEmpty()) {
      printError(QStringLiteral("--reopen needs a positive session id, and no MODEL (the session names its model)"));
      return std::nullopt;
    }
  }
  if (!readTuning(parser, options, args)) return std::nullopt;
  if (parser.isSet(options.compare)) {
    const QStringList ids = parser.value(options.compare).split(',');
    bool okA = false, okB = false;
    if (ids.size() == 2) {
      args.compareA = ids[0].toLongLong(&okA);
      args.compareB = ids[1].toLongLong(&okB);
    }
    if (!okA || !okB || args.compareA <= 0 || args.compareB <= 0 || args.tune()) {
      printError(QStringLiteral("--compare needs two positive session ids, A,B (and no --tune)"));
      return std::nullopt;
    }
  }
  if (parser.isSet(options.inspect)) {
    const QStringList parts = parser.value(options.inspect).split(':');
    bool okTask = false, okProgram = parts.size() == 1;
    args.inspectTask = parts.value(0).toInt(&okTask);
    if (parts.size() == 2) args.inspectProgram = parts[1].toInt(&okProgram);
    if (!okTask || !okProgram || parts.size() > 2 || args.inspectTask <= 0 || args.inspectProgram < 0 ||
        args.session <= 0 || args.tune() || args.compareA > 0) {
      printError(
          QStringLiteral("--inspect needs TASK[:PROGRAM] (numbers from 1) and --reopen (no --tune, no --compare)"));
      return std::nullopt;
    }
  }
  return args;
}

// A database that cannot be used stops here: nothing may go on in another one.
bool databaseUsable(const QString& path) {
  const QString error = tessel::ui::MainWindow::checkDatabase(path);
  if (error.isEmpty()) return true;
  printError(QStringLiteral("cannot use --db %1: %2").arg(path, error));
  return false;
}

// Sets the budget and starts the tuning once the model is open, or resumes
// the reopened session once it is shown (only a model's can be). Once: later
// reopenings are the user's.
void tuneOnceShown(tessel::ui::MainWindow& window, const Arguments& args) {
  using tessel::ui::MainWindow;
  // A time budget alone is not cut short by the toolbar's trials.
  window.setTrialBudget(args.tuneTrials > 0 ? args.tuneTrials : kTimeBudgetTrials);
  window.setTimeBudget(args.tuneMinutes);
  if (args.session > 0) {
    QObject::connect(
        &window, &MainWindow::sessionReopened, &window,
        [&window, session = args.session] {
          if (window.resumableSession() == session) {
            window.startTuning();
          } else {
            printError(QStringLiteral("session %1 cannot be resumed here (an operator's session, or one of another "
                                      "target or fusion): --tune needs a model session")
                           .arg(session));
            QCoreApplication::exit(1);
          }
        },
        Qt::SingleShotConnection);
  } else {
    QObject::connect(&window, &MainWindow::modelReady, &window, &MainWindow::startTuning, Qt::SingleShotConnection);
  }
}

// Grabs the window to --screenshot's file, and exits, once what it shows is
// ready: the graph laid out (and the tuning ended, with --tune), or the model
// failed to open.
void grabOnceReady(tessel::ui::MainWindow& window, const Arguments& args) {
  using tessel::ui::GraphView;
  using tessel::ui::MainWindow;
  auto grab = [&window, path = args.screenshotPath] {
    QTimer::singleShot(kScreenshotDelayMs, &window, [&window, path] {
      const QString error = writeScreenshot(window, path);
      if (!error.isEmpty()) printError(error);
      QCoreApplication::exit(error.isEmpty() ? 0 : 1);
    });
  };
  if (args.grabAfter > 0) {
    // Mid-run: the progress bar, trials/s and time left are on screen.
    auto grabbed = std::make_shared<bool>(false);
    QObject::connect(window.tuningSession(), &tessel::ui::TuningSession::roundFinished, &window,
                     [grab, grabbed, grabAfter = args.grabAfter](int, int, double, double, int totalTrials) {
                       if (totalTrials < grabAfter || *grabbed) return;
                       *grabbed = true;
                       grab();
                     });
    QObject::connect(&window, &MainWindow::tuningFinished, &window, grab);
    QObject::connect(&window, &MainWindow::sessionFailed, &window, grab);
  } else if (args.tune()) {
    // When the tuning ends, the run it starts (Run when a tuning ends) is
    // waited for, so that the Run view shows its result.
    QObject::connect(&window, &MainWindow::tuningFinished, &window, [&window, grab] {
      QTimer::singleShot(0, &window, [&window, grab] {
        if (window.runController()->isRunning())
          QObject::connect(window.runController(), &tessel::ui::RunController::runFinished, &window, grab,
                           Qt::SingleShotConnection);
        else
          grab();
      });
    });
    QObject::connect(&window, &MainWindow::sessionFailed, &window, grab);
  } else if (args.session > 0) {
    // The session's model is opened for it: grab once it is laid out.
    QObject::connect(&window, &MainWindow::sessionReopened, &window, [&window, grab] {
      if (!window.preparedModel() || window.graphView()->isLayoutReady()) {
        grab();
      } else {
        QObject::connect(window.graphView(), &GraphView::layoutFinished, &window, grab);
        QObject::connect(window.graphView(), &GraphView::layoutFailed, &window, grab);
      }
    });
    QObject::connect(&window, &MainWindow::sessionFailed, &window, grab);
  } else if (args.model.isEmpty()) {
    grab();
  } else {
    QObject::connect(window.graphView(), &GraphView::layoutFinished, &window, grab);
    QObject::connect(window.graphView(), &GraphView::layoutFailed, &window, grab);
  }
  QObject::connect(&window, &MainWindow::modelFailed, &window, grab);
}

// Opens the comparison of --compare once the model (if any) is open, so that
// its graph takes the difference's colours; with --screenshot, grabs it once
// it is drawn and exits (1 when it cannot be read).
void compareOnceShown(tessel::ui::MainWindow& window, const Arguments& args) {
  using tessel::ui::CompareDialog;
  using tessel::ui::MainWindow;
  auto show = [&window, args] {
    CompareDialog* dialog = window.showCompare(args.compareA, args.compareB);
    if (!args.screenshot) return;
    QObject::connect(dialog, &CompareDialog::compared, dialog, [dialog, path = args.screenshotPath] {
      QTimer::singleShot(kScreenshotDelayMs, dialog, [dialog, path] {
        const QString error = writeScreenshot(*dialog, path);
        if (!error.isEmpty()) printError(error);
        QCoreApplication::exit(error.isEmpty() ? 0 : 1);
      });
    });
    QObject::connect(dialog, &CompareDialog::failed, dialog, [](const QString& message) {
      printError(message);
      QCoreApplication::exit(1);
    });
  };
  if (args.model.isEmpty()) {
    QTimer::singleShot(0, &window, show);
  } else {
    QObject::connect(&window, &MainWindow::modelReady, &window, show, Qt::SingleShotConnection);
    if (args.screenshot)
      QObject::connect(&window, &MainWindow::modelFailed, &window, [] { QCoreApplication::exit(1); });
  }
}

// Opens the program inspector of --inspect once the session is shown; with
// --screenshot, grabs it once its code is generated and exits (1 when there
// is nothing to inspect).
void inspectOnceShown(tessel::ui::MainWindow& window, const Arguments& args) {
  using tessel::ui::MainWindow;
  using tessel::ui::ProgramInspector;
  auto show = [&window, args] {
    ProgramInspector* inspector = window.inspectProgram(args.inspectTask - 1, args.inspectProgram - 1);
    if (!args.screenshot) return;
    if (!inspector) {
      printError(QStringLiteral("nothing to inspect: session %1 has no task %2 with measured programs")
                     .arg(args.session)
                     .arg(args.inspectTask));
      QCoreApplication::exit(1);
      return;
    }
    inspector->tabs()->setCurrentIndex(ProgramInspector::DiffTab);
    auto grab = [inspector, path = args.screenshotPath] {
      QTimer::singleShot(kScreenshotDelayMs, inspector, [inspector, path] {
        const QString error = writeScreenshot(*inspector, path);
        if (!error.isEmpty()) printError(error);
        QCoreApplication::exit(error.isEmpty() ? 0 : 1);
      });
    };
    if (inspector->code()->isReady()) {
      grab();
    } else {
      QObject::connect(inspector->code(), &tessel::ui::CodeView::ready, inspector, grab, Qt::SingleShotConnection);
      QObject::connect(inspector->code(), &tessel::ui::CodeView::failed, inspector, grab, Qt::SingleShotConnection);
    }
  };
  QObject::connect(&window, &MainWindow::sessionReopened, &window, show, Qt::SingleShotConnection);
  if (args.screenshot)
    QObject::connect(&window, &MainWindow::sessionFailed, &window, [] { QCoreApplication::exit(1); });
}

void openModelOrSession(tessel::ui::MainWindow& window, const Arguments& args) {
  if (!args.inputShapes.isEmpty())
    window.setModelPath(args.model, args.inputShapes);
  else if (!args.model.isEmpty())
    window.setModelPath(args.model);
  if (args.session > 0) window.reopenSession(args.session);
}

}  // namespace

int main(int argc, char* argv[]) {
  tessel::cost::registerLearnedCostModels();  // before the settings list the cost models
  const bool headless = renderOffscreenWithoutDisplay();
  QApplication app(argc, argv);
  describeApplication();

  QCommandLineParser parser;
  const Options options = addOptions(parser);
  parser.process(app);  // exits on --help, --version and unknown options
  const std::optional<Arguments> args = readArguments(parser, options, headless);
  if (!args) return 1;
  if (!args->db.isEmpty() && !databaseUsable(args->db)) return 1;

  tessel::ui::MainWindow window;
  if (!args->db.isEmpty()) window.setDatabasePath(args->db);
  if (args->tune()) tuneOnceShown(window, *args);

  if (args->screenshot) {
    // The default layout, not the user's saved one, and nothing saved on exit:
    // screenshots are reproducible and leave the settings alone.
    window.setPersistent(false);
    if (args->compareA > 0)
      compareOnceShown(window, *args);
    else if (args->inspectTask > 0)
      inspectOnceShown(window, *args);
    else
      grabOnceReady(window, *args);
    window.show();
    openModelOrSession(window, *args);
    return app.exec();
  }
  if (args->compareA > 0) compareOnceShown(window, *args);
  if (args->inspectTask > 0) inspectOnceShown(window, *args);
  openModelOrSession(window, *args);
  window.restoreLayout();
  window.show();
  return app.exec();
}
