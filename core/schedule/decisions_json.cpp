// JSON form of annotation decisions: {"sketch": n, "choices": {name: {...}}}.
#include <nlohmann/json.hpp>

#include "schedule/sketch.h"

namespace tessel::schedule {

std::string serializeDecisions(const ProgramDecisions& d) {
  nlohmann::json choices = nlohmann::json::object();
  for (const auto& [name, c] : d.choices)
    choices[name] = {{"value", c.value}, {"lo", c.lo},         {"hi", c.hi},
                     {"tile", c.tile},   {"extent", c.extent}, {"max_innermost", c.maxInnermost}};
  return nlohmann::json{{"sketch", d.sketch}, {"choices", choices}}.dump();
}

ProgramDecisions deserializeDecisions(const std::string& text) {
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    ProgramDecisions d;
    d.sketch = j.at("sketch").get<size_t>();
    for (const auto& [name, c] : j.at("choices").items()) {
      Choice ch;
      ch.value = c.at("value").get<std::vector<int64_t>>();
      ch.lo = c.at("lo").get<int64_t>();
      ch.hi = c.at("hi").get<int64_t>();
      ch.tile = c.at("tile").get<bool>();
      ch.extent = c.at("extent").get<int64_t>();
      ch.maxInnermost = c.at("max_innermost").get<int64_t>();
      d.choices[name] = std::move(ch);
    }
    return d;
  } catch (const nlohmann::json::exception& e) {
    throw ScheduleError(std::string("malformed decisions: ") + e.what());
  }
}

}  // namespace tessel::schedule
