#pragma once

// The rounding a fuzzed float32 program may carry (issue 37): a bound, per
// element, on how far any float32 evaluation of the program can be from the
// exact result, carried through the program op by op (a running error
// analysis) beside the ATen reference. The fuzzers compare hostir's output
// with ATen's float32 one within twice the bound (each is within it of the
// exact value), so a different summation order (a sharded sum, an
// allreduce, a GEMM's blocking) or a transcendental's last ulps never fail,
// however large the values that feed an output (`sin` of a sum of products
// in the hundreds: sharded fuzzer seed 7781 on 3 ranks, which a fixed
// rtol 1e-4 / atol 1e-5 failed), while a wrong value does.
//
// The model, with u = 2^-24 (float32's unit roundoff):
// - each rounded arithmetic result carries kOpUlps u of its magnitude (one
//   rounding, with room for a contracted FMA or a scalar kept in double);
// - a sum of n terms in any order carries kOpUlps u n times the sum of the
//   terms' magnitudes, plus the terms' own errors (a GEMM: the same per
//   output, n the contracted extent);
// - a transcendental (sin, cos, tanh, sigmoid, gelu, exp) carries
//   kFunctionUlps u of |f(x)| + |x| (hostir's own polynomials, Sleef's
//   kernels, gelu's Abramowitz-Stegun erf with its 1.5e-7 absolute error)
//   plus its input's error times its largest slope;
// - a product's error is |a| err(b) + |b| err(a); a min or max keeps the
//   larger error; copies, permutes and casts through double keep theirs.
// FuzzTolerance.TheBoundHoldsForAtensFloat32AgainstFloat64 checks it against
// a float64 evaluation of the same programs.

#include <ATen/ATen.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>

namespace hostir::fuzz {

inline constexpr double kUnitRoundoff = 0x1p-24;
inline constexpr double kOpUlps = 4;
inline constexpr double kFunctionUlps = 64;

// The rounding of one arithmetic result `out`.
inline at::Tensor roundingOf(const at::Tensor& out) {
  return out.to(at::kDouble).abs() * (kOpUlps * kUnitRoundoff);
}

// A bound on |exact| of a value computed as `ref` with error bound `err`.
inline at::Tensor magnitudeOf(const at::Tensor& ref, const at::Tensor& err) {
  return ref.to(at::kDouble).abs() + err;
}

// The error bound of f(x) for a transcendental f whose slope is at most
// `slope`, given x's reference and error bound and f(x)'s reference.
inline at::Tensor functionError(const at::Tensor& x, const at::Tensor& x_err, const at::Tensor& out,
                                double slope) {
  return x_err * slope +
         (out.to(at::kDouble).abs() + x.to(at::kDouble).abs()) * (kFunctionUlps * kUnitRoundoff);
}

// The error bound of a sum of `terms` terms whose errors sum to `err_sum`
// and whose magnitudes sum to `magnitude_sum`, added in any order.
inline at::Tensor sumError(const at::Tensor& err_sum, const at::Tensor& magnitude_sum,
                           int64_t terms) {
  return err_sum + magnitude_sum * (kOpUlps * kUnitRoundoff * static_cast<double>(terms));
}

// How far `actual` is from `reference` (both of the same sizes), in units of
// the rounding allowed: the largest |actual - reference| / (allowed + 2
// FLT_MIN) over the elements, where `allowed` is `tolerance` (the bound) when
// `reference` is exact (a float64 evaluation) and twice it when it is
// ATen's float32 result (each is within the bound of the exact value); the
// FLT_MIN a denormal flushed to zero. 0 where both are equal (infinities
// included) or NaN, infinity where only one is NaN. At most 1: a rounding
// difference; above: a wrong value.
inline double roundingExcess(const at::Tensor& actual, const at::Tensor& reference,
                             const at::Tensor& tolerance, bool reference_is_float32 = true) {
  if (actual.numel() == 0) {
    return 0;
  }
  const at::Tensor a = actual.to(at::kDouble);
  const at::Tensor r = reference.to(at::kDouble);
  const at::Tensor same = at::logical_or(a == r, at::logical_and(a.isnan(), r.isnan()));
  const at::Tensor diff = at::where(same, at::zeros_like(a), (a - r).abs());
  const at::Tensor allowed = tolerance.to(at::kDouble) * (reference_is_float32 ? 2.0 : 1.0);
  const at::Tensor excess = diff / (allowed + 2 * FLT_MIN);
  const at::Tensor nan_to_inf = at::where(
      excess.isnan(), at::full_like(excess, std::numeric_limits<double>::infinity()), excess);
  return nan_to_inf.max().item<double>();
}

}  // namespace hostir::fuzz
