#include "support/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace tessel::support {

ProcessResult runProcess(const std::vector<std::string>& argv, double timeoutSeconds, const CancelFlag& cancel) {
  ProcessResult r;
  auto start = std::chrono::steady_clock::now();
  char tmpl[] = "/tmp/tessel-out-XXXXXX";
  int outFd = mkstemp(tmpl);
  if (outFd < 0) {
    r.output = std::string("cannot create an output file: ") + std::strerror(errno);
    return r;
  }
  unlink(tmpl);
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

std::string makeTempDir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    throw std::runtime_error("cannot create a temporary directory: " + std::string(std::strerror(errno)));
  return std::string(buf.data());
}

void removeTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

}  // namespace tessel::support
