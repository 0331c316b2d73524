#include "hostir/ir/ops.h"

#include <string>
#include <vector>

#include "hostir/ir/error.h"

// The names of the unary, binary and reduction op types (what the printer,
// the Python frontend and the parser of the textual IR look them up by) and
// the traits of the binary ones.

namespace hostir {

std::string toString(UnaryOpType type) {
  switch (type) {
    case UnaryOpType::Neg: return "neg";
    case UnaryOpType::Abs: return "abs";
    case UnaryOpType::Exp: return "exp";
    case UnaryOpType::Log: return "log";
    case UnaryOpType::Sqrt: return "sqrt";
    case UnaryOpType::Relu: return "relu";
    case UnaryOpType::Sigmoid: return "sigmoid";
    case UnaryOpType::Tanh: return "tanh";
    case UnaryOpType::Gelu: return "gelu";
    case UnaryOpType::Cast: return "cast";
    case UnaryOpType::Rsqrt: return "rsqrt";
    case UnaryOpType::Erf: return "erf";
    case UnaryOpType::Sin: return "sin";
    case UnaryOpType::Cos: return "cos";
    case UnaryOpType::Signbit: return "signbit";
    case UnaryOpType::Real: return "real";
    case UnaryOpType::Imag: return "imag";
    case UnaryOpType::GeluDerivative: return "gelu_derivative";
  }
  HOSTIR_ASSERT(false, "unknown UnaryOpType");
}

std::string toString(BinaryOpType type) {
  switch (type) {
    case BinaryOpType::Add: return "add";
    case BinaryOpType::Sub: return "sub";
    case BinaryOpType::Mul: return "mul";
    case BinaryOpType::Div: return "div";
    case BinaryOpType::Maximum: return "maximum";
    case BinaryOpType::Minimum: return "minimum";
    case BinaryOpType::CeilDiv: return "ceilDiv";
    case BinaryOpType::Mod: return "mod";
    case BinaryOpType::Pow: return "pow";
    case BinaryOpType::Eq: return "eq";
    case BinaryOpType::Ne: return "ne";
    case BinaryOpType::Lt: return "lt";
    case BinaryOpType::Le: return "le";
    case BinaryOpType::Gt: return "gt";
    case BinaryOpType::Ge: return "ge";
    case BinaryOpType::Gcd: return "gcd";
    case BinaryOpType::NextAfter: return "nextafter";
    case BinaryOpType::BitwiseAnd: return "bitwise_and";
    case BinaryOpType::BitwiseOr: return "bitwise_or";
    case BinaryOpType::BitwiseXor: return "bitwise_xor";
    case BinaryOpType::BitwiseLeftShift: return "bitwise_left_shift";
    case BinaryOpType::BitwiseRightShift: return "bitwise_right_shift";
    case BinaryOpType::LogicalRightShift: return "logical_right_shift";
    case BinaryOpType::Fmod: return "fmod";
  }
  HOSTIR_ASSERT(false, "unknown BinaryOpType");
}

bool isComparison(BinaryOpType type) {
  switch (type) {
    case BinaryOpType::Eq:
    case BinaryOpType::Ne:
    case BinaryOpType::Lt:
    case BinaryOpType::Le:
    case BinaryOpType::Gt:
    case BinaryOpType::Ge: return true;
    default: return false;
  }
}

bool isIntegerOnly(BinaryOpType type) {
  switch (type) {
    case BinaryOpType::Gcd:
    case BinaryOpType::BitwiseLeftShift:
    case BinaryOpType::BitwiseRightShift:
    case BinaryOpType::LogicalRightShift: return true;
    default: return false;
  }
}

bool isBitwiseLogical(BinaryOpType type) {
  return type == BinaryOpType::BitwiseAnd || type == BinaryOpType::BitwiseOr ||
         type == BinaryOpType::BitwiseXor;
}

std::vector<UnaryOpType> allUnaryOpTypes() {
  std::vector<UnaryOpType> types;
  for (int64_t i = 0; i <= static_cast<int64_t>(UnaryOpType::GeluDerivative); ++i) {
    types.push_back(static_cast<UnaryOpType>(i));
  }
  return types;
}

std::vector<BinaryOpType> allBinaryOpTypes() {
  std::vector<BinaryOpType> types;
  for (int64_t i = 0; i <= static_cast<int64_t>(BinaryOpType::Fmod); ++i) {
    types.push_back(static_cast<BinaryOpType>(i));
  }
  return types;
}

std::string toString(ReductionOpType type) {
  switch (type) {
    case ReductionOpType::Sum: return "sum";
    case ReductionOpType::Max: return "max";
    case ReductionOpType::Min: return "min";
    case ReductionOpType::Product: return "product";
  }
  HOSTIR_ASSERT(false, "unknown ReductionOpType");
}

}  // namespace hostir
