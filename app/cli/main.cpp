// tessel: the command-line interface (SPEC "CLI contract").
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "cost/learned/learned_models.h"
#include "support/version.h"

int main(int argc, char** argv) {
  tessel::cost::registerLearnedCostModels();  // before anything lists or makes a cost model
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(tessel::cli::usage().c_str(), stderr);
    return 2;
  }
  const std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      std::fputs(tessel::cli::usage().c_str(), stdout);
      return 0;
    }
    if (cmd == "--version") {
      std::printf("tessel %s\n", tessel::support::version());
      return 0;
    }
    if (const tessel::cli::Command* c = tessel::cli::findCommand(cmd)) return tessel::cli::runCommand(*c, rest);
    std::fprintf(stderr, "tessel: unknown command '%s'\n\n%s", cmd.c_str(), tessel::cli::usage().c_str());
    return 2;
  } catch (const tessel::cli::UsageError& e) {
    std::fprintf(stderr, "tessel %s: %s\n", cmd.c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessel %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}
