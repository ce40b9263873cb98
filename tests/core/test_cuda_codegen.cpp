// The CUDA code generator without a GPU: generated programs run on the host
// under the emulation header (codegen/cuda_emulation.h) and must compute what
// the naive program computes; they must also compile with the real nvcc.
// The emulation itself is checked on hand-written kernels: its barriers and
// shuffles really synchronise the threads.
#include <dlfcn.h>

#include <QtTest>
#include <fstream>
#include <regex>

#include "attention_samples.h"
#include "codegen/cuda_codegen.h"
#include "codegen/cuda_vectorize.h"
#include "codegen/nvrtc_compiler.h"
#include "gpu_samples.h"
#include "kernel_harness.h"
#include "lower/index_analysis.h"
#include "tessel_test.h"

using namespace tessel;
using namespace tessel::schedule;

namespace {

const char* const kNvcc = "/usr/local/cuda/bin/nvcc";

// A shared library built from CUDA source for the host emulation.
class EmulatedLibrary {
 public:
  EmulatedLibrary(const std::string& dir, const std::string& source) {
    static int units = 0;
    const std::string base = dir + "/emulated" + std::to_string(units++);
    std::ofstream(base + ".cpp") << "#include \"" TESSEL_CUDA_EMULATION_H "\"\n" << source;
    const char* env = std::getenv("TESSEL_CXX");
    support::ProcessResult r = support::runProcess(
        {env && *env ? env : "c++", "-std=c++17", "-O1", "-w", "-shared", "-fPIC", "-o", base + ".so", base + ".cpp"},
        300);
    if (!r.ok()) {
      message_ = "host compile failed: " + r.output.substr(0, 4000);
      return;
    }
    handle_ = dlopen((base + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) message_ = dlerror();
  }
  ~EmulatedLibrary() {
    if (handle_) dlclose(handle_);
  }
  bool ok() const { return handle_ != nullptr; }
  const std::string& message() const { return message_; }

  using Program = int (*)(float* const*);
  // Runs the host function `symbol` on `buffers`; empty, or what failed.
  std::string run(const std::string& symbol, std::vector<std::vector<float>>& buffers) const {
    auto fn = reinterpret_cast<Program>(dlsym(handle_, symbol.c_str()));
    auto error = reinterpret_cast<const char* (*)()>(dlsym(handle_, "tessel_emulation_error"));
    if (!fn || !error) return "missing symbol " + symbol;
    std::vector<float*> ptrs;
    for (auto& b : buffers)
      ptrs.push_back(b.data());
    return fn(ptrs.data()) == 0 ? "" : std::string("launch failed: ") + error();
  }

 private:
  void* handle_ = nullptr;
  std::string message_;
};

using Sampled = testing::GpuSample;
using testing::sampleGpuPrograms;

std::vector<codegen::CudaProgram> emitAll(const Sampled& s) {
  std::vector<codegen::CudaProgram> out;
  for (size_t i = 0; i < s.programs.size(); ++i)
    out.push_back(codegen::emitCudaProgram(lower::lowerState(replay(s.dag, s.programs[i])), "p" + std::to_string(i)));
  return out;
}

// Runs each program under the emulation on the same random inputs and
// compares it with the naive program. One message per program, empty if right.
std::vector<std::string> runAndCompare(const Sampled& s, const std::vector<codegen::CudaProgram>& programs,
                                       const std::string& source) {
  testing::KernelHarness harness;
  std::string dir = support::makeTempDir("tessel-cuda-test");
  EmulatedLibrary lib(dir, source);
  std::vector<std::string> out(programs.size());
  if (!lib.ok()) {
    out.assign(programs.size(), lib.message());
    support::removeTree(dir);
    return out;
  }
  lower::LoweredFunc naive = lower::lowerState(State(s.dag));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<std::vector<float>> inputs;
  for (size_t i = 0; i < naive.numInputs; ++i) {
    inputs.emplace_back(size_t(naive.args[i].size));
    for (float& x : inputs.back())
      x = u(rng);
  }
  std::vector<std::vector<float>> expected = harness.runNaive(s.dag, inputs);
  if (expected.empty()) out.assign(programs.size(), "the naive program failed");
  double tol = 1e-4 * std::max(1.0, std::sqrt(double(s.dag.maxReductionLength())));
  for (size_t p = 0; p < programs.size() && !expected.empty(); ++p) {
    std::vector<std::vector<float>> buffers = inputs;
    for (size_t b = inputs.size(); b < programs[p].buffers.size(); ++b)
      buffers.emplace_back(size_t(programs[p].buffers[b].size), NAN);
    out[p] = lib.run(programs[p].name, buffers);
    for (size_t o = 0; o < expected.size() && out[p].empty(); ++o)
      for (size_t e = 0; e < expected[o].size(); ++e) {
        float got = buffers[naive.numInputs + o][e], want = expected[o][e];
        if (!(std::fabs(got - want) <= tol * (1 + std::fabs(want)))) {
          out[p] = "output " + std::to_string(o) + " element " + std::to_string(e) + ": got " + std::to_string(got) +
                   ", want " + std::to_string(want);
          break;
        }
      }
  }
  support::removeTree(dir);
  return out;
}

std::string concatenated(const std::vector<codegen::CudaProgram>& programs) {
  std::string all;
  for (const codegen::CudaProgram& p : programs)
    all += p.source + "\n";
  return all;
}

// Shared memory per kernel as ptxas reports it (-Xptxas -v): "name" -> bytes.
std::map<std::string, int64_t> ptxasSharedBytes(const std::string& log) {
  std::map<std::string, int64_t> out;
  std::regex entry("Compiling entry function '([A-Za-z0-9_]+)'"), used("Used [0-9]+ registers.*"),
      smem("([0-9]+) bytes smem");
  std::string current;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) current = m[1];
    if (!current.empty() && std::regex_search(line, used)) {
      out[current] = std::regex_search(line, m, smem) ? std::stoll(m[1]) : 0;
      current.clear();
    }
  }
  return out;
}

// Hand-written kernels for the emulation (with the prelude: its launch macro
// and block reduction).
const char* const kHandWritten = R"(
// Thread t writes shared[t], then reads its neighbour's value.
extern "C" __global__ void rotate(float* out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = 100.0f * blockIdx.x + t;
  __syncthreads();
  out[blockIdx.x * 64 + t] = s[(t + 1) % 64];
}
// The same without the barrier: on a GPU a race; the emulation must show it.
extern "C" __global__ void rotate_unsynchronised(float* out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = 100.0f * blockIdx.x + t + 1000.0f;
  out[blockIdx.x * 64 + t] = s[(t + 1) % 64];
}
// Each warp sums its lanes' values with shuffles; lane 0 writes the sum.
extern "C" __global__ void warp_sums(float* in, float* out) {
  float v = in[threadIdx.x];
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
  if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = v;
}
// The prelude's block reduction: every thread gets the block's maximum.
extern "C" __global__ void block_max(float* in, float* out) {
  __shared__ float scratch[32];
  float v = tessel_block_allreduce<TESSEL_MAX>(in[threadIdx.x], -INFINITY, scratch);
  out[threadIdx.x] = v;
}
// A barrier only thread 0 reaches.
extern "C" __global__ void divergent(float* out) {
  if (threadIdx.x == 0) __syncthreads();
  out[threadIdx.x] = 1.0f;
}
// Vector accesses: aligned ones copy, a misaligned one fails the launch.
extern "C" __global__ void copy4(float* in, float* out) {
  tessel_store(&out[4 * threadIdx.x], tessel_load<float4>(&in[4 * threadIdx.x]));
}
extern "C" __global__ void copy4_misaligned(float* in, float* out) {
  tessel_store(&out[4 * threadIdx.x], tessel_load<float4>(&in[4 * threadIdx.x + 1]));
}
extern "C" int run_copy4(float* const* b) {
  TESSEL_LAUNCH(copy4, dim3(1), dim3(8), b[0], b[1]);
  return TESSEL_LAUNCH_STATUS();
}
extern "C" int run_copy4_misaligned(float* const* b) {
  TESSEL_LAUNCH(copy4_misaligned, dim3(1), dim3(8), b[0], b[1]);
  return TESSEL_LAUNCH_STATUS();
}
extern "C" int run_rotate(float* const* b) {
  TESSEL_LAUNCH(rotate, dim3(3), dim3(64), b[0]);
  return TESSEL_LAUNCH_STATUS();
}
extern "C" int run_rotate_unsynchronised(float* const* b) {
  TESSEL_LAUNCH(rotate_unsynchronised, dim3(1), dim3(64), b[0]);
  return TESSEL_LAUNCH_STATUS();
}
extern "C" int run_warp_sums(float* const* b) {
  TESSEL_LAUNCH(warp_sums, dim3(1), dim3(96), b[0], b[1]);
  return TESSEL_LAUNCH_STATUS();
}
extern "C" int run_block_max(float* const* b) {
  TESSEL_LAUNCH(block_max, dim3(1), dim3(160), b[0], b[1]);
  return TESSEL_LAUNCH_STATUS();
}
extern "C" int run_divergent(float* const* b) {
  TESSEL_LAUNCH(divergent, dim3(1), dim3(8), b[0]);
  return TESSEL_LAUNCH_STATUS();
}
)";

}  // namespace

class TestCudaCodegen : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    dir_ = support::makeTempDir("tessel-cuda-emulation");
    lib_ = std::make_unique<EmulatedLibrary>(dir_, codegen::cudaPrelude() + kHandWritten);
    QVERIFY2(lib_->ok(), lib_->message().c_str());
  }
  void cleanupTestCase() {
    lib_.reset();
    support::removeTree(dir_);
  }

  void emulationSynchronisesAtBarriers() {
    std::vector<std::vector<float>> b = {std::vector<float>(3 * 64, NAN)};
    QCOMPARE(QString::fromStdString(lib_->run("run_rotate", b)), QString());
    for (int block = 0; block < 3; ++block)
      for (int t = 0; t < 64; ++t)
        QCOMPARE(b[0][size_t(block * 64 + t)], 100.0f * float(block) + float((t + 1) % 64));
    // Without the barrier the threads run one after another: a thread reads
    // its neighbour's element before the neighbour has written it.
    std::vector<std::vector<float>> u = {std::vector<float>(64, NAN)};
    QCOMPARE(QString::fromStdString(lib_->run("run_rotate_unsynchronised", u)), QString());
    int right = 0;
    for (int t = 0; t < 64; ++t)
      right += u[0][size_t(t)] == 1000.0f + float((t + 1) % 64);
    QVERIFY2(right < 64, "the emulation hides a missing __syncthreads()");
    // A barrier that not all threads reach fails the launch.
    std::vector<std::vector<float>> d = {std::vector<float>(8, NAN)};
    QVERIFY(lib_->run("run_divergent", d).find("__syncthreads") != std::string::npos);
  }

  void emulationShufflesWarps() {
    std::vector<std::vector<float>> b = {std::vector<float>(96), std::vector<float>(3, NAN)};
    for (int t = 0; t < 96; ++t)
      b[0][size_t(t)] = float(t);
    QCOMPARE(QString::fromStdString(lib_->run("run_warp_sums", b)), QString());
    for (int w = 0; w < 3; ++w)
      QCOMPARE(b[1][size_t(w)], float(32 * w * 32 + 31 * 32 / 2));  // sum of 32w .. 32w + 31
    std::vector<std::vector<float>> m = {std::vector<float>(160), std::vector<float>(160, NAN)};
    for (int t = 0; t < 160; ++t)
      m[0][size_t(t)] = float((t * 37) % 160);  // 159 at t = 113
    QCOMPARE(QString::fromStdString(lib_->run("run_block_max", m)), QString());
    for (int t = 0; t < 160; ++t)
      QCOMPARE(m[1][size_t(t)], 159.0f);
  }

  // The emulation holds vector accesses to the GPU's alignment rule.
  void emulationChecksVectorAlignment() {
    std::vector<std::vector<float>> b = {std::vector<float>(40), std::vector<float>(32, NAN)};
    for (int i = 0; i < 40; ++i)
      b[0][size_t(i)] = float(i);
    QCOMPARE(QString::fromStdString(lib_->run("run_copy4", b)), QString());
    for (int i = 0; i < 32; ++i)
      QCOMPARE(b[1][size_t(i)], float(i));
    QVERIFY(lib_->run("run_copy4_misaligned", b).find("misaligned 16-byte vector access") != std::string::npos);
  }

  // An index is a vector's when it is v + (a multiple of the lanes), also
  // once divisions and remainders by a multiple of the lanes let v out.
  void vectorBasesAreAlignedOnly() {
    using te::var;
    const te::Expr v = var("v"), t = var("t"), o = var("o");
    auto base = [&](const te::Expr& e, int64_t lanes) {
      const auto b = codegen::alignedVectorBase(e, "v", lanes);
      return b ? te::toString(*b) : std::string("none");
    };
    QCOMPARE(base(o * 512 + t * 4 + v, 4), te::toString(lower::simplifyIndex(o * 512 + t * 4)));
    QCOMPARE(base(t * 4 + v + 1, 4), std::string("none"));  // one past a boundary
    QCOMPARE(base(t * 3 + v, 4), std::string("none"));      // strides of 3
    QCOMPARE(base(t * 4 + v * 2, 4), std::string("none"));  // not contiguous
    QCOMPARE(base(t * 4 + v, 2), te::toString(lower::simplifyIndex(t * 4)));
    QCOMPARE(base(t * 8, 4), std::string("none"));  // the same element for every lane
    // A fused fetch index taken apart into rows of 16 (stride 64 in memory).
    const te::Expr fused = t * 4 + v;
    const std::string split = base((fused / 16) * 64 + fused % 16, 4);
    QVERIFY2(split != "none", split.c_str());
    QVERIFY2(split.find('v') == std::string::npos, split.c_str());
    QCOMPARE(base((fused / 6) * 64 + fused % 6, 4), std::string("none"));  // rows of 6 break a vector
  }

  // Cooperative fetches of 2 and 4 elements per thread become float2/float4
  // accesses, and those programs compute the naive program's numbers.
  void cooperativeFetchesUseVectors() {
    Sampled s{te::makeOperator("matmul", {128, 128, 64}), {}};
    schedule::HardwareParams hw;
    hw.target = tessel::target::Target::cuda();
    const std::vector<Sketch> sketches = generateSketches(s.dag, hw);
    std::mt19937_64 rng(5);
    int float4s = 0, float2s = 0;
    for (int i = 0; (s.programs.size() < 6 || !float4s || !float2s) && i < 2000; ++i) {
      try {
        const std::vector<Step> p = annotateSketch(sketches[size_t(i) % sketches.size()], hw, rng);
        const codegen::CudaProgram c = codegen::emitCudaProgram(lower::lowerState(replay(s.dag, p)), "probe");
        // Within 48 KiB of static shared memory: a larger one is a compile error (and skipped by the tuner).
        if (std::any_of(c.kernels.begin(), c.kernels.end(),
                        [](const codegen::CudaKernel& k) { return k.sharedBytes > 48 * 1024; }))
          continue;
        const bool f4 = c.source.find("tessel_load<float4>") != std::string::npos;
        const bool f2 = c.source.find("tessel_load<float2>") != std::string::npos;
        if ((f4 && float4s < 4) || (f2 && float2s < 4)) s.programs.push_back(p), float4s += f4, float2s += f2;
      } catch (const ScheduleError&) {
      }
    }
    QVERIFY2(float4s > 0 && float2s > 0, "no program of 2000 fetches with both float4 and float2 vectors");
    const std::vector<codegen::CudaProgram> programs = emitAll(s);
    const std::vector<std::string> res = runAndCompare(s, programs, concatenated(programs));
    for (size_t i = 0; i < res.size(); ++i)
      QVERIFY2(res[i].empty(), (res[i] + "\n" + programs[i].source).c_str());
    // The device compiler takes them too.
    std::string why;
    if (!codegen::nvrtcAvailable(&why))
      TESSEL_SKIP("nvrtc", ("the host emulation passed; NVRTC is not installed: " + why).c_str());
    std::vector<std::string> sources;
    for (const codegen::CudaProgram& p : programs)
      sources.push_back(p.deviceSource);
    for (const codegen::CudaCompileOutput& out : codegen::compileCuda(sources, {}))
      QVERIFY2(out.error == support::ErrorCode::None, out.message.c_str());
  }

  // Every sampled GPU program, emulated, computes what the naive program does.
  void gpuSketchesRunCorrectly_data() { testing::addGpuSampleRows(); }
  void gpuSketchesRunCorrectly() {
    QFETCH(QString, op);
    QFETCH(QString, shape);
    Sampled s = sampleGpuPrograms(op, shape);
    QVERIFY(s.programs.size() >= 8);
    std::vector<codegen::CudaProgram> programs = emitAll(s);
    bool threads = false, shared = false, reduction = false;
    for (const codegen::CudaProgram& p : programs)
      for (const codegen::CudaKernel& k : p.kernels) {
        threads |= k.block.count() > 1;
        shared |= k.sharedBytes > 0 && k.source.find("__syncthreads();") != std::string::npos;
        reduction |= k.crossThreadReduction && k.source.find("tessel_block_allreduce") != std::string::npos;
      }
    QVERIFY(threads);
    if (op == "matmul" || op == "dense" || op == "conv2d_bias_relu") QVERIFY(shared);
    if (op == "softmax") QVERIFY(reduction);
    std::vector<std::string> res = runAndCompare(s, programs, concatenated(programs));
    for (size_t i = 0; i < res.size(); ++i)
      if (!res[i].empty())
        QFAIL(qPrintable(QString("program %1 %2 failed: %3\n%4")
                             .arg(i)
                             .arg(QString::fromStdString(serializeSteps(s.programs[i])))
                             .arg(QString::fromStdString(res[i]))
                             .arg(QString::fromStdString(programs[i].source))));
  }

  // AutoGTCO's rule on the GPU: the attention's softmax computed per block
  // inside the batch matmul's kernel (one kernel; the normalised rows in
  // shared memory, written by the block's threads between barriers), and the
  // emulated programs compute what the naive program does.
  void softmaxFusedIntoBatchMatmulRunsCorrectly_data() {
    QTest::addColumn<int>("variant");
    QTest::newRow("4-d, scaled (as bert's)") << 0;
    QTest::newRow("3-d, an element-wise stage between") << 1;
  }
  void softmaxFusedIntoBatchMatmulRunsCorrectly() {
    QFETCH(int, variant);
    const testing::AttentionShape shape = variant == 0 ? testing::AttentionShape{2, 24, 16, true, true, false}
                                                       : testing::AttentionShape{3, 20, 12, false, true, true};
    HardwareParams hw;
    hw.target = tessel::target::Target::cuda();
    Sampled s{testing::attentionDag(shape), {}};
    s.programs = testing::sampleRulePrograms(s.dag, hw, 8);
    QVERIFY(s.programs.size() >= 6);
    std::vector<codegen::CudaProgram> programs = emitAll(s);
    bool threads = false;
    for (const codegen::CudaProgram& p : programs) {
      QCOMPARE(p.kernels.size(), size_t(1));
      const codegen::CudaKernel& k = p.kernels[0];
      QVERIFY2(k.sharedBytes >= shape.seq * 4 && k.source.find("__syncthreads();") != std::string::npos,
               p.source.c_str());
      threads |= k.block.count() > 1 && k.source.find("T_softmax_shared") != std::string::npos;
    }
    QVERIFY(threads);
    std::vector<std::string> res = runAndCompare(s, programs, concatenated(programs));
    for (size_t i = 0; i < res.size(); ++i)
      QVERIFY2(res[i].empty(), (serializeSteps(s.programs[i]) + "\n" + res[i] + "\n" + programs[i].source).c_str());
  }

  // Hand-written GPU schedules with uneven splits (test_schedules.cpp's
  // everyStepMatchesNaive): guards on blockIdx/threadIdx loops, shared caches
  // filled by one thread, a cross-thread reduction with a partial last step.
  void handWrittenGpuSchedulesRunCorrectly() {
    Sampled s{te::makeOperator("matmul", {30, 20, 17}), {}};
    s.programs = {
        {SplitStep{2, 0, {2, 5}}, SplitStep{2, 3, {2, 5}}, ReorderStep{2, {0, 3, 1, 4, 2, 5, 6}}, FuseStep{2, {0, 1}},
         AnnotationStep{2, 0, Annotation::BlockX}, AnnotationStep{2, 1, Annotation::VThread},
         AnnotationStep{2, 3, Annotation::ThreadX}, CacheReadStep{0, Scope::Shared, {2}},
         CacheReadStep{2, Scope::Shared, {3}}, ComputeAtStep{1, 4, 0}, ComputeAtStep{3, 4, 0}},
        {SplitStep{2, 2, {8}}, AnnotationStep{2, 3, Annotation::ThreadX}, AnnotationStep{2, 0, Annotation::BlockX}},
    };
    std::vector<codegen::CudaProgram> programs = emitAll(s);
    QVERIFY(programs[1].kernels.back().crossThreadReduction);
    std::vector<std::string> res = runAndCompare(s, programs, concatenated(programs));
    for (size_t i = 0; i < res.size(); ++i)
      QVERIFY2(res[i].empty(), (res[i] + "\n" + programs[i].source).c_str());
  }

  // The barriers the generator places are what makes the shared-memory
  // programs right: without them the emulation computes wrong numbers.
  void barriersAreNeeded() {
    Sampled s = sampleGpuPrograms("matmul", "64,48,40");
    std::vector<codegen::CudaProgram> programs = emitAll(s);
    std::vector<codegen::CudaProgram> racy;
    for (codegen::CudaProgram p : programs) {
      bool cooperative = false;
      for (const codegen::CudaKernel& k : p.kernels)
        cooperative |= k.sharedBytes > 0 && k.block.count() > 1;
      if (!cooperative) continue;
      for (size_t at; (at = p.source.find("__syncthreads();")) != std::string::npos;)
        p.source.erase(at, std::string("__syncthreads();").size());
      racy.push_back(p);
    }
    QVERIFY(!racy.empty());
    std::vector<std::string> res = runAndCompare(s, racy, concatenated(racy));
    QVERIFY2(std::any_of(res.begin(), res.end(), [](const std::string& r) { return !r.empty(); }),
             "every program is right without its barriers");
  }

  // Every sampled program compiles for sm_90, and ptxas reports the shared
  // memory the kernel descriptions say.
  void nvccCompilesGpuSketches_data() { testing::addGpuSampleRows(); }
  void nvccCompilesGpuSketches() {
    QFETCH(QString, op);
    QFETCH(QString, shape);
    if (!QFile::exists(kNvcc)) TESSEL_SKIP("nvcc", "no CUDA toolkit: /usr/local/cuda/bin/nvcc is absent");
    Sampled s = sampleGpuPrograms(op, shape);
    std::vector<codegen::CudaProgram> programs = emitAll(s);
    const std::string base = dir_ + "/" + op.toStdString();
    std::ofstream(base + ".cu") << concatenated(programs);
    support::ProcessResult r = support::runProcess(
        {kNvcc, "-arch=sm_90", "-cubin", "-Xptxas", "-v", "-o", base + ".cubin", base + ".cu"}, 600);
    QVERIFY2(r.ok(), r.output.substr(0, 4000).c_str());
    std::map<std::string, int64_t> smem = ptxasSharedBytes(r.output);
    for (const codegen::CudaProgram& p : programs)
      for (const codegen::CudaKernel& k : p.kernels) {
        QVERIFY2(smem.count(k.name), ("ptxas did not compile " + k.name).c_str());
        QCOMPARE(smem[k.name], k.sharedBytes);
      }
  }

 private:
  std::string dir_;
  std::unique_ptr<EmulatedLibrary> lib_;
};

QTEST_APPLESS_MAIN(TestCudaCodegen)
#include "test_cuda_codegen.moc"
