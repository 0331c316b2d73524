#pragma once

#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

namespace hostir {

class Expr;
class HostIrContainer;
class Scope;
class Val;

using ScopedExprs = std::vector<std::pair<Scope*, Expr*>>;

// Every expr of the host program in program order, loop bodies included
// (a loop before its body), each with the scope that holds it: what a pass
// walks to find every reader of a value or to edit an expr where it is.
ScopedExprs allExprs(HostIrContainer& container);

// Whether the scope, loop bodies included, posts a Communication or a
// P2PCommunication.
bool postsCommunication(const Scope& scope);

// The views, allocations and deallocations that exist only to hold `value`
// (its slice of a ring buffer and the ring buffer, say), or nullopt when an
// expr other than those in `users` could see what is written into it: a
// reader of `value` or of a buffer it is a view of, or the program's inputs
// and outputs. A pass that computes `value` privately inside `users` (a
// kernel, a GEMM with post-ops) erases the chain.
std::optional<ScopedExprs> privateViewChain(HostIrContainer& container, const Val* value,
                                            const std::unordered_set<const Expr*>& users);

// Places `exprs`, which compute a tensor from `source` alone (a weight's
// reshaped or side-by-side form), where they run once per run: at the
// start of the program when `source` is a program input, so that every
// iteration of a loop reading it shares the result (and a GEMM engine's
// cache of packed operands sees one tensor); else right before `reader`
// in `scope`. Returns whether they went to the start.
bool placeDerivation(HostIrContainer& container, const Val* source, const std::vector<Expr*>& exprs,
                     Scope& scope, const Expr* reader);

}  // namespace hostir
