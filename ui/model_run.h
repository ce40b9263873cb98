// The studio's adapter to `tessel run`: runs the tuned model against
// LibTorch in a child process (the CLI beside the studio's executable), the
// same code the command line runs, and parses its one-line JSON. Never in
// the studio's process: `tessel run` must run LibTorch before Tessel's
// kernels in a fresh process (OpenMP threads left spinning slowed LibTorch
// 15-60x), and a kernel that crashes takes only the child down. A child
// that fails, crashes, prints no JSON or is cancelled ends in failed() with
// its exit code and the last lines of its stderr.
#pragma once

#include <QByteArray>
#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QVector>
#include <limits>
#include <optional>

namespace tessel::ui {

// What to run: `tessel run MODEL --db DB --fusion F --target T --profile
// --json --repeats N [--compare onednn] [--input-shapes S]`.
struct RunRequest {
  QString model;     // zoo name or file
  QString database;  // the tuning database whose best kernels run
  QString fusion = QStringLiteral("dp");
  QString target = QStringLiteral("cpu");
  int repeats = 30;           // timed runs of each side
  bool compareOnednn = true;  // oneDNN's executor as a third side
  QString inputShapes;        // "1,3,224,224;..." where the model needs them ("" otherwise)
  qint64 session = 0;         // the session shown, that the run is stored with (0: none)
};

inline constexpr double kNoMs = std::numeric_limits<double>::quiet_NaN();

// One step of the run (a partition's kernel, or a layout conversion).
struct PartitionTiming {
  QString step;               // the kernel's symbol, or "convert VALUE NHWC->plain"
  int group = -1;             // the fusion plan's group (-1: a layout conversion)
  QString task;               // its task's workload key ("" for a naive program or a conversion)
  double measuredMs = 0;      // median time of the step in the run
  double estimateMs = kNoMs;  // its task's best tuned latency (NaN: none, a naive program)
  double ratio = kNoMs;       // measured / estimate (NaN: no estimate)
};

// `tessel run --json --profile`'s result.
struct RunResult {
  double tesselMs = 0, tesselMinMs = 0, tesselMaxMs = 0;        // median, fastest, slowest of the repeats
  double libtorchMs = 0, libtorchMinMs = 0, libtorchMaxMs = 0;  // the same for LibTorch
  // The same for the oneDNN executor (NaN where it was not run: onednnNote
  // says why, or is empty for a run without --compare onednn).
  double onednnMs = kNoMs, onednnMinMs = kNoMs, onednnMaxMs = kNoMs;
  double onednnSpeedup = kNoMs;  // onednn median / tessel median
  bool onednnCorrect = false;
  double onednnMaxAbsErr = 0;
  QString onednnNote;
  double estimateMs = kNoMs;  // sum of weight x best latency (NaN while a task runs naive)
  double speedup = 0;         // libtorch median / tessel median
  bool correct = false;
  double maxAbsErr = 0, maxAbsRef = 0;  // largest difference from LibTorch, largest output
  bool disturbed = false;
  QString disturbance;  // why it is flagged ("" when not)
  // While each side was timed: the share of the CPUs other processes used,
  // and the share a hypervisor stole (0..1; support/cpu_contention.h).
  struct Contention {
    double othersShare = 0, stealShare = 0;
  };
  Contention tesselContention, libtorchContention, onednnContention;
  int tasksTuned = 0, tasksNaive = 0, repeats = 0, threads = 0;
  QString model, fusion;
  QVector<PartitionTiming> partitions;  // in run order
  QByteArray json;                      // the line as printed (what the database stores)

  // The share of each fusion group in the run's measured time (the sum of
  // every step's median, conversions included), indexed by group up to the
  // largest group that ran; a group with no step gets 0.
  QVector<double> groupShares() const;
};

// Parses `tessel run --json` output: the last line that is a JSON object
// with tessel_ms. std::nullopt and *error when there is none.
std::optional<RunResult> parseRunJson(const QByteArray& stdoutText, QString* error);

class ModelRun : public QObject {
  Q_OBJECT

 public:
  explicit ModelRun(QObject* parent = nullptr);
  ~ModelRun() override;  // kills a child still running

  // The tessel CLI: by default `tessel` beside the running executable.
  void setProgram(const QString& path) { program_ = path; }
  QString program() const { return program_; }
  static QString defaultProgram();
  static QStringList arguments(const RunRequest& request);

  // Starts the child and returns at once (false if one is running). A
  // program that cannot be started ends in failed(), which Qt may deliver
  // before start() returns.
  bool start(const RunRequest& request);
  // Kills the child; failed("cancelled ...") follows.
  void cancel();
  bool isRunning() const { return process_ != nullptr; }
  const RunRequest& request() const { return request_; }
  // The command line that runs `request`, for the log.
  QString commandLine(const RunRequest& request) const;

 signals:
  void finished(const tessel::ui::RunResult& result);
  void failed(const QString& message);

 private:
  void onFinished(int exitCode, QProcess::ExitStatus status);
  void onError(QProcess::ProcessError error);
  void end(const QString& failure, const std::optional<RunResult>& result);
  QString stderrTail() const;

  QString program_;
  RunRequest request_;
  QProcess* process_ = nullptr;
  bool cancelled_ = false;
  QByteArray stdout_, stderr_;
  QElapsedTimer clock_;
};

}  // namespace tessel::ui

Q_DECLARE_METATYPE(tessel::ui::RunResult)
