// The tessel CLI's commands, in one table: main dispatches through it, the
// usage text lists it, and a test checks that each command's --help names
// every option it accepts. Each command returns the process exit code.
#pragma once

#include <string>
#include <vector>

#include "args.h"

namespace tessel::cli {

struct Command {
  std::string name;      // "tune-op"
  std::string synopsis;  // what follows the name in the usage: "OP --shape A,B,C[,...]"
  std::string summary;   // one line
  OptionSpec (*options)();
  std::string (*help)();
  int (*run)(const std::vector<std::string>& args);
};

// In the order `tessel --help` lists them.
const std::vector<Command>& commands();
const Command* findCommand(const std::string& name);
// `tessel --help`: every command with its synopsis and summary.
std::string usage();
// Runs `c` on its arguments; a --help among them prints its help and nothing
// runs (before its options are checked). The process exit code.
int runCommand(const Command& c, const std::vector<std::string>& args);

// One per file: X_command.cpp defines xOptions, xHelp and xCommand.
#define TESSEL_CLI_COMMAND(x) \
  OptionSpec x##Options();    \
  std::string x##Help();      \
  int x##Command(const std::vector<std::string>& args);
TESSEL_CLI_COMMAND(tuneOp)
TESSEL_CLI_COMMAND(tune)
TESSEL_CLI_COMMAND(run)
TESSEL_CLI_COMMAND(db)
TESSEL_CLI_COMMAND(export)
TESSEL_CLI_COMMAND(models)
TESSEL_CLI_COMMAND(ops)
TESSEL_CLI_COMMAND(inspect)
TESSEL_CLI_COMMAND(conformance)
TESSEL_CLI_COMMAND(dataset)
TESSEL_CLI_COMMAND(costmodel)
TESSEL_CLI_COMMAND(knowledge)
TESSEL_CLI_COMMAND(fleet)
#undef TESSEL_CLI_COMMAND

// Path of an executable installed beside this one (tessel-worker).
std::string siblingExecutable(const std::string& name);
// The folder of the running executable (where siblingExecutable looks).
std::string executableFolder();

}  // namespace tessel::cli
