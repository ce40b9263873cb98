// The tessel CLI's commands. Each returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace tessel::cli {

int tuneOpCommand(const std::vector<std::string>& args);
int dbCommand(const std::vector<std::string>& args);
int exportCommand(const std::vector<std::string>& args);
// Path of an executable installed beside this one (tessel-worker).
std::string siblingExecutable(const std::string& name);

}  // namespace tessel::cli
