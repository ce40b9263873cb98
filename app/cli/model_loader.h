// The CLI's MODEL argument: core's model preparation with the CLI's checks.
#pragma once

#include <string>

#include "args.h"
#include "frontend/model_loader.h"

namespace tessel::cli {

using frontend::PreparedModel;

// MODEL: the one positional argument; UsageError otherwise.
std::string modelArgument(const Args& args);
// --fusion, checked (default dp).
std::string fusionArgument(const Args& args);

// MODEL (one positional argument), --fusion and --input-shapes checked, then
// frontend::prepareModel.
PreparedModel prepareModel(const Args& args, const target::Target& target);
using frontend::prepareModel;

}  // namespace tessel::cli
