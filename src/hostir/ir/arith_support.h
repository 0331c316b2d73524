#pragma once

#include <cstdint>
#include <string>

#include "hostir/ir/fusion.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/types.h"

// What the builder files of arith.h share (arith.cpp defines them; the
// builders are split by kind: arith.cpp pointwise and reductions,
// shape_builders, gemm_builders, composite_builders, creation_builders).
namespace hostir::arith_support {

// A Val in IR notation, for error messages.
std::string describe(const Val* val);
Scalar* constantIn(Fusion* container, int64_t value);
// `val` as a constant integer scalar, or null.
const Scalar* asConstInt(const Val* val);
// A new axis over `like`'s extent.
IterDomain* freshId(const IterDomain* like, IterType iter_type);
IterDomain* freshId(const IterDomain* like);
// Of two axes that must match, the one whose extent says the most.
IterDomain* moreKnown(IterDomain* a, IterDomain* b);
// A binary op on two scalars, folded when both are constants.
Val* scalarBinaryOp(BinaryOpType type, Val* lhs, Val* rhs);
// `axis` in [-rank, rank) made non-negative; else an error naming `op` and `tv`.
int64_t normalizeAxis(int64_t axis, int64_t rank, const std::string& op, const Val* tv);

}  // namespace hostir::arith_support
