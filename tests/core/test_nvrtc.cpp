// Qt Test suite of the NVRTC compiler (codegen/nvrtc_compiler.h): real CUDA
// sources compiled to CUBIN by the toolkit's NVRTC, no GPU needed; their
// resources read back from ptxas, and the target's limits applied.
#include <QTest>
#include <algorithm>
#include <string>
#include <vector>

#include "attention_samples.h"
#include "codegen/cuda_codegen.h"
#include "codegen/nvrtc_compiler.h"
#include "gpu_samples.h"
#include "lower/loop_nest.h"
#include "schedule/state.h"
#include "target/target.h"
#include "tessel_test.h"

using namespace tessel;

namespace {

// A kernel with `floats` of static shared memory.
std::string sharedKernel(const std::string& name, int floats) {
  return "extern \"C\" __global__ void __launch_bounds__(128) " + name +
         "(float* __restrict__ a) {\n"
         "  __shared__ float s[" +
         std::to_string(floats) +
         "];\n"
         "  const int t = threadIdx.x;\n"
         "  s[t] = a[t];\n"
         "  __syncthreads();\n"
         "  a[t] = s[(t + 1) % 128] * 2.0f;\n"
         "}\n";
}

// "k1", "k2", ... (built up, not concatenated: GCC 12 warns falsely on "k" + to_string).
std::string kernelName(size_t i) {
  std::string name = "k";
  name += std::to_string(i);
  return name;
}

}  // namespace

class TestNvrtc : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    std::string why;
    // Only a machine without the CUDA toolkit (scripts/setup.sh expects it in /usr/local/cuda).
    if (!codegen::nvrtcAvailable(&why)) TESSEL_SKIP("nvrtc", ("NVRTC is not installed: " + why).c_str());
  }

  // A CUBIN for the arch asked, with the kernel's shared memory and registers.
  void compilesAndReadsResources() {
    const auto out = codegen::compileCuda({sharedKernel("k", 1024)}, {});
    QCOMPARE(out.size(), size_t(1));
    QVERIFY2(out[0].error == support::ErrorCode::None, out[0].message.c_str());
    QVERIFY(out[0].cubin.size() > 4 && out[0].cubin.compare(0, 4,
                                                            "\x7f"
                                                            "ELF") == 0);
    QCOMPARE(out[0].kernels.size(), size_t(1));
    QCOMPARE(out[0].kernels[0].name, std::string("k"));
    QCOMPARE(out[0].kernels[0].sharedBytes, int64_t(4096));
    QVERIFY(out[0].kernels[0].registers > 0 && out[0].kernels[0].registers < 255);
    QCOMPARE(out[0].kernels[0].spillStoreBytes, int64_t(0));
    QVERIFY(codegen::nvrtcVersion().rfind("13.", 0) == 0);
  }

  // Many sources on parallel threads: each output stays with its source.
  void manyAtOnceStayInOrder() {
    std::vector<std::string> sources;
    for (int i = 1; i <= 6; ++i)
      sources.push_back(sharedKernel(kernelName(size_t(i)), 256 * i));
    codegen::CudaCompileOptions o;
    o.arch = "sm_80";
    o.jobs = 3;
    const auto out = codegen::compileCuda(sources, o);
    QCOMPARE(out.size(), sources.size());
    for (size_t i = 0; i < out.size(); ++i) {
      QVERIFY2(out[i].error == support::ErrorCode::None, out[i].message.c_str());
      QCOMPARE(out[i].kernels.at(0).name, kernelName(i + 1));
      QCOMPARE(out[i].kernels.at(0).sharedBytes, int64_t(1024 * (i + 1)));
    }
  }

  // A source that does not compile: error code 3 with NVRTC's log; the others still build.
  void compileErrorIsCode3WithTheLog() {
    const std::string broken = "extern \"C\" __global__ void bad(float* a) { a[0] = undeclared_thing; }\n";
    const auto out = codegen::compileCuda({broken, sharedKernel("good", 128)}, {});
    QCOMPARE(out[0].error, support::ErrorCode::CompileDevice);
    QVERIFY2(out[0].message.find("undeclared_thing") != std::string::npos, out[0].message.c_str());
    QVERIFY(out[0].cubin.empty());
    QVERIFY2(out[1].error == support::ErrorCode::None, out[1].message.c_str());
  }

  // An arch NVRTC must be told: native cannot be detected without a GPU.
  void archMustBeNamed() {
    codegen::CudaCompileOptions o;
    o.arch = "native";
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, codegen::compileCuda({sharedKernel("k", 32)}, o));
  }

  // Two kernels in one report, as ptxas prints them.
  void readsAReportOfTwoKernels() {
    const auto out = codegen::compileCuda({sharedKernel("first", 64) + sharedKernel("second", 512)}, {});
    QVERIFY2(out[0].error == support::ErrorCode::None, out[0].message.c_str());
    QCOMPARE(out[0].kernels.size(), size_t(2));
    for (const auto& k : out[0].kernels)
      QCOMPARE(k.sharedBytes, k.name == "first" ? int64_t(256) : int64_t(2048));
  }

  // The kernels the CUDA generator emits compile with NVRTC (device code
  // only: the prelude and the __global__ functions, not the host launcher),
  // each with the shared memory the generator counted.
  void generatedKernelsCompile_data() { testing::addGpuSampleRows(); }
  void generatedKernelsCompile() {
    QFETCH(QString, op);
    QFETCH(QString, shape);
    const testing::GpuSample sample = testing::sampleGpuPrograms(op, shape);
    QVERIFY(!sample.programs.empty());
    std::vector<std::string> sources;
    std::vector<codegen::CudaProgram> programs;
    for (size_t i = 0; i < sample.programs.size(); ++i) {
      const lower::LoweredFunc f = lower::lowerState(schedule::replay(sample.dag, sample.programs[i]));
      programs.push_back(codegen::emitCudaProgram(f, "p" + std::to_string(i)));
      sources.push_back(programs.back().deviceSource);
    }
    const auto out = codegen::compileCuda(sources, {});
    for (size_t i = 0; i < out.size(); ++i) {
      QVERIFY2(out[i].error == support::ErrorCode::None, out[i].message.c_str());
      QCOMPARE(out[i].kernels.size(), programs[i].kernels.size());
      for (const codegen::CudaKernel& k : programs[i].kernels) {
        const auto found = std::find_if(out[i].kernels.begin(), out[i].kernels.end(),
                                        [&](const codegen::CudaKernelResources& r) { return r.name == k.name; });
        QVERIFY2(found != out[i].kernels.end(), k.name.c_str());
        QCOMPARE(found->sharedBytes, k.sharedBytes);
      }
    }
  }

  // The kernels of the softmax-into-batch-matmul rule's GPU programs
  // compile with NVRTC, within sm_90's limits, with the shared memory the
  // generator counted (the normalised rows and the other input's tiles).
  void softmaxFusedIntoBatchMatmulCompiles() {
    schedule::HardwareParams hw;
    hw.target = tessel::target::Target::cuda();
    const te::ComputeDAG dag = testing::attentionDag();
    const std::vector<std::vector<schedule::Step>> sampled = testing::sampleRulePrograms(dag, hw, 8);
    QVERIFY(sampled.size() >= 6);
    std::vector<std::string> sources;
    std::vector<codegen::CudaProgram> programs;
    for (size_t i = 0; i < sampled.size(); ++i) {
      programs.push_back(
          codegen::emitCudaProgram(lower::lowerState(schedule::replay(dag, sampled[i])), "a" + std::to_string(i)));
      sources.push_back(programs.back().deviceSource);
    }
    const target::Target t = target::parseTarget("cuda -arch=sm_90");
    const auto out = codegen::compileCuda(sources, {});
    for (size_t i = 0; i < out.size(); ++i) {
      QVERIFY2(out[i].error == support::ErrorCode::None, out[i].message.c_str());
      QCOMPARE(out[i].kernels.size(), size_t(1));
      const codegen::CudaKernel& k = programs[i].kernels.at(0);
      QCOMPARE(out[i].kernels[0].name, k.name);
      QCOMPARE(out[i].kernels[0].sharedBytes, k.sharedBytes);
      QVERIFY(k.sharedBytes > 0);
      QCOMPARE(codegen::cudaLimitViolation(out[i].kernels[0], k.block.count(), t), std::string());
    }
  }

  // Over a limit of the target: a reason naming the kernel and the limit; within them: none.
  void limitsOfTheTarget() {
    const target::Target t = target::parseTarget("cuda -arch=sm_90");
    codegen::CudaKernelResources k;
    k.name = "k";
    k.registers = 32;
    k.sharedBytes = 4096;
    QCOMPARE(codegen::cudaLimitViolation(k, 256, t), std::string());
    QVERIFY(codegen::cudaLimitViolation(k, 2048, t).find("threads per block") != std::string::npos);
    k.registers = 128;  // 128 x 1024 = 131072 registers: twice a block's
    QVERIFY(codegen::cudaLimitViolation(k, 1024, t).find("registers of a block") != std::string::npos);
    k.registers = 32;
    k.sharedBytes = 64 * 1024;
    QVERIFY(codegen::cudaLimitViolation(k, 256, t).find("shared memory") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestNvrtc)
#include "test_nvrtc.moc"
