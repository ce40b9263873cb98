#include "search/mutation.h"

#include <algorithm>

namespace tessel::search {

using schedule::Choice;

namespace {

std::vector<Choice*> choicesOfKind(schedule::ProgramDecisions& d, const std::string& prefix) {
  std::vector<Choice*> out;
  for (auto& [key, c] : d.choices)
    if (key.rfind(prefix, 0) == 0) out.push_back(&c);
  return out;
}

// Moves a prime factor from one tile level to another (the outermost level
// is the implicit extent / product), keeping the innermost within its limit;
// chosen uniformly among all such moves.
bool mutateTile(Choice& c, std::mt19937_64& rng) {
  size_t n = c.value.size();
  int64_t product = 1;
  for (int64_t v : c.value)
    product *= v;
  auto length = [&](size_t level) { return level == 0 ? c.extent / product : c.value[level - 1]; };
  struct Move {
    size_t src, dst;
    int64_t f;
  };
  std::vector<Move> moves;
  for (size_t src = 0; src <= n; ++src) {
    int64_t len = length(src);
    for (int64_t f = 2; f <= len; ++f) {
      if (len % f) continue;
      bool prime = true;
      for (int64_t q = 2; q * q <= f; ++q)
        prime &= f % q != 0;
      if (!prime) continue;
      for (size_t dst = 0; dst <= n; ++dst)
        if (dst != src && (dst != n || c.value[n - 1] * f <= c.maxInnermost)) moves.push_back({src, dst, f});
    }
  }
  if (moves.empty()) return false;
  Move m = moves[std::uniform_int_distribution<size_t>(0, moves.size() - 1)(rng)];
  if (m.src) c.value[m.src - 1] /= m.f;
  if (m.dst) c.value[m.dst - 1] *= m.f;
  return true;
}

bool mutateInteger(Choice& c, std::mt19937_64& rng) {
  if (c.hi <= c.lo) return false;
  int64_t v = c.value.empty() ? c.lo : c.value[0];
  int64_t next = std::uniform_int_distribution<int64_t>(c.lo, c.hi - 1)(rng);
  c.value = {next >= v ? next + 1 : next};
  return true;
}

}  // namespace

bool mutateDecisions(schedule::ProgramDecisions& d, std::mt19937_64& rng) {
  static const std::vector<std::pair<std::string, double>> kinds = {
      {"tile:", 0.90}, {"at:", 0.05}, {"unroll:", 0.04}, {"parallel:", 0.005}, {"vectorize:", 0.005}};
  std::vector<double> weights;
  for (const auto& k : kinds)
    weights.push_back(choicesOfKind(d, k.first).empty() ? 0.0 : k.second);
  if (std::all_of(weights.begin(), weights.end(), [](double w) { return w == 0; })) return false;
  size_t kind = std::discrete_distribution<size_t>(weights.begin(), weights.end())(rng);
  std::vector<Choice*> cs = choicesOfKind(d, kinds[kind].first);
  Choice& c = *cs[std::uniform_int_distribution<size_t>(0, cs.size() - 1)(rng)];
  return c.tile ? mutateTile(c, rng) : mutateInteger(c, rng);
}

schedule::ProgramDecisions crossover(const schedule::ProgramDecisions& a, const schedule::ProgramDecisions& b,
                                     std::mt19937_64& rng) {
  schedule::ProgramDecisions child = a;
  std::bernoulli_distribution coin(0.5);
  for (auto& [key, c] : child.choices) {
    auto it = b.choices.find(key);
    if (it != b.choices.end() && coin(rng)) c = it->second;
  }
  return child;
}

}  // namespace tessel::search
