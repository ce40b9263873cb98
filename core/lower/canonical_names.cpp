#include "lower/canonical_names.h"

#include <map>
#include <string>

namespace tessel::lower {

namespace {

class Renamer {
 public:
  explicit Renamer(const LoweredFunc& f) {
    for (size_t a = 0; a < f.args.size(); ++a)
      names_[f.args[a].name] = a < f.numInputs ? "in" + std::to_string(a) : "out" + std::to_string(a - f.numInputs);
    for (const Buffer& t : f.temps)
      temp(t.name);
  }

  std::string buffer(const std::string& name) {
    auto it = names_.find(name);
    return it == names_.end() ? temp(name) : it->second;
  }

  // Names are given in order of appearance: the same nest gets the same names.
  Stmt stmt(const Stmt& s) {
    if (!s) return s;
    auto out = std::make_shared<StmtNode>(*s);
    if (s->kind == StmtNode::For) out->loopVar = loopVar(s->loopVar);
    if (s->kind == StmtNode::Store || s->kind == StmtNode::Alloc) out->buffer = buffer(s->buffer);
    out->index = expr(s->index);
    out->value = expr(s->value);
    out->cond = expr(s->cond);
    for (Stmt& b : out->body)
      b = stmt(b);
    return out;
  }

  te::Expr expr(const te::Expr& e) {
    if (!e) return e;
    auto out = std::make_shared<te::ExprNode>(*e);
    if (e->kind == te::ExprKind::Var) {
      auto it = names_.find(e->name);
      if (it != names_.end()) out->name = it->second;  // a free variable keeps its name
    }
    if (e->kind == te::ExprKind::Load) out->name = buffer(e->name);
    for (te::Expr& a : out->args)
      a = expr(a);
    return out;
  }

 private:
  std::string temp(const std::string& name) {
    return names_.emplace(name, "tmp" + std::to_string(temps_++)).first->second;
  }
  std::string loopVar(const std::string& name) {
    return names_.emplace(name, "i" + std::to_string(loops_++)).first->second;
  }

  std::map<std::string, std::string> names_;
  int temps_ = 0, loops_ = 0;
};

}  // namespace

LoweredFunc withCanonicalNames(const LoweredFunc& f) {
  Renamer r(f);
  LoweredFunc out = f;
  for (Buffer& a : out.args)
    a.name = r.buffer(a.name);
  for (Buffer& t : out.temps)
    t.name = r.buffer(t.name);
  out.body = r.stmt(f.body);
  return out;
}

}  // namespace tessel::lower
