// The lowered program: a loop nest over flat buffers. Code generators (C++,
// CUDA) print it; feature extraction walks it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "schedule/state.h"
#include "te/expr.h"

namespace tessel::lower {

enum class ForKind : uint8_t { Serial, Parallel, Vectorized, Unrolled, VThread, BlockIdx, ThreadIdx };

struct StmtNode;
using Stmt = std::shared_ptr<StmtNode>;

struct StmtNode {
  enum Kind : uint8_t { For, Seq, Store, If, Alloc } kind;
  // For
  std::string loopVar;
  int64_t extent = 0;
  ForKind forKind = ForKind::Serial;
  char axis = 'x';  // blockIdx/threadIdx axis
  // Store: buffer[index] = value. Alloc: a buffer of `size` elements in `scope`.
  std::string buffer;
  te::Expr index, value;
  int64_t size = 0;
  schedule::Scope scope = schedule::Scope::Global;
  // If
  te::Expr cond;
  // For, Seq, If
  std::vector<Stmt> body;
};

Stmt makeFor(std::string var, int64_t extent, ForKind kind, std::vector<Stmt> body, char axis = 'x');
Stmt makeSeq(std::vector<Stmt> body);
Stmt makeStore(std::string buffer, te::Expr index, te::Expr value);
Stmt makeIf(te::Expr cond, std::vector<Stmt> body);
Stmt makeAlloc(std::string buffer, int64_t size, schedule::Scope scope);

struct Buffer {
  std::string name;         // a C identifier
  int64_t size = 0;         // elements (float32)
  bool layoutFree = false;  // an input the kernel may read in a packed layout
};

// The layout a kernel reads one constant input in (lower/layout_rewrite.h):
// element (i_0, ..., i_n) of the packed buffer, row-major over `dims`, holds
// plain element plainOffset + sum(i_d * dims[d].plainStride), or 0 where that
// falls outside the plain tensor.
struct PackedLayout {
  struct Dim {
    int64_t extent = 1;
    int64_t plainStride = 0;  // elements
  };
  size_t arg = 0;           // index into LoweredFunc::args
  int64_t plainSize = 0;    // elements of the tensor as given
  int64_t plainOffset = 0;  // elements
  std::vector<Dim> dims;    // outermost first
  int64_t size() const;     // elements of the packed buffer
};

// One kernel: `args` are the inputs then the outputs (the calling
// convention), `temps` intermediate buffers the kernel allocates itself.
// An input listed in `packed` is passed in its packed layout (args[i].size is
// then the packed size).
struct LoweredFunc {
  std::vector<Buffer> args;
  size_t numInputs = 0;
  std::vector<Buffer> temps;
  Stmt body;
  std::vector<PackedLayout> packed;
};

// Lowers a scheduled state to its loop nest (bound inference, inlining,
// reductions split into init and update). Throws schedule::ScheduleError for
// a program that cannot be instantiated.
LoweredFunc lowerState(const schedule::State& state);

// Bytes of shared memory the function allocates (GPU limit checks).
int64_t sharedMemoryBytes(const LoweredFunc& f);

// A C identifier for a stage, iterator or buffer name ("C.local" -> "C_local").
std::string cIdent(const std::string& name);

// Readable dump of a loop nest (for the code view and tests).
std::string toString(const Stmt& s);

}  // namespace tessel::lower
