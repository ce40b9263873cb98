#include "knowledge/task_structure.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace tessel::knowledge {

TaskStructure structureOf(const std::string& text) {
  TaskStructure s;
  s.pattern.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      s.pattern += text[i++];
      continue;
    }
    size_t end = i;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])))
      ++end;
    s.numbers.push_back(std::strtod(text.substr(i, end - i).c_str(), nullptr));
    s.pattern += '#';
    i = end;
  }
  return s;
}

double structureDistance(const TaskStructure& a, const TaskStructure& b) {
  if (a.pattern != b.pattern || a.numbers.size() != b.numbers.size()) return std::numeric_limits<double>::infinity();
  if (a.numbers.empty()) return 0;
  double sum = 0;
  for (size_t i = 0; i < a.numbers.size(); ++i)
    sum += std::abs(std::log1p(a.numbers[i]) - std::log1p(b.numbers[i]));
  return sum / double(a.numbers.size());
}

}  // namespace tessel::knowledge
