#pragma once

#include <functional>

namespace hostir {

class Expr;

// Runs a node's checks as its constructor does: a user-facing error names
// the node being made too ("... (making T3 = add(T0, T2))"), so a bad node a
// pass makes says which one it is. An internal error is rethrown as is.
// Shared by the op files (ops.cpp, resize_ops.cpp, ...).
void checkNode(const Expr* expr, const std::function<void()>& check);

}  // namespace hostir
