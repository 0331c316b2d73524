#include "hostir/ir/scalar_arithmetic.h"

#include <algorithm>

namespace hostir {

std::optional<ScalarValue> applyScalarBinaryOp(BinaryOpType type, const ScalarValue& lhs,
                                               const ScalarValue& rhs, const std::string& what) {
  auto is_integer = [](const ScalarValue& v) { return !std::holds_alternative<double>(v); };
  if (is_integer(lhs) && is_integer(rhs)) {
    auto as_int = [](const ScalarValue& v) {
      return std::visit([](auto x) { return static_cast<int64_t>(x); }, v);
    };
    int64_t a = as_int(lhs);
    int64_t b = as_int(rhs);
    bool divides =
        type == BinaryOpType::Div || type == BinaryOpType::CeilDiv || type == BinaryOpType::Mod;
    HOSTIR_CHECK(!divides || b != 0, "division by zero in ", what);
    switch (type) {
      case BinaryOpType::Add: return a + b;
      case BinaryOpType::Sub: return a - b;
      case BinaryOpType::Mul: return a * b;
      case BinaryOpType::Div: return a / b;
      case BinaryOpType::CeilDiv: return (a + b - 1) / b;
      case BinaryOpType::Mod: return a % b;
      case BinaryOpType::Maximum: return std::max(a, b);
      case BinaryOpType::Minimum: return std::min(a, b);
    }
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
