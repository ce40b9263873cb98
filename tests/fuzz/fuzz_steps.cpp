// Fuzz target: schedule steps as a database stores them (compact JSON),
// parsed, replayed and lowered on real tasks (a matmul, a convolution, a
// softmax), as the tuner, export and `db show` do with a stored record.
// A damaged record must be refused with an exception, never a crash.
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "lower/loop_nest.h"
#include "schedule/steps.h"
#include "task/search_task.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tessel::task::makeOperatorTask;
  static const std::vector<tessel::task::SearchTask> tasks = {
      makeOperatorTask("matmul", {16, 16, 16}, tessel::target::Target::host()),
      makeOperatorTask("conv2d", {1, 4, 8, 8, 8, 3, 3, 1, 1}, tessel::target::Target::host()),
      makeOperatorTask("softmax", {4, 32}, tessel::target::Target::host()),
  };
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const tessel::task::SearchTask& task : tasks) {
    const auto steps = tessel::schedule::replayableSteps(task.dag, text);
    if (!steps) continue;
    try {
      tessel::lower::lowerState(tessel::schedule::replay(task.dag, *steps));
    } catch (const std::exception&) {
    }
  }
  return 0;
}
