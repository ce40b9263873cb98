// Random annotation of sketches (Ansor's initial population rules): tile
// sizes, compute locations, parallel, vectorize and unroll.
#include <algorithm>
#include <map>

#include "schedule/sketch.h"

namespace tessel::schedule {

namespace {

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      d.push_back(i);
      if (i * i != n) d.push_back(n / i);
    }
  std::sort(d.begin(), d.end());
  return d;
}

template <class T>
const T& pick(const std::vector<T>& v, std::mt19937_64& rng) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

int randInt(int lo, int hi, std::mt19937_64& rng) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// Lengths whose product divides the extent, innermost at most maxInnermost.
std::vector<int64_t> sampleTile(int64_t extent, size_t n, int64_t maxInnermost, std::mt19937_64& rng) {
  std::vector<int64_t> lengths(n, 1);
  int64_t rest = extent;
  for (size_t k = n; k-- > 0;) {
    std::vector<int64_t> d = divisors(rest);
    if (k == n - 1) d.erase(std::remove_if(d.begin(), d.end(), [&](int64_t x) { return x > maxInnermost; }), d.end());
    lengths[k] = pick(d, rng);
    rest /= lengths[k];
  }
  return lengths;
}

std::vector<int64_t> followLengths(const std::vector<int64_t>& src, int level) {
  std::vector<int64_t> out(src.begin(), src.begin() + (level - 1));
  int64_t rest = 1;
  for (size_t i = size_t(level - 1); i < src.size(); ++i)
    rest *= src[i];
  out.push_back(rest);
  return out;
}

bool isAttachPoint(const State& s, int stage, const std::string& iter) {
  for (int a : s.attachedTo(stage))
    if (s.stages[size_t(a)].attachIter == iter) return true;
  return false;
}

void changeComputeLocations(const Sketch& sk, State& s, std::vector<Step>& steps, std::mt19937_64& rng) {
  for (int i = int(s.stages.size()) - 1; i >= 0; --i) {
    const Stage& st = s.stages[size_t(i)];
    if (st.op.placeholder || st.location != ComputeLocation::Root || s.isOutput(st.op.name)) continue;
    if (sk.placed.count(st.op.name) || sk.tiled.count(st.op.name)) continue;
    std::vector<int> cons = s.consumers(i);
    if (cons.size() != 1) continue;
    const Stage& c = s.stages[size_t(cons[0])];
    std::vector<int> spots = {-1};  // -1: stay at the root
    for (size_t k = 0; k < c.iters.size() && c.iters[k].kind == IterKind::Spatial; ++k)
      spots.push_back(int(k));
    int at = pick(spots, rng);
    if (at < 0) continue;
    Step step = ComputeAtStep{i, cons[0], at};
    applyStep(s, step);
    steps.push_back(step);
  }
}

void parallelize(State& s, std::vector<Step>& steps, const HardwareParams& hw, std::mt19937_64& rng) {
  for (size_t i = 0; i < s.stages.size(); ++i) {
    const Stage& st = s.stages[i];
    if (st.op.placeholder || st.location != ComputeLocation::Root) continue;
    size_t k = 0;
    int64_t product = 1;
    size_t enough = 0;
    while (k < st.iters.size() && st.iters[k].kind == IterKind::Spatial && st.iters[k].annotation == Annotation::None) {
      product *= st.iters[k].extent;
      ++k;
      if (!enough && product >= int64_t(hw.cores) * 16) enough = k;
    }
    if (k == 0) continue;
    size_t n = size_t(randInt(1, int(enough ? enough : k), rng));
    if (n > 1) {
      std::vector<int> its;
      for (size_t j = 0; j < n; ++j)
        its.push_back(int(j));
      Step f = FuseStep{int(i), its};
      applyStep(s, f);
      steps.push_back(f);
    }
    if (s.stages[i].iters[0].extent > 1) {
      Step a = AnnotationStep{int(i), 0, Annotation::Parallel};
      applyStep(s, a);
      steps.push_back(a);
    }
  }
}

void vectorize(State& s, std::vector<Step>& steps, const HardwareParams& hw, std::mt19937_64& rng) {
  for (size_t i = 0; i < s.stages.size(); ++i) {
    const Stage& st = s.stages[i];
    if (st.op.placeholder || st.location == ComputeLocation::Inlined || st.iters.empty()) continue;
    int last = int(st.iters.size()) - 1;
    int64_t product = 1;
    int n = 0;
    for (int k = last; k >= 0; --k) {
      const Iterator& it = st.iters[size_t(k)];
      if (it.kind != IterKind::Spatial || it.annotation != Annotation::None || isAttachPoint(s, int(i), it.name)) break;
      if (product * it.extent > hw.maxVectorLanes) break;
      product *= it.extent;
      ++n;
    }
    if (n == 0) continue;
    int use = randInt(1, n, rng);
    int first = last - use + 1;
    if (use > 1) {
      std::vector<int> its;
      for (int k = first; k <= last; ++k)
        its.push_back(k);
      Step f = FuseStep{int(i), its};
      applyStep(s, f);
      steps.push_back(f);
    }
    if (s.stages[i].iters[size_t(first)].extent > 1) {
      Step a = AnnotationStep{int(i), first, Annotation::Vectorize};
      applyStep(s, a);
      steps.push_back(a);
    }
  }
}

void unroll(State& s, std::vector<Step>& steps, std::mt19937_64& rng) {
  static const std::vector<int> choices = {0, 16, 64, 512};
  for (size_t i = 0; i < s.stages.size(); ++i) {
    const Stage& st = s.stages[i];
    if (st.op.placeholder || st.location == ComputeLocation::Inlined || !st.op.hasReduce() || st.iters.empty())
      continue;
    int v = pick(choices, rng);
    if (!v) continue;
    Step p = PragmaStep{int(i), 0, v};
    applyStep(s, p);
    steps.push_back(p);
  }
}

}  // namespace

std::vector<Step> annotateSketch(const Sketch& sk, const HardwareParams& hw, std::mt19937_64& rng) {
  State s = sk.initial;
  std::vector<Step> steps;
  std::map<size_t, std::vector<int64_t>> filled;
  for (size_t i = 0; i < sk.steps.size(); ++i) {
    Step step = sk.steps[i];
    if (auto* sp = std::get_if<SplitStep>(&step)) {
      if (std::find(sk.tileSplits.begin(), sk.tileSplits.end(), i) != sk.tileSplits.end()) {
        int64_t extent = s.stages.at(size_t(sp->stage)).iters.at(size_t(sp->iter)).extent;
        sp->lengths = sampleTile(extent, sp->lengths.size(), hw.maxInnermostSplit, rng);
        filled[i] = sp->lengths;
      }
      for (const FollowSplit& f : sk.follows)
        if (f.step == i) sp->lengths = followLengths(filled.at(f.source), f.level);
    }
    applyStep(s, step);
    steps.push_back(step);
  }
  changeComputeLocations(sk, s, steps, rng);
  parallelize(s, steps, hw, rng);
  vectorize(s, steps, hw, rng);
  unroll(s, steps, rng);
  validateProgram(s, hw);
  return steps;
}

void validateProgram(const State& s, const HardwareParams& hw) {
  for (const Stage& st : s.stages) {
    int64_t threads = 1;
    for (const Iterator& it : st.iters) {
      if (it.annotation == Annotation::Vectorize && it.extent > 64)
        throw ScheduleError("vectorized loop of " + std::to_string(it.extent) + " lanes in '" + st.op.name + "'");
      if (it.annotation >= Annotation::ThreadX) threads *= it.extent;
    }
    if (threads > hw.maxThreadsPerBlock)
      throw ScheduleError("'" + st.op.name + "' uses " + std::to_string(threads) + " threads per block (limit " +
                          std::to_string(hw.maxThreadsPerBlock) + ")");
  }
}

}  // namespace tessel::schedule
