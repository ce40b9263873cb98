#include "schedule/hardware_params.h"

#include <algorithm>

namespace tessel::schedule {

HardwareParams hardwareParams(const target::Target& target) {
  HardwareParams hw;
  hw.target = target;
  if (target.isCpu()) {
    hw.cores = target.effectiveThreads();
    hw.maxVectorLanes = std::max(hw.maxVectorLanes, target.vectorLanes);
  }
  return hw;
}

}  // namespace tessel::schedule
