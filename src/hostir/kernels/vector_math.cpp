#include "hostir/kernels/vector_math.h"

#include <limits>

namespace hostir {

using Halide::Expr;

namespace {

bool isFloat32(const Expr& x) {
  return x.type().is_float() && x.type().bits() == 32;
}

Expr f32(double value) {
  return Expr(static_cast<float>(value));
}

}  // namespace

Expr vectorExp(const Expr& x) {
  if (!isFloat32(x)) {
    return Halide::exp(x);
  }
  // exp(x) = 2^k * exp(r), k = round(x / ln 2), r = x - k ln 2 (ln 2 split
  // in two so that k ln 2 is exact), exp(r) by a degree-6 polynomial.
  Expr clamped = Halide::clamp(x, f32(-88.0f), f32(88.5f));
  Expr k = Halide::floor(clamped * f32(1.44269504088896341) + f32(0.5));
  Expr r = clamped - k * f32(0.693359375);
  r = r - k * f32(-2.12194440e-4);
  Expr r2 = r * r;
  Expr p = f32(1.9875691500E-4);
  p = p * r + f32(1.3981999507E-3);
  p = p * r + f32(8.3334519073E-3);
  p = p * r + f32(4.1665795894E-2);
  p = p * r + f32(1.6666665459E-1);
  p = p * r + f32(5.0000001201E-1);
  Expr e = p * r2 + r + f32(1.0);
  // 2^k from its exponent bits (k in [-127, 128] after the clamp).
  Expr bits = (Halide::cast(Halide::Int(32), k) + 127) << 23;
  Expr scaled = e * Halide::reinterpret(Halide::Float(32), bits);
  const float inf = std::numeric_limits<float>::infinity();
  Expr result = Halide::select(x > f32(88.3762626647949f), f32(inf),
                               Halide::select(x < f32(-87.3365447505531f), f32(0.0f), scaled));
  return Halide::select(Halide::is_nan(x), x, result);
}

Expr vectorLog(const Expr& x) {
  return Halide::log(x);
}

Expr vectorSigmoid(const Expr& x) {
  Expr one = Halide::Internal::make_one(x.type());
  return one / (one + vectorExp(-x));
}

Expr vectorTanh(const Expr& x) {
  if (!isFloat32(x)) {
    return Halide::tanh(x);
  }
  // |x| < 0.625: the Cephes tanhf odd polynomial (no cancellation near 0);
  // else 1 - 2 / (exp(2|x|) + 1) with the sign of x.
  Expr z = x * x;
  Expr p = f32(-5.70498872745E-3);
  p = p * z + f32(2.06390887954E-2);
  p = p * z + f32(-5.37397155531E-2);
  p = p * z + f32(1.33314422036E-1);
  p = p * z + f32(-3.33332819422E-1);
  Expr small = p * z * x + x;
  Expr a = Halide::abs(x);
  Expr large = f32(1.0) - f32(2.0) / (vectorExp(a * f32(2.0)) + f32(1.0));
  large = Halide::select(x < 0, -large, large);
  Expr result = Halide::select(a < f32(0.625), small, large);
  return Halide::select(Halide::is_nan(x), x, result);
}

Expr vectorErf(const Expr& x) {
  // Abramowitz and Stegun 7.1.26 for |x| >= 0.5 (absolute error 1.5e-7),
  // and the Maclaurin series below, where 7.1.26's relative error would show.
  Halide::Type type = x.type();
  auto c = [&](double value) { return Halide::cast(type, Expr(value)); };
  Expr a = Halide::abs(x);
  Expr t = c(1.0) / (c(1.0) + c(0.3275911) * a);
  Expr poly = c(1.061405429);
  poly = poly * t + c(-1.453152027);
  poly = poly * t + c(1.421413741);
  poly = poly * t + c(-0.284496736);
  poly = poly * t + c(0.254829592);
  Expr tail = c(1.0) - poly * t * vectorExp(-a * a);
  tail = Halide::select(x < 0, -tail, tail);
  Expr z = x * x;
  // 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320)
  Expr series = c(-1.0 / 1320.0);
  series = series * z + c(1.0 / 216.0);
  series = series * z + c(-1.0 / 42.0);
  series = series * z + c(1.0 / 10.0);
  series = series * z + c(-1.0 / 3.0);
  series = (series * z + c(1.0)) * x * c(1.1283791670955126);
  return Halide::select(a < c(0.5), series, tail);
}

Expr accurateErfFloat32(const Expr& x) {
  // The series of Abramowitz and Stegun 7.1.6 (Handbook of Mathematical
  // Functions, 1964), whose terms are all positive, so nothing cancels:
  //   erf(x) = 2/sqrt(pi) * exp(-x^2) * sum_{n>=0} (2x^2)^n x / (1*3*...*(2n+1)),
  // evaluated in double by Horner's rule, x * (1 + a/3 * (1 + a/5 * (...))),
  // a = 2x^2 (exact in double for a float32 x). 50 terms bring the relative
  // error below 2e-12 on |x| < 4 (checked against std::erf on a 1e-3 grid);
  // for |x| >= 4, erf(x) rounds to +-1 in float32 (1 - erf(4) = 1.5e-8, below
  // half an ulp of 1).
  constexpr int kTerms = 50;
  Expr d = Halide::cast(Halide::Float(64), x);
  Expr a = d * d * Expr(2.0);
  Expr h = Expr(1.0);
  for (int n = kTerms; n >= 1; --n) {
    h = Expr(1.0) + a * h * Expr(1.0 / (2 * n + 1));
  }
  Expr series = Expr(1.1283791670955126) * Halide::exp(-(d * d)) * d * h;
  Expr result = Halide::select(Halide::abs(d) < Expr(4.0), series,
                               Halide::select(d < Expr(0.0), Expr(-1.0), Expr(1.0)));
  return Halide::select(Halide::is_nan(x), x, Halide::cast(Halide::Float(32), result));
}

Expr vectorGelu(const Expr& x) {
  Halide::Type type = x.type();
  Expr half = Halide::cast(type, Expr(0.5));
  Expr one = Halide::Internal::make_one(type);
  return half * x * (one + vectorErf(x * Halide::cast(type, Expr(0.70710678118654752440))));
}

}  // namespace hostir
