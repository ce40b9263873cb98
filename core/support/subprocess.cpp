#include "support/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
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

}  // namespace

ProcessResult runProcess(const std::vector<std::string>& argv, double timeoutSeconds, const CancelFlag& cancel) {
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
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, outFd, 1);
  posix_spawn_file_actions_adddup2(&fa, outFd, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    close(outFd);
    r.output = "cannot start '" + argv[0] + "': " + std::strerror(rc);
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
                                        double timeoutSeconds, const CancelFlag& cancel) {
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
        results[i] = runProcess(commands[i], timeoutSeconds, cancel);
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
