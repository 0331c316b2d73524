// The pointwise ops of a segment's lowering: unary, binary, where and iota,
// computed as ATen computes them (exact_math.h, vector_math.h).

#include "hostir/kernels/halide_lowering_state.h"

#include <optional>

#include "hostir/ir/error.h"
#include "hostir/ir/scalar.h"
#include "hostir/kernels/exact_math.h"
#include "hostir/kernels/vector_math.h"
#include "hostir/kernels/vector_trig.h"

namespace hostir::halide_lowering {

namespace {

// The dtype a binary op's operands meet in: the output's, except for a
// comparison (whose output is Bool), which compares in the operands'
// promoted dtype.
DataType operandDtype(const BinaryOp* op) {
  if (!isComparison(op->type())) {
    return op->out()->dtype();
  }
  const auto* lt = dynamic_cast<const TensorView*>(op->lhs());
  const auto* rt = dynamic_cast<const TensorView*>(op->rhs());
  if (lt != nullptr && rt != nullptr) {
    return promoteTypes(lt->dtype(), rt->dtype());
  }
  return lt != nullptr ? promoteTensorWithScalar(lt->dtype(), op->rhs()->dtype())
                       : promoteTensorWithScalar(rt->dtype(), op->lhs()->dtype());
}

// A constant scalar's value, if `val` is one.
std::optional<double> constantValue(const Val* val) {
  const auto* constant = dynamic_cast<const Scalar*>(val);
  if (constant == nullptr || !constant->isConst()) {
    return std::nullopt;
  }
  const ScalarValue& value = *constant->value();
  if (const auto* d = std::get_if<double>(&value)) {
    return *d;
  }
  if (const auto* n = std::get_if<int64_t>(&value)) {
    return static_cast<double>(*n);
  }
  return std::nullopt;
}

}  // namespace

void Lowering::lowerUnary(const UnaryOp* op) {
  const auto* in = op->in()->as<TensorView>();
  const auto* out = op->out()->as<TensorView>();
  uniteAligned(out, in);
  Halide::Type type = computeType(out->dtype());
  UnaryOpType kind = op->type();
  define(out, [&](const Index& i) -> Expr {
    Expr x = load(in, i);
    if (kind == UnaryOpType::Cast) {
      return convert(x, type);
    }
    if (kind == UnaryOpType::Signbit) {
      return exact_math::signbit(convert(x, computeType(in->dtype())));
    }
    x = convert(x, type);
    switch (kind) {
      case UnaryOpType::Neg: return -x;
      case UnaryOpType::Abs: return Halide::cast(type, Halide::abs(x));
      case UnaryOpType::Exp: return vectorExp(x);
      case UnaryOpType::Log: return vectorLog(x);
      case UnaryOpType::Sqrt: return Halide::sqrt(x);
      case UnaryOpType::Relu:
        return type.is_float() ? Halide::select(x < 0, Halide::Internal::make_zero(type), x)
                               : Halide::max(x, Halide::Internal::make_zero(type));
      case UnaryOpType::Sigmoid: return vectorSigmoid(x);
      case UnaryOpType::Tanh: return vectorTanh(x);
      case UnaryOpType::Gelu: return vectorGelu(x);
      case UnaryOpType::GeluDerivative: return vectorGeluDerivative(x);
      // 1 / sqrt(x), two roundings, as ATen's vectorized rsqrt.
      case UnaryOpType::Rsqrt: return Halide::Internal::make_one(type) / Halide::sqrt(x);
      // float32 compute (float64 erf is not compiled: kernel_signature.cpp).
      case UnaryOpType::Erf: return accurateErfFloat32(x);
      // float32 compute, half and bfloat16 included (float64 sin and cos are
      // not compiled: kernel_signature.cpp).
      case UnaryOpType::Sin: return vectorSinFloat32(x);
      case UnaryOpType::Cos: return vectorCosFloat32(x);
      case UnaryOpType::Cast:
      case UnaryOpType::Signbit:
      case UnaryOpType::Real:  // complex operands: not compiled (kernel_signature.cpp)
      case UnaryOpType::Imag: break;
    }
    HOSTIR_ASSERT(false, "unknown unary op");
    return x;
  });
}

// A scalar operand in `dtype`'s compute type, rounded to `dtype` first (as
// ATen converts a wrapped scalar to the common dtype: half x == 0.1 compares
// with 0.1 rounded to half).
Expr Lowering::scalarAs(const Val* operand, DataType dtype) {
  return convert(convert(scalar(operand), storageType(dtype)), computeType(dtype));
}

void Lowering::lowerBinary(const BinaryOp* op) {
  const auto* out = op->out()->as<TensorView>();
  DataType operand_dtype = operandDtype(op);
  Halide::Type type = computeType(operand_dtype);
  if (type.is_bool()) {
    type = Halide::UInt(8);  // ordered comparisons of bools: false < true
  }
  for (const Val* operand : {op->lhs(), op->rhs()}) {
    if (const auto* tv = dynamic_cast<const TensorView*>(operand)) {
      uniteAligned(out, tv);
    }
  }
  // A scalar is rounded to the operands' dtype first where that changes the
  // result: a comparison, nextafter (one step from a half value).
  const bool comparison = isComparison(op->type()) || op->type() == BinaryOpType::NextAfter;
  auto value = [&](const Val* operand, const Index& i) {
    if (const auto* tv = dynamic_cast<const TensorView*>(operand)) {
      return convert(loadBroadcast(tv, i), type);
    }
    if (comparison) {
      return convert(scalarAs(operand, operand_dtype), type);
    }
    return convert(scalar(operand), type);
  };
  BinaryOpType kind = op->type();
  define(out, [&](const Index& i) -> Expr {
    Expr a = value(op->lhs(), i);
    Expr b = value(op->rhs(), i);
    switch (kind) {
      case BinaryOpType::Add: return a + b;
      case BinaryOpType::Sub: return a - b;
      case BinaryOpType::Mul: return a * b;
      case BinaryOpType::Div: return a / b;
      // torch.maximum/minimum propagate NaN.
      case BinaryOpType::Maximum:
        return type.is_float() ? Halide::select(Halide::is_nan(a) || a > b, a, b)
                               : Halide::max(a, b);
      case BinaryOpType::Minimum:
        return type.is_float() ? Halide::select(Halide::is_nan(a) || a < b, a, b)
                               : Halide::min(a, b);
      // Floating only (an integer pow is not compiled: kernel_signature.cpp).
      case BinaryOpType::Pow: return exact_math::power(a, b, constantValue(op->rhs()));
      case BinaryOpType::Eq:
      case BinaryOpType::Ne:
      case BinaryOpType::Lt:
      case BinaryOpType::Le:
      case BinaryOpType::Gt:
      case BinaryOpType::Ge: return exact_math::compare(kind, a, b);
      case BinaryOpType::BitwiseAnd: return a & b;
      case BinaryOpType::BitwiseOr: return a | b;
      case BinaryOpType::BitwiseXor: return a ^ b;
      case BinaryOpType::BitwiseLeftShift:
      case BinaryOpType::BitwiseRightShift:
      case BinaryOpType::LogicalRightShift: return exact_math::shift(kind, a, b);
      case BinaryOpType::Gcd: return exact_math::gcd(a, b);
      case BinaryOpType::NextAfter: return exact_math::nextafter(a, b, storageType(operand_dtype));
      // C's fmod (exact; the dividend's sign), as ATen's floating fmod.
      case BinaryOpType::Fmod:
        return Halide::Internal::Call::make(type, type.bits() == 64 ? "fmod" : "fmodf", {a, b},
                                            Halide::Internal::Call::PureExtern);
      default: break;
    }
    HOSTIR_ASSERT(false, "kernel lowering: ", op->displayName(), " on tensors");
    return a;
  });
}

// The selected operand converted to out's dtype (as ATen converts both
// before selecting): a tensor operand broadcast, a scalar rounded to out's
// dtype.
void Lowering::lowerWhere(const WhereOp* op) {
  const TensorView* out = op->out();
  Halide::Type type = computeType(out->dtype());
  uniteAligned(out, op->condition());
  for (const Val* operand : {op->a(), op->b()}) {
    if (const auto* tv = dynamic_cast<const TensorView*>(operand)) {
      uniteAligned(out, tv);
    }
  }
  auto value = [&](const Val* operand, const Index& i) {
    if (const auto* tv = dynamic_cast<const TensorView*>(operand)) {
      return convert(convert(loadBroadcast(tv, i), storageType(out->dtype())), type);
    }
    return convert(scalarAs(operand, out->dtype()), type);
  };
  define(out, [&](const Index& i) {
    Expr condition = convert(loadBroadcast(op->condition(), i), Halide::Bool());
    return Halide::select(condition, value(op->a(), i), value(op->b(), i));
  });
}

// start + i * step in int64 for an integer dtype, else in double and then
// rounded to out's dtype (through float for half and bfloat16), as the
// ATen interpreter computes it (torch.arange).
void Lowering::lowerIota(const IotaOp* op) {
  const TensorView* out = op->out();
  const bool integral = isIntegralType(out->dtype());
  Halide::Type type = integral ? Halide::Int(64) : Halide::Float(64);
  Expr start = convert(scalar(op->start()), type);
  Expr step = convert(scalar(op->step()), type);
  define(out, [&](const Index& i) {
    Expr value = start + convert(i[0], type) * step;
    if (out->dtype() == DataType::Half || out->dtype() == DataType::BFloat16) {
      value = convert(value, Halide::Float(32));
    }
    return value;
  });
}

}  // namespace hostir::halide_lowering
