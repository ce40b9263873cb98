// Fuzz target: what a measurement agent takes from Redis (a job) and what a
// tuner takes back (a result), both from whoever can write to the fleet's
// Redis (core/fleet/job_format.h). A job that decodes has its definition
// lowered and its programs replayed, as the agent does before it builds
// anything. Anything wrong must be an exception, never a crash.
#include <cstdint>
#include <exception>
#include <string>

#include "fleet/job_format.h"
#include "lower/loop_nest.h"
#include "schedule/steps.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  tessel::fleet::jobAddress(text);
  tessel::fleet::resultJob(text);
  try {
    tessel::fleet::decodeResult(text);
  } catch (const tessel::fleet::JobFormatError&) {
  }
  try {
    const tessel::fleet::MeasureJob job = tessel::fleet::decodeJob(text);
    tessel::lower::lowerState(tessel::schedule::State(job.task.dag));  // the reference's buffers
    for (const std::string& program : job.programs)
      if (const auto steps = tessel::schedule::replayableSteps(job.task.dag, program))
        tessel::lower::lowerState(tessel::schedule::replay(job.task.dag, *steps));
  } catch (const std::exception&) {
  }
  return 0;
}
