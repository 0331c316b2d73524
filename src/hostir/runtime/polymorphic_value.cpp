#include "hostir/runtime/polymorphic_value.h"

#include <sstream>

#include "hostir/ir/error.h"

namespace hostir {

std::string describeValue(const PolymorphicValue& value) {
  std::stringstream ss;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          ss << "nothing";
        } else if constexpr (std::is_same_v<T, at::Tensor>) {
          ss << "tensor " << v.sizes() << " " << v.scalar_type();
        } else if constexpr (std::is_same_v<T, bool>) {
          ss << "bool " << (v ? "true" : "false");
        } else if constexpr (std::is_same_v<T, double>) {
          ss << "double " << v;
        } else if constexpr (std::is_same_v<T, std::complex<double>>) {
          ss << "complex (" << v.real() << ", " << v.imag() << ")";
        } else {
          ss << "int " << v;
        }
      },
      value);
  return ss.str();
}

at::ScalarType toAtenType(DataType dtype) {
  switch (dtype) {
    case DataType::Float: return at::kFloat;
    case DataType::Double: return at::kDouble;
    case DataType::Half: return at::kHalf;
    case DataType::BFloat16: return at::kBFloat16;
    case DataType::Int32: return at::kInt;
    case DataType::Int64: return at::kLong;
    case DataType::Bool: return at::kBool;
    case DataType::ComplexFloat: return at::kComplexFloat;
    case DataType::ComplexDouble: return at::kComplexDouble;
  }
  HOSTIR_ASSERT(false, "unknown DataType");
}

DataType fromAtenType(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return DataType::Float;
    case at::kDouble: return DataType::Double;
    case at::kHalf: return DataType::Half;
    case at::kBFloat16: return DataType::BFloat16;
    case at::kInt: return DataType::Int32;
    case at::kLong: return DataType::Int64;
    case at::kBool: return DataType::Bool;
    case at::kComplexFloat: return DataType::ComplexFloat;
    case at::kComplexDouble: return DataType::ComplexDouble;
    default: HOSTIR_THROW("ATen dtype ", c10::toString(type), " is not supported by hostir");
  }
}

at::Scalar toAtenScalar(const PolymorphicValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) {
    return *i;
  }
  if (const auto* d = std::get_if<double>(&value)) {
    return *d;
  }
  if (const auto* b = std::get_if<bool>(&value)) {
    return *b;
  }
  if (const auto* c = std::get_if<std::complex<double>>(&value)) {
    return c10::complex<double>(c->real(), c->imag());
  }
  if (const auto* t = std::get_if<at::Tensor>(&value)) {
    HOSTIR_CHECK(t->numel() == 1, "a scalar was expected, got a tensor of ", t->numel(),
                 " elements");
    return t->item();
  }
  HOSTIR_THROW("a scalar was expected, got nothing");
}

}  // namespace hostir
