// pretransposeGemmWeights(): a Linear layer exported as Gemm(transB=1) keeps
// its weights as [N, K], so the kernel's output columns have stride K in them
// and no vector register tile runs along the columns (each output would be a
// dot product along K). The weights are constants: transposing them once, when
// the model is loaded, gives [K, N] and transB=0, the layout the tiled
// multiply wants (Ansor's layout rewrite for dense, done on the graph).
#include "graph/graph.h"

namespace tessel::graph {

namespace {

bool transposeOne(Graph& g, size_t ni) {
  Node& n = g.nodes[ni];
  if (n.op != "Gemm" || n.inputs.size() < 2 || n.attrInt("transB", 0) == 0) return false;
  const std::string& b = n.inputs[1];
  if (!g.isInitializer(b)) return false;
  const Initializer& src = g.initializers.at(b);
  if (src.info.dtype != DType::Float32 || src.info.shape.size() != 2) return false;
  const int64_t rows = src.info.shape[0], cols = src.info.shape[1];  // [N, K]
  Initializer t = src;
  t.materialise();
  const std::vector<float> nk = t.data;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      t.data[size_t(c * rows + r)] = nk[size_t(r * cols + c)];
  t.info.shape = {cols, rows};
  // Another reader (or a graph output) keeps the original; this Gemm reads a copy.
  const std::string name = g.usedElsewhere(b, ni) ? uniqueInitializerName(g, b + "_kn") : b;
  t.info.name = name;
  g.initializers[name] = std::move(t);
  n.inputs[1] = name;
  n.attrs["transB"] = int64_t(0);
  return true;
}

}  // namespace

void pretransposeGemmWeights(Graph& g) {
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    changed |= transposeOne(g, i);
  if (changed) inferShapes(g);
}

}  // namespace tessel::graph
