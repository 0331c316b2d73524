#include "hostir/ir/scalar_arithmetic.h"

#include <algorithm>
#include <cmath>
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
    auto as_int = [](const ScalarValue& v) {
      return std::visit([](auto x) { return static_cast<int64_t>(x); }, v);
    };
    return ordered(as_int(lhs), as_int(rhs));
  }
  auto as_double = [](const ScalarValue& v) {
    return std::visit([](auto x) { return static_cast<double>(x); }, v);
  };
  return ordered(as_double(lhs), as_double(rhs));
}

}  // namespace

std::optional<ScalarValue> applyScalarBinaryOp(BinaryOpType type, const ScalarValue& lhs,
                                               const ScalarValue& rhs,
                                               const std::function<std::string()>& what) {
  auto is_integer = [](const ScalarValue& v) { return !std::holds_alternative<double>(v); };
  if (isComparison(type)) {
    return compare(type, lhs, rhs, is_integer(lhs) && is_integer(rhs));
  }
  if (is_integer(lhs) && is_integer(rhs)) {
    auto as_int = [](const ScalarValue& v) {
      return std::visit([](auto x) { return static_cast<int64_t>(x); }, v);
    };
    int64_t a = as_int(lhs);
    int64_t b = as_int(rhs);
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
  auto as_double = [](const ScalarValue& v) {
    return std::visit([](auto x) { return static_cast<double>(x); }, v);
  };
  double a = as_double(lhs);
  double b = as_double(rhs);
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
  const double x = std::visit([](auto v) { return static_cast<double>(v); }, in);
  const int64_t* integer = std::get_if<int64_t>(&in);
  switch (type) {
    case UnaryOpType::Cast:
    case UnaryOpType::Signbit: break;
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
