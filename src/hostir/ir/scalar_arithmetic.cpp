#include "hostir/ir/scalar_arithmetic.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numeric>

namespace hostir {

namespace {

// a ** b on integers (torch's integer pow): by squaring, overflow checked; a
// negative exponent is an error for integers, as in torch.
int64_t integerPower(int64_t a, int64_t b, bool& overflow) {
  int64_t result = 1;
  while (b > 0 && !overflow) {
    if ((b & 1) != 0) {
      overflow = __builtin_mul_overflow(result, a, &result);
    }
    b >>= 1;
    if (b > 0) {
      overflow = overflow || __builtin_mul_overflow(a, a, &a);
    }
  }
  return result;
}

// Shifts of a 64-bit integer; a count of 64 or more shifts everything out
// (nvFuser's rule; C++ leaves it undefined).
int64_t shift(BinaryOpType type, int64_t a, int64_t b) {
  const bool out_of_range = b < 0 || b >= 64;
  const auto bits = static_cast<uint64_t>(a);
  switch (type) {
    case BinaryOpType::BitwiseLeftShift: return out_of_range ? 0 : static_cast<int64_t>(bits << b);
    case BinaryOpType::BitwiseRightShift: return out_of_range ? (a < 0 ? -1 : 0) : a >> b;
    default: return out_of_range ? 0 : static_cast<int64_t>(bits >> b);
  }
}

// A comparison of two scalars, as integers when both are (exact for any
// int64), else as doubles (a NaN compares false, unequal).
bool compare(BinaryOpType type, const ScalarValue& lhs, const ScalarValue& rhs, bool integers) {
  auto ordered = [type](auto a, auto b) {
    switch (type) {
      case BinaryOpType::Eq: return a == b;
      case BinaryOpType::Ne: return a != b;
      case BinaryOpType::Lt: return a < b;
      case BinaryOpType::Le: return a <= b;
      case BinaryOpType::Gt: return a > b;
      default: return a >= b;
    }
  };
  if (integers) {
    return ordered(scalarAsInt(lhs), scalarAsInt(rhs));
  }
  return ordered(scalarAsDouble(lhs), scalarAsDouble(rhs));
}

bool isComplex(const ScalarValue& value) {
  return std::holds_alternative<std::complex<double>>(value);
}

// Arithmetic with a complex operand, as Python's complex numbers: + - * /
// ** and == !=; complex numbers have no order, remainder or bits.
ScalarValue complexBinaryOp(BinaryOpType type, const ScalarValue& lhs, const ScalarValue& rhs,
                            const std::function<std::string()>& what) {
  const std::complex<double> a = scalarAsComplex(lhs);
  const std::complex<double> b = scalarAsComplex(rhs);
  switch (type) {
    case BinaryOpType::Add: return a + b;
    case BinaryOpType::Sub: return a - b;
    case BinaryOpType::Mul: return a * b;
    case BinaryOpType::Div: return a / b;
    case BinaryOpType::Pow: return std::pow(a, b);
    case BinaryOpType::Eq: return a == b;
    case BinaryOpType::Ne: return a != b;
    default:
      HOSTIR_THROW(toString(type), " is not defined for complex numbers (as in torch), in ", what(),
                   "; complex scalars support add, sub, mul, div, pow, eq and ne");
  }
}

// A unary op on a complex number; a real result for abs, real and imag and
// for a cast to a real dtype (the real part, as torch's cast).
ScalarValue complexUnaryOp(UnaryOpType type, std::complex<double> x, DataType out_dtype) {
  switch (type) {
    case UnaryOpType::Neg: return -x;
    case UnaryOpType::Abs: return std::abs(x);
    case UnaryOpType::Exp: return std::exp(x);
    case UnaryOpType::Log: return std::log(x);
    case UnaryOpType::Sqrt: return std::sqrt(x);
    case UnaryOpType::Rsqrt: return 1.0 / std::sqrt(x);
    case UnaryOpType::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case UnaryOpType::Tanh: return std::tanh(x);
    case UnaryOpType::Sin: return std::sin(x);
    case UnaryOpType::Cos: return std::cos(x);
    case UnaryOpType::Real: return x.real();
    case UnaryOpType::Imag: return x.imag();
    case UnaryOpType::Cast:
      if (isComplexType(out_dtype)) {
        return x;
      }
      return applyScalarUnaryOp(UnaryOpType::Cast, x.real(), out_dtype);
    case UnaryOpType::Relu:
    case UnaryOpType::Gelu:
    case UnaryOpType::GeluDerivative:
    case UnaryOpType::Erf:
    case UnaryOpType::Signbit: break;
  }
  HOSTIR_THROW(toString(type), " is not defined for the complex number ", toString(ScalarValue(x)),
               " (as in torch)");
}

}  // namespace

std::optional<ScalarValue> applyScalarBinaryOp(BinaryOpType type, const ScalarValue& lhs,
                                               const ScalarValue& rhs,
                                               const std::function<std::string()>& what) {
  if (isComplex(lhs) || isComplex(rhs)) {
    return complexBinaryOp(type, lhs, rhs, what);
  }
  auto is_integer = [](const ScalarValue& v) { return !std::holds_alternative<double>(v); };
  if (isComparison(type)) {
    return compare(type, lhs, rhs, is_integer(lhs) && is_integer(rhs));
  }
  if (is_integer(lhs) && is_integer(rhs)) {
    int64_t a = scalarAsInt(lhs);
    int64_t b = scalarAsInt(rhs);
    bool divides = type == BinaryOpType::Div || type == BinaryOpType::CeilDiv ||
                   type == BinaryOpType::Mod || type == BinaryOpType::Fmod;
    HOSTIR_CHECK(!divides || b != 0, "division by zero in ", what());
    // Integer overflow is undefined behaviour in C++ (INT64_MIN / -1 even
    // kills the process with SIGFPE): every operation is checked.
    int64_t result = 0;
    bool overflow = false;
    const char* symbol = "";
    switch (type) {
      case BinaryOpType::Add:
        overflow = __builtin_add_overflow(a, b, &result);
        symbol = " + ";
        break;
      case BinaryOpType::Sub:
        overflow = __builtin_sub_overflow(a, b, &result);
        symbol = " - ";
        break;
      case BinaryOpType::Mul:
        overflow = __builtin_mul_overflow(a, b, &result);
        symbol = " * ";
        break;
      case BinaryOpType::Div:
        overflow = a == std::numeric_limits<int64_t>::min() && b == -1;
        result = overflow ? 0 : a / b;
        symbol = " / ";
        break;
      case BinaryOpType::CeilDiv:
        // Rounded towards +infinity for every sign (not (a + b - 1) / b,
        // which overflows near INT64_MAX and is wrong for negative operands).
        overflow = a == std::numeric_limits<int64_t>::min() && b == -1;
        if (!overflow) {
          result = a / b;
          if (a % b != 0 && ((a < 0) == (b < 0))) {
            ++result;
          }
        }
        symbol = " ceilDiv ";
        break;
      case BinaryOpType::Mod:
      case BinaryOpType::Fmod:
        // INT64_MIN % -1 is 0 mathematically, but the CPU traps on it.
        result = b == -1 ? 0 : a % b;
        break;
      case BinaryOpType::Maximum: result = std::max(a, b); break;
      case BinaryOpType::Minimum: result = std::min(a, b); break;
      case BinaryOpType::Pow:
        HOSTIR_CHECK(b >= 0, "integers to a negative power are not allowed (as in torch), in ",
                     what());
        result = integerPower(a, b, overflow);
        symbol = " ** ";
        break;
      case BinaryOpType::Gcd: result = std::gcd(a, b); break;
      case BinaryOpType::BitwiseAnd: result = a & b; break;
      case BinaryOpType::BitwiseOr: result = a | b; break;
      case BinaryOpType::BitwiseXor: result = a ^ b; break;
      case BinaryOpType::BitwiseLeftShift:
      case BinaryOpType::BitwiseRightShift:
      case BinaryOpType::LogicalRightShift: result = shift(type, a, b); break;
      default: return std::nullopt;  // no integer meaning (nextafter)
    }
    HOSTIR_CHECK(!overflow, "integer overflow: ", a, symbol, b,
                 " does not fit in a 64-bit integer, in ", what());
    return result;
  }
  double a = scalarAsDouble(lhs);
  double b = scalarAsDouble(rhs);
  switch (type) {
    case BinaryOpType::Add: return a + b;
    case BinaryOpType::Sub: return a - b;
    case BinaryOpType::Mul: return a * b;
    case BinaryOpType::Div: return a / b;
    case BinaryOpType::Maximum: return std::max(a, b);
    case BinaryOpType::Minimum: return std::min(a, b);
    case BinaryOpType::Pow: return std::pow(a, b);
    case BinaryOpType::NextAfter: return std::nextafter(a, b);
    case BinaryOpType::Fmod: return std::fmod(a, b);
    default: return std::nullopt;
  }
}

ScalarValue applyScalarUnaryOp(UnaryOpType type, const ScalarValue& in, DataType out_dtype) {
  if (const auto* number = std::get_if<std::complex<double>>(&in)) {
    return complexUnaryOp(type, *number, out_dtype);
  }
  if (isComplexType(out_dtype)) {  // a cast of a real number to complex
    return std::complex<double>(scalarAsDouble(in), 0.0);
  }
  const double x = scalarAsDouble(in);
  const int64_t* integer = std::get_if<int64_t>(&in);
  switch (type) {
    case UnaryOpType::Cast:
    case UnaryOpType::Signbit:
    case UnaryOpType::Real:  // complex operands only (UnaryOp::validate)
    case UnaryOpType::Imag: break;
    case UnaryOpType::Neg:
      if (integer != nullptr) {
        HOSTIR_CHECK(*integer != std::numeric_limits<int64_t>::min(), "integer overflow: -(",
                     *integer, ") does not fit in a 64-bit integer");
        return -*integer;
      }
      return -x;
    case UnaryOpType::Abs:
      if (integer != nullptr) {
        HOSTIR_CHECK(*integer != std::numeric_limits<int64_t>::min(), "integer overflow: abs(",
                     *integer, ") does not fit in a 64-bit integer");
        return *integer < 0 ? -*integer : *integer;
      }
      return std::fabs(x);
    case UnaryOpType::Relu:
      if (integer != nullptr) {
        return std::max<int64_t>(*integer, 0);
      }
      return x < 0 ? 0.0 : x;
    case UnaryOpType::Exp: return std::exp(x);
    case UnaryOpType::Log: return std::log(x);
    case UnaryOpType::Sqrt: return std::sqrt(x);
    case UnaryOpType::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case UnaryOpType::Tanh: return std::tanh(x);
    case UnaryOpType::Gelu: return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2));
    case UnaryOpType::GeluDerivative:
      return 0.5 * (1.0 + std::erf(x * M_SQRT1_2)) +
             x * std::exp(-0.5 * x * x) * (0.5 * M_2_SQRTPI * M_SQRT1_2);
    case UnaryOpType::Rsqrt: return 1.0 / std::sqrt(x);
    case UnaryOpType::Erf: return std::erf(x);
    case UnaryOpType::Sin: return std::sin(x);
    case UnaryOpType::Cos: return std::cos(x);
  }
  if (type == UnaryOpType::Signbit) {
    return std::signbit(x);
  }
  if (out_dtype == DataType::Bool) {
    return x != 0.0;
  }
  if (isIntegralType(out_dtype)) {
    if (integer != nullptr) {
      return *integer;
    }
    HOSTIR_CHECK(std::isfinite(x) && std::fabs(x) < 9.2e18, "cast of ", x, " to ",
                 toString(out_dtype), ": the value does not fit in a 64-bit integer");
    return static_cast<int64_t>(x);
  }
  return x;
}

}  // namespace hostir
