#include "fusion/task_extraction.h"

#include <cctype>
#include <map>

#include "fusion/op_pattern.h"
#include "graph/op_registry.h"
#include "target/target.h"

namespace tessel::fusion {

te::ComputeDAG canonicalizeNames(const te::ComputeDAG& dag) {
  // Two passes through temporary names, so a new name never meets an old one.
  std::map<std::string, std::string> temp, final;
  int inputs = 0, stages = 0, k = 0;
  for (const te::Op& op : dag.ops()) {
    std::string t = "tessel_tmp_";
    t += std::to_string(k++);
    std::string name = op.placeholder ? "in" : "t";
    name += std::to_string(op.placeholder ? inputs++ : stages++);
    temp[op.name] = t;
    final[t] = name;
  }
  auto renameLoads = [](te::Expr body, const std::map<std::string, std::string>& names) {
    for (const auto& [from, to] : names) {
      const std::string target = to;
      body = te::rewriteLoads(body, from, [&](const std::vector<te::Expr>& idx) { return te::load(target, idx); });
    }
    return body;
  };
  std::vector<te::Op> ops;
  for (te::Op op : dag.ops()) {
    op.name = final.at(temp.at(op.name));
    if (!op.placeholder) op.body = renameLoads(renameLoads(op.body, temp), final);
    ops.push_back(std::move(op));
  }
  std::vector<std::string> outputs;
  for (const std::string& o : dag.outputs())
    outputs.push_back(final.at(temp.at(o)));
  return te::ComputeDAG(std::move(ops), std::move(outputs));
}

std::vector<GraphTask> extractTasks(const graph::Graph& g, const FusionPlan& plan,
                                    const graph::LoweringOptions& options) {
  std::vector<GraphTask> tasks;
  std::map<std::string, size_t> byKey;
  const graph::LoweringContext context = graph::makeLoweringContext(g, options);
  for (size_t gi = 0; gi < plan.groups.size(); ++gi) {
    const std::vector<size_t>& group = plan.groups[gi];
    bool views = true;
    for (size_t n : group)
      views &= isView(g.nodes[n]);
    if (views) continue;
    GraphTask t;
    for (size_t n : group) {
      t.ops.push_back(g.nodes[n].op);
      std::string s = graph::taskNameOf(g, g.nodes[n]);
      if (isView(g.nodes[n])) continue;
      if (!t.name.empty()) t.name += '_';
      t.name += s;
    }
    for (size_t n : group)
      if (graph::opOf(g.nodes[n]).image) t.layout = te::layoutName(options.imageLayout);
    graph::LoweredSubgraph lowered = graph::lowerSubgraph(g, group, options, context);
    t.dag = canonicalizeNames(lowered.dag);
    if (!t.dag.outputs().empty()) t.shape = t.dag.op(t.dag.outputs().front()).shape;
    t.key = task::workloadKey(t.name, t.shape, t.dag);
    t.flops = t.dag.flops();
    auto [it, fresh] = byKey.insert({t.key, tasks.size()});
    if (fresh) tasks.push_back(std::move(t));
    tasks[it->second].weight += 1;
    tasks[it->second].groups.push_back(gi);
  }
  return tasks;
}

task::SearchTask toSearchTask(const GraphTask& t, const target::Target& target) {
  task::SearchTask s;
  s.op = t.name;
  s.shape = t.shape;
  s.target = target;
  s.layout = t.layout;
  s.dag = t.dag;
  s.key = t.key;
  s.flops = t.flops;
  return s;
}

std::string taskLabel(const std::string& name, const std::vector<int64_t>& shape) {
  std::string label = name;
  for (size_t i = 0; i < shape.size(); ++i) {
    label += i ? 'x' : ' ';  // (not a string + to_string(): GCC 12 warns -Wrestrict on it)
    label += std::to_string(shape[i]);
  }
  return label;
}

}  // namespace tessel::fusion
