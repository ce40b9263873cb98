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
#include <QTimer>
#include <cstdio>
#include <memory>

#include "cost/learned/learned_models.h"
#include "support/version.h"
#include "ui/app_icon.h"
#include "ui/graph_view.h"
#include "ui/main_window.h"
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

}  // namespace

int main(int argc, char* argv[]) {
  using tessel::ui::MainWindow;

  tessel::cost::registerLearnedCostModels();  // before the settings list the cost models
  const bool headless = renderOffscreenWithoutDisplay();
  QApplication app(argc, argv);
  QApplication::setOrganizationName(MainWindow::kSettingsOrganization);
  QApplication::setApplicationName(MainWindow::kSettingsApplication);
  QApplication::setApplicationVersion(QString::fromUtf8(tessel::support::version()));
  QApplication::setDesktopFileName(QStringLiteral("tessel-studio"));
  QApplication::setWindowIcon(tessel::ui::appIcon());

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Tessel Studio: auto-tune the tensor programs of deep-learning models."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("MODEL"),
                               QStringLiteral("Model to open: a zoo name, an .onnx file or a TorchScript .pt file."),
                               QStringLiteral("[MODEL]"));
  const QCommandLineOption dbOption(QStringLiteral("db"), QStringLiteral("Tuning database (SQLite) to open."),
                                    QStringLiteral("FILE"));
  const QCommandLineOption screenshotOption(
      QStringLiteral("screenshot"), QStringLiteral("Render the main window to FILE.png and exit (no display needed)."),
      QStringLiteral("FILE.png"));
  const QCommandLineOption tuneOption(
      QStringLiteral("tune"),
      QStringLiteral("Start tuning MODEL with this many trials once it is open (with --screenshot: the window is "
                     "grabbed when the tuning ends, or when the run it starts ends)."),
      QStringLiteral("TRIALS"));
  // Not "--session": QApplication takes that one for X11 session management.
  const QCommandLineOption sessionOption(
      QStringLiteral("reopen"),
      QStringLiteral("Reopen this session of the database (tessel db sessions lists them): its model, curves and best "
                     "programs; Start resumes it."),
      QStringLiteral("SESSION"));
  const QCommandLineOption tuneMinutesOption(
      QStringLiteral("tune-minutes"),
      QStringLiteral("Start tuning MODEL once it is open, for at most M minutes of wall-clock time (decimals "
                     "allowed; as tessel tune --minutes; with --tune, also at most TRIALS). When it ends, the model "
                     "is run against LibTorch (Tuning > Run when a tuning ends)."),
      QStringLiteral("M"));
  const QCommandLineOption grabAfterOption(
      QStringLiteral("grab-after"),
      QStringLiteral("With --tune and --screenshot: grab the window once this many trials are measured, while the "
                     "tuning goes on, then stop it and exit."),
      QStringLiteral("TRIALS"));
  parser.addOption(dbOption);
  parser.addOption(grabAfterOption);
  parser.addOption(sessionOption);
  parser.addOption(screenshotOption);
  parser.addOption(tuneOption);
  parser.addOption(tuneMinutesOption);
  parser.process(app);  // exits on --help, --version and unknown options

  const QStringList positional = parser.positionalArguments();
  if (positional.size() > 1) {
    printError(QStringLiteral("expected at most one MODEL, got %1 arguments (see --help)").arg(positional.size()));
    return 1;
  }
  if (parser.isSet(dbOption) && parser.value(dbOption).isEmpty()) {
    printError(QStringLiteral("--db needs a file name"));
    return 1;
  }
  const bool screenshot = parser.isSet(screenshotOption);
  const QString screenshotPath = parser.value(screenshotOption);
  if (screenshot && screenshotPath.isEmpty()) {
    printError(QStringLiteral("--screenshot needs a file name"));
    return 1;
  }

  if (headless && !screenshot) {
    printError(
        QStringLiteral("no display to open the window on (DISPLAY and WAYLAND_DISPLAY are not set): run it in a "
                       "desktop session or under xvfb-run, or use --screenshot FILE.png"));
    return 1;
  }

  qint64 session = 0;
  if (parser.isSet(sessionOption)) {
    bool ok = false;
    session = parser.value(sessionOption).toLongLong(&ok);
    if (!ok || session <= 0 || !positional.isEmpty()) {
      printError(QStringLiteral("--reopen needs a positive session id, and no MODEL (the session names its model)"));
      return 1;
    }
  }

  int tuneTrials = 0;
  if (parser.isSet(tuneOption)) {
    bool ok = false;
    tuneTrials = parser.value(tuneOption).toInt(&ok);
    if (!ok || tuneTrials <= 0 || (positional.isEmpty() && session == 0)) {
      printError(QStringLiteral("--tune needs a MODEL (or --reopen) and a positive number of trials"));
      return 1;
    }
  }

  double tuneMinutes = 0;
  if (parser.isSet(tuneMinutesOption)) {
    bool ok = false;
    tuneMinutes = parser.value(tuneMinutesOption).toDouble(&ok);
    // A week at most, as tessel tune --minutes.
    if (!ok || !(tuneMinutes > 0) || tuneMinutes > 7 * 24 * 60 || (positional.isEmpty() && session == 0)) {
      printError(
          QStringLiteral("--tune-minutes needs a MODEL (or --reopen) and a positive number of minutes (at "
                         "most a week)"));
      return 1;
    }
  }
  // Either starts a tuning once the model (or session) is shown.
  const bool tune = tuneTrials > 0 || tuneMinutes > 0;

  int grabAfter = 0;
  if (parser.isSet(grabAfterOption)) {
    bool ok = false;
    grabAfter = parser.value(grabAfterOption).toInt(&ok);
    if (!ok || grabAfter <= 0 || !tune || !screenshot) {
      printError(QStringLiteral("--grab-after needs a positive number of trials, --tune and --screenshot"));
      return 1;
    }
  }

  // A database that cannot be used stops here: nothing may go on in another one.
  if (parser.isSet(dbOption)) {
    const QString error = MainWindow::checkDatabase(parser.value(dbOption));
    if (!error.isEmpty()) {
      printError(QStringLiteral("cannot use --db %1: %2").arg(parser.value(dbOption), error));
      return 1;
    }
  }

  MainWindow window;
  if (parser.isSet(dbOption)) window.setDatabasePath(parser.value(dbOption));
  if (tune) {
    // A time budget alone is not cut short by the toolbar's trials.
    window.setTrialBudget(tuneTrials > 0 ? tuneTrials : kTimeBudgetTrials);
    window.setTimeBudget(tuneMinutes);
    // A reopened session is resumed once it is shown (only a model's can be);
    // a model is tuned once open. Once: later reopenings are the user's.
    if (session > 0) {
      QObject::connect(
          &window, &MainWindow::sessionReopened, &window,
          [&window, session] {
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

  if (screenshot) {
    // The default layout, not the user's saved one, and nothing saved on exit:
    // screenshots are reproducible and leave the settings alone. The window
    // is grabbed once what it shows is ready: the graph laid out (and the
    // tuning ended, with --tune), or the model failed to open.
    window.setPersistent(false);
    auto grab = [&window, &screenshotPath] {
      QTimer::singleShot(kScreenshotDelayMs, &window, [&window, &screenshotPath] {
        const QString error = writeScreenshot(window, screenshotPath);
        if (!error.isEmpty()) printError(error);
        QCoreApplication::exit(error.isEmpty() ? 0 : 1);
      });
    };
    if (grabAfter > 0) {
      // Mid-run: the progress bar, trials/s and time left are on screen.
      auto grabbed = std::make_shared<bool>(false);
      QObject::connect(window.tuningSession(), &tessel::ui::TuningSession::roundFinished, &window,
                       [grab, grabbed, grabAfter](int, int, double, double, int totalTrials) {
                         if (totalTrials < grabAfter || *grabbed) return;
                         *grabbed = true;
                         grab();
                       });
      QObject::connect(&window, &MainWindow::tuningFinished, &window, grab);
      QObject::connect(&window, &MainWindow::sessionFailed, &window, grab);
    } else if (tune) {
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
    } else if (session > 0) {
      // The session's model is opened for it: grab once it is laid out.
      QObject::connect(&window, &MainWindow::sessionReopened, &window, [&window, grab] {
        if (!window.preparedModel() || window.graphView()->isLayoutReady()) {
          grab();
        } else {
          QObject::connect(window.graphView(), &tessel::ui::GraphView::layoutFinished, &window, grab);
          QObject::connect(window.graphView(), &tessel::ui::GraphView::layoutFailed, &window, grab);
        }
      });
      QObject::connect(&window, &MainWindow::sessionFailed, &window, grab);
    } else if (positional.isEmpty()) {
      grab();
    } else {
      QObject::connect(window.graphView(), &tessel::ui::GraphView::layoutFinished, &window, grab);
      QObject::connect(window.graphView(), &tessel::ui::GraphView::layoutFailed, &window, grab);
    }
    QObject::connect(&window, &MainWindow::modelFailed, &window, grab);
    window.show();
    if (!positional.isEmpty()) window.setModelPath(positional.first());
    if (session > 0) window.reopenSession(session);
    return app.exec();
  }
  if (!positional.isEmpty()) window.setModelPath(positional.first());
  if (session > 0) window.reopenSession(session);

  window.restoreLayout();
  window.show();
  return app.exec();
}
