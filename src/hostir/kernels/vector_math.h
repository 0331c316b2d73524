#pragma once

#include <Halide.h>

namespace hostir {

// Transcendental functions as Halide expressions that vectorize. Halide's
// own exp/log/tanh on float32 call the scalar C library once per lane, so
// float32 uses range reduction plus a minimax polynomial (exp: the Cephes
// expf scheme, within 1 ulp of exp, overflow to inf past 88.72, subnormal
// results kept, NaN kept; tanh: a rational function within 6 ulp);
// float64 keeps Halide's exact calls.
Halide::Expr vectorExp(const Halide::Expr& x);
Halide::Expr vectorLog(const Halide::Expr& x);
Halide::Expr vectorTanh(const Halide::Expr& x);
Halide::Expr vectorSigmoid(const Halide::Expr& x);
// Exact (erf) GELU: x / 2 * (1 + erf(x / sqrt(2))).
Halide::Expr vectorGelu(const Halide::Expr& x);
// Its derivative, Phi(x) + x phi(x), with the same erf (absolute error
// below 3e-7 for float32).
Halide::Expr vectorGeluDerivative(const Halide::Expr& x);
// erf for float32 (absolute error below 2e-7) and float64 (Halide has no
// erf: the same series in double, so a float64 GELU is not compiled).
Halide::Expr vectorErf(const Halide::Expr& x);
// erf of a float32 `x`, as a float32 that is the correctly rounded value
// but for rare near-ties (computed in double with relative error below
// 1e-12; torch.erf's float32 is within 1 ulp): the erf op. float64 has no
// compiled erf (its segment runs through ATen).
Halide::Expr accurateErfFloat32(const Halide::Expr& x);

}  // namespace hostir
