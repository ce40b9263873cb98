// tessel-agent: builds and measures the programs of other machines' tunings
// (core/fleet/agent.h). One per measurement host:
//   tessel-agent --redis redis://:PASSWORD@HOST:6379 --target cpu
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "fleet/agent.h"
#include "fleet/redis_client.h"
#include "support/version.h"

namespace {

std::atomic<bool> g_stop{false};

void onSignal(int) {
  g_stop.store(true);
}

const char* kHelp =
    "usage: tessel-agent --redis URL [--target TARGET] [options]\n"
    "\n"
    "Serves a fleet of Tessel tunings: takes the build-and-measure jobs of TARGET\n"
    "from Redis, builds and measures their programs here in isolated workers, and\n"
    "posts the results to the tuner that sent them. Stop it with SIGTERM or Ctrl-C:\n"
    "the job in hand is handed back to the queue for another agent.\n"
    "\n"
    "options:\n"
    "  --redis URL       the fleet's Redis: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]\n"
    "                    or unix:///PATH/redis.sock[?password=PASSWORD]\n"
    "  --target TARGET   the target served, as tessel tune --target takes it (default cpu)\n"
    "  --slots N         jobs measured at once (default 1: on a CPU, two at once\n"
    "                    share its cores and disturb each other's timings)\n"
    "  --jobs N          compiler processes per job (default: cores)\n"
    "  --name NAME       the agent's name in `tessel fleet status` (default HOST:PID:RANDOM)\n"
    "  --lease SECONDS   a job this agent stops renewing for this long is taken over\n"
    "                    by another agent (default 15)\n"
    "  --quiet           no log lines on stderr\n"
    "\n"
    "An agent compiles and runs the code its jobs describe. The kernels run in\n"
    "the worker's sandbox; the compiler runs as the agent's user. Protect the\n"
    "Redis with a password, keep it off untrusted networks, and run agents as a\n"
    "user that owns nothing else.\n";

std::string workerBesideMe() {
  if (const char* env = std::getenv("TESSEL_WORKER"); env && *env) return env;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && std::filesystem::exists(self.parent_path() / "tessel-worker"))
    return (self.parent_path() / "tessel-worker").string();
  return "tessel-worker";
}

int usage(const std::string& why) {
  std::fprintf(stderr, "tessel-agent: %s\n\n%s", why.c_str(), kHelp);
  return 2;
}

bool number(const char* text, double lo, double hi, double* out) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (!*text || *end || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  tessel::fleet::AgentOptions o;
  std::string url;
  bool quiet = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](double lo, double hi, double* out) { return i + 1 < argc && number(argv[++i], lo, hi, out); };
    double v = 0;
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    } else if (a == "--version") {
      std::printf("tessel-agent %s\n", tessel::support::version());
      return 0;
    } else if (a == "--quiet") {
      quiet = true;
    } else if (a == "--redis" && i + 1 < argc) {
      url = argv[++i];
    } else if (a == "--target" && i + 1 < argc) {
      try {
        o.target = tessel::target::parseTarget(argv[++i]);
      } catch (const std::invalid_argument& e) {
        return usage(std::string("--target: ") + e.what());
      }
    } else if (a == "--name" && i + 1 < argc) {
      o.name = argv[++i];
    } else if (a == "--slots") {
      if (!value(1, 64, &v) || v != int(v)) return usage("--slots takes a whole number in [1, 64]");
      o.jobSlots = int(v);
    } else if (a == "--jobs") {
      if (!value(1, 256, &v) || v != int(v)) return usage("--jobs takes a whole number in [1, 256]");
      o.buildJobs = int(v);
    } else if (a == "--lease") {
      if (!value(3, 86400, &v)) return usage("--lease takes seconds in [3, 86400] (three heartbeats at least)");
      o.leaseSeconds = v;
    } else {
      return usage("unknown or incomplete option '" + a + "'");
    }
  }
  if (url.empty()) return usage("--redis URL is required");
  try {
    o.redis = tessel::fleet::parseRedisUrl(url);
  } catch (const std::invalid_argument& e) {
    return usage(e.what());
  }
  o.workerPath = workerBesideMe();
  if (!quiet) o.log = [](const std::string& line) { std::fprintf(stderr, "tessel-agent: %s\n", line.c_str()); };
  o.stop = std::shared_ptr<const std::atomic<bool>>(&g_stop, [](const std::atomic<bool>*) {});
  struct sigaction sa = {};
  sa.sa_handler = onSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  try {
    tessel::fleet::runAgent(o);
  } catch (const std::invalid_argument& e) {
    return usage(e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessel-agent: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
