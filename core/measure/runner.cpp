#include "measure/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "measure/worker_protocol.h"
#include "measure/worker_sandbox.h"

extern char** environ;

namespace tessel::measure {

namespace {

using Clock = std::chrono::steady_clock;

// The child's ends of the pipes (tessel-worker --in-fd 3 --out-fd 4).
constexpr int kChildInFd = 3;
constexpr int kChildOutFd = 4;
// How long a worker that closed its pipe (or was asked to quit) gets to exit.
constexpr auto kExitGrace = std::chrono::milliseconds(1000);
// Timeouts beyond this are "no limit" (and keep the deadline arithmetic finite).
constexpr double kMaxTimeoutSeconds = 1e7;

std::string formatSeconds(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

std::string describeStatus(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    const char* text = strsignal(sig);
    return "worker killed by signal " + std::to_string(sig) + " (" +
           (abbrev ? "SIG" + std::string(abbrev) + ": " : std::string()) + (text ? text : "unknown signal") + ")";
  }
  if (WIFEXITED(status)) return "worker exited with status " + std::to_string(WEXITSTATUS(status));
  return "worker stopped with wait status " + std::to_string(status);
}

// CPU seconds a process has used so far (user + system), from /proc; -1 if unknown.
double processCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  // Fields after the command (which may hold spaces) start after its ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return double(utime + stime) / double(::sysconf(_SC_CLK_TCK));
}

bool isExecutable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// An empty workerPath means the tessel-worker installed beside this
// executable, else the one found in PATH.
std::string resolveWorkerPath(const std::string& configured) {
  if (!configured.empty()) return configured;
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, size_t(n));
    dir.resize(dir.rfind('/') + 1);
    if (isExecutable(dir + "tessel-worker")) return dir + "tessel-worker";
  }
  return "tessel-worker";
}

}  // namespace

struct Runner::Impl {
  RunOptions options;
  std::mutex mutex;  // one measurement at a time, whatever the callers
  std::atomic<int> started{0};
  pid_t pid = -1;
  int lastStatus = 0;  // wait status of the worker reaped last
  int toWorker = -1;
  int fromWorker = -1;

  explicit Impl(RunOptions o) : options(std::move(o)) {}

  ~Impl() { stopWorker(); }

  bool spawnWorker(std::string& error) {
    const std::string path = resolveWorkerPath(options.workerPath);
    int req[2] = {-1, -1};
    int resp[2] = {-1, -1};
    // Close-on-exec everywhere: compilers and other children we spawn must not
    // hold the worker's pipes open (the worker would never see end of file).
    if (::pipe2(req, O_CLOEXEC) != 0 || ::pipe2(resp, O_CLOEXEC) != 0) {
      error = std::string("cannot create pipes: ") + std::strerror(errno);
      for (int fd : {req[0], req[1], resp[0], resp[1]}) {
        if (fd >= 0) ::close(fd);
      }
      return false;
    }
    // Move the child's ends above the target numbers so the dup2 onto 3 and 4
    // cannot overwrite one another.
    const int childIn = ::fcntl(req[0], F_DUPFD_CLOEXEC, 10);
    const int childOut = ::fcntl(resp[1], F_DUPFD_CLOEXEC, 10);
    ::close(req[0]);
    ::close(resp[1]);

    std::vector<std::string> envStrings;
    for (char** e = environ; e && *e; ++e)
      envStrings.emplace_back(*e);
    // Pin the measured OpenMP threads (SPEC) unless the user chose otherwise.
    if (!std::getenv("OMP_PROC_BIND")) envStrings.emplace_back("OMP_PROC_BIND=true");
    if (!std::getenv("OMP_PLACES")) envStrings.emplace_back("OMP_PLACES=cores");
    // A target's thread count wins over an inherited OMP_NUM_THREADS.
    if (options.threads > 0) {
      std::erase_if(envStrings, [](const std::string& e) { return e.starts_with("OMP_NUM_THREADS="); });
      envStrings.push_back("OMP_NUM_THREADS=" + std::to_string(options.threads));
    }
    std::vector<char*> envp;
    for (auto& s : envStrings)
      envp.push_back(s.data());
    envp.push_back(nullptr);

    std::string inArg = std::to_string(kChildInFd);
    std::string outArg = std::to_string(kChildOutFd);
    std::string argv0 = path;
    std::string inFlag = "--in-fd";
    std::string outFlag = "--out-fd";
    std::string sandboxFlag = "--sandbox";
    std::string sandbox = sandboxProfileName(!options.sandbox                               ? SandboxProfile::None
                                             : options.device == target::Target::Kind::Cuda ? SandboxProfile::Cuda
                                                                                            : SandboxProfile::Cpu);
    char* argv[] = {argv0.data(),  inFlag.data(),      inArg.data(),   outFlag.data(),
                    outArg.data(), sandboxFlag.data(), sandbox.data(), nullptr};

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, childIn, kChildInFd);
    posix_spawn_file_actions_adddup2(&actions, childOut, kChildOutFd);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    // Descriptors some library opened without close-on-exec stay out too.
    posix_spawn_file_actions_addclosefrom_np(&actions, kChildOutFd + 1);
#endif
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    // The caller's thread may block signals (we do, around writes): the worker starts clean.
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    pid_t child = -1;
    const bool searchPath = path.find('/') == std::string::npos;
    const int rc = searchPath ? ::posix_spawnp(&child, path.c_str(), &actions, &attr, argv, envp.data())
                              : ::posix_spawn(&child, path.c_str(), &actions, &attr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(childIn);
    ::close(childOut);
    if (rc != 0) {
      ::close(req[1]);
      ::close(resp[0]);
      error = "cannot start worker '" + path + "': " + std::strerror(rc);
      return false;
    }
    pid = child;
    toWorker = req[1];
    fromWorker = resp[0];
    started.fetch_add(1);
    return true;
  }

  void closePipes() {
    if (toWorker >= 0) ::close(toWorker);
    if (fromWorker >= 0) ::close(fromWorker);
    toWorker = fromWorker = -1;
  }

  // Waits for the worker to exit for up to `grace`, then kills it. Returns how it ended.
  std::string reapWorker(std::chrono::milliseconds grace) {
    if (pid < 0) return "no worker";
    closePipes();
    int status = 0;
    const auto until = Clock::now() + grace;
    pid_t r = 0;
    for (;;) {
      r = ::waitpid(pid, &status, WNOHANG);
      if (r != 0 && !(r < 0 && errno == EINTR)) break;
      if (Clock::now() >= until) {
        ::kill(pid, SIGKILL);
        while ((r = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
        }
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    pid = -1;
    lastStatus = r > 0 ? status : 0;
    // ECHILD: someone else reaped it (e.g. SIGCHLD ignored by the application).
    return r > 0 ? describeStatus(status) : "worker ended (exit status unavailable)";
  }

  void killWorker() {
    if (pid < 0) return;
    ::kill(pid, SIGKILL);
    reapWorker(kExitGrace);
  }

  // Closing its input makes the worker leave its loop and exit 0.
  void stopWorker() {
    if (pid >= 0) reapWorker(kExitGrace);
    closePipes();
  }

  // The CPU seconds a request may use; 0: no limit.
  double cpuBudget() const {
    if (options.cpuSecondsPerKernel > 0) return options.cpuSecondsPerKernel;
    const double timeout = options.timeoutSeconds;
    if (!std::isfinite(timeout) || timeout <= 0 || timeout >= kMaxTimeoutSeconds) return 0;
    const unsigned cores = options.threads > 0 ? unsigned(options.threads) : std::thread::hardware_concurrency();
    return timeout * std::max(1u, cores) + 1;
  }

  // Sets the worker's RLIMIT_CPU to what it used so far plus the budget: the
  // kernel cannot lift it (its sandbox forbids changing limits). Best effort:
  // the wall-clock deadline still holds where /proc or prlimit fail.
  void limitWorkerCpu() {
    const double budget = cpuBudget();
    const double used = budget > 0 ? processCpuSeconds(pid) : -1;
    if (used < 0) return;
    rlimit current{};
    if (::prlimit(pid, RLIMIT_CPU, nullptr, &current) != 0) return;
    rlimit wanted = current;
    wanted.rlim_cur = rlim_t(std::ceil(used + budget));
    if (current.rlim_max != RLIM_INFINITY) wanted.rlim_cur = std::min(wanted.rlim_cur, current.rlim_max);
    ::prlimit(pid, RLIMIT_CPU, &wanted, nullptr);
  }

  MeasureResult measureOne(const RunTask& task, const KernelRef& kernel) {
    const auto t0 = Clock::now();
    MeasureResult result;
    auto finish = [&](ErrorCode code, std::string message) {
      result.error = code;
      result.message = std::move(message);
      result.runSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
      return result;
    };

    protocol::Request req;
    req.device = options.device;
    req.library = kernel.library;
    req.symbol = kernel.symbol;
    req.packSymbol = kernel.packSymbol;
    req.packedSizes = kernel.packedSizes;
    req.taskKey = task.key;
    req.bufferSizes = task.bufferSizes;
    req.numInputs = task.numInputs;
    req.referenceLibrary = task.reference.library;
    req.referenceSymbol = task.reference.symbol;
    req.tolerance = task.tolerance;
    req.warmup = options.warmup;
    req.repeats = options.repeats;
    req.minRepeatSeconds = options.minRepeatSeconds;
    req.cacheState = options.cacheState;
    req.constantInputs = task.constantInputs;
    req.seed = options.seed;
    const nlohmann::json message = protocol::toJson(req);

    std::string error;
    // Two tries: a worker may have died while idle, which is no fault of this kernel.
    bool sent = false;
    for (int attempt = 0; attempt < 2 && !sent; ++attempt) {
      if (pid < 0 && !spawnWorker(error)) return finish(ErrorCode::Runtime, error);
      limitWorkerCpu();
      if (protocol::writeMessage(toWorker, message, &error) == protocol::IoStatus::Ok) {
        sent = true;
      } else {
        error = "cannot send the request to the worker (" + error + "; " + reapWorker(kExitGrace) + ")";
      }
    }
    if (!sent) return finish(ErrorCode::Runtime, error);

    std::optional<Clock::time_point> deadline;
    const double timeout = options.timeoutSeconds;
    if (std::isfinite(timeout) && timeout > 0 && timeout < kMaxTimeoutSeconds) {
      deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout));
    }
    // Wait for the reply in slices, so a cancellation is seen within ~50 ms.
    while (options.cancel) {
      if (support::isCancelled(options.cancel)) {
        killWorker();
        return finish(ErrorCode::Unknown, "cancelled");
      }
      pollfd p{fromWorker, POLLIN, 0};
      if (::poll(&p, 1, 50) != 0 || (deadline && Clock::now() >= *deadline)) break;
    }
    nlohmann::json reply;
    const protocol::IoStatus st = protocol::readMessage(fromWorker, reply, deadline, &error);
    switch (st) {
      case protocol::IoStatus::Ok:
        break;
      case protocol::IoStatus::Timeout:
        killWorker();
        return finish(ErrorCode::RunTimeout, "run timeout: kernel did not finish in " + formatSeconds(timeout) + " s");
      case protocol::IoStatus::Eof: {
        // The worker died: the kernel crashed it (or exited the process).
        const std::string how = reapWorker(kExitGrace);
        if (WIFSIGNALED(lastStatus) && WTERMSIG(lastStatus) == SIGXCPU) {
          return finish(ErrorCode::RunTimeout, "run timeout: kernel used more than " + formatSeconds(cpuBudget()) +
                                                   " s of CPU time (the worker's limit)");
        }
        return finish(ErrorCode::Runtime, "kernel crashed the worker: " + how);
      }
      case protocol::IoStatus::Error:
        killWorker();
        return finish(ErrorCode::Unknown, "worker protocol error: " + error);
    }

    protocol::Response response;
    if (!protocol::fromJson(reply, response, &error)) {
      killWorker();
      return finish(ErrorCode::Unknown, "worker protocol error: " + error);
    }
    // Its GPU context is lost: the next kernel gets a new worker, not the blame.
    if (response.workerExits) reapWorker(kExitGrace);
    result.costs = std::move(response.costs);
    result.maxAbsError = response.maxAbsError;
    // The store takes only positive, finite times: anything else is this
    // kernel's error, not a figure to learn from.
    if (response.error == ErrorCode::None)
      for (double c : result.costs)
        if (!std::isfinite(c) || c <= 0)
          return finish(ErrorCode::Runtime,
                        "the worker timed the kernel at " + std::to_string(c) + " s, not a positive, finite time");
    return finish(response.error, std::move(response.message));
  }
};

Runner::Runner(RunOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Runner::~Runner() = default;

std::vector<MeasureResult> Runner::run(const RunTask& task, const std::vector<KernelRef>& kernels) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  std::vector<MeasureResult> results;
  results.reserve(kernels.size());
  for (const KernelRef& k : kernels) {
    if (support::isCancelled(impl_->options.cancel)) {
      MeasureResult r;
      r.error = ErrorCode::Unknown;
      r.message = "cancelled";
      results.push_back(r);
      continue;
    }
    results.push_back(impl_->measureOne(task, k));
  }
  return results;
}

int Runner::workersStarted() const {
  return impl_->started.load();
}

}  // namespace tessel::measure
