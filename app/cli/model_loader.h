// The CLI's MODEL argument: core's model preparation with the CLI's checks.
#pragma once

#include <string>

#include "args.h"
#include "frontend/model_loader.h"

namespace tessel::cli {

using frontend::PreparedModel;

// MODEL (one positional argument), --fusion and --input-shapes checked, then
// frontend::prepareModel.
PreparedModel prepareModel(const Args& args, const std::string& target);
using frontend::prepareModel;

}  // namespace tessel::cli
