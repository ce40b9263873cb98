#include "task/search_task.h"

#include <cstdio>
#include <stdexcept>

#include "support/hash.h"
#include "target/target.h"
#include "te/operators.h"

namespace tessel::task {

std::string workloadKey(const std::string& op, const std::vector<int64_t>& shape, const te::ComputeDAG& dag) {
  const uint64_t h = support::fnv1a(dag.toString(), support::kStableKeyBasis);
  std::string key = op;
  for (int64_t s : shape)
    key += "_" + std::to_string(s);
  char buf[20];
  std::snprintf(buf, sizeof buf, "_%08llx", static_cast<unsigned long long>(h & 0xffffffffu));
  return key + buf;
}

std::string recordKey(const std::string& workloadKey, const target::Target& target) {
  return target == target::Target::host() ? workloadKey : workloadKey + "@" + target.str();
}

std::string defaultLayout(const target::Target& target) {
  return target.isCpu() ? "nhwc" : "nchw";
}

SearchTask makeOperatorTask(const std::string& op, const std::vector<int64_t>& shape, const target::Target& target,
                            const std::string& layout) {
  SearchTask t;
  t.op = op;
  t.shape = shape;
  t.target = target;
  te::Layout l = te::parseLayout(layout.empty() ? defaultLayout(target) : layout);
  if (te::hasImageLayout(op)) t.layout = te::layoutName(l);
  t.dag = te::makeOperator(op, shape, l);
  t.key = workloadKey(op, shape, t.dag);
  t.flops = t.dag.flops();
  return t;
}

}  // namespace tessel::task
