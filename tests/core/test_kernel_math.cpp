// The generated C++ kernels' expf and erff (codegen/cpp_codegen.cpp's math
// prelude): compiled by the real compiler from the prelude as every kernel
// includes it, swept against double-precision std::exp and std::erf, and
// checked to vectorise (no call left in a loop over them), which is why they
// replace libm's.
#include <QtTest>
#include <fstream>
#include <sstream>

#include "codegen/cpp_codegen.h"
#include "support/subprocess.h"
#include "target/target.h"
#include "tessel_test.h"

using namespace tessel;

namespace {

std::string compiler() {
  const char* cxx = std::getenv("TESSEL_CXX");
  return cxx && *cxx ? cxx : "c++";
}

// A program that prints, for the prelude's functions, the largest errors
// over a sweep and their values at special points.
const char* kSweep = R"(
#include <cstdio>
int main() {
  double expRel = 0, erfAbs = 0, erfSmallRel = 0;
  for (double x = -87.0; x <= 88.7; x += 0.000731) {
    const double want = std::exp(double(float(x)));
    expRel = std::max(expRel, std::fabs(double(expf(float(x))) - want) / want);
  }
  for (double x = -7.0; x <= 7.0; x += 0.0000371) {
    const float f = float(x);
    const double want = std::erf(double(f)), err = std::fabs(double(erff(f)) - want);
    erfAbs = std::max(erfAbs, err);
    if (std::fabs(x) < 0.5 && want != 0) erfSmallRel = std::max(erfSmallRel, err / std::fabs(want));
  }
  std::printf("%.9g %.9g %.9g\n", expRel, erfAbs, erfSmallRel);
  std::printf("%g %g %g %g %g %g %g\n", expf(NAN), expf(100.f), expf(-100.f), expf(0.f), erff(NAN), erff(-9.f),
              erff(1e-30f));
}
)";

// A GELU loop, as a fused kernel computes it.
const char* kLoop = R"(
extern "C" void gelu(float* __restrict__ out, const float* __restrict__ in, int n) {
  for (int i = 0; i < n; ++i) out[i] = 0.5f * in[i] * (1.0f + erff(in[i] * 0.707106781f)) * expf(-in[i]);
}
)";

}  // namespace

class TestKernelMath : public QObject {
  Q_OBJECT

 private slots:
  void matchesLibmWithinAFewUlps() {
    const std::string dir = support::makeTempDir("tessel-kernel-math");
    std::ofstream(dir + "/sweep.cpp") << codegen::cppPrelude() << kSweep;
    const support::ProcessResult built =
        support::runProcess({compiler(), "-O2", "-std=c++17", "-o", dir + "/sweep", dir + "/sweep.cpp"}, 300);
    QVERIFY2(built.ok(), built.output.c_str());
    const support::ProcessResult ran = support::runProcess({dir + "/sweep"}, 60);
    QVERIFY2(ran.ok(), ran.output.c_str());
    std::istringstream in(ran.output);
    double expRel = 1, erfAbs = 1, erfSmallRel = 1;
    in >> expRel >> erfAbs >> erfSmallRel;
    QVERIFY2(expRel < 3e-7, ran.output.c_str());       // 2.5 ulp
    QVERIFY2(erfAbs < 4e-7, ran.output.c_str());       // Abramowitz and Stegun 7.1.26 with this exp
    QVERIFY2(erfSmallRel < 2e-7, ran.output.c_str());  // the Taylor series below 0.5
    std::string nan, inf, zero, one, erfNan, minusOne, tiny;
    in >> nan >> inf >> zero >> one >> erfNan >> minusOne >> tiny;
    // NaN stays NaN (x86 computes the default NaN with its sign bit set).
    QVERIFY2(nan == "nan" || nan == "-nan", nan.c_str());
    QCOMPARE(inf, std::string("inf"));
    QCOMPARE(zero, std::string("0"));
    QCOMPARE(one, std::string("1"));
    QVERIFY2(erfNan == "nan" || erfNan == "-nan", erfNan.c_str());
    QCOMPARE(minusOne, std::string("-1"));
    QCOMPARE(tiny, std::string("1.12838e-30"));
  }

  // The point of them: the loop compiles to vector code with no call in it
  // (glibc's expf and erff are scalar calls without -ffast-math).
  void loopsOverThemVectorise() {
    const std::string dir = support::makeTempDir("tessel-kernel-math");
    std::ofstream(dir + "/loop.cpp") << codegen::cppPrelude() << kLoop;
    // The flags the kernels of an AVX2 target are built with (AVX-512's masks
    // if-convert more; AVX2 is where the flags matter).
    std::vector<std::string> cmd = {compiler()};
    for (const std::string& flag : target::parseTarget("cpu -arch=x86-64-v3").compilerFlags())
      cmd.push_back(flag);
    cmd.insert(cmd.end(), {"-S", "-o", dir + "/loop.s", dir + "/loop.cpp"});
    const support::ProcessResult built = support::runProcess(cmd, 300);
    QVERIFY2(built.ok(), built.output.c_str());
    std::ifstream s(dir + "/loop.s");
    std::string line;
    int calls = 0, vectorOps = 0;
    for (bool inGelu = false; std::getline(s, line);) {
      if (line.rfind("gelu:", 0) == 0) inGelu = true;
      if (!inGelu) continue;
      if (line.find(".cfi_endproc") != std::string::npos) break;
      calls += line.find("call") != std::string::npos;
      vectorOps += line.find("%ymm") != std::string::npos;
    }
    QCOMPARE(calls, 0);
    QVERIFY2(vectorOps > 20, qPrintable(QString::number(vectorOps)));
  }
};

QTEST_APPLESS_MAIN(TestKernelMath)
#include "test_kernel_math.moc"
