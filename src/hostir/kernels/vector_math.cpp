#include "hostir/kernels/vector_math.h"

#include <iterator>

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
  // in two so that k ln 2 is exact), exp(r) by a degree-6 polynomial. 2^k
  // is applied as 2^(k/2) * 2^(k - k/2), both normal floats for k in [-150,
  // 128], so that the last product rounds once: to infinity past expf's
  // overflow (88.72), to a subnormal down to -103.97, to 0 below, as expf.
  // The clamp is selects: Halide lowers a chain of min/max (exp of exp of
  // ...) slower (a chain of 20 exp: 15 % more compile time).
  Expr clamped =
      Halide::select(x < f32(-104.0f), f32(-104.0f), Halide::select(x > f32(88.8f), f32(88.8f), x));
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
  Expr k_int = Halide::cast(Halide::Int(32), k);
  Expr half = k_int >> 1;  // floor(k / 2), in [-75, 64]
  auto power_of_two = [](const Expr& n) {
    return Halide::reinterpret(Halide::Float(32), (n + 127) << 23);
  };
  Expr scaled = (e * power_of_two(half)) * power_of_two(k_int - half);
  return Halide::select(Halide::is_nan(x), x, scaled);
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
  // Odd and rational, x P(x^2) / Q(x^2) on |x| <= 7.9 (relative error of
  // the approximation 3.4e-9; float32 evaluation within 5.7 ulp, and below
  // 1 in magnitude), +-1 beyond (within 4.6 ulp of tanh); the coefficients
  // are tools/fit_rational_tanh.py's. One division and no exp: a third of the
  // code of 1 - 2 / (exp(2|x|) + 1), so a chain of tanh compiles and runs
  // twice as fast. The limit is a select, not a min: Halide's lowering of a
  // min of a min of ... down a chain of tanh took 4x as long.
  Expr s = x * x;
  Expr p = f32(-1.1856347067323858e-13);
  for (double c : {6.468662411274195e-11, -2.251661435082042e-08, 1.1690898645611014e-05,
                   0.003153960919007659, 0.13128460943698883, 1.0}) {
    p = p * s + f32(c);
  }
  Expr q = f32(0.00026196835096925497);
  for (double c : {0.024693287909030914, 0.46461793780326843, 1.0}) {
    q = q * s + f32(c);
  }
  Expr saturated = Halide::select(x < 0, f32(-1.0), f32(1.0));
  Expr result = Halide::select(Halide::abs(x) > f32(7.9), saturated, x * p / q);
  return Halide::select(Halide::is_nan(x), x, result);
}

namespace {

// erf(x) given exp(-x^2) (a GELU's derivative has that exponential anyway):
// Abramowitz and Stegun 7.1.26 for |x| >= 0.5 (absolute error 1.5e-7),
// and the Maclaurin series below, where 7.1.26's relative error would show.
Expr erfGivenExpOfMinusSquare(const Expr& x, const Expr& exp_of_minus_square) {
  Halide::Type type = x.type();
  auto c = [&](double value) { return Halide::cast(type, Expr(value)); };
  Expr a = Halide::abs(x);
  Expr t = c(1.0) / (c(1.0) + c(0.3275911) * a);
  Expr poly = c(1.061405429);
  poly = poly * t + c(-1.453152027);
  poly = poly * t + c(1.421413741);
  poly = poly * t + c(-0.284496736);
  poly = poly * t + c(0.254829592);
  Expr tail = c(1.0) - poly * t * exp_of_minus_square;
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

}  // namespace

Expr vectorErf(const Expr& x) {
  return erfGivenExpOfMinusSquare(x, vectorExp(-x * x));
}

namespace {

// exp of a float64 `x` <= 0 (what the erf below needs; below -708 it is
// 2^-1022-ish, not 0), relative
// error below 1e-15: k = round(x / ln 2), r = x - k ln 2 (ln 2 split in two,
// the high part exact for |k| < 2^20), exp(r) by its Taylor polynomial of
// degree 12 (|r| <= ln 2 / 2: truncation below 2e-17), times 2^k built from
// its exponent bits. Vectorizes where Halide's float64 exp calls the C
// library once per lane.
Expr vectorExpFloat64OfNonPositive(const Expr& x) {
  Expr clamped = Halide::max(x, Expr(-708.0));
  Expr k = Halide::floor(clamped * Expr(1.4426950408889634) + Expr(0.5));
  Expr r = clamped - k * Expr(0.693147180369123816490);
  r = r - k * Expr(1.90821492927058770002e-10);
  Expr p = Expr(1.0 / 479001600.0);  // 1/12!
  double factorial = 479001600.0;
  for (int n = 11; n >= 0; --n) {
    factorial /= (n + 1);
    p = p * r + Expr(1.0 / factorial);
  }
  // Through int32: AVX2 converts double to int32 in vectors, not to int64.
  Expr bits = Halide::cast(Halide::Int(64), Halide::cast(Halide::Int(32), k) + 1023) << 52;
  return p * Halide::reinterpret(Halide::Float(64), bits);
}

}  // namespace

Expr accurateErfFloat32(const Expr& x) {
  // In double, relative error below 1e-12 (checked against std::erf on a
  // 1e-5 grid), so the float32 result is the correctly rounded erf but for
  // near-ties. Two least-squares polynomials, fitted for hostir on Chebyshev
  // nodes (tools: numpy.linalg.lstsq, std::erf / std::erfc as the truth):
  //   |x| < 1:          erf(x) = x * P(x^2), P of degree 8 (nothing cancels);
  //   1 <= |x| < 3.92:  erf(x) = 1 - exp(Q(u)), u = (|x| - 2.46) / 1.46,
  //                     Q of degree 14 fitting log(erfc) (erfc <= 0.16 here,
  //                     so 1 - erfc loses nothing);
  //   |x| >= 3.92:      +-1 (erfc(3.92) = 2.6e-8 is below half an ulp of 1).
  // Short Horner chains: the A&S 7.1.6 series this replaces needed 50 terms
  // and ran at ~6x torch.erf's time.
  static constexpr double kSmall[] = {
      1.1283791670951444,    -0.37612638892483463,   0.11283791350615868,
      -0.026866135878561015, 0.00522379212835776,    -0.0008542797306814037,
      0.0001195822791071055, -1.391856833550531e-05, 1.0610441320557662e-06};
  static constexpr double kLogErfc[] = {
      -7.594217572157788,      -7.7047440190391345,     -2.009181580689855,
      -0.03489135101665599,    0.010230368734152506,    -0.002917920904151852,
      0.0007814424151360022,   -0.00018851420034541949, 3.7656783263173566e-05,
      -4.498533083173658e-06,  -7.787869462649866e-07,  7.894859069262355e-07,
      -3.7739161173888647e-07, 1.4926521994715617e-07,  -3.378164592504618e-08};
  auto horner = [](const auto& coefficients, const Expr& t) {
    Expr p = Expr(coefficients[std::size(coefficients) - 1]);
    for (size_t i = std::size(coefficients) - 1; i-- > 0;) {
      p = p * t + Expr(coefficients[i]);
    }
    return p;
  };
  Expr d = Halide::cast(Halide::Float(64), x);
  Expr a = Halide::abs(d);
  Expr small = d * horner(kSmall, d * d);
  Expr u = (a - Expr(2.46)) * Expr(0.684931506849315);
  Expr large = Expr(1.0) - vectorExpFloat64OfNonPositive(horner(kLogErfc, u));
  large = Halide::select(a < Expr(3.92), large, Expr(1.0));
  large = Halide::select(d < Expr(0.0), -large, large);
  Expr result = Halide::select(a < Expr(1.0), small, large);
  return Halide::select(Halide::is_nan(x), x, Halide::cast(Halide::Float(32), result));
}

Expr vectorGelu(const Expr& x) {
  Halide::Type type = x.type();
  Expr half = Halide::cast(type, Expr(0.5));
  Expr one = Halide::Internal::make_one(type);
  return half * x * (one + vectorErf(x * Halide::cast(type, Expr(0.70710678118654752440))));
}

Expr vectorGeluDerivative(const Expr& x) {
  Halide::Type type = x.type();
  auto c = [&](double value) { return Halide::cast(type, Expr(value)); };
  // One exponential: erf(x / sqrt 2) needs exp(-x^2 / 2), as phi(x) does.
  Expr gauss = vectorExp(x * x * c(-0.5));
  Expr cdf = c(0.5) * (c(1.0) + erfGivenExpOfMinusSquare(x * c(0.70710678118654752440), gauss));
  return cdf + x * gauss * c(0.39894228040143267794);  // phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
}

}  // namespace hostir
