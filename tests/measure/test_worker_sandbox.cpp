// Qt Test suite of the measurement worker's sandbox (measure/worker_sandbox.h):
// hostile kernels, compiled with the system compiler and measured through the
// real runner and worker, are stopped and recorded as errors naming what they
// tried; an ordinary kernel after them still measures.
#include <unistd.h>

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <chrono>
#include <string>

#include "measure/runner.h"
#include "measure/worker_sandbox.h"
#include "tessel_test.h"

#ifndef TESSEL_WORKER_PATH
#error "TESSEL_WORKER_PATH must name the tessel-worker executable"
#endif
#ifndef TESSEL_TEST_CXX
#define TESSEL_TEST_CXX "c++"
#endif

using namespace tessel::measure;

namespace {

constexpr int kN = 1000;

// Each kernel copies its input when what it tries succeeds, so without the
// sandbox it would pass the check: the error can only come from the walls.
// TESSEL_PROBE is the file the /tmp writer tries to create.
const char* kHostileSource = R"(
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
static int copy(float* const* a) { for (int i = 0; i < 1000; ++i) a[1][i] = a[0][i]; return 0; }
extern "C" int ref_copy(float* const* a) { return copy(a); }
extern "C" int plain_copy(float* const* a) { return copy(a); }
extern "C" int opens_socket(float* const* a) {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) return 3;
  close(s);
  return copy(a);
}
extern "C" int forks(float* const* a) {
  const pid_t p = fork();
  if (p < 0) return 3;
  if (p == 0) _exit(0);
  waitpid(p, nullptr, 0);
  return copy(a);
}
extern "C" int writes_tmp(float* const* a) {
  FILE* f = fopen(TESSEL_PROBE, "w");
  if (!f) return 3;
  fputs("escaped\n", f);
  fclose(f);
  return copy(a);
}
extern "C" int runs_program(float* const* a) {
  execl("/bin/true", "true", (char*)nullptr);
  return 3;
}
extern "C" int lifts_cpu_limit(float* const* a) {
  rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
  if (setrlimit(RLIMIT_CPU, &unlimited) != 0) return 3;
  return copy(a);
}
extern "C" int spins(float* const*) {
  volatile unsigned long counter = 0;
  for (;;) ++counter;
}
// The walls as the kernel sees them: 0 when all stand, else which one is missing.
extern "C" int reports_walls(float* const* a) {
  char status[8192] = {0};
  const int fd = open("/proc/self/status", O_RDONLY);
  if (fd < 0) return 10;
  const ssize_t n = read(fd, status, sizeof status - 1);
  close(fd);
  if (n <= 0) return 11;
  if (!strstr(status, "NoNewPrivs:\t1")) return 12;
  if (!strstr(status, "Seccomp:\t2")) return 13;
  rlimit core{}, fsize{}, as{};
  getrlimit(RLIMIT_CORE, &core);
  getrlimit(RLIMIT_FSIZE, &fsize);
  getrlimit(RLIMIT_AS, &as);
  if (core.rlim_max != 0) return 14;
  if (fsize.rlim_max == RLIM_INFINITY) return 15;
  if (as.rlim_max == RLIM_INFINITY) return 16;
  // Twice the machine's memory, not even touched: refused by the address-space limit.
  const size_t twice = 2 * size_t(sysconf(_SC_PHYS_PAGES)) * size_t(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, twice, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p != MAP_FAILED) {
    munmap(p, twice);
    return 17;
  }
  return copy(a);
}
)";

}  // namespace

class TestWorkerSandbox : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();

  void wallsStandAroundEveryKernel();
  void socketIsStopped();
  void forkIsStopped();
  void writingToTmpIsStopped();
  void runningAProgramIsStopped();
  void limitsCannotBeLifted();
  void cpuTimeIsLimited();
  void batchGoesOnWithAFreshWorker();
  void withoutTheSandboxTheSameKernelRuns();
  void unknownProfileIsAUsageError();

 private:
  QString lib() const { return dir_.filePath("hostile.so"); }
  KernelRef kernel(const char* symbol) const { return {lib().toStdString(), symbol, "", {}}; }
  RunTask copyTask() const {
    RunTask t;
    t.key = "copy_1000";
    t.bufferSizes = {kN, kN};
    t.numInputs = 1;
    t.reference = kernel("ref_copy");
    return t;
  }
  static RunOptions options() {
    RunOptions o;
    o.workerPath = TESSEL_WORKER_PATH;
    o.timeoutSeconds = 30;
    o.repeats = 1;
    o.minRepeatSeconds = 0.001;
    return o;
  }
  MeasureResult measure(const char* symbol, RunOptions o = options()) const {
    Runner runner(o);
    return runner.run(copyTask(), {kernel(symbol)})[0];
  }
  // The result is the sandbox's error naming the call and what it is.
  static void expectViolation(const MeasureResult& r, const char* call, const char* what) {
    QCOMPARE(r.error, ErrorCode::Runtime);
    const std::string expected = std::string("sandbox violation: system call '") + call + "' (" + what + ")";
    QVERIFY2(r.message.find(expected) != std::string::npos, r.message.c_str());
  }

  QTemporaryDir dir_;
  std::string probe_;
};

void TestWorkerSandbox::initTestCase() {
  std::string why;
  if (!sandboxFiltersSystemCalls(&why)) TESSEL_SKIP("seccomp", ("this worker filters no system calls: " + why).c_str());
  QVERIFY(dir_.isValid());
  // The file the /tmp writer would create: in /tmp itself, as the issue says.
  probe_ = "/tmp/tessel-sandbox-probe-" + std::to_string(::getpid());
  const QString src = dir_.filePath("hostile.cpp");
  QFile f(src);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(kHostileSource);
  f.close();
  QProcess cxx;
  cxx.setProcessChannelMode(QProcess::MergedChannels);
  cxx.start(QStringLiteral(TESSEL_TEST_CXX),
            {"-O2", "-shared", "-fPIC", QString::fromStdString("-DTESSEL_PROBE=\"" + probe_ + "\""), "-o", lib(), src});
  QVERIFY2(cxx.waitForFinished(60000) && cxx.exitCode() == 0, cxx.readAll().constData());
}

void TestWorkerSandbox::wallsStandAroundEveryKernel() {
  // No new privileges, the filter, no core dumps, bounded file size and address space.
  const MeasureResult r = measure("reports_walls");
  QVERIFY2(r.ok(), r.message.c_str());
}

void TestWorkerSandbox::socketIsStopped() {
  expectViolation(measure("opens_socket"), "socket", "network access");
}

void TestWorkerSandbox::forkIsStopped() {
  expectViolation(measure("forks"), "clone", "starting a process");
}

void TestWorkerSandbox::writingToTmpIsStopped() {
  expectViolation(measure("writes_tmp"), "openat", "writing files");
  QVERIFY2(!QFileInfo::exists(QString::fromStdString(probe_)), probe_.c_str());
}

void TestWorkerSandbox::runningAProgramIsStopped() {
  expectViolation(measure("runs_program"), "execve", "running a program");
}

void TestWorkerSandbox::limitsCannotBeLifted() {
  expectViolation(measure("lifts_cpu_limit"), "prlimit64", "changing the worker's limits");
}

void TestWorkerSandbox::cpuTimeIsLimited() {
  // The wall clock would wait 30 s; the CPU limit stops the kernel after one.
  RunOptions o = options();
  o.cpuSecondsPerKernel = 1;
  const auto t0 = std::chrono::steady_clock::now();
  const MeasureResult r = measure("spins", o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  QCOMPARE(r.error, ErrorCode::RunTimeout);
  QVERIFY2(r.message.find("more than 1 s of CPU time") != std::string::npos, r.message.c_str());
  QVERIFY2(seconds < 20, std::to_string(seconds).c_str());
}

void TestWorkerSandbox::batchGoesOnWithAFreshWorker() {
  Runner runner(options());
  const std::vector<MeasureResult> rs =
      runner.run(copyTask(), {kernel("opens_socket"), kernel("plain_copy"), kernel("forks"), kernel("plain_copy")});
  QCOMPARE(rs.size(), size_t(4));
  expectViolation(rs[0], "socket", "network access");
  QVERIFY2(rs[1].ok(), rs[1].message.c_str());
  expectViolation(rs[2], "clone", "starting a process");
  QVERIFY2(rs[3].ok(), rs[3].message.c_str());
  // One worker per violation, plus the first.
  QCOMPARE(runner.workersStarted(), 3);
}

void TestWorkerSandbox::withoutTheSandboxTheSameKernelRuns() {
  // The walls, not the kernel, make the errors above.
  RunOptions o = options();
  o.sandbox = false;
  const MeasureResult r = measure("opens_socket", o);
  QVERIFY2(r.ok(), r.message.c_str());
}

void TestWorkerSandbox::unknownProfileIsAUsageError() {
  QProcess worker;
  worker.setProcessChannelMode(QProcess::MergedChannels);
  worker.start(QStringLiteral(TESSEL_WORKER_PATH), {"--sandbox", "loose"});
  QVERIFY(worker.waitForFinished(10000));
  QCOMPARE(worker.exitCode(), 2);
  QVERIFY(worker.readAll().contains("unknown sandbox 'loose'"));
}

QTEST_GUILESS_MAIN(TestWorkerSandbox)
#include "test_worker_sandbox.moc"
