#include "codegen/cpp_codegen.h"

#include <sstream>

#include "codegen/register_tile.h"

namespace tessel::codegen {

using lower::ForKind;
using lower::Stmt;
using lower::StmtNode;

namespace {

// Local buffers up to this many floats live on the stack (OpenMP threads
// have small stacks); larger ones on the heap.
constexpr int64_t kStackFloats = 16384;

bool containsLoop(const Stmt& s) {
  for (const Stmt& b : s->body)
    if (b->kind == StmtNode::For || containsLoop(b)) return true;
  return false;
}

class Emitter {
 public:
  Emitter(std::ostringstream& os, const CppOptions& options) : os_(os), options_(options) {}

  void stmt(const Stmt& s, int depth, bool inParallel) {
    std::string pad(size_t(depth) * 2, ' ');
    switch (s->kind) {
      case StmtNode::Seq:
        for (const Stmt& b : s->body)
          stmt(b, depth, inParallel);
        return;
      case StmtNode::Store:
        os_ << pad << s->buffer << "[" << te::toString(s->index) << "] = " << te::toString(s->value) << ";\n";
        return;
      case StmtNode::If:
        os_ << pad << "if (" << te::toString(s->cond) << ") {\n";
        for (const Stmt& b : s->body)
          stmt(b, depth + 1, inParallel);
        os_ << pad << "}\n";
        return;
      case StmtNode::Alloc:
        if (s->size <= kStackFloats) {
          os_ << pad << "alignas(64) float " << s->buffer << "[" << s->size << "];\n";
        } else {
          os_ << pad << "std::unique_ptr<float[]> " << s->buffer << "_owner(new float[" << s->size << "]);\n";
          os_ << pad << "float* __restrict__ " << s->buffer << " = " << s->buffer << "_owner.get();\n";
        }
        return;
      case StmtNode::For: {
        if (options_.registerTiles)
          if (std::optional<std::string> tile = emitRegisterTile(s, depth, options_.isa)) {
            os_ << *tile;
            return;
          }
        bool parallel = false;
        switch (s->forKind) {
          case ForKind::Parallel:
            if (!inParallel) {
              os_ << pad << "#pragma omp parallel for schedule(static)\n";
              parallel = true;
            }
            break;
          case ForKind::Vectorized:
            if (!containsLoop(s)) os_ << pad << "#pragma omp simd\n";
            break;
          case ForKind::Unrolled:
            os_ << pad << "#pragma GCC unroll " << std::min<int64_t>(s->extent, 512) << "\n";
            break;
          case ForKind::BlockIdx:
            os_ << pad << "// blockIdx." << s->axis << "\n";
            break;
          case ForKind::ThreadIdx:
            os_ << pad << "// threadIdx." << s->axis << "\n";
            break;
          case ForKind::VThread:
            os_ << pad << "// vthread\n";
            break;
          case ForKind::Serial:
            break;
        }
        os_ << pad << "for (int " << s->loopVar << " = 0; " << s->loopVar << " < " << s->extent << "; ++" << s->loopVar
            << ") {\n";
        for (const Stmt& b : s->body)
          stmt(b, depth + 1, inParallel || parallel);
        os_ << pad << "}\n";
        return;
      }
    }
  }

 private:
  std::ostringstream& os_;
  const CppOptions& options_;
};

// e^x and erf(x) for the expressions' expf and erff (te::fnName, which the
// task keys hash: the names stay, macros defined after <cmath> redirect
// them): arithmetic and bitwise selects only, no libm call and no branch, so
// that GCC and clang vectorise the loops that call them. glibc's expf and
// erff are scalar calls without -ffast-math: a GELU over BERT-Tiny's 65,536
// activations took 0.83 ms with erff, 0.06 ms with these, one thread of a Zen
// 4. The selects are bitwise because with GCC's default -ftrapping-math a
// conditional expression stays a branch on AVX2 (GCC moves the arithmetic
// after it into its arms, and may not speculate it), and the loop scalar.
//  - e^x = 2^n e^r, n = round(x / ln 2) (adding 1.5 * 2^23 rounds to nearest),
//    r in two parts (Cody-Waite), |r| <= ln2 / 2; e^r by its degree-6 Taylor
//    polynomial; 2^n in two halves, so n = 128 (x up to 88.72) fits. Relative
//    error below 2.5e-7 (2 ulp); inf above 88.72, 0 below -87.3, NaN stays.
//  - erf: below |x| = 0.5 its odd Taylor series to x^13 (relative error below
//    1e-7), above Abramowitz and Stegun's 7.1.26 (absolute error below 3.5e-7
//    with this exp); both computed, one selected.
std::string mathPrelude() {
  return R"(static inline float tessel_select(bool c, float a, float b) {
  const int m = -(int)c;
  return __builtin_bit_cast(float, (__builtin_bit_cast(int, a) & m) | (__builtin_bit_cast(int, b) & ~m));
}
static inline float tessel_expf(float x) {
  const float c = tessel_select(x > 88.72f, 88.72f, tessel_select(x < -87.3f, -87.3f, x));
  const float n = (c * 1.44269504f + 12582912.0f) - 12582912.0f;
  const float r = (c - n * 0.693359375f) + n * 2.12194440e-4f;
  const float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.6666667e-1f + r * (4.1666668e-2f + r * (8.3333338e-3f +
                  r * 1.3888889e-3f)))));
  const int k = (int)n, h = k >> 1;
  const float y = p * __builtin_bit_cast(float, (h + 127) << 23) * __builtin_bit_cast(float, (k - h + 127) << 23);
  return tessel_select(x > 88.72f, __builtin_inff(), tessel_select(x < -87.3f, 0.0f, y));
}
static inline float tessel_erff(float x) {
  const int sign = __builtin_bit_cast(int, x) & (int)0x80000000;
  const float a = __builtin_bit_cast(float, __builtin_bit_cast(int, x) & 0x7fffffff), x2 = x * x;
  const float small = x * (1.12837917f + x2 * (-0.376126389f + x2 * (0.112837917f + x2 * (-0.0268661706f +
                      x2 * (0.00522397763f + x2 * (-0.000854832702f + x2 * 0.00012055333f))))));
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  const float tail = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f +
                     t * 1.061405429f))));
  const float big = __builtin_bit_cast(float, __builtin_bit_cast(int, 1.0f - tail * tessel_expf(-x2)) | sign);
  return tessel_select(a < 0.5f, small, big);
}
#define expf(x) tessel_expf(x)
#define erff(x) tessel_erff(x)
)";
}

}  // namespace

std::string cppPrelude() {
  return "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n#include <cstdlib>\n#include <memory>\n"
         "#include <new>\n\n"
         "// Float min and max as comparisons GCC vectorises (fminf/fmaxf are calls without\n"
         "// -ffast-math); a NaN in either operand gives NaN, as in numpy and PyTorch.\n"
         "static inline float tessel_maxf(float a, float b) { return (a > b || a != a) ? a : b; }\n"
         "static inline float tessel_minf(float a, float b) { return (a < b || a != a) ? a : b; }\n" +
         mathPrelude() + registerTilePrelude() + "\n";
}

CppOptions::CppOptions() : isa(nativeVectorIsa()) {}

CppOptions::CppOptions(const target::Target& target) : isa(vectorIsa(target)) {}

std::string emitCppKernel(const lower::LoweredFunc& f, const std::string& symbol, const CppOptions& options) {
  std::ostringstream os;
  os << "extern \"C\" int " << symbol << "(float* const* args) {\n";
  for (size_t i = 0; i < f.args.size(); ++i)
    os << "  float* __restrict__ " << f.args[i].name << " = args[" << i << "];  // " << f.args[i].size
       << (i < f.numInputs ? " in" : " out") << "\n";
  for (const lower::Buffer& t : f.temps) {
    os << "  std::unique_ptr<float[]> " << t.name << "_owner(new (std::nothrow) float[" << t.size << "]);\n";
    os << "  if (!" << t.name << "_owner) return 1;\n";
    os << "  float* __restrict__ " << t.name << " = " << t.name << "_owner.get();\n";
  }
  Emitter(os, options).stmt(f.body, 1, false);
  os << "  return 0;\n}\n";
  return os.str();
}

std::string emitCppPack(const lower::LoweredFunc& f, const std::string& symbol) {
  if (f.packed.empty()) return "";
  std::ostringstream os;
  os << "extern \"C\" int " << symbol << "(float* const* plain, float* const* packed) {\n";
  for (const lower::PackedLayout& p : f.packed) {
    const std::string& name = f.args.at(p.arg).name;
    os << "  {  // " << name << ": " << p.plainSize << " elements -> " << p.size() << "\n";
    os << "    const float* __restrict__ in = plain[" << p.arg << "];\n";
    os << "    float* __restrict__ out = packed[" << p.arg << "];\n";
    os << "    int64_t at = 0;\n";
    std::string pad = "    ", source = std::to_string(p.plainOffset);
    for (size_t d = 0; d < p.dims.size(); ++d) {
      const std::string v = "i" + std::to_string(d);
      os << pad << "for (int64_t " << v << " = 0; " << v << " < " << p.dims[d].extent << "; ++" << v << ")\n";
      pad += "  ";
      source += " + " + v + " * " + std::to_string(p.dims[d].plainStride);
    }
    os << pad << "{\n";
    os << pad << "  const int64_t from = " << source << ";\n";
    os << pad << "  out[at++] = from >= 0 && from < " << p.plainSize << " ? in[from] : 0.0f;\n";
    os << pad << "}\n";
    os << "  }\n";
  }
  os << "  return 0;\n}\n";
  return os.str();
}

std::string packSymbol(const std::string& kernelSymbol) {
  return kernelSymbol + "_pack";
}

std::string emitCppKernelAndPack(const lower::LoweredFunc& f, const std::string& symbol, const CppOptions& options) {
  std::string code = emitCppKernel(f, symbol, options);
  if (!f.packed.empty()) code += "\n" + emitCppPack(f, packSymbol(symbol));
  return code;
}

}  // namespace tessel::codegen
