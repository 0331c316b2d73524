#include "hostir/ir/scalar_arithmetic.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace hostir {

std::optional<ScalarValue> applyScalarBinaryOp(BinaryOpType type, const ScalarValue& lhs,
                                               const ScalarValue& rhs,
                                               const std::function<std::string()>& what) {
  auto is_integer = [](const ScalarValue& v) { return !std::holds_alternative<double>(v); };
  if (is_integer(lhs) && is_integer(rhs)) {
    auto as_int = [](const ScalarValue& v) {
      return std::visit([](auto x) { return static_cast<int64_t>(x); }, v);
    };
    int64_t a = as_int(lhs);
    int64_t b = as_int(rhs);
    bool divides =
        type == BinaryOpType::Div || type == BinaryOpType::CeilDiv || type == BinaryOpType::Mod;
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
        // INT64_MIN % -1 is 0 mathematically, but the CPU traps on it.
        result = b == -1 ? 0 : a % b;
        break;
      case BinaryOpType::Maximum: result = std::max(a, b); break;
      case BinaryOpType::Minimum: result = std::min(a, b); break;
      default: return std::nullopt;  // tensor-only ops (pow, comparisons)
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
    default: return std::nullopt;
  }
}

}  // namespace hostir
