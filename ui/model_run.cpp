#include "ui/model_run.h"

#include <signal.h>
#include <unistd.h>

#include <QCoreApplication>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cmath>
#include <utility>

namespace tessel::ui {

namespace {

// Lines of stderr a failure quotes, and its characters at most.
constexpr int kStderrTailLines = 6;
constexpr int kStderrTailChars = 1200;
// Output kept of a child (a runaway one must not fill the studio's memory).
constexpr qsizetype kMaxOutputBytes = 4 << 20;

double number(const QJsonObject& o, const char* key, double otherwise = kNoMs) {
  const QJsonValue v = o.value(QLatin1String(key));
  return v.isDouble() ? v.toDouble() : otherwise;
}

void append(QByteArray& to, const QByteArray& more) {
  to += more;
  if (to.size() > kMaxOutputBytes) to.remove(0, to.size() - kMaxOutputBytes);
}

}  // namespace

QVector<double> RunResult::groupShares() const {
  int groups = 0;
  double total = 0;
  for (const PartitionTiming& p : partitions) {
    groups = std::max(groups, p.group + 1);
    total += p.measuredMs;
  }
  QVector<double> shares(groups, 0.0);
  if (total <= 0) return shares;
  for (const PartitionTiming& p : partitions)
    if (p.group >= 0) shares[p.group] += p.measuredMs / total;
  return shares;
}

std::optional<RunResult> parseRunJson(const QByteArray& stdoutText, QString* error) {
  const QList<QByteArray> lines = stdoutText.split('\n');
  for (qsizetype i = lines.size() - 1; i >= 0; --i) {
    const QByteArray line = lines[i].trimmed();
    if (!line.startsWith('{')) continue;
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(line, &parseError);
    if (!doc.isObject() || !doc.object().value("tessel_ms").isDouble()) continue;
    const QJsonObject o = doc.object();
    RunResult r;
    r.tesselMs = number(o, "tessel_ms_median", number(o, "tessel_ms"));
    r.tesselMinMs = number(o, "tessel_ms_min", r.tesselMs);
    r.tesselMaxMs = number(o, "tessel_ms_max", r.tesselMs);
    r.libtorchMs = number(o, "libtorch_ms_median", number(o, "libtorch_ms", 0));
    r.libtorchMinMs = number(o, "libtorch_ms_min", r.libtorchMs);
    r.libtorchMaxMs = number(o, "libtorch_ms_max", r.libtorchMs);
    r.onednnMs = number(o, "onednn_ms_median", number(o, "onednn_ms"));
    r.onednnMinMs = number(o, "onednn_ms_min", r.onednnMs);
    r.onednnMaxMs = number(o, "onednn_ms_max", r.onednnMs);
    r.onednnSpeedup = number(o, "onednn_speedup");
    r.onednnCorrect = o.value("onednn_correct").toBool();
    r.onednnMaxAbsErr = number(o, "onednn_max_abs_err", 0);
    r.onednnNote = o.value("onednn_note").toString();
    r.estimateMs = number(o, "estimate_ms");
    r.speedup = number(o, "speedup", 0);
    r.correct = o.value("correct").toBool();
    r.maxAbsErr = number(o, "max_abs_err", 0);
    r.maxAbsRef = number(o, "max_abs_ref", 0);
    r.disturbed = o.value("disturbed").toBool();
    r.disturbance = o.value("disturbance").toString();
    const QJsonObject contention = o.value("contention").toObject();
    for (auto [side, out] : {std::pair{"tessel", &r.tesselContention}, std::pair{"libtorch", &r.libtorchContention},
                             std::pair{"onednn", &r.onednnContention}}) {
      const QJsonObject c = contention.value(QLatin1String(side)).toObject();
      *out = {number(c, "others_share", 0), number(c, "steal_share", 0)};
    }
    r.tasksTuned = o.value("tasks_tuned").toInt();
    r.tasksNaive = o.value("tasks_naive").toInt();
    r.repeats = o.value("repeats").toInt();
    r.threads = o.value("threads").toInt();
    r.model = o.value("model").toString();
    r.fusion = o.value("fusion").toString();
    for (const QJsonValue& v : o.value("partitions").toArray()) {
      const QJsonObject p = v.toObject();
      PartitionTiming t;
      t.step = p.value("step").toString();
      t.group = p.value("group").toInt(-1);
      t.task = p.value("task").toString();
      t.measuredMs = number(p, "measured_ms", 0);
      t.estimateMs = number(p, "estimate_ms");
      t.ratio = number(p, "ratio");
      r.partitions.push_back(t);
    }
    r.json = line;
    return r;
  }
  if (error)
    *error = stdoutText.trimmed().isEmpty() ? QStringLiteral("it printed no result")
                                            : QStringLiteral("it printed no result as JSON (tessel run --json)");
  return std::nullopt;
}

ModelRun::ModelRun(QObject* parent) : QObject(parent), program_(defaultProgram()) {
  qRegisterMetaType<tessel::ui::RunResult>();
}

ModelRun::~ModelRun() {
  if (!process_) return;
  process_->disconnect(this);
  cancelled_ = true;
  if (process_->processId() > 0) ::kill(-pid_t(process_->processId()), SIGKILL);
  process_->kill();
  process_->waitForFinished(5000);
}

QString ModelRun::defaultProgram() {
  return QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("tessel"));
}

QStringList ModelRun::arguments(const RunRequest& r) {
  QStringList args = {QStringLiteral("run"),
                      r.model,
                      QStringLiteral("--db"),
                      r.database,
                      "--fusion",
                      r.fusion,
                      "--target",
                      r.target,
                      "--profile",
                      "--json",
                      "--repeats",
                      QString::number(r.repeats)};
  if (r.compareOnednn) args << QStringLiteral("--compare") << QStringLiteral("onednn");
  if (!r.inputShapes.isEmpty()) args << QStringLiteral("--input-shapes") << r.inputShapes;
  return args;
}

QString ModelRun::commandLine(const RunRequest& request) const {
  QStringList parts = {program_};
  for (const QString& a : arguments(request))
    parts << (a.contains(' ') || a.isEmpty() ? QStringLiteral("\"%1\"").arg(a) : a);
  return parts.join(' ');
}

bool ModelRun::start(const RunRequest& request) {
  if (process_) return false;
  request_ = request;
  cancelled_ = false;
  stdout_.clear();
  stderr_.clear();
  auto* process = new QProcess(this);
  process_ = process;
  // Its own process group: Stop kills the compilers it started too.
  process->setChildProcessModifier([] { ::setpgid(0, 0); });
  connect(process, &QProcess::readyReadStandardOutput, this,
          [this, process] { append(stdout_, process->readAllStandardOutput()); });
  connect(process, &QProcess::readyReadStandardError, this,
          [this, process] { append(stderr_, process->readAllStandardError()); });
  connect(process, &QProcess::finished, this, &ModelRun::onFinished);
  connect(process, &QProcess::errorOccurred, this, &ModelRun::onError);
  clock_.start();
  process->start(program_, arguments(request));  // a program that cannot start: failed(), maybe before this returns
  return true;
}

void ModelRun::cancel() {
  if (!process_) return;
  cancelled_ = true;
  if (process_->processId() > 0) ::kill(-pid_t(process_->processId()), SIGKILL);
  process_->kill();  // finished() follows
}

QString ModelRun::stderrTail() const {
  QStringList lines;
  for (const QByteArray& l : stderr_.split('\n'))
    if (!l.trimmed().isEmpty()) lines << QString::fromUtf8(l.trimmed());
  QString tail = lines.mid(std::max<qsizetype>(0, lines.size() - kStderrTailLines)).join('\n');
  if (tail.size() > kStderrTailChars) tail = QStringLiteral("...") + tail.right(kStderrTailChars);
  return tail;
}

void ModelRun::onError(QProcess::ProcessError error) {
  // A child that never started sends no finished(); the others do.
  if (error != QProcess::FailedToStart || !process_) return;
  end(tr("cannot start %1: %2").arg(program_, process_->errorString()), std::nullopt);
}

void ModelRun::onFinished(int exitCode, QProcess::ExitStatus status) {
  if (!process_) return;
  append(stdout_, process_->readAllStandardOutput());
  append(stderr_, process_->readAllStandardError());
  const QString seconds = QString::number(clock_.elapsed() / 1e3, 'f', 1);
  const QString tail = stderrTail();
  const QString quoted = tail.isEmpty() ? QString() : tr(":\n%1").arg(tail);
  if (cancelled_) {
    end(tr("the run was cancelled after %1 s (its process was killed)").arg(seconds), std::nullopt);
    return;
  }
  if (status == QProcess::CrashExit) {
    end(tr("tessel run crashed after %1 s (%2)%3").arg(seconds, process_->errorString(), quoted), std::nullopt);
    return;
  }
  QString parseError;
  std::optional<RunResult> result = parseRunJson(stdout_, &parseError);
  // Exit 1 with a result is a run whose outputs are wrong: shown as WRONG.
  if (result && (exitCode == 0 || (exitCode == 1 && !result->correct))) {
    end({}, result);
    return;
  }
  end(result ? tr("tessel run exited with code %1 after %2 s%3").arg(exitCode).arg(seconds, quoted)
             : tr("tessel run exited with code %1 after %2 s and %3%4").arg(exitCode).arg(seconds, parseError, quoted),
      std::nullopt);
}

void ModelRun::end(const QString& failure, const std::optional<RunResult>& result) {
  process_->deleteLater();
  process_ = nullptr;
  if (result)
    emit finished(*result);
  else
    emit failed(failure);
}

}  // namespace tessel::ui
