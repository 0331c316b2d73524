#include "hostir/host_ir/program_exprs.h"

#include <algorithm>

#include "hostir/host_ir/alias_select.h"
#include "hostir/host_ir/allocation.h"
#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/host_ir_container.h"
#include "hostir/ir/ops.h"

namespace hostir {

namespace {

void collect(Scope& scope, std::vector<std::pair<Scope*, Expr*>>& out) {
  for (Expr* expr : scope) {
    out.emplace_back(&scope, expr);
    if (auto* loop = dynamic_cast<ForLoop*>(expr)) {
      collect(loop->body(), out);
    }
  }
}

// Views and allocations write no data.
bool isMetadata(const Expr* expr) {
  return expr->isA<HirAliasSelect>() || expr->isA<SliceOp>() || expr->isA<Allocate>();
}

bool reads(const Expr* expr, const Val* val) {
  return std::find(expr->inputs().begin(), expr->inputs().end(), val) != expr->inputs().end();
}

}  // namespace

ScopedExprs allExprs(HostIrContainer& container) {
  ScopedExprs exprs;
  collect(container.topLevel(), exprs);
  return exprs;
}

std::optional<ScopedExprs> privateViewChain(HostIrContainer& container, const Val* value,
                                            const std::unordered_set<const Expr*>& users) {
  const ScopedExprs exprs = allExprs(container);
  ScopedExprs chain;
  const Val* current = value;
  const Expr* view_of_current = nullptr;  // the chain's view of `current`
  while (current != nullptr) {
    if (container.isOutput(current) || container.isInput(current)) {
      return std::nullopt;
    }
    const Expr* maker = nullptr;
    for (const auto& [scope, expr] : exprs) {
      if (users.count(expr) != 0 || expr == view_of_current) {
        continue;
      }
      const bool writes = std::find(expr->outputs().begin(), expr->outputs().end(), current) !=
                          expr->outputs().end();
      if ((writes && isMetadata(expr)) || (expr->isA<Deallocate>() && reads(expr, current))) {
        chain.emplace_back(scope, expr);
        if (writes && !expr->isA<Allocate>()) {
          maker = expr;
        }
      } else if (writes || reads(expr, current)) {
        return std::nullopt;
      }
    }
    view_of_current = maker;
    current = maker != nullptr ? maker->input(0) : nullptr;
  }
  return chain;
}

bool placeDerivation(HostIrContainer& container, const Val* source, const std::vector<Expr*>& exprs,
                     Scope& scope, const Expr* reader) {
  const std::vector<Val*>& inputs = container.inputs();
  if (std::find(inputs.begin(), inputs.end(), source) != inputs.end()) {
    for (auto expr = exprs.rbegin(); expr != exprs.rend(); ++expr) {
      container.topLevel().push_front(*expr);
    }
    return true;
  }
  for (Expr* expr : exprs) {
    scope.insertBefore(reader, expr);
  }
  return false;
}

bool postsCommunication(const Scope& scope) {
  for (const Expr* expr : scope) {
    if (expr->isA<Communication>() || expr->isA<P2PCommunication>()) {
      return true;
    }
    if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
      if (postsCommunication(loop->body())) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace hostir
