// The GPU programs tests sample: a few operators, each with random programs
// of its CUDA sketches (test_schedules.cpp runs them serially on the host,
// test_cuda_codegen.cpp as generated CUDA).
#pragma once

#include <QtTest>
#include <random>

#include "schedule/sketch.h"
#include "schedule/steps.h"
#include "te/operators.h"

namespace tessel::testing {

struct GpuSample {
  te::ComputeDAG dag;
  std::vector<std::vector<schedule::Step>> programs;
};

// The rows (op, shape) of a data-driven test over the sampled operators.
inline void addGpuSampleRows() {
  QTest::addColumn<QString>("op");
  QTest::addColumn<QString>("shape");
  QTest::newRow("matmul") << "matmul"
                          << "64,48,40";
  QTest::newRow("dense") << "dense"
                         << "16,32,24";
  QTest::newRow("conv2d_bias_relu") << "conv2d_bias_relu"
                                    << "1,8,10,10,8,3,3,1,1";
  QTest::newRow("softmax") << "softmax"
                           << "4,200";
  QTest::newRow("relu") << "relu"
                        << "3,100";
}

// Up to 8 programs annotated from the operator's CUDA sketches (fixed seed).
inline GpuSample sampleGpuPrograms(const QString& op, const QString& shape) {
  std::vector<int64_t> dims;
  for (const QString& s : shape.split(','))
    dims.push_back(s.toLongLong());
  GpuSample out{te::makeOperator(op.toStdString(), dims), {}};
  schedule::HardwareParams hw;
  hw.target = tessel::target::Target::cuda();
  std::vector<schedule::Sketch> sketches = schedule::generateSketches(out.dag, hw);
  std::mt19937_64 rng(11);
  for (int i = 0; !sketches.empty() && out.programs.size() < 8 && i < 400; ++i) {
    try {
      out.programs.push_back(schedule::annotateSketch(sketches[size_t(i) % sketches.size()], hw, rng));
    } catch (const schedule::ScheduleError&) {
    }
  }
  return out;
}

}  // namespace tessel::testing
