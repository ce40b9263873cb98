#include "search/search_registry.h"

#include <stdexcept>

#include "cost/cost_model_registry.h"
#include "search/guided_search.h"
#include "search/random_search.h"

namespace tessel::search {

namespace {

// A search guided by the named cost model.
template <class Search>
SearchEntry guided(std::string name, std::string summary) {
  return {std::move(name), std::move(summary), true,
          [](const task::SearchTask& task, const schedule::HardwareParams& hw, uint64_t seed,
             std::shared_ptr<cost::CostModel> model, EvolutionParams params) -> std::unique_ptr<SearchPolicy> {
            if (!model) throw std::invalid_argument("a guided search needs a cost model");
            return std::make_unique<Search>(task, hw, std::move(model), seed, params);
          }};
}

}  // namespace

const std::vector<SearchEntry>& searches() {
  static const std::vector<SearchEntry> table = {
      guided<EvolutionarySearch>("evolutionary", "Ansor's evolutionary search guided by the cost model"),
      {"random", "random sketches, randomly annotated (Ansor's baseline; no cost model)", false,
       [](const task::SearchTask& task, const schedule::HardwareParams& hw, uint64_t seed,
          std::shared_ptr<cost::CostModel>,
          EvolutionParams) -> std::unique_ptr<SearchPolicy> { return std::make_unique<RandomSearch>(task, hw, seed); }},
      guided<AnnealingSearch>("anneal", "AutoTVM-style simulated annealing guided by the cost model"),
  };
  return table;
}

const SearchEntry* findSearch(const std::string& name) {
  for (const SearchEntry& e : searches())
    if (e.name == name) return &e;
  return nullptr;
}

std::string availableSearches() {
  std::string names;
  for (const SearchEntry& e : searches())
    names += (names.empty() ? "" : ", ") + e.name;
  return names;
}

std::string defaultSearch() {
  return searches().front().name;
}

std::unique_ptr<SearchPolicy> makeSearchPolicy(const std::string& name, const task::SearchTask& task,
                                               const schedule::HardwareParams& hw, uint64_t seed,
                                               const std::string& costModel, EvolutionParams params) {
  const SearchEntry* e = findSearch(name);
  if (!e) throw std::invalid_argument("unknown search '" + name + "' (available: " + availableSearches() + ")");
  return e->make(task, hw, seed, e->guided ? cost::makeCostModel(costModel, seed) : nullptr, params);
}

std::unique_ptr<SearchPolicy> makeSearchPolicy(const std::string& name, const task::SearchTask& task,
                                               const schedule::HardwareParams& hw, uint64_t seed,
                                               std::shared_ptr<cost::CostModel> model, EvolutionParams params) {
  const SearchEntry* e = findSearch(name);
  if (!e) throw std::invalid_argument("unknown search '" + name + "' (available: " + availableSearches() + ")");
  return e->make(task, hw, seed, std::move(model), params);
}

}  // namespace tessel::search
