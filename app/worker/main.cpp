// tessel-worker [--in-fd N] [--out-fd N] [--sandbox cpu|cuda|none]
//
// The measurement process started by tessel's Runner: it reads kernel
// requests from one descriptor and writes results to another (see
// core/measure/worker_protocol.h). A kernel that crashes or hangs only takes
// this process down; the runner starts another.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "measure/worker.h"
#include "measure/worker_sandbox.h"
#include "support/version.h"

namespace {

void printUsage(std::FILE* to) {
  std::fprintf(to,
               "Usage: tessel-worker [--in-fd N] [--out-fd N] [--sandbox cpu|cuda|none]\n"
               "\n"
               "Measurement process of Tessel, started by the tuner (not meant to be run by\n"
               "hand). Reads length-prefixed JSON requests from descriptor N (default 0),\n"
               "loads each kernel, checks it against its task's reference and times it, and\n"
               "writes one response per request to the output descriptor (default 1). Exits\n"
               "when its input closes.\n"
               "\n"
               "Options:\n"
               "  --in-fd N     read requests from descriptor N\n"
               "  --out-fd N    write responses to descriptor N\n"
               "  --sandbox P   the walls kernels run in (default cpu): resource limits, no\n"
               "                new privileges and a system-call filter; cuda: a looser\n"
               "                filter the NVIDIA driver works in; none: no walls\n"
               "  -h, --help    show this help and exit\n"
               "  --version     show the version and exit\n");
}

bool parseFd(const char* text, int& fd) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < 0 || v > 1 << 20) return false;
  fd = int(v);
  return true;
}

// Takes the protocol descriptors out of the way of the standard streams, so a
// kernel that prints (to stdout, say) cannot corrupt the protocol.
bool isolateProtocolFds(int& inFd, int& outFd) {
  const int in = ::fcntl(inFd, F_DUPFD_CLOEXEC, 3);
  const int out = ::fcntl(outFd, F_DUPFD_CLOEXEC, 3);
  if (in < 0 || out < 0) return false;
  if (inFd > STDERR_FILENO) ::close(inFd);
  if (outFd > STDERR_FILENO && outFd != inFd) ::close(outFd);
  inFd = in;
  outFd = out;
  // Kernels get an empty stdin and a stdout that goes to stderr.
  const int devNull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devNull >= 0) {
    ::dup2(devNull, STDIN_FILENO);
    ::close(devNull);
  }
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  return true;
}

// A hung kernel never returns to the read loop, so if the runner dies without
// killing us nothing would: leave once we are orphaned.
void exitWhenOrphaned() {
  const pid_t parent = ::getppid();
  if (parent <= 1) return;
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      if (::getppid() != parent) _exit(3);
    }
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  int inFd = STDIN_FILENO;
  int outFd = STDOUT_FILENO;
  tessel::measure::SandboxProfile sandbox = tessel::measure::SandboxProfile::Cpu;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      printUsage(stdout);
      return 0;
    }
    if (arg == "--version") {
      std::printf("tessel-worker %s\n", tessel::support::version());
      return 0;
    }
    if ((arg == "--in-fd" || arg == "--out-fd") && i + 1 < argc) {
      int fd = -1;
      if (!parseFd(argv[++i], fd)) {
        std::fprintf(stderr, "tessel-worker: invalid descriptor '%s' for %s\n", argv[i], arg.c_str());
        return 2;
      }
      (arg == "--in-fd" ? inFd : outFd) = fd;
      continue;
    }
    if (arg == "--sandbox" && i + 1 < argc) {
      const auto profile = tessel::measure::parseSandboxProfile(argv[++i]);
      if (!profile) {
        std::fprintf(stderr, "tessel-worker: unknown sandbox '%s' (cpu, cuda or none)\n", argv[i]);
        return 2;
      }
      sandbox = *profile;
      continue;
    }
    std::fprintf(stderr, "tessel-worker: unknown or incomplete option '%s'\n", arg.c_str());
    printUsage(stderr);
    return 2;
  }
  if (::fcntl(inFd, F_GETFD) < 0 || ::fcntl(outFd, F_GETFD) < 0) {
    std::fprintf(stderr, "tessel-worker: descriptor %d or %d is not open\n", inFd, outFd);
    return 2;
  }
  if (!isolateProtocolFds(inFd, outFd)) {
    std::fprintf(stderr, "tessel-worker: cannot duplicate the protocol descriptors: %s\n", std::strerror(errno));
    return 1;
  }
  // A runner that goes away should end us through end of file, not a signal.
  ::signal(SIGPIPE, SIG_IGN);
  // Walls up before any kernel is loaded; a system without them (no seccomp)
  // still measures, and says so.
  std::string error;
  if (!tessel::measure::enterSandbox(sandbox, outFd, error)) {
    std::fprintf(stderr, "tessel-worker: warning: kernels run without the full sandbox: %s\n", error.c_str());
  }
  exitWhenOrphaned();
  return tessel::measure::runWorker(inFd, outFd);
}
