#include "codegen/cpu_features.h"

namespace tessel::codegen {

VectorIsa vectorIsa(const target::Target& target) {
  return {target.vectorIsaName(), target.vectorLanes, target.vectorRegisters};
}

const VectorIsa& nativeVectorIsa() {
  static const VectorIsa isa = vectorIsa(target::Target::host());
  return isa;
}

std::vector<std::string> kernelCompilerFlags(const target::Target& target) {
  return target.compilerFlags();
}

std::vector<std::string> referenceCompilerFlags() {
  return {"-O2", "-std=c++17", "-w"};
}

}  // namespace tessel::codegen
