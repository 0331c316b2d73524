#include "hostir/ir/types.h"

#include "hostir/ir/error.h"

namespace hostir {

std::string toString(DataType dtype) {
  switch (dtype) {
    case DataType::Float: return "float";
    case DataType::Double: return "double";
    case DataType::Half: return "half";
    case DataType::BFloat16: return "bfloat16";
    case DataType::Int32: return "int32";
    case DataType::Int64: return "int64";
    case DataType::Bool: return "bool";
    case DataType::ComplexFloat: return "complex64";
    case DataType::ComplexDouble: return "complex128";
  }
  HOSTIR_ASSERT(false, "unknown DataType");
}

std::string toString(ParallelType ptype) {
  switch (ptype) {
    case ParallelType::Serial: return "S";
    case ParallelType::Stream: return "StreamIdx";
    case ParallelType::DIDx: return "deviceIdx.x";
    case ParallelType::DIDy: return "deviceIdx.y";
  }
  HOSTIR_ASSERT(false, "unknown ParallelType");
}

std::string toString(MemoryType mtype) {
  return mtype == MemoryType::Global ? "global" : "local";
}

bool isFloatingType(DataType dtype) {
  return dtype == DataType::Float || dtype == DataType::Double || dtype == DataType::Half ||
         dtype == DataType::BFloat16;
}

bool isIntegralType(DataType dtype) {
  return dtype == DataType::Int32 || dtype == DataType::Int64;
}

bool isComplexType(DataType dtype) {
  return dtype == DataType::ComplexFloat || dtype == DataType::ComplexDouble;
}

DataType complexPartType(DataType complex) {
  HOSTIR_CHECK(isComplexType(complex), toString(complex), " is not a complex dtype");
  return complex == DataType::ComplexDouble ? DataType::Double : DataType::Float;
}

bool isDeviceDim(ParallelType ptype) {
  return ptype == ParallelType::DIDx || ptype == ParallelType::DIDy;
}

int64_t dataTypeSize(DataType dtype) {
  switch (dtype) {
    case DataType::ComplexDouble: return 16;
    case DataType::ComplexFloat:
    case DataType::Double:
    case DataType::Int64: return 8;
    case DataType::Float:
    case DataType::Int32: return 4;
    case DataType::Half:
    case DataType::BFloat16: return 2;
    case DataType::Bool: return 1;
  }
  HOSTIR_ASSERT(false, "unknown DataType");
}

namespace {
int category(DataType dtype) {
  if (dtype == DataType::Bool) {
    return 0;
  }
  if (isComplexType(dtype)) {
    return 3;
  }
  return isIntegralType(dtype) ? 1 : 2;
}

// The complex dtype holding a floating (or complex) dtype's values.
DataType complexOf(DataType dtype) {
  return dtype == DataType::Double || dtype == DataType::ComplexDouble ? DataType::ComplexDouble
                                                                       : DataType::ComplexFloat;
}
}  // namespace

DataType promoteTypes(DataType a, DataType b) {
  if (a == b) {
    return a;
  }
  if (isComplexType(a) || isComplexType(b)) {
    // torch: complex64 with float64 (or complex128) -> complex128.
    const bool wide = complexOf(a) == DataType::ComplexDouble;
    const bool b_wide = complexOf(b) == DataType::ComplexDouble;
    return wide || b_wide ? DataType::ComplexDouble : DataType::ComplexFloat;
  }
  if (category(a) != category(b)) {
    return category(a) > category(b) ? a : b;
  }
  if (category(a) == 2) {
    bool a_half = a == DataType::Half || a == DataType::BFloat16;
    bool b_half = b == DataType::Half || b == DataType::BFloat16;
    if (a_half && b_half) {
      return DataType::Float;
    }
    if (a == DataType::Double || b == DataType::Double) {
      return DataType::Double;
    }
    return DataType::Float;
  }
  return DataType::Int64;  // int32 with int64
}

DataType promoteTensorWithScalar(DataType tensor, DataType scalar) {
  if (category(scalar) <= category(tensor)) {
    return tensor;
  }
  if (category(scalar) == 3) {
    // torch: a complex number with a double tensor -> complex128, with any
    // other non-complex tensor -> complex64 (the default complex dtype).
    return tensor == DataType::Double ? DataType::ComplexDouble : DataType::ComplexFloat;
  }
  return category(scalar) == 2 ? DataType::Float : DataType::Int64;
}

}  // namespace hostir
