#include "hostir/kernels/exact_math.h"

#include <string>
#include <vector>

#include "hostir/ir/error.h"

namespace hostir::exact_math {

using Halide::Expr;

// torch.signbit: the sign bit itself, so -0.0 and a negative NaN are true.
Expr signbit(const Expr& x) {
  if (x.type().is_float()) {
    return Halide::reinterpret(Halide::Int(x.type().bits()), x) < 0;
  }
  if (x.type().is_bool() || x.type().is_uint()) {
    return Halide::cast(Halide::Bool(), false);
  }
  return x < 0;
}

// x ** exponent for a floating x: the constant exponents ATen computes
// without pow (2, 3, 0.5, -0.5, -1, -2) the same way; else the C
// library's pow in double (Halide's float32 pow is an exp/log
// approximation that loses the last bits and IEEE's special cases: NaN
// exponents, negative bases), rounded back to x's type.
Expr power(const Expr& x, const Expr& exponent, std::optional<double> constant) {
  Expr one = Halide::Internal::make_one(x.type());
  if (constant.has_value()) {
    double e = *constant;
    if (e == 2.0) {
      return x * x;
    }
    if (e == 3.0) {
      return x * x * x;
    }
    if (e == 0.5) {
      return Halide::sqrt(x);
    }
    if (e == -0.5) {
      return one / Halide::sqrt(x);
    }
    if (e == -1.0) {
      return one / x;
    }
    if (e == -2.0) {
      return one / (x * x);
    }
  }
  if (x.type().bits() == 64) {
    return Halide::pow(x, exponent);
  }
  Expr wide =
      Halide::pow(Halide::cast(Halide::Float(64), x), Halide::cast(Halide::Float(64), exponent));
  return Halide::cast(x.type(), wide);
}

// IEEE comparisons: a NaN operand compares false, and unequal. Halide's
// simplifier assumes no NaN (x != x is false, a >= b is !(a < b)), so a
// floating comparison tests for NaN explicitly.
Expr compare(BinaryOpType kind, const Expr& a, const Expr& b) {
  Expr result;
  switch (kind) {
    case BinaryOpType::Eq: result = a == b; break;
    case BinaryOpType::Ne: result = a != b; break;
    case BinaryOpType::Lt: result = a < b; break;
    case BinaryOpType::Le: result = a <= b; break;
    case BinaryOpType::Gt: result = a > b; break;
    case BinaryOpType::Ge: result = a >= b; break;
    default: HOSTIR_ASSERT(false, "not a comparison");
  }
  if (!a.type().is_float()) {
    return result;
  }
  Expr nan = Halide::is_nan(a) || Halide::is_nan(b);
  return Halide::select(nan, Halide::cast(Halide::Bool(), kind == BinaryOpType::Ne), result);
}

// An integer shift as the ATen interpreter's (aten_op_evaluator.cpp): a
// count outside [0, width) shifts every bit out (0, or the sign for an
// arithmetic right shift); Halide leaves such counts undefined.
Expr shift(BinaryOpType kind, const Expr& a, const Expr& count) {
  const int width = a.type().bits();
  Halide::Type bits = Halide::UInt(width);
  Expr zero = Halide::Internal::make_zero(a.type());
  Expr outside = count < 0 || count >= width;
  if (kind == BinaryOpType::BitwiseRightShift) {
    return a >> Halide::select(outside, Halide::cast(count.type(), width - 1), count);
  }
  Expr ua = Halide::reinterpret(bits, a);
  Expr ucount = Halide::reinterpret(bits, count);
  Expr shifted = kind == BinaryOpType::BitwiseLeftShift ? ua << ucount : ua >> ucount;
  return Halide::select(outside, zero, Halide::reinterpret(a.type(), shifted));
}

// torch.gcd's loop on |a| and |b| with C's remainder, unrolled for the
// most steps Euclid takes on `width`-bit integers (consecutive Fibonacci
// numbers: 46 for 32 bits, 92 for 64), each step a Let so the expression
// stays linear in size.
Expr gcd(const Expr& a, const Expr& b) {
  Halide::Type type = a.type();
  const int steps = type.bits() * 3 / 2 + 2;
  std::vector<std::string> as;
  std::vector<std::string> bs;
  for (int k = 0; k <= steps; ++k) {
    as.push_back(Halide::Internal::unique_name('a'));
    bs.push_back(Halide::Internal::unique_name('b'));
  }
  auto var = [&](const std::string& name) { return Halide::Internal::Variable::make(type, name); };
  Expr body = var(bs[steps]);
  for (int k = steps; k >= 1; --k) {
    Expr previous_a = var(as[k - 1]);
    Expr previous_b = var(bs[k - 1]);
    Expr done = previous_a == 0;
    Expr next_b = Halide::select(done, previous_b, previous_a);
    Expr next_a =
        Halide::select(done, previous_a,
                       Halide::mod_round_to_zero(
                           previous_b, Halide::select(done, Halide::cast(type, 1), previous_a)));
    body = Halide::Internal::Let::make(bs[k], next_b, body);
    body = Halide::Internal::Let::make(as[k], next_a, body);
  }
  body = Halide::Internal::Let::make(bs[0], Halide::cast(type, Halide::abs(b)), body);
  return Halide::Internal::Let::make(as[0], Halide::cast(type, Halide::abs(a)), body);
}

// torch.nextafter: the neighbour of a toward b, one step in the bits of
// `storage` (a's type, or half / bfloat16 whose values a and b hold in
// float: the result is one of those values, so exact in float too).
Expr nextafter(const Expr& a, const Expr& b, Halide::Type storage) {
  Halide::Type type = a.type();
  Halide::Type bits = Halide::Int(storage.bits());
  auto fromBits = [&](const Expr& i) {
    return Halide::cast(type, Halide::reinterpret(storage, i));
  };
  Expr tiny = fromBits(Halide::cast(bits, 1));
  Expr step = Halide::select((a < b) == (a > 0), Halide::cast(bits, 1), Halide::cast(bits, -1));
  Expr away = fromBits(Halide::reinterpret(bits, Halide::cast(storage, a)) + step);
  Expr from_zero = Halide::select(b > 0, tiny, -tiny);
  Expr result = Halide::select(a == b, b, Halide::select(a == 0, from_zero, away));
  return Halide::select(Halide::is_nan(a) || Halide::is_nan(b), a + b, result);
}

}  // namespace hostir::exact_math
