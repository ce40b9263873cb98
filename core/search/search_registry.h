// The search policies Tessel knows, by name, in one table: what `--search`
// accepts, what the studio and help texts list, and how each is made.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "search/search_policy.h"

namespace tessel::search {

struct SearchEntry {
  std::string name;     // as typed: "evolutionary"
  std::string summary;  // one line for help texts and tooltips
  bool guided = false;  // asks a cost model (--cost-model matters)
  // `model`: the cost model of a guided search (unused by the others).
  std::function<std::unique_ptr<SearchPolicy>(const task::SearchTask&, const schedule::HardwareParams&, uint64_t seed,
                                              std::shared_ptr<cost::CostModel> model, EvolutionParams)>
      make;
};

// Every search, in the order help texts list them; the first is the default.
const std::vector<SearchEntry>& searches();
// nullptr for an unknown name.
const SearchEntry* findSearch(const std::string& name);
// The names, comma-separated ("evolutionary, random, anneal").
std::string availableSearches();
std::string defaultSearch();

}  // namespace tessel::search
