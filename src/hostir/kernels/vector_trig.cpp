#include "hostir/kernels/vector_trig.h"

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

namespace hostir {

using Halide::Expr;

namespace {

// floor(2^448 / pi) in hexadecimal (mpmath, 200 digits): its bit j, counted
// from 1 at the left, is the bit of 1/pi of weight 2^-j.
constexpr std::string_view kInversePiHex =
    "517cc1b727220a94fe13abe8fa9a6ee06db14acc9e21c820ff28b1d5ef5de2b0"
    "db92371d2126e9700324977504e8c90e7f0ef58e5894d39f";

int inversePiBit(int j) {
  char c = kInversePiHex[static_cast<size_t>(j - 1) / 4];
  int digit = c <= '9' ? c - '0' : c - 'a' + 10;
  return (digit >> (3 - (j - 1) % 4)) & 1;
}

// The bits of 1/pi of weights 2^-first .. 2^-last, as a double (exact: at
// most 53 bits).
double inversePiBits(int first, int last) {
  double sum = 0.0;
  for (int j = first; j <= last; ++j) {
    sum += inversePiBit(j) * std::ldexp(1.0, -j);
  }
  return sum;
}

// 1/pi = kHigh + kMiddle + kLow + (below 2^-104). kHigh and kMiddle hold 25
// bits each, so x * kHigh and x * kMiddle are exact in double for a float32
// x (24 bits); 1/pi's leading bit has weight 2^-2.
const double kHigh = inversePiBits(2, 26);
const double kMiddle = inversePiBits(27, 51);
const double kLow = inversePiBits(52, 104);

// sin(pi t) / t as a polynomial in t^2 for |t| <= 0.51: Chebyshev fit
// (mpmath.chebyfit, 40 digits), relative error below 4e-11.
constexpr std::array<double, 6> kSinPi = {3.141592653521835,   -5.16771276123473,
                                          2.5501631951811334,  -0.5992506475724232,
                                          0.08204259648014298, -0.007014796837075801};

// sin(pi * (|x| / pi + shift)) as a double, for shift 0 (sin) or 1/2 (cos),
// 0 <= `a` = |x| < 2^30. y = a * kHigh + shift and m = a * kMiddle are
// exact, k = round(y + m) (k < 2^29), y - k is exact too; t = (y - k) + m +
// a * kLow rounds twice (relative error 2^-52) and misses a * 2^-104 <=
// 2^-74, far below the |t| of any float32 below 2^30.
Expr sinPiOfReduced(const Expr& a, double shift) {
  Expr d = Halide::cast(Halide::Float(64), a);
  Expr y = Halide::strict_float(d * Expr(kHigh) + Expr(shift));
  Expr middle = d * Expr(kMiddle);
  Expr k = Halide::round(Halide::strict_float(y + middle));
  Expr t = Halide::strict_float(((y - k) + middle) + d * Expr(kLow));
  Expr z = t * t;
  Expr p = Expr(kSinPi.back());
  for (size_t i = kSinPi.size() - 1; i-- > 0;) {
    p = p * z + Expr(kSinPi[i]);
  }
  // sin(pi (k + t)) = (-1)^k sin(pi t); k < 2^29 fits an int32.
  Expr odd = (Halide::cast(Halide::Int(32), k) & 1) == 1;
  Expr s = t * p;
  return Halide::select(odd, -s, s);
}

// `value` where x is finite and below the bound, NaN for NaN and +-inf, and a
// failed requirement (the kernel returns an error, the segment runs through
// ATen) for a finite |x| at or above the bound.
Expr checked(const char* op, const Expr& x, const Expr& value) {
  Expr in_range = Halide::abs(x) < Expr(static_cast<float>(kTrigKernelBound));
  Expr finite = Halide::is_finite(x);
  Expr nan = Expr(std::numeric_limits<float>::quiet_NaN());
  return Halide::require(in_range || !finite, Halide::select(finite, value, nan),
                         std::string(op) + ": an argument of magnitude 2^30 or more,", x);
}

}  // namespace

Expr vectorSinFloat32(const Expr& x) {
  Expr s = Halide::cast(Halide::Float(32), sinPiOfReduced(Halide::abs(x), 0.0));
  // sin is odd: x's sign bit onto the result, a zero's included.
  Halide::Type u32 = Halide::UInt(32);
  Expr sign = Halide::reinterpret(u32, x) & Expr(0x80000000u);
  return checked("sin", x,
                 Halide::reinterpret(Halide::Float(32), Halide::reinterpret(u32, s) ^ sign));
}

Expr vectorCosFloat32(const Expr& x) {
  // cos(x) = sin(pi (|x| / pi + 1/2)).
  return checked("cos", x, Halide::cast(Halide::Float(32), sinPiOfReduced(Halide::abs(x), 0.5)));
}

}  // namespace hostir
