// foldConstants(): evaluates nodes whose inputs are all constant (and Shape,
// which needs only its input's static shape) into initializers, then removes
// the nodes nobody needs.
#include <set>

#include "graph/const_eval.h"
#include "graph/graph.h"
#include "graph/op_registry.h"

namespace tessel::graph {

namespace {

// Replaces foldable nodes by initializers, whose names go to `created`.
void foldNodes(Graph& g, std::set<std::string>& created) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (Node& n : g.nodes) {
    size_t definedOutputs = 0;
    for (const std::string& o : n.outputs)
      definedOutputs += !o.empty();
    bool foldable = definedOutputs == 1 && !n.outputs[0].empty();
    const OpDef* def = findOp(n.op);
    const bool fromShapes = def && def->evalFromShapes;  // Shape: its input need not be constant
    std::vector<ConstTensor> storage;
    storage.reserve(n.inputs.size());
    std::vector<const ConstTensor*> in;
    std::vector<const ValueInfo*> inInfo;
    bool allConst = true;
    for (const std::string& name : n.inputs) {
      auto v = g.values.find(name);
      inInfo.push_back(name.empty() || v == g.values.end() ? nullptr : &v->second);
      auto it = name.empty() ? g.initializers.end() : g.initializers.find(name);
      if (it != g.initializers.end() && it->second.hasData() && foldable && !fromShapes) {
        storage.push_back(constFromInitializer(it->second));
        in.push_back(&storage.back());
      } else {
        in.push_back(nullptr);
        allConst = allConst && name.empty();
      }
    }
    if (foldable && (allConst || fromShapes) && g.values.count(n.outputs[0])) {
      std::optional<std::vector<ConstTensor>> r = evaluateNode(n, in, inInfo, {g.value(n.outputs[0])});
      if (r && !r->empty()) {
        Initializer init = initializerFromConst((*r)[0]);
        init.info.name = n.outputs[0];
        g.initializers[n.outputs[0]] = std::move(init);
        created.insert(n.outputs[0]);
        continue;
      }
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
}

// Removes nodes none of whose outputs reach a graph output.
void removeDeadNodes(Graph& g) {
  std::set<std::string> needed(g.outputs.begin(), g.outputs.end());
  std::vector<bool> live(g.nodes.size(), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    for (const std::string& o : g.nodes[i].outputs)
      if (!o.empty() && needed.count(o)) live[i] = true;
    if (live[i]) needed.insert(g.nodes[i].inputs.begin(), g.nodes[i].inputs.end());
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (live[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

std::set<std::string> referenced(const Graph& g) {
  std::set<std::string> used(g.outputs.begin(), g.outputs.end());
  for (const Node& n : g.nodes)
    used.insert(n.inputs.begin(), n.inputs.end());
  return used;
}

}  // namespace

void foldConstants(Graph& g) {
  inferShapes(g);
  std::set<std::string> usedBefore = referenced(g);
  std::set<std::string> created;
  foldNodes(g, created);  // one pass: nodes are in topological order
  removeDeadNodes(g);
  // Initializers only the folded or removed nodes read go too, as do folded
  // values whose consumers were folded in turn.
  std::set<std::string> usedAfter = referenced(g);
  for (auto it = g.initializers.begin(); it != g.initializers.end();)
    if (!usedAfter.count(it->first) && (usedBefore.count(it->first) || created.count(it->first)))
      it = g.initializers.erase(it);
    else
      ++it;
  inferShapes(g);
}

}  // namespace tessel::graph
