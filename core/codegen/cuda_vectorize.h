// Vectorised memory access in CUDA kernels: a loop of 2 or 4 lanes annotated
// `vectorize` (the innermost split of a cooperative fetch, as Ansor's GPU
// rules make it) whose body is one store becomes float2/float4 loads and
// stores for the accesses that are contiguous in the loop variable and
// provably aligned, and per-lane scalar code for the rest.
//
// An access is vectorised when its flat index, with v the loop variable, is
// v + (a multiple of the lanes): every other term's coefficient and the
// constant divisible by the lane count. Integer divisions and remainders by
// a multiple of the lanes are first rewritten so that v leaves them:
// (lanes*q + v) / K = (lanes*q) / K and (lanes*q + v) % K = (lanes*q) % K + v
// when lanes divides K and 0 <= v < lanes (how a fused cooperative-fetch
// index is taken apart into a tensor's dimensions). Buffers start aligned
// (device allocations, and the generator's __align__(16) on shared and local
// arrays), so such an index is a float2/float4 boundary.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lower/loop_nest.h"
#include "te/expr.h"

namespace tessel::codegen {

// The index at lane 0 when `index` is v + (a multiple of lanes), else nullopt.
std::optional<te::Expr> alignedVectorBase(const te::Expr& index, const std::string& v, int64_t lanes);

// The statements replacing `for v in [0, lanes): store` (one line each, no
// indentation), or nullopt when nothing in it can be vectorised (the caller
// emits the serial loop). `print` renders an expression as CUDA C.
std::optional<std::vector<std::string>> vectorizeStore(const lower::StmtNode& store, const std::string& v,
                                                       int64_t lanes,
                                                       const std::function<std::string(const te::Expr&)>& print);

}  // namespace tessel::codegen
