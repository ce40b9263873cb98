// tessel inspect MODEL: the graph, its fusion into partitions and its tasks.
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "fusion/fusion_plan.h"
#include "fusion/task_extraction.h"
#include "graph/graph.h"
#include "model_loader.h"
#include "task/search_task.h"
#include "tuning_options.h"

namespace tessel::cli {

namespace {

const char* kHelp =
    "usage: tessel inspect MODEL [--fusion rule|dp|none] [--target T] [--dot FILE] [--json]\n"
    "\n"
    "MODEL is a zoo name (tessel models), a .onnx file or a TorchScript .pt file.\n"
    "Prints the model's nodes, parameters and FLOPs, its partitions (fused\n"
    "subgraphs) and tasks (distinct partitions, with their weight).\n"
    "\n"
    "options:\n"
    "  --fusion rule|dp|none  rule: TVM-style by op pattern; dp: AutoGTCO's dynamic\n"
    "                         programming (default), never worse on its estimate; none\n"
    "  --target T             a target string (cpu, cuda, \"cpu -arch=x86-64-v2\", ...): decides\n"
    "                         the tasks' layout (default cpu: NHWC convolutions)\n"
    "  --arch A               the target's arch, as -arch=A in --target\n"
    "  --dot FILE             the graph as Graphviz DOT, partitions as clusters\n"
    "  --input-shapes A,B;C,D  the shapes of the model's inputs: needed for a\n"
    "               TorchScript model, and to size an ONNX model's symbolic dimensions\n"
    "  --json                 one JSON object: model, nodes, params, flops, partitions, tasks\n"
    "\n"
    "examples:\n"
    "  tessel inspect resnet18\n"
    "  tessel inspect bert_tiny --fusion rule --dot bert.dot\n";

std::string shapeText(const std::vector<int64_t>& s) {
  std::string out;
  for (int64_t v : s) {
    if (!out.empty()) out += 'x';
    out += std::to_string(v);
  }
  return out;
}

std::string dotEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

void writeDot(const std::string& path, const graph::Graph& g, const fusion::FusionPlan& plan,
              const std::map<size_t, std::string>& taskOfGroup) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << "digraph \"" << dotEscape(g.name) << "\" {\n  rankdir=TB;\n  node [shape=box, style=rounded, fontsize=10];\n";
  for (size_t gi = 0; gi < plan.groups.size(); ++gi) {
    out << "  subgraph cluster_" << gi << " {\n    style=filled; color=\"/pastel19/" << (gi % 9) + 1 << "\"; label=\""
        << dotEscape(taskOfGroup.count(gi) ? taskOfGroup.at(gi) : "view") << "\";\n";
    for (size_t n : plan.groups[gi]) {
      const graph::Node& node = g.nodes[n];
      std::string shape =
          node.outputs.empty() || !g.values.count(node.outputs[0]) ? "" : shapeText(g.value(node.outputs[0]).shape);
      out << "    n" << n << " [label=\"" << dotEscape(node.op) << "\\n"
          << shape << "\", tooltip=\"" << dotEscape(node.name) << "\"];\n";
    }
    out << "  }\n";
  }
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& o : g.nodes[i].outputs)
      producer[o] = i;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& in : g.nodes[i].inputs)
      if (auto it = producer.find(in); it != producer.end()) out << "  n" << it->second << " -> n" << i << ";\n";
  out << "}\n";
}

}  // namespace

OptionSpec inspectOptions() {
  return {{"fusion", "target", "arch", "dot", "input-shapes"}, {"json", "help"}};
}

std::string inspectHelp() {
  return kHelp;
}

int inspectCommand(const std::vector<std::string>& argv) {
  Args args(argv, inspectOptions());
  // Any kind: cuda's tasks can be inspected, not tuned.
  const target::Target target = targetOfArgs(args);
  PreparedModel m = prepareModel(args, target);
  const graph::Graph& g = m.graph;
  const fusion::FusionPlan& plan = m.plan;
  const std::vector<fusion::GraphTask>& tasks = m.tasks;
  std::map<size_t, std::string> taskOfGroup;
  for (const auto& t : tasks)
    for (size_t gi : t.groups)
      taskOfGroup[gi] = t.key;
  if (args.has("dot")) writeDot(args.get("dot"), g, plan, taskOfGroup);

  if (args.has("json")) {
    nlohmann::json j;
    j["model"] = m.name;
    j["assumptions"] = g.assumptions;
    j["nodes"] = m.nodes;
    j["params"] = m.params;
    j["flops"] = m.flops;
    j["fusion"] = m.fusion;
    j["target"] = target.str();
    j["estimated_ms"] = plan.estimatedSeconds * 1e3;
    nlohmann::json parts = nlohmann::json::array();
    for (size_t gi = 0; gi < plan.groups.size(); ++gi) {
      nlohmann::json names = nlohmann::json::array(), ops = nlohmann::json::array();
      for (size_t n : plan.groups[gi]) {
        names.push_back(g.nodes[n].name);
        ops.push_back(g.nodes[n].op);
      }
      parts.push_back({{"id", gi},
                       {"nodes", names},
                       {"ops", ops},
                       {"task", taskOfGroup.count(gi) ? nlohmann::json(taskOfGroup[gi]) : nlohmann::json()}});
    }
    j["partitions"] = parts;
    nlohmann::json ts = nlohmann::json::array();
    for (const auto& t : tasks)
      ts.push_back({{"key", t.key}, {"name", t.name}, {"ops", t.ops}, {"flops", t.flops}, {"weight", t.weight}});
    j["tasks"] = ts;
    std::puts(j.dump().c_str());
    return 0;
  }
  std::printf("%s: %zu nodes, %lld parameters, %.3f GFLOPs (2 x multiply-adds)\n", m.name.c_str(), m.nodes,
              (long long)m.params, m.flops / 1e9);
  for (const std::string& a : g.assumptions)
    std::printf("note: %s\n", a.c_str());
  std::printf("fusion %s: %zu partitions (estimate %.3f ms), %zu tasks\n", m.fusion.c_str(), plan.groups.size(),
              plan.estimatedSeconds * 1e3, tasks.size());
  std::printf("%-56s %7s %12s\n", "task", "weight", "MFLOP each");
  for (const auto& t : tasks)
    std::printf("%-56s %7d %12.2f\n", t.key.c_str(), t.weight, t.flops / 1e6);
  return 0;
}

}  // namespace tessel::cli
