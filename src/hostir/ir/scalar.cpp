#include "hostir/ir/scalar.h"

#include <sstream>

#include "hostir/ir/cloner.h"
#include "hostir/ir/error.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/scalar_names.h"

namespace hostir {

Scalar::Scalar(Fusion* container, DataType dtype) : Val(container, ValType::Scalar, dtype) {}

Scalar::Scalar(Fusion* container, std::string symbol, DataType dtype)
    : Val(container, ValType::Scalar, dtype), symbol_(std::move(symbol)) {}

Scalar::Scalar(Fusion* container, int64_t value)
    : Val(container, ValType::Scalar, DataType::Int64), value_(value) {}

Scalar::Scalar(Fusion* container, double value)
    : Val(container, ValType::Scalar, DataType::Double), value_(value) {}

Scalar::Scalar(Fusion* container, bool value)
    : Val(container, ValType::Scalar, DataType::Bool), value_(value) {}

Scalar::Scalar(Fusion* container, std::complex<double> value)
    : Val(container, ValType::Scalar, DataType::ComplexDouble), value_(value) {}

Scalar::Scalar(Fusion* container, const ScalarValue& value, DataType dtype)
    : Val(container, ValType::Scalar, dtype) {
  if (dtype == DataType::Bool) {
    HOSTIR_CHECK(std::holds_alternative<bool>(value), "a Bool constant needs true or false, got ",
                 hostir::toString(value));
    value_ = value;
  } else if (isIntegralType(dtype)) {
    HOSTIR_CHECK(std::holds_alternative<int64_t>(value) || std::holds_alternative<bool>(value),
                 "an ", hostir::toString(dtype), " constant needs an integer, got ",
                 hostir::toString(value));
    const int64_t number = scalarAsInt(value);
    HOSTIR_CHECK(dtype != DataType::Int32 || number == static_cast<int32_t>(number), number,
                 " does not fit in an int32 constant; use Int64");
    value_ = number;
  } else if (isComplexType(dtype)) {
    std::complex<double> number = scalarAsComplex(value);
    if (dtype == DataType::ComplexFloat) {
      number = std::complex<double>(std::complex<float>(number));
    }
    value_ = number;
  } else {
    HOSTIR_CHECK(!std::holds_alternative<std::complex<double>>(value), "a ",
                 hostir::toString(dtype), " constant cannot hold the complex number ",
                 hostir::toString(value), "; use ComplexFloat or ComplexDouble");
    const double number = scalarAsDouble(value);
    value_ = dtype == DataType::Double ? number : static_cast<double>(static_cast<float>(number));
  }
}

bool isConstantScalar(const Val* val, double expected) {
  const auto* scalar = dynamic_cast<const Scalar*>(val);
  if (scalar == nullptr || !scalar->isConst()) {
    return false;
  }
  const ScalarValue& value = *scalar->value();
  if (const auto* as_int = std::get_if<int64_t>(&value)) {
    return static_cast<double>(*as_int) == expected;
  }
  if (const auto* as_double = std::get_if<double>(&value)) {
    return *as_double == expected;
  }
  return false;
}

double scalarAsDouble(const ScalarValue& value) {
  return std::visit(
      [](auto v) -> double {
        if constexpr (std::is_same_v<decltype(v), std::complex<double>>) {
          return v.real();
        } else {
          return static_cast<double>(v);
        }
      },
      value);
}

int64_t scalarAsInt(const ScalarValue& value) {
  return std::visit(
      [](auto v) -> int64_t {
        if constexpr (std::is_same_v<decltype(v), std::complex<double>>) {
          return static_cast<int64_t>(v.real());
        } else {
          return static_cast<int64_t>(v);
        }
      },
      value);
}

std::complex<double> scalarAsComplex(const ScalarValue& value) {
  if (const auto* number = std::get_if<std::complex<double>>(&value)) {
    return *number;
  }
  return {scalarAsDouble(value), 0.0};
}

int64_t Scalar::constInt() const {
  HOSTIR_ASSERT(isConstInt(), toInlineString(), " is not a constant integer");
  return std::get<int64_t>(*value_);
}

bool Scalar::sameAs(const Val* other) const {
  if (other == this) {
    return true;
  }
  const auto* scalar = dynamic_cast<const Scalar*>(other);
  if (scalar == nullptr || scalar->dtype() != dtype()) {
    return false;
  }
  if (isConst() || scalar->isConst()) {
    return isConst() && scalar->isConst() && *value_ == *scalar->value_;
  }
  if (!symbol_.empty() || !scalar->symbol_.empty()) {
    return symbol_ == scalar->symbol_;
  }
  if (definition() != nullptr || scalar->definition() != nullptr) {
    return definition() != nullptr && scalar->definition() != nullptr &&
           definition()->sameAs(scalar->definition());
  }
  // Two free symbols are the same symbol when they print the same: within a
  // container names are unique, so this is identity; across containers it
  // matches a symbol with its clone (i0 in a fusion and in its copy).
  return name() == scalar->name();
}

Val* Scalar::cloneInto(IrCloner& cloner) const {
  Fusion* target = cloner.target();
  if (value_.has_value()) {
    return IrBuilder::createInContainer<Scalar>(target, *value_, dtype());
  }
  if (!symbol_.empty()) {
    return IrBuilder::createInContainer<Scalar>(target, symbol_, dtype());
  }
  return IrBuilder::createInContainer<Scalar>(target, dtype());
}

std::string toString(const ScalarValue& value) {
  std::stringstream ss;
  std::visit(
      [&](auto v) {
        if constexpr (std::is_same_v<decltype(v), bool>) {
          ss << (v ? "true" : "false");
        } else if constexpr (std::is_same_v<decltype(v), std::complex<double>>) {
          ss << "complex(" << v.real() << ", " << v.imag() << ")";
        } else if constexpr (std::is_same_v<decltype(v), double>) {
          ss << v;
          // Keep doubles recognizable: 2 prints as "2.0".
          if (ss.str().find_first_of(".eEn") == std::string::npos) {
            ss << ".0";
          }
        } else {
          ss << v;
        }
      },
      value);
  return ss.str();
}

std::string Scalar::toInlineString() const {
  if (value_.has_value()) {
    return hostir::toString(*value_);
  }
  if (!symbol_.empty()) {
    return symbol_;
  }
  const char* prefix = dtype() == DataType::Bool ? "b"
                       : isComplexType(dtype())  ? "c"
                       : isFloatingType(dtype()) ? "d"
                                                 : "i";
  if (definition() != nullptr) {
    std::string name = ScalarNames::nameOf(this);
    return name.empty() ? definition()->toInlineString() : name;
  }
  std::string result(prefix);
  result += std::to_string(name());
  return result;
}

std::string Scalar::toString(int /*indent*/) const {
  return toInlineString();
}

}  // namespace hostir
