#include "measure/worker_sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>

#include "support/size_limits.h"

#if defined(TESSEL_HAVE_SECCOMP)
#include <seccomp.h>
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TESSEL_SANITIZER_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TESSEL_SANITIZER_BUILD 1
#endif
#endif

namespace tessel::measure {

std::optional<SandboxProfile> parseSandboxProfile(std::string_view name) {
  if (name == "none") return SandboxProfile::None;
  if (name == "cpu") return SandboxProfile::Cpu;
  if (name == "cuda") return SandboxProfile::Cuda;
  return std::nullopt;
}

const char* sandboxProfileName(SandboxProfile profile) {
  switch (profile) {
    case SandboxProfile::None:
      return "none";
    case SandboxProfile::Cpu:
      return "cpu";
    case SandboxProfile::Cuda:
      return "cuda";
  }
  return "?";
}

bool sandboxFiltersSystemCalls(std::string* why) {
#if defined(TESSEL_SANITIZER_BUILD)
  if (why) *why = "a sanitizer build: its runtime reserves terabytes of address space and traces the process at exit";
  return false;
#elif !defined(TESSEL_HAVE_SECCOMP)
  if (why) *why = "built without libseccomp (install libseccomp-dev and rebuild)";
  return false;
#else
  if (why) why->clear();
  return true;
#endif
}

namespace {

// What a worker's inherited log may still grow by.
constexpr rlim_t kLogGrowthBytes = rlim_t(64) << 20;

// Lowers a limit (never raises it: an unprivileged process could not).
bool lowerLimit(int resource, rlim_t value, const char* what, std::string& error) {
  rlimit current{};
  if (::getrlimit(resource, &current) != 0) {
    error = std::string("cannot read the ") + what + " limit: " + std::strerror(errno);
    return false;
  }
  rlimit wanted = current;
  if (current.rlim_max == RLIM_INFINITY || value < current.rlim_max) wanted.rlim_max = value;
  wanted.rlim_cur = wanted.rlim_max;
  if (::setrlimit(resource, &wanted) != 0) {
    error = std::string("cannot set the ") + what + " limit: " + std::strerror(errno);
    return false;
  }
  return true;
}

// The largest size among the regular files behind the standard descriptors
// (a log the user redirected the tuner's output to), 0 if none is one.
rlim_t inheritedLogBytes() {
  rlim_t largest = 0;
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      largest = std::max(largest, rlim_t(st.st_size) + kLogGrowthBytes);
    }
  }
  return largest;
}

bool setLimits(SandboxProfile profile, std::string& error) {
  if (!lowerLimit(RLIMIT_CORE, 0, "core file size", error)) return false;
  if (!lowerLimit(RLIMIT_FSIZE, inheritedLogBytes(), "file size", error)) return false;
#if !defined(TESSEL_SANITIZER_BUILD)
  const int64_t memory = support::physicalMemoryBytes();
  if (profile == SandboxProfile::Cpu && memory > 0 && !lowerLimit(RLIMIT_AS, rlim_t(memory), "address space", error)) {
    return false;
  }
#else
  (void)profile;
#endif
  return true;
}

#if defined(TESSEL_HAVE_SECCOMP) && !defined(TESSEL_SANITIZER_BUILD)

// What the SIGSYS handler needs, resolved before the filter is in.
constexpr int kMaxSyscall = 1024;
const char* gSyscallName[kMaxSyscall];
const char* gSyscallWhy[kMaxSyscall];
int gReportFd = -1;
std::atomic<bool> gReporting{false};
// The exit status of a worker that stopped a kernel (the runner reads the response first).
constexpr int kViolationExit = 5;

struct Category {
  const char* why;
  std::initializer_list<const char*> calls;
};

const Category kCategories[] = {
    {"network access",
     {"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "sendto", "sendmsg", "sendmmsg",
      "recvfrom", "recvmsg", "recvmmsg", "shutdown", "getsockopt", "setsockopt", "getsockname", "getpeername"}},
    {"starting a process", {"fork", "vfork", "clone", "clone3"}},
    {"running a program", {"execve", "execveat"}},
    {"writing files",
     {"open",      "openat",   "openat2",  "creat",     "truncate",  "ftruncate",   "rename", "renameat", "renameat2",
      "unlink",    "unlinkat", "mkdir",    "mkdirat",   "rmdir",     "link",        "linkat", "symlink",  "symlinkat",
      "chmod",     "fchmod",   "fchmodat", "chown",     "fchown",    "fchownat",    "lchown", "mknod",    "mknodat",
      "utimensat", "utime",    "utimes",   "futimesat", "fallocate", "memfd_create"}},
    {"reaching another process",
     {"ptrace", "process_vm_readv", "process_vm_writev", "kill", "tgkill", "tkill", "pidfd_open", "pidfd_send_signal",
      "pidfd_getfd"}},
    {"changing the worker's limits", {"setrlimit", "prlimit64"}},
    {"replacing the sandbox's signal handler", {"rt_sigaction"}},
};

void resolveNames() {
  for (int nr = 0; nr < kMaxSyscall; ++nr) {
    // Kept for the process's life: the handler may not allocate.
    gSyscallName[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
    gSyscallWhy[nr] = "not needed to measure a kernel";
  }
  for (const Category& c : kCategories) {
    for (const char* name : c.calls) {
      const int nr = seccomp_syscall_resolve_name(name);
      if (nr >= 0 && nr < kMaxSyscall) gSyscallWhy[nr] = c.why;
    }
  }
}

// Async-signal-safe text building for the handler.
struct Text {
  char data[768];
  size_t size = 0;
  void add(const char* s) {
    while (*s && size < sizeof data)
      data[size++] = *s++;
  }
  void add(long v) {
    char digits[24];
    int n = 0;
    const bool negative = v < 0;
    unsigned long u = negative ? 0ul - static_cast<unsigned long>(v) : static_cast<unsigned long>(v);
    do {
      digits[n++] = char('0' + u % 10);
      u /= 10;
    } while (u && n < 23);
    if (negative && size < sizeof data) data[size++] = '-';
    while (n > 0 && size < sizeof data)
      data[size++] = digits[--n];
  }
};

// Sends the runner the response for the kernel in flight, then leaves.
void onSigsys(int, siginfo_t* info, void*) {
  // One report per worker: a second trapping thread waits for the exit.
  if (gReporting.exchange(true)) {
    for (;;) {
      timespec t{0, 10'000'000};
      ::nanosleep(&t, nullptr);
    }
  }
  const int nr = info->si_syscall;
  const bool known = nr >= 0 && nr < kMaxSyscall;
  Text body;
  body.add("{\"error\":4,\"message\":\"sandbox violation: system call '");
  if (known && gSyscallName[nr]) {
    body.add(gSyscallName[nr]);
  } else {
    body.add(long(nr));
  }
  body.add("' (");
  body.add(known ? gSyscallWhy[nr] : "not needed to measure a kernel");
  body.add("), which the measurement worker does not allow\",\"costs\":[],\"maxAbsError\":0,\"workerExits\":true}");
  unsigned char frame[4 + sizeof body.data];
  const uint32_t n = uint32_t(body.size);
  for (int i = 0; i < 4; ++i)
    frame[i] = static_cast<unsigned char>(n >> (8 * i));
  std::memcpy(frame + 4, body.data, body.size);
  size_t sent = 0;
  while (sent < 4 + body.size) {
    const ssize_t w = ::write(gReportFd, frame + sent, 4 + body.size - sent);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    sent += size_t(w);
  }
  _exit(kViolationExit);
}

// Flags that make an open a write (O_TRUNC truncates even read-only).
constexpr uint64_t kWriteFlags = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND;

const char* const kCpuAllowed[] = {
    // descriptors it holds, files it reads
    "read", "write", "readv", "writev", "pread64", "pwrite64", "lseek", "close", "close_range", "fstat", "newfstatat",
    "stat", "lstat", "statx", "access", "faccessat", "faccessat2", "readlink", "readlinkat", "getcwd", "getdents64",
    "fcntl", "poll", "ppoll", "select", "pselect6", "statfs", "fstatfs",
    // memory
    "mmap", "munmap", "mremap", "mprotect", "madvise", "brk", "mincore", "membarrier",
    // threads and their synchronisation
    "futex", "futex_waitv", "set_robust_list", "get_robust_list", "rseq", "set_tid_address", "arch_prctl",
    "sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getparam", "sched_getscheduler",
    "sched_get_priority_max", "sched_get_priority_min", "getcpu", "exit", "exit_group",
    // signals to itself
    "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait", "sigaltstack", "restart_syscall",
    // time and identity
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time", "times", "getrusage",
    "getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "uname",
    "sysinfo", "getrandom", "getrlimit"};

bool addRule(scmp_filter_ctx ctx, uint32_t action, const char* name, std::initializer_list<scmp_arg_cmp> args,
             std::string& error) {
  const int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) return true;  // not a call of this architecture
  const int rc = seccomp_rule_add_array(ctx, action, nr, unsigned(args.size()), args.begin());
  if (rc != 0) {
    error = std::string("cannot add the seccomp rule for ") + name + ": " + std::strerror(-rc);
    return false;
  }
  return true;
}

bool addCpuRules(scmp_filter_ctx ctx, std::string& error) {
  for (const char* name : kCpuAllowed) {
    if (!addRule(ctx, SCMP_ACT_ALLOW, name, {}, error)) return false;
  }
  const uint64_t self = uint64_t(::getpid());
  return addRule(ctx, SCMP_ACT_ALLOW, "openat", {SCMP_A2(SCMP_CMP_MASKED_EQ, kWriteFlags, 0)}, error) &&
         addRule(ctx, SCMP_ACT_ALLOW, "open", {SCMP_A1(SCMP_CMP_MASKED_EQ, kWriteFlags, 0)}, error) &&
         // threads, not processes; glibc falls back from clone3 (whose flags
         // a filter cannot read) to clone
         addRule(ctx, SCMP_ACT_ALLOW, "clone", {SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD)}, error) &&
         addRule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", {}, error) &&
         // reading its limits, not changing them
         addRule(ctx, SCMP_ACT_ALLOW, "prlimit64", {SCMP_A2(SCMP_CMP_EQ, 0)}, error) &&
         addRule(ctx, SCMP_ACT_ALLOW, "rt_sigaction", {SCMP_A0(SCMP_CMP_NE, SIGSYS)}, error) &&
         addRule(ctx, SCMP_ACT_ALLOW, "tgkill", {SCMP_A0(SCMP_CMP_EQ, self)}, error) &&
         // isatty() and the like: not a terminal
         addRule(ctx, SCMP_ACT_ERRNO(ENOTTY), "ioctl", {}, error);
}

bool addCudaRules(scmp_filter_ctx ctx, std::string& error) {
  for (const char* name : {"fork", "vfork", "execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev"}) {
    if (!addRule(ctx, SCMP_ACT_TRAP, name, {}, error)) return false;
  }
  return addRule(ctx, SCMP_ACT_TRAP, "socket", {SCMP_A0(SCMP_CMP_NE, AF_UNIX)}, error) &&
         addRule(ctx, SCMP_ACT_TRAP, "clone", {SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)}, error) &&
         addRule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", {}, error);
}

bool loadFilter(SandboxProfile profile, int outFd, std::string& error) {
  resolveNames();
  gReportFd = outFd;
  struct sigaction sa {};
  sa.sa_sigaction = onSigsys;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (::sigaction(SIGSYS, &sa, nullptr) != 0) {
    error = std::string("cannot handle SIGSYS: ") + std::strerror(errno);
    return false;
  }
  const bool cpu = profile == SandboxProfile::Cpu;
  scmp_filter_ctx ctx = seccomp_init(cpu ? SCMP_ACT_TRAP : SCMP_ACT_ALLOW);
  if (!ctx) {
    error = "cannot create a seccomp filter";
    return false;
  }
  // Every thread, including any a library started before us.
  seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
  bool ok = cpu ? addCpuRules(ctx, error) : addCudaRules(ctx, error);
  if (ok) {
    const int rc = seccomp_load(ctx);
    if (rc != 0) {
      error = std::string("the system refused the seccomp filter: ") + std::strerror(-rc);
      ok = false;
    }
  }
  seccomp_release(ctx);
  return ok;
}

#endif

}  // namespace

bool enterSandbox(SandboxProfile profile, int outFd, std::string& error) {
  if (profile == SandboxProfile::None) return true;
  if (!setLimits(profile, error)) return false;
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    error = std::string("cannot drop new privileges: ") + std::strerror(errno);
    return false;
  }
#if defined(TESSEL_HAVE_SECCOMP) && !defined(TESSEL_SANITIZER_BUILD)
  return loadFilter(profile, outFd, error);
#else
  (void)outFd;
  return true;
#endif
}

}  // namespace tessel::measure
