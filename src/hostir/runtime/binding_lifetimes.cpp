#include "hostir/runtime/binding_lifetimes.h"

#include <unordered_map>
#include <unordered_set>

#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"

namespace hostir {

namespace {

// Every expr the program runs: its top-level ones and what nests in them.
void collectRun(const Scope& scope, std::unordered_set<const Expr*>& run) {
  for (const Expr* expr : scope) {
    run.insert(expr);
    if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
      collectRun(loop->body(), run);
    }
  }
}

// Every tensor `expr` (and what nests in it) refers to, with the inputs of
// their definitions that the program does not run, transitively: a tensor
// the program computes is bound when its expr runs, before anything reads
// it, but one whose definition it never runs (a view the lowering left to
// the evaluator) is evaluated from its definition's inputs when read. (The
// inputs of a definition the program runs are its own references there:
// following them too kept a GEMM's operands alive as long as its output.)
void collectReferences(const Expr* expr, const std::unordered_set<const Expr*>& run,
                       std::unordered_set<const Val*>& references) {
  std::vector<const Val*> pending;
  auto refer = [&](const std::vector<Val*>& vals) {
    for (const Val* val : vals) {
      if (val->vtype() == ValType::TensorView) {
        pending.push_back(val);
      }
    }
  };
  refer(expr->inputs());
  refer(expr->outputs());
  if (const auto* wait = dynamic_cast<const Wait*>(expr)) {
    refer(wait->communication()->inputs());
    refer(wait->communication()->outputs());
  }
  if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
    for (const Expr* nested : loop->body()) {
      collectReferences(nested, run, references);
    }
  }
  while (!pending.empty()) {
    const Val* val = pending.back();
    pending.pop_back();
    if (!references.insert(val).second || val->definition() == nullptr ||
        run.count(val->definition()) != 0) {
      continue;
    }
    refer(val->definition()->inputs());
  }
}

}  // namespace

std::vector<std::vector<const Val*>> tensorsDeadAfter(const HostIrContainer& program) {
  std::unordered_set<const Val*> kept(program.inputs().begin(), program.inputs().end());
  kept.insert(program.outputs().begin(), program.outputs().end());
  std::unordered_set<const Expr*> run;
  collectRun(program.topLevel(), run);
  std::unordered_map<const Val*, size_t> last_reference;
  size_t index = 0;
  for (const Expr* expr : program.topLevel()) {
    std::unordered_set<const Val*> references;
    collectReferences(expr, run, references);
    for (const Val* val : references) {
      if (kept.count(val) == 0) {
        last_reference[val] = index;
      }
    }
    ++index;
  }
  std::vector<std::vector<const Val*>> dead(index);
  for (const auto& [val, last] : last_reference) {
    dead[last].push_back(val);
  }
  return dead;
}

}  // namespace hostir
