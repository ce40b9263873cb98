// Whether this machine can measure a target's kernels, as the CLI and the
// studio check before a tuning writes anything: a CPU target whose arch this
// CPU runs, a CUDA target with a driver and a GPU. Also the targets a user
// is offered (the studio's target box), each with why it cannot be measured
// here, if it cannot.
#pragma once

#include <string>
#include <vector>

#include "target/target.h"

namespace tessel::measure {

// "" when this machine can build and measure `target`'s kernels, otherwise
// why not, in a sentence that does not repeat the target.
std::string unmeasurableReason(const target::Target& target);

// `target` as its records name it, once measurable here: a CUDA target's
// "native" arch becomes this machine's first GPU's (sm_XX); others as they are.
target::Target resolvedHere(const target::Target& target);

struct TargetChoice {
  target::Target target;
  std::string unavailable;  // "": measurable here; otherwise why not
};
// This machine's CPU ("cpu"), each x86-64 level from the widest down, and
// this machine's GPU ("cuda"), each with unmeasurableReason.
std::vector<TargetChoice> targetChoices();

}  // namespace tessel::measure
