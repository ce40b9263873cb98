#include "schedule/decision_inference.h"

#include <algorithm>
#include <set>
#include <string>

namespace tessel::schedule {

namespace {

// One text per step, to compare programs step by step.
std::vector<std::string> stepTexts(const std::vector<Step>& steps) {
  std::vector<std::string> out;
  out.reserve(steps.size());
  for (const Step& s : steps)
    out.push_back(serializeSteps({s}));
  return out;
}

size_t commonPrefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n])
    ++n;
  return n;
}

// The sketch's steps come first in every program it completes: the program's
// copies give the tile lengths. False when they are not the sketch's steps.
bool readTiles(const Sketch& sk, const std::vector<Step>& steps, ProgramDecisions& d) {
  if (steps.size() < sk.steps.size()) return false;
  for (size_t i = 0; i < sk.steps.size(); ++i) {
    if (steps[i].index() != sk.steps[i].index()) return false;
    const auto* stored = std::get_if<SplitStep>(&steps[i]);
    if (!stored) {
      if (serializeSteps({steps[i]}) != serializeSteps({sk.steps[i]})) return false;
      continue;
    }
    const auto& own = std::get<SplitStep>(sk.steps[i]);
    if (stored->stage != own.stage || stored->iter != own.iter || stored->lengths.size() != own.lengths.size())
      return false;
    if (std::find(sk.tileSplits.begin(), sk.tileSplits.end(), i) != sk.tileSplits.end()) {
      Choice& c = d.choices["tile:" + std::to_string(i)];
      c.tile = true;
      c.value = stored->lengths;
    }
  }
  return true;
}

// How far the program of `d` agrees with `want`, step by step (-1: invalid).
long agreement(const Sketch& sk, ProgramDecisions d, const HardwareParams& hw, const std::vector<std::string>& want) {
  try {
    return long(commonPrefix(stepTexts(materialize(sk, d, hw)), want));
  } catch (const ScheduleError&) {
    return -1;
  }
}

std::optional<ProgramDecisions> inferOnSketch(const Sketch& sk, const std::vector<Step>& steps,
                                              const std::vector<std::string>& want, const HardwareParams& hw) {
  ProgramDecisions d;
  if (!readTiles(sk, steps, d)) return std::nullopt;
  // The other decisions in the order the annotation takes them: each one's
  // steps follow the earlier ones', so the right value is the one that makes
  // the program agree with the stored one furthest (its range may depend on
  // the earlier decisions, so it is read once they are fixed).
  std::set<std::string> fixed;
  for (const auto& [key, c] : d.choices)
    fixed.insert(key);
  for (;;) {
    std::vector<std::string> visited;
    try {
      materialize(sk, d, hw, &visited);
    } catch (const ScheduleError&) {
      // A later decision at its lowest value may be invalid: the walk still
      // listed the decisions taken before it.
    }
    auto next = std::find_if(visited.begin(), visited.end(), [&](const std::string& k) { return !fixed.count(k); });
    if (next == visited.end()) break;
    const std::string key = *next;
    const Choice range = d.choices[key];
    int64_t best = range.lo;
    long bestAgreement = -2;
    for (int64_t v = range.lo; v <= range.hi && v - range.lo < 4096; ++v) {
      ProgramDecisions trial = d;
      trial.choices[key].value = {v};
      const long a = agreement(sk, trial, hw, want);
      if (a > bestAgreement) best = v, bestAgreement = a;
    }
    d.choices[key].value = {best};
    fixed.insert(key);
  }
  try {
    if (stepTexts(materialize(sk, d, hw)) == want) return d;
  } catch (const ScheduleError&) {
  }
  return std::nullopt;
}

}  // namespace

std::optional<ProgramDecisions> inferDecisions(const std::vector<Sketch>& sketches, const std::vector<Step>& steps,
                                               const HardwareParams& hw) {
  const std::vector<std::string> want = stepTexts(steps);
  for (size_t i = 0; i < sketches.size(); ++i)
    if (auto d = inferOnSketch(sketches[i], steps, want, hw)) {
      d->sketch = i;
      return d;
    }
  return std::nullopt;
}

}  // namespace tessel::schedule
