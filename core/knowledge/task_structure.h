// What makes two tasks alike for schedule transfer: their compute
// definitions (te::ComputeDAG::toString, as the database and the knowledge
// base keep them) agree once every number is taken out. A 3x3 convolution
// with ReLU at 56x56x64 and one at 14x14x256 share a pattern and differ in
// their numbers; a convolution and a matmul do not share one. Sketches then
// decide whether a program of one fits the other (schedule_transfer.h).
#pragma once

#include <string>
#include <vector>

namespace tessel::knowledge {

struct TaskStructure {
  std::string pattern;          // the definition's text, each number replaced by '#'
  std::vector<double> numbers;  // the numbers taken out, in order (extents, shapes, strides, constants)
};

TaskStructure structureOf(const std::string& computeText);

// How far apart two tasks of one pattern are: the mean absolute log ratio of
// their numbers (0 for the same numbers), +inf for different patterns.
double structureDistance(const TaskStructure& a, const TaskStructure& b);

}  // namespace tessel::knowledge
