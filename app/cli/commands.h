// The tessel CLI's commands. Each returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace tessel::cli {

int tuneOpCommand(const std::vector<std::string>& args);
int dbCommand(const std::vector<std::string>& args);
int exportCommand(const std::vector<std::string>& args);
int tuneCommand(const std::vector<std::string>& args);         // tune_command.cpp
int runCommand(const std::vector<std::string>& args);          // run_command.cpp
int modelsCommand(const std::vector<std::string>& args);       // models_command.cpp
int inspectCommand(const std::vector<std::string>& args);      // inspect_command.cpp
int conformanceCommand(const std::vector<std::string>& args);  // conformance_command.cpp
// Path of an executable installed beside this one (tessel-worker).
std::string siblingExecutable(const std::string& name);

}  // namespace tessel::cli
