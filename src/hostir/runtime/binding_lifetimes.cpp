#include "hostir/runtime/binding_lifetimes.h"

#include <unordered_map>
#include <unordered_set>

#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"

namespace hostir {

namespace {

// Every tensor `expr` (and what nests in it) refers to, with the inputs of
// their definitions, transitively.
void collectReferences(const Expr* expr, std::unordered_set<const Val*>& references) {
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
      collectReferences(nested, references);
    }
  }
  while (!pending.empty()) {
    const Val* val = pending.back();
    pending.pop_back();
    if (!references.insert(val).second || val->definition() == nullptr) {
      continue;
    }
    refer(val->definition()->inputs());
  }
}

}  // namespace

std::vector<std::vector<const Val*>> tensorsDeadAfter(const HostIrContainer& program) {
  std::unordered_set<const Val*> kept(program.inputs().begin(), program.inputs().end());
  kept.insert(program.outputs().begin(), program.outputs().end());
  std::unordered_map<const Val*, size_t> last_reference;
  size_t index = 0;
  for (const Expr* expr : program.topLevel()) {
    std::unordered_set<const Val*> references;
    collectReferences(expr, references);
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
