#include "support/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace tessel::support {

namespace {

std::string tempBase() {
  const char* base = std::getenv("TMPDIR");
  return base && *base ? base : "/tmp";
}

// argv[0] as execvp would find it ("" if nowhere): looked up before fork,
// since the forked child may only make async-signal-safe calls.
std::string findInPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// Closes every descriptor from 3 up but `keep` (async-signal-safe).
void closeAllBut(int keep) {
  const auto closeRange = [](unsigned first, unsigned last) {
    if (first > last) return;
    if (::close_range(first, last, 0) == 0) return;
    for (unsigned fd = first; fd <= last && fd < 65536; ++fd)  // a kernel before 5.9
      ::close(static_cast<int>(fd));
  };
  if (keep < 3) return closeRange(3, ~0U);
  closeRange(3, static_cast<unsigned>(keep) - 1);
  closeRange(static_cast<unsigned>(keep) + 1, ~0U);
}

// The guardian's SIGTERM, sent by the kernel when its parent dies: the
// whole group (the command and what it started) goes with it.
void killOwnGroup(int) {
  ::kill(0, SIGKILL);
}

// Starts `program` with stdout and stderr on outFd under a guardian: a child
// of this process that leads a new process group, starts the command in it,
// waits for it and ends as it ended (same exit code, same signal). When this
// process dies, even by SIGKILL, the kernel sends the guardian SIGTERM
// (PR_SET_PDEATHSIG) and it kills the group: no compiler outlives its tuner.
// Between fork and exec only async-signal-safe calls. Returns the guardian's
// pid (= the group's id), or -1 with errno.
pid_t spawnGuarded(const char* program, char* const* args, char* const* envp, int outFd) {
  const pid_t parent = ::getpid();
  const pid_t guardian = ::fork();
  if (guardian > 0) ::setpgid(guardian, guardian);  // both sides: a kill(-pid) at once finds the group
  if (guardian != 0) return guardian;
  // The guardian outlives this process by an instant (until the kernel's
  // SIGTERM reaches it) and never execs: it must not hold this process's
  // descriptors, above all the database's writer lock, whose holder a reader
  // takes for a tuner still running.
  closeAllBut(outFd);
  ::setpgid(0, 0);
  ::prctl(PR_SET_NAME, "tessel-guard");
  struct sigaction sa {};
  sa.sa_handler = killOwnGroup;
  ::sigaction(SIGTERM, &sa, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);  // the forking thread may block signals
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) killOwnGroup(0);  // the parent died before prctl
  const pid_t command = ::fork();
  if (command == 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGTERM, &dfl, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // and should the guardian be killed alone
    const int in = ::open("/dev/null", O_RDONLY);
    if (in < 0 || ::dup2(in, 0) < 0 || ::dup2(outFd, 1) < 0 || ::dup2(outFd, 2) < 0) ::_exit(127);
    ::execve(program, args, envp);
    static const char msg[] = "cannot execute the command\n";
    ssize_t ignored = ::write(2, msg, sizeof msg - 1);
    (void)ignored;
    ::_exit(127);
  }
  int status = 0;
  while (command > 0 && ::waitpid(command, &status, 0) < 0 && errno == EINTR) {
  }
  if (command < 0 || !WIFSIGNALED(status)) ::_exit(command < 0 ? 127 : WEXITSTATUS(status));
  // The same signal, without a core file of its own.
  struct rlimit noCore {};
  ::setrlimit(RLIMIT_CORE, &noCore);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(WTERMSIG(status), &dfl, nullptr);
  ::kill(::getpid(), WTERMSIG(status));
  ::_exit(128 + WTERMSIG(status));
}

}  // namespace

ProcessResult runProcess(const std::vector<std::string>& argv, double timeoutSeconds, const CancelFlag& cancel,
                         const std::string& tmpDir) {
  ProcessResult r;
  auto start = std::chrono::steady_clock::now();
  // The child's output: a file unlinked at once (nothing is left behind).
  std::string outPath = tempBase() + "/tessel-out-XXXXXX";
  int outFd = mkstemp(outPath.data());
  if (outFd < 0) {
    r.output = std::string("cannot create an output file: ") + std::strerror(errno);
    return r;
  }
  unlink(outPath.c_str());
  const std::string program = findInPath(argv[0]);
  if (program.empty()) {
    close(outFd);
    r.output = "cannot start '" + argv[0] + "': not found in PATH";
    return r;
  }
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The environment, with TMPDIR moved where the command's own temporary
  // files are swept with their folder should it be killed mid-way.
  const std::string tmpVar = "TMPDIR=" + tmpDir;
  std::vector<char*> env;
  for (char** e = environ; *e; ++e)
    if (tmpDir.empty() || std::strncmp(*e, "TMPDIR=", 7) != 0) env.push_back(*e);
  if (!tmpDir.empty()) env.push_back(const_cast<char*>(tmpVar.c_str()));
  env.push_back(nullptr);
  const pid_t pid = spawnGuarded(program.c_str(), args.data(), env.data(), outFd);
  if (pid < 0) {
    const int err = errno;
    close(outFd);
    r.output = "cannot start '" + argv[0] + "': " + std::strerror(err);
    return r;
  }
  r.started = true;
  int status = 0;
  for (int sleepUs = 200;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool stop = isCancelled(cancel);
    if (elapsed > timeoutSeconds || stop) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timedOut = !stop;
      r.cancelled = stop;
      break;
    }
    usleep(useconds_t(sleepUs));
    sleepUs = std::min(sleepUs * 2, 20000);
  }
  if (!r.timedOut && !r.cancelled) {
    if (WIFEXITED(status)) r.exitCode = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  }
  lseek(outFd, 0, SEEK_SET);
  char buf[4096];
  ssize_t n;
  while ((n = read(outFd, buf, sizeof buf)) > 0 && r.output.size() < 65536)
    r.output.append(buf, size_t(n));
  close(outFd);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::vector<ProcessResult> runProcesses(const std::vector<std::vector<std::string>>& commands, int jobs,
                                        double timeoutSeconds, const CancelFlag& cancel, const std::string& tmpDir) {
  std::vector<ProcessResult> results(commands.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int j = 0; j < std::max(1, jobs); ++j)
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < commands.size();) {
        if (isCancelled(cancel)) {
          results[i].cancelled = true;
          results[i].output = "cancelled";
          continue;
        }
        results[i] = runProcess(commands[i], timeoutSeconds, cancel, tmpDir);
      }
    });
  for (std::thread& t : pool)
    t.join();
  return results;
}

namespace {

// The owner locks of this process's folders: path -> descriptor of its `.owner`.
std::mutex ownersMutex;
std::map<std::string, int>& owners() {
  static std::map<std::string, int> m;
  return m;
}

// An owner lock that is free, on a file untouched for a few seconds (a folder
// made this instant has its lock taken just after its `.owner` appears).
bool abandoned(const std::filesystem::path& owner) {
  std::error_code ec;
  const auto age = std::filesystem::file_time_type::clock::now() - std::filesystem::last_write_time(owner, ec);
  if (ec || age < std::chrono::seconds(5)) return false;
  const int fd = ::open(owner.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free;
}

// The folders under $TMPDIR (or /tmp) that a killed or crashed Tessel left.
void removeAbandonedTempDirs() {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(tempBase(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("tessel-", 0) == 0 && e.is_directory(ec) && abandoned(e.path() / ".owner"))
      std::filesystem::remove_all(e.path(), ec);
  }
}

}  // namespace

std::string makeTempDir(const std::string& prefix, bool keep) {
  static std::once_flag swept;
  std::call_once(swept, removeAbandonedTempDirs);
  std::string tmpl = tempBase() + "/" + prefix + "-" + std::to_string(::getpid()) + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    throw std::runtime_error("cannot create a temporary directory: " + std::string(std::strerror(errno)));
  const std::string dir(buf.data());
  if (keep) return dir;
  const int fd = ::open((dir + "/.owner").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    std::lock_guard<std::mutex> lock(ownersMutex);
    owners()[dir] = fd;
  } else if (fd >= 0) {
    ::close(fd);
  }
  return dir;
}

void removeTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  std::lock_guard<std::mutex> lock(ownersMutex);
  if (auto it = owners().find(path); it != owners().end()) {
    ::close(it->second);
    owners().erase(it);
  }
}

}  // namespace tessel::support
