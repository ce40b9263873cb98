// tessel: the command-line interface (SPEC "CLI contract").
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "support/version.h"

namespace {

const char* kUsage =
    "usage: tessel COMMAND [options]\n"
    "\n"
    "Auto-tunes tensor programs for x86 CPUs and NVIDIA GPUs.\n"
    "\n"
    "commands:\n"
    "  tune-op OP --shape A,B,C[,...]   tune one operator (tessel tune-op --help)\n"
    "  db stats|best|sessions           what a tuning database holds\n"
    "  export --task KEY --out DIR      tuned kernels as a library, or records as CSV/JSON lines\n"
    "  tune MODEL                       tune every task of a model (task scheduler)\n"
    "  run MODEL --db FILE              the model with its tuned kernels vs LibTorch\n"
    "  models                           the built-in model zoo\n"
    "  inspect MODEL                    a model's graph, fusion and tasks\n"
    "  conformance DIR...               ONNX backend test cases through Tessel\n"
    "\n"
    "Run 'tessel COMMAND --help' for the options of a command.\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (cmd == "--version") {
      std::printf("tessel %s\n", tessel::support::version());
      return 0;
    }
    if (cmd == "tune-op") return tessel::cli::tuneOpCommand(rest);
    if (cmd == "db") return tessel::cli::dbCommand(rest);
    if (cmd == "export") return tessel::cli::exportCommand(rest);
    if (cmd == "tune") return tessel::cli::tuneCommand(rest);
    if (cmd == "run") return tessel::cli::runCommand(rest);
    if (cmd == "models") return tessel::cli::modelsCommand(rest);
    if (cmd == "inspect") return tessel::cli::inspectCommand(rest);
    if (cmd == "conformance") return tessel::cli::conformanceCommand(rest);
    std::fprintf(stderr, "tessel: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const tessel::cli::UsageError& e) {
    std::fprintf(stderr, "tessel %s: %s\n", cmd.c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessel %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}
