// A line diff (longest common subsequence), as `diff` shows it: the lines
// both texts keep, those only the first has, those only the second has, in
// order. For short texts (a program's schedule steps, a few dozen lines):
// quadratic time and memory in the line counts.
#pragma once

#include <string>
#include <vector>

namespace tessel::support {

struct DiffLine {
  enum Kind : char { Same = ' ', Removed = '-', Added = '+' } kind;
  std::string text;
};

// From `before` to `after`: removals come before the additions that replace them.
std::vector<DiffLine> diffLines(const std::vector<std::string>& before, const std::vector<std::string>& after);

// Lines that differ (Removed + Added).
size_t changedLines(const std::vector<DiffLine>& diff);

}  // namespace tessel::support
