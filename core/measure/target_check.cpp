#include "measure/target_check.h"

#include "measure/cuda_driver.h"

namespace tessel::measure {

std::string unmeasurableReason(const target::Target& target) {
  if (target.isCuda()) return cuda::unavailableReason();
  if (!target.runsOnHost()) return "this machine's CPU cannot run " + target.arch + " code";
  return {};
}

target::Target resolvedHere(const target::Target& target) {
  if (target.isCuda() && target.arch == "native") return target::Target::cuda(cuda::gpus().at(0).arch());
  return target;
}

std::vector<TargetChoice> targetChoices() {
  std::vector<TargetChoice> out;
  auto add = [&](const target::Target& t) { out.push_back({t, unmeasurableReason(t)}); };
  add(target::Target::host());
  const auto& archs = target::cpuArchs();
  for (auto arch = archs.rbegin(); arch != archs.rend(); ++arch)
    if (*arch != "native") add(target::Target::cpu(*arch));
  add(target::Target::cuda());
  return out;
}

}  // namespace tessel::measure
