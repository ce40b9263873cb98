// Test support: compiles kernels with the real builder, runs them in this
// process and compares them with the naive program of their DAG.
#pragma once

#include <dlfcn.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "codegen/cpp_builder.h"
#include "codegen/cpp_codegen.h"
#include "lower/layout_rewrite.h"
#include "schedule/steps.h"
#include "support/subprocess.h"

namespace tessel::testing {

struct CheckOutcome {
  bool ok = false;
  std::string message;
};

class KernelHarness {
 public:
  KernelHarness() : dir_(support::makeTempDir("tessel-test")) {}
  ~KernelHarness() {
    for (void* h : handles_)
      dlclose(h);
    support::removeTree(dir_);
  }

  // Runs the naive program of `dag` on the given inputs; returns its outputs.
  std::vector<std::vector<float>> runNaive(const te::ComputeDAG& dag, std::vector<std::vector<float>> inputs) {
    lower::LoweredFunc naive = lower::lowerState(schedule::State(dag));
    std::string sym = "naive_run" + std::to_string(runs_++);
    codegen::BuildOptions o;
    o.workDir = dir_;
    o.flags = {"-O1", "-fopenmp", "-std=c++17", "-w"};
    auto built = codegen::buildCandidates({{codegen::emitCppKernel(naive, sym), sym}}, o);
    if (built[0].library.empty()) return {};
    void* h = dlopen(built[0].library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) return {};
    handles_.push_back(h);
    auto fn = reinterpret_cast<int (*)(float* const*)>(dlsym(h, sym.c_str()));
    std::vector<std::vector<float>> bufs = std::move(inputs);
    bufs.resize(naive.args.size());
    for (size_t i = naive.numInputs; i < naive.args.size(); ++i)
      bufs[i].assign(size_t(naive.args[i].size), NAN);
    std::vector<float*> ptrs;
    for (auto& b : bufs)
      ptrs.push_back(b.data());
    if (!fn || fn(ptrs.data()) != 0) return {};
    return std::vector<std::vector<float>>(bufs.begin() + long(naive.numInputs), bufs.end());
  }

  // Compiles every program of `dag` (plus the naive one) and checks each
  // against the naive program on random inputs. One outcome per program;
  // sources() has the C++ of each (empty when it could not be instantiated).
  // `cpp`: how the programs become C++ (the naive one is always plain). With
  // cpp.layoutRewrite, the constant inputs a program reads packed are packed
  // by its own packing function first, as the worker and the executor do.
  std::vector<CheckOutcome> check(const te::ComputeDAG& dag, const std::vector<std::vector<schedule::Step>>& programs,
                                  const codegen::CppOptions& cpp = codegen::CppOptions()) {
    std::vector<CheckOutcome> out(programs.size());
    std::vector<codegen::BuildCandidate> cands;
    lower::LoweredFunc naive = lower::lowerState(schedule::State(dag));
    codegen::CppOptions plain = cpp;
    plain.registerTiles = false;
    cands.push_back({codegen::emitCppKernel(naive, "naive", plain), "naive"});
    std::vector<size_t> owner;
    std::vector<std::vector<lower::PackedLayout>> packed(1);  // per candidate
    for (size_t i = 0; i < programs.size(); ++i) {
      std::string sym = "k" + std::to_string(i);
      try {
        lower::LoweredFunc f = lower::lowerState(schedule::replay(dag, programs[i]));
        if (cpp.layoutRewrite) lower::rewriteLayouts(&f);
        cands.push_back({codegen::emitCppKernelAndPack(f, sym, cpp), sym});
        packed.push_back(f.packed);
        owner.push_back(i);
        sources_.resize(programs.size());
        sources_[i] = cands.back().code;
      } catch (const std::exception& e) {
        out[i].message = std::string("instantiation: ") + e.what();
      }
    }
    codegen::BuildOptions o;
    o.workDir = dir_;
    o.flags = {"-O1", "-fopenmp", "-std=c++17", "-w"};
    o.maxPerUnit = 64;
    auto built = codegen::buildCandidates(cands, o);
    using Fn = int (*)(float* const*);
    using PackFn = int (*)(float* const*, float* const*);
    auto load = [&](size_t c, const std::string& suffix = "") -> void* {
      if (built[c].library.empty()) return nullptr;
      void* h = dlopen(built[c].library.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) return nullptr;
      handles_.push_back(h);
      return dlsym(h, (cands[c].symbol + suffix).c_str());
    };
    auto ref = reinterpret_cast<Fn>(load(0));
    if (!ref) {
      for (auto& o2 : out)
        o2.message = "naive program failed to build: " + built[0].message;
      return out;
    }
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<std::vector<float>> bufs;
    for (const lower::Buffer& b : naive.args)
      bufs.emplace_back(size_t(b.size));
    for (size_t i = 0; i < naive.numInputs; ++i)
      for (float& x : bufs[i])
        x = u(rng);
    std::vector<float*> ptrs;
    for (auto& b : bufs)
      ptrs.push_back(b.data());
    ref(ptrs.data());
    std::vector<std::vector<float>> expected(bufs.begin() + long(naive.numInputs), bufs.end());
    double tol = 1e-4 * std::max(1.0, std::sqrt(double(dag.maxReductionLength())));
    for (size_t c = 1; c < cands.size(); ++c) {
      CheckOutcome& res = out[owner[c - 1]];
      auto f = reinterpret_cast<Fn>(load(c));
      if (!f) {
        res.message = "build failed: " + built[c].message.substr(0, 2000) + "\n" + cands[c].code;
        continue;
      }
      for (size_t o2 = naive.numInputs; o2 < bufs.size(); ++o2)
        std::fill(bufs[o2].begin(), bufs[o2].end(), NAN);
      std::vector<float*> args = ptrs;
      std::vector<std::vector<float>> packedBufs(args.size());
      if (!packed[c].empty()) {
        for (const lower::PackedLayout& p : packed[c]) {
          packedBufs[p.arg].assign(size_t(p.size()), NAN);
          args[p.arg] = packedBufs[p.arg].data();
        }
        auto pack = reinterpret_cast<PackFn>(load(c, codegen::packSymbol("")));
        if (!pack || pack(ptrs.data(), args.data()) != 0) {
          res.message = "packing function missing or failed\n" + cands[c].code;
          continue;
        }
      }
      if (f(args.data()) != 0) {
        res.message = "kernel returned an error";
        continue;
      }
      res.ok = true;
      for (size_t o2 = 0; o2 < expected.size() && res.ok; ++o2)
        for (size_t e = 0; e < expected[o2].size(); ++e) {
          float got = bufs[naive.numInputs + o2][e], want = expected[o2][e];
          if (!(std::fabs(got - want) <= tol * (1 + std::fabs(want)))) {
            res.ok = false;
            res.message = "output " + std::to_string(o2) + " element " + std::to_string(e) + ": got " +
                          std::to_string(got) + ", want " + std::to_string(want) + "\n" + cands[c].code;
            break;
          }
        }
    }
    return out;
  }

  const std::vector<std::string>& sources() const { return sources_; }

 private:
  std::vector<std::string> sources_;
  std::string dir_;
  std::vector<void*> handles_;
  int runs_ = 0;
};

}  // namespace tessel::testing
