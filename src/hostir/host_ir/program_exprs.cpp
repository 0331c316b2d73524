#include "hostir/host_ir/program_exprs.h"

#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/host_ir_container.h"

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

}  // namespace

std::vector<std::pair<Scope*, Expr*>> allExprs(HostIrContainer& container) {
  std::vector<std::pair<Scope*, Expr*>> exprs;
  collect(container.topLevel(), exprs);
  return exprs;
}

}  // namespace hostir
