#pragma once

#include <unordered_set>
#include <vector>

#include "hostir/ir/statement.h"

namespace hostir {

class Fusion;

// Forwarding: a chain of cheap ops that starts at a fusion input or at a
// factory op is recomputed in every segment that reads it, instead of being
// written to memory by one segment and read back by others.
//
// The rule, applied in topological order: an expr is forwarded when
//   - it is a FullOp (full, zeros, ones: no tensor operands), or a UnaryOp or
//     BroadcastOp whose tensor operand is a fusion input or the output of a
//     forwarded expr; and
//   - none of its outputs is a fusion output (something must produce those
//     once, so such an expr, and what is computed from it, stays a normal
//     expr; what comes before it may still be forwarded).
// After merging, each segment that reads the output of a forwarded expr in
// another segment gets its own copy of the whole chain back to its roots, so
// a forwarded value is never a segment input or output.

// Whether `expr` is of a kind that may be forwarded (cheap to recompute).
bool isForwardableOp(const Expr* expr);

// The forwarded subset of `exprs`, which must be `fusion`'s dataflow exprs in
// topological order.
std::unordered_set<const Expr*> findForwardedExprs(const Fusion& fusion,
                                                   const std::vector<Expr*>& exprs);

}  // namespace hostir
