#include "hostir/ir/scalar.h"

#include <sstream>

#include "hostir/ir/cloner.h"
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
    return std::visit(
        [&](auto v) -> Val* { return IrBuilder::createInContainer<Scalar>(target, v); }, *value_);
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
  const char* prefix = dtype() == DataType::Bool ? "b" : isFloatingType(dtype()) ? "d" : "i";
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
