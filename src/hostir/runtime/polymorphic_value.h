#pragma once

#include <ATen/ATen.h>

#include <complex>
#include <cstdint>
#include <string>
#include <variant>

#include "hostir/ir/types.h"

namespace hostir {

// A concrete value bound to a Val at run time.
using PolymorphicValue =
    std::variant<std::monostate, int64_t, double, bool, std::complex<double>, at::Tensor>;

inline bool hasValue(const PolymorphicValue& value) {
  return !std::holds_alternative<std::monostate>(value);
}

inline bool isTensor(const PolymorphicValue& value) {
  return std::holds_alternative<at::Tensor>(value);
}

// Short description for error messages ("tensor [2, 3] float", "int 4").
std::string describeValue(const PolymorphicValue& value);

at::ScalarType toAtenType(DataType dtype);
DataType fromAtenType(at::ScalarType type);

// The value as an ATen scalar (for fills and scalar operands of tensor ops).
at::Scalar toAtenScalar(const PolymorphicValue& value);

}  // namespace hostir
