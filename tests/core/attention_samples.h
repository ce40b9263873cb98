// The attention tasks the softmax-into-batch-matmul rule is tested on
// (softmax(scores / scale) V, as the DP fusion of a transformer makes them),
// and random programs of that rule's sketches only.
#pragma once

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "schedule/sketch.h"
#include "schedule/softmax_fusion_rule.h"
#include "te/operators.h"

namespace tessel::testing {

inline const char* const kSoftmaxFusionRule = "fuse_softmax_into_batch_matmul";

struct AttentionShape {
  int64_t heads = 2, seq = 24, d = 16;
  bool fourD = true;     // [1, heads, seq, seq] as the ONNX lowering makes it; else [heads, seq, seq]
  bool scaled = true;    // the scores divided by a scale (a stage before the softmax)
  bool between = false;  // an element-wise stage between the softmax and the matmul
};

// scores -> (/ scale) -> softmax over the last axis -> (* 0.5) -> batch matmul with v.
inline te::ComputeDAG attentionDag(const AttentionShape& a = {}) {
  te::DagBuilder b;
  std::vector<int64_t> rows = {a.heads, a.seq, a.seq}, vs = {a.heads, a.seq, a.d};
  if (a.fourD) rows.insert(rows.begin(), 1), vs.insert(vs.begin(), 1);
  te::Tensor scores = b.placeholder("scores", rows);
  te::Tensor scale = b.placeholder("scale", {1});
  te::Tensor v = b.placeholder("v", vs);
  te::Tensor x = scores;
  if (a.scaled) x = b.compute("scaled", rows, [&](const te::Indices& i) { return scores(i) / scale({te::intImm(0)}); });
  te::Tensor p = te::softmax(b, x);
  if (a.between) p = b.compute("halved", rows, [&](const te::Indices& i) { return p(i) * te::floatImm(0.5); });
  std::vector<int64_t> out = vs;
  out.back() = a.d;
  te::Tensor o = b.reduce("ctx", out, te::ReduceKind::Sum, {a.seq}, [&](const te::Indices& i, const te::Indices& r) {
    te::Indices pi(i.begin(), i.end() - 1), vi(i.begin(), i.end() - 2);
    pi.push_back(r[0]);
    vi.push_back(r[0]);
    vi.push_back(i.back());
    if (a.fourD) pi[0] = te::intImm(0), vi[0] = te::intImm(0);  // a batch of 1 indexed by 0, as the lowering does
    return p(pi) * v(vi);
  });
  return b.build({o.name()});
}

// The rule is registered for "cuda" only (on the CPU it did not pay: see
// softmax_fusion_rule.h); CPU tests of its lowering add it for their scope.
struct CpuSoftmaxFusionRule {
  CpuSoftmaxFusionRule() {
    schedule::registerSketchRule(tessel::target::Target::Kind::Cpu, schedule::makeSoftmaxFusionRule(),
                                 "add_cache_write");
  }
  ~CpuSoftmaxFusionRule() { schedule::removeSketchRule(tessel::target::Target::Kind::Cpu, kSoftmaxFusionRule); }
  CpuSoftmaxFusionRule(const CpuSoftmaxFusionRule&) = delete;
  CpuSoftmaxFusionRule& operator=(const CpuSoftmaxFusionRule&) = delete;
};

inline bool hasRule(const schedule::Sketch& sk, const std::string& rule) {
  return std::find(sk.rules.begin(), sk.rules.end(), rule) != sk.rules.end();
}

// Up to `n` programs annotated from the sketches the rule made (fixed seed).
inline std::vector<std::vector<schedule::Step>> sampleRulePrograms(const te::ComputeDAG& dag,
                                                                   const schedule::HardwareParams& hw, size_t n,
                                                                   uint64_t seed = 13) {
  std::vector<schedule::Sketch> mine;
  for (const schedule::Sketch& sk : schedule::generateSketches(dag, hw))
    if (hasRule(sk, kSoftmaxFusionRule)) mine.push_back(sk);
  std::vector<std::vector<schedule::Step>> out;
  std::mt19937_64 rng(seed);
  for (size_t i = 0; !mine.empty() && out.size() < n && i < 40 * n; ++i) {
    try {
      out.push_back(schedule::annotateSketch(mine[i % mine.size()], hw, rng));
    } catch (const schedule::ScheduleError&) {
    }
  }
  return out;
}

}  // namespace tessel::testing
