#pragma once

#include "hostir/ir/statement.h"

// Small, general edits of a fusion's dataflow for passes. A container never
// deletes statements, so an edited expr is rebuilt (via Expr::newObject) and
// the old one is detached: it is no longer a use of its inputs nor the
// definition of its outputs, and Fusion::exprs() no longer reaches it.
namespace hostir {

// Unhooks `expr` from its operands' use lists and its outputs' definitions.
void detachExpr(Expr* expr);

// Rebuilds `expr` with every occurrence of `old_input` among its inputs
// replaced by `new_input`; returns the new expr (the old one is detached).
Expr* replaceValInExprInputs(Expr* expr, Val* old_input, Val* new_input);

// Rebuilds `expr` so that it defines `new_output` instead of `old_output`;
// `old_output` is left without a definition. Returns the new expr.
Expr* replaceValInExprOutputs(Expr* expr, Val* old_output, Val* new_output);

}  // namespace hostir
