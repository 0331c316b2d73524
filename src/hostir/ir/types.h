#pragma once

#include <cstdint>
#include <string>

namespace hostir {

// New values go at the end. ComplexFloat / ComplexDouble are torch's
// complex64 / complex128 (two floats / doubles); Halide has no complex type,
// so segments holding them run through ATen (kernels/kernel_signature.cpp).
enum class DataType {
  Float,
  Double,
  Half,
  BFloat16,
  Int32,
  Int64,
  Bool,
  ComplexFloat,
  ComplexDouble
};

// How an IterDomain is mapped onto hardware: a serial loop, a stream of the
// host program, or a device of the mesh.
enum class ParallelType { Serial, Stream, DIDx, DIDy };

enum class IterType { Iteration, Reduction, Broadcast };

enum class MemoryType { Global, Local };

std::string toString(DataType dtype);
std::string toString(ParallelType ptype);
std::string toString(MemoryType mtype);

bool isFloatingType(DataType dtype);
bool isIntegralType(DataType dtype);  // excludes Bool
bool isComplexType(DataType dtype);
// The dtype of a complex dtype's real and imaginary parts (torch.real's).
DataType complexPartType(DataType complex);
bool isDeviceDim(ParallelType ptype);
int64_t dataTypeSize(DataType dtype);

// PyTorch's promotion of two tensor dtypes (same category: the wider one;
// across categories bool < integral < floating < complex; half with bfloat16
// -> float; a complex with a double -> complex double).
DataType promoteTypes(DataType a, DataType b);

// Promotion between a tensor and a wrapped scalar: the scalar only matters
// when it is of a higher category than the tensor, as in PyTorch.
DataType promoteTensorWithScalar(DataType tensor, DataType scalar);

}  // namespace hostir
