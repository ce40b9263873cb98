// A compute definition as JSON and back, node for node: how a task travels to
// a measurement agent on another machine (fleet/). The text is compact
// (expressions as nested arrays) and the round trip is exact: the same
// operations, expression nodes, immediates (doubles written with every digit)
// and outputs, so the agent rebuilds the very task and its workload key.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "te/compute_dag.h"

namespace tessel::te {

nlohmann::json dagToJson(const ComputeDAG& dag);
// Throws std::invalid_argument naming what is wrong (an unknown node kind, a
// wrong arity, a load of a tensor not defined before, an expression nested
// deeper than kMaxJsonExprDepth, more than kMaxJsonExprNodes nodes). The
// input may come from the network: nothing in it is trusted.
ComputeDAG dagFromJson(const nlohmann::json& j);

inline constexpr int kMaxJsonExprDepth = 512;
inline constexpr size_t kMaxJsonExprNodes = 1u << 20;

}  // namespace tessel::te
