#pragma once

#include <Halide.h>

#include <optional>

#include "hostir/ir/ops.h"

namespace hostir::exact_math {

// Scalar semantics ATen has and Halide does not, as Halide expressions: the
// sign bit, pow, IEEE comparisons with NaN, shifts by any count, gcd and
// nextafter, each computed as torch computes it (halide_pointwise.cpp).

// torch.signbit: the sign bit itself, so -0.0 and a negative NaN are true.
Halide::Expr signbit(const Halide::Expr& x);

// x ** exponent for a floating x: the constant exponents ATen computes
// without pow (2, 3, 0.5, -0.5, -1, -2) the same way; else the C
// library's pow in double (Halide's float32 pow is an exp/log
// approximation that loses the last bits and IEEE's special cases: NaN
// exponents, negative bases), rounded back to x's type.
Halide::Expr power(const Halide::Expr& x, const Halide::Expr& exponent,
                   std::optional<double> constant);

// IEEE comparisons: a NaN operand compares false, and unequal. Halide's
// simplifier assumes no NaN (x != x is false, a >= b is !(a < b)), so a
// floating comparison tests for NaN explicitly.
Halide::Expr compare(BinaryOpType kind, const Halide::Expr& a, const Halide::Expr& b);

// An integer shift as the ATen interpreter's (aten_op_evaluator.cpp): a
// count outside [0, width) shifts every bit out (0, or the sign for an
// arithmetic right shift); Halide leaves such counts undefined.
Halide::Expr shift(BinaryOpType kind, const Halide::Expr& a, const Halide::Expr& count);

// torch.gcd's loop on |a| and |b| with C's remainder, unrolled for the
// most steps Euclid takes on `width`-bit integers (consecutive Fibonacci
// numbers: 46 for 32 bits, 92 for 64), each step a Let so the expression
// stays linear in size.
Halide::Expr gcd(const Halide::Expr& a, const Halide::Expr& b);

// torch.nextafter: the neighbour of a toward b, one step in the bits of
// `storage` (a's type, or Float(16) / BFloat(16) for half and bfloat16
// values that a and b hold in float).
Halide::Expr nextafter(const Halide::Expr& a, const Halide::Expr& b, Halide::Type storage);

}  // namespace hostir::exact_math
