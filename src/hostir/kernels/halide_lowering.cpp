#include "hostir/kernels/halide_lowering.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>

#include "hostir/ir/error.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/kernels/resize_gather_lowering.h"
#include "hostir/kernels/vector_math.h"

namespace hostir {

namespace {

// prefix + number (without operator+ on a literal, which GCC 12 flags with
// a false -Wrestrict).
std::string numbered(const char* prefix, int64_t number) {
  std::string text(prefix);
  text += std::to_string(number);
  return text;
}

using Halide::Expr;
using Halide::Func;
using Halide::Var;
using Index = std::vector<Expr>;  // one coordinate per axis of a shape, outermost first

Halide::Type storageType(DataType dtype) {
  switch (dtype) {
    case DataType::Float: return Halide::Float(32);
    case DataType::Double: return Halide::Float(64);
    case DataType::Half: return Halide::Float(16);
    case DataType::BFloat16: return Halide::BFloat(16);
    case DataType::Int32: return Halide::Int(32);
    case DataType::Int64: return Halide::Int(64);
    case DataType::Bool: return Halide::Bool();
    case DataType::ComplexFloat:  // not compiled (kernel_signature.cpp)
    case DataType::ComplexDouble: break;
  }
  HOSTIR_ASSERT(false, "unknown dtype");
  return {};
}

// What arithmetic on a dtype computes in: ATen's CPU kernels compute half
// and bfloat16 in float and round the result.
Halide::Type computeType(DataType dtype) {
  if (dtype == DataType::Half || dtype == DataType::BFloat16) {
    return Halide::Float(32);
  }
  return storageType(dtype);
}

Expr convert(Expr value, Halide::Type type) {
  if (value.type() == type) {
    return value;
  }
  if (type.is_bool()) {
    return value != Halide::Internal::make_zero(value.type());
  }
  if (type.is_float() && type.bits() == 16 && !type.is_bfloat() && value.type().is_float()) {
    // Halide 14 converts a float NaN to half infinity; torch keeps it NaN.
    Expr half_nan = Halide::reinterpret(type, Halide::cast(Halide::UInt(16), 0x7e00));
    return Halide::select(Halide::is_nan(value), half_nan, Halide::cast(type, value));
  }
  return Halide::cast(type, value);
}

// Per axis of every tensor, a class of axes that iterate together (a
// pointwise op's aligned axes, a reduction's kept axes, a broadcast's
// original axes). A reduction whose outer axis is in the class of its
// consumer's outer axis can be computed one outer index at a time.
class AxisClasses {
 public:
  int classOf(const TensorView* tv, int64_t axis) {
    return find(id(tv, axis));
  }
  void unite(const TensorView* a, int64_t axis_a, const TensorView* b, int64_t axis_b) {
    parent_[find(id(a, axis_a))] = find(id(b, axis_b));
  }

 private:
  int id(const TensorView* tv, int64_t axis) {
    auto key = std::make_pair(tv, axis);
    auto it = ids_.find(key);
    if (it != ids_.end()) {
      return it->second;
    }
    int next = static_cast<int>(parent_.size());
    parent_.push_back(next);
    ids_.emplace(key, next);
    return next;
  }
  int find(int x) {
    while (parent_[x] != x) {
      x = parent_[x] = parent_[parent_[x]];
    }
    return x;
  }
  struct PairHash {
    size_t operator()(const std::pair<const TensorView*, int64_t>& key) const {
      return std::hash<const void*>()(key.first) * 31 + std::hash<int64_t>()(key.second);
    }
  };
  std::unordered_map<std::pair<const TensorView*, int64_t>, int, PairHash> ids_;
  std::vector<int> parent_;
};

struct ReductionFunc {
  Func accumulator;
  const ReductionOp* op;
  bool innermost_reduced;  // the input's innermost axis is reduced
  Halide::RDom domain;
};

class Lowering {
 public:
  Lowering(const Fusion& fusion, const KernelSignature& signature, const KernelTarget& target)
      : fusion_(fusion), signature_(signature), target_(target) {}

  HalideKernel run() {
    for (const TensorView* input : signature_.tensor_inputs) {
      Halide::ImageParam image(storageType(input->dtype()), static_cast<int>(input->rank()),
                               numbered("in", arguments_.size()));
      arguments_.push_back(image);
      Func wrapper(numbered("T", input->name()));
      std::vector<Var> vars = varsFor(input->rank());
      if (vars.empty()) {
        wrapper() = image();
      } else {
        wrapper(vars) = image(std::vector<Expr>(vars.begin(), vars.end()));
      }
      funcs_[input] = wrapper;
    }
    for (size_t i = 0; i < signature_.scalars.size(); ++i) {
      const KernelScalarArgument& scalar = signature_.scalars[i];
      std::string name = numbered("s", i);
      if (scalar.floating) {
        Halide::Param<double> param(name);
        arguments_.push_back(param);
        scalar_exprs_.push_back(param);
      } else {
        Halide::Param<int64_t> param(name);
        arguments_.push_back(param);
        scalar_exprs_.push_back(param);
      }
    }
    for (const hostir::Expr* expr : fusion_.exprs()) {
      if (!expr->outputs().empty() && expr->output(0)->vtype() == ValType::TensorView) {
        lower(expr);  // scalar arithmetic arrives as an argument
      }
    }
    std::vector<Func> outputs;
    for (size_t i = 0; i < signature_.outputs.size(); ++i) {
      const TensorView* tv = signature_.outputs[i];
      Func output(numbered("out", i));
      std::vector<Var> vars = varsFor(tv->rank());
      if (vars.empty()) {
        output() = funcs_.at(tv)();
      } else {
        output(vars) = funcs_.at(tv)(std::vector<Expr>(vars.begin(), vars.end()));
      }
      scheduleOutput(output, tv, vars);
      outputs.push_back(output);
    }
    scheduleReductions(outputs);
    scheduleSharedRowValues(outputs);
    return HalideKernel{Halide::Pipeline(outputs), arguments_};
  }

 private:
  static std::vector<Var> varsFor(int64_t rank) {
    std::vector<Var> vars;
    for (int64_t i = 0; i < rank; ++i) {
      vars.emplace_back(numbered("d", i));
    }
    return vars;
  }

  int lanes(const TensorView* tv) const {
    int bytes = std::max(1, computeType(tv->dtype()).bytes());
    return std::max(1, target_.vector_bits / (8 * bytes));
  }

  // The value of `tv` at `index` (outermost first), in its compute type.
  Expr load(const TensorView* tv, const Index& index) {
    auto it = funcs_.find(tv);
    HOSTIR_ASSERT(it != funcs_.end(), "kernel lowering: ", tv->toInlineString(),
                  " is read before it is defined");
    Expr value = index.empty() ? it->second() : it->second(Index(index.rbegin(), index.rend()));
    return convert(value, computeType(tv->dtype()));
  }

  // A tensor operand of a pointwise op read at the op's output index:
  // right-aligned, broadcast axes read at 0.
  Expr loadBroadcast(const TensorView* tv, const Index& out_index) {
    std::vector<IterDomain*> shape = tv->shapeDomain();
    size_t offset = out_index.size() - shape.size();
    Index index;
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      index.push_back(shape[axis]->isBroadcast() ? Expr(0) : out_index[axis + offset]);
    }
    return load(tv, index);
  }

  Expr scalar(const Val* val) {
    if (const auto* constant = dynamic_cast<const Scalar*>(val);
        constant != nullptr && constant->isConst()) {
      const ScalarValue& value = *constant->value();
      if (const auto* d = std::get_if<double>(&value)) {
        return Expr(*d);
      }
      if (const auto* b = std::get_if<bool>(&value)) {
        return Halide::cast(Halide::Bool(), Expr(*b ? 1 : 0));
      }
      return Halide::cast(Halide::Int(64), Expr(std::get<int64_t>(value)));
    }
    Expr argument = scalar_exprs_.at(const_cast<KernelSignature&>(signature_).valueArgument(val));
    if (val->dtype() == DataType::Bool) {
      return argument != Halide::cast(argument.type(), 0);
    }
    return argument;
  }

  Expr extent(const TensorView* tv, int64_t axis) {
    size_t index = const_cast<KernelSignature&>(signature_).extentArgument(tv, axis);
    return Halide::cast(Halide::Int(32), scalar_exprs_.at(index));
  }

  Expr index32(const Val* val) {
    return Halide::cast(Halide::Int(32), scalar(val));
  }

  // The reads of resize_gather_lowering.h through this lowering.
  KernelReads reads() {
    return {[this](const TensorView* tv, const Index& i) { return load(tv, i); },
            [this](const TensorView* tv, int64_t axis) { return extent(tv, axis); },
            [this](const Val* val) { return scalar(val); }};
  }

  // Defines `out`'s Func from its value at an output index.
  void define(const TensorView* out, const std::function<Expr(const Index&)>& body) {
    Func func(numbered("T", out->name()));
    std::vector<Var> vars = varsFor(out->rank());
    Index index(vars.rbegin(), vars.rend());  // outermost first
    Expr value = convert(body(index), storageType(out->dtype()));
    if (vars.empty()) {
      func() = value;
    } else {
      func(vars) = value;
    }
    funcs_[out] = func;
  }

  void uniteAligned(const TensorView* out, const TensorView* in) {
    std::vector<IterDomain*> shape = in->shapeDomain();
    int64_t offset = out->rank() - static_cast<int64_t>(shape.size());
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      if (!shape[axis]->isBroadcast()) {
        classes_.unite(in, static_cast<int64_t>(axis), out, static_cast<int64_t>(axis) + offset);
      }
    }
  }

  void lower(const hostir::Expr* expr) {
    if (const auto* op = dynamic_cast<const LoadStoreOp*>(expr)) {
      const auto* in = op->in()->as<TensorView>();
      const auto* out = op->out()->as<TensorView>();
      uniteAligned(out, in);
      define(out, [&](const Index& i) { return load(in, i); });
    } else if (const auto* op = dynamic_cast<const UnaryOp*>(expr)) {
      lowerUnary(op);
    } else if (const auto* op = dynamic_cast<const BinaryOp*>(expr)) {
      lowerBinary(op);
    } else if (const auto* op = dynamic_cast<const WhereOp*>(expr)) {
      lowerWhere(op);
    } else if (const auto* op = dynamic_cast<const IotaOp*>(expr)) {
      lowerIota(op);
    } else if (const auto* op = dynamic_cast<const ReductionOp*>(expr)) {
      lowerReduction(op);
    } else if (const auto* op = dynamic_cast<const BroadcastOp*>(expr)) {
      const std::vector<int64_t>& flags = op->isBroadcastDims();
      int64_t in_axis = 0;
      for (size_t axis = 0; axis < flags.size(); ++axis) {
        if (flags[axis] == 0) {
          classes_.unite(op->in(), in_axis++, op->out(), static_cast<int64_t>(axis));
        }
      }
      define(op->out(), [&](const Index& i) {
        Index index;
        for (size_t axis = 0; axis < flags.size(); ++axis) {
          if (flags[axis] == 0) {
            index.push_back(i[axis]);
          }
        }
        return load(op->in(), index);
      });
    } else if (const auto* op = dynamic_cast<const SelectOp*>(expr)) {
      Expr n = extent(op->in(), op->dim());
      Expr position = index32(op->index());
      position = Halide::select(position < 0, position + n, position);
      define(op->out(), [&](const Index& i) {
        Index index(i);
        index.insert(index.begin() + op->dim(), position);
        return load(op->in(), index);
      });
    } else if (const auto* op = dynamic_cast<const SliceOp*>(expr)) {
      // torch's bounds: a negative start counts from the end, and the
      // start is clamped into [0, n]; in 64 bits, so a start beyond 32 bits
      // (-2^32 + 1 given at run time) is clamped, not truncated.
      Expr n = extent(op->in(), op->dim());
      Expr n64 = Halide::cast(Halide::Int(64), n);
      Expr start64 = Halide::cast(Halide::Int(64), scalar(op->start()));
      start64 = Halide::select(start64 < 0, start64 + n64, start64);
      Expr start = Halide::cast(Halide::Int(32),
                                Halide::clamp(start64, Halide::cast(Halide::Int(64), 0), n64));
      for (int64_t axis = 0; axis < op->out()->rank(); ++axis) {
        classes_.unite(op->in(), axis, op->out(), axis);
      }
      define(op->out(), [&](const Index& i) {
        Index index(i);
        index[op->dim()] = index[op->dim()] + start;
        return load(op->in(), index);
      });
    } else if (const auto* op = dynamic_cast<const PermuteOp*>(expr)) {
      const std::vector<int64_t>& dims = op->dims();
      for (size_t axis = 0; axis < dims.size(); ++axis) {
        classes_.unite(op->in(), dims[axis], op->out(), static_cast<int64_t>(axis));
      }
      define(op->out(), [&](const Index& i) {
        Index index(dims.size());
        for (size_t axis = 0; axis < dims.size(); ++axis) {
          index[dims[axis]] = i[axis];
        }
        return load(op->in(), index);
      });
    } else if (const auto* op = dynamic_cast<const ReshapeOp*>(expr)) {
      lowerReshape(op);
    } else if (const auto* op = dynamic_cast<const PadOp*>(expr)) {
      Expr fill = scalarAs(op->value(), op->out()->dtype());
      define(op->out(), [&](const Index& i) { return padValue(op, i, reads(), fill); });
    } else if (const auto* op = dynamic_cast<const CatOp*>(expr)) {
      define(op->out(), [&](const Index& i) { return catValue(op, i, reads()); });
    } else if (const auto* op = dynamic_cast<const GatherOp*>(expr)) {
      define(op->out(), [&](const Index& i) { return gatherValue(op, i, reads()); });
    } else if (const auto* op = dynamic_cast<const FullOp*>(expr)) {
      Expr value = scalar(op->fillValue());
      define(op->out(),
             [&](const Index&) { return convert(value, computeType(op->out()->dtype())); });
    } else {
      HOSTIR_ASSERT(false, "kernel lowering has no case for ", expr->opName());
    }
  }

  void lowerUnary(const UnaryOp* op) {
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
        return signbit(convert(x, computeType(in->dtype())));
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
        // 1 / sqrt(x), two roundings, as ATen's vectorized rsqrt.
        case UnaryOpType::Rsqrt: return Halide::Internal::make_one(type) / Halide::sqrt(x);
        // float32 compute (float64 erf is not compiled: kernel_signature.cpp).
        case UnaryOpType::Erf: return accurateErfFloat32(x);
        case UnaryOpType::Sin:  // not compiled (kernel_signature.cpp)
        case UnaryOpType::Cos:
        case UnaryOpType::Cast:
        case UnaryOpType::Signbit:
        case UnaryOpType::Real:  // complex operands: not compiled (kernel_signature.cpp)
        case UnaryOpType::Imag: break;
      }
      HOSTIR_ASSERT(false, "unknown unary op");
      return x;
    });
  }

  // torch.signbit: the sign bit itself, so -0.0 and a negative NaN are true.
  static Expr signbit(const Expr& x) {
    if (x.type().is_float()) {
      return Halide::reinterpret(Halide::Int(x.type().bits()), x) < 0;
    }
    if (x.type().is_bool() || x.type().is_uint()) {
      return Halide::cast(Halide::Bool(), false);
    }
    return x < 0;
  }

  // The dtype a binary op's operands meet in: the output's, except for a
  // comparison (whose output is Bool), which compares in the operands'
  // promoted dtype.
  static DataType operandDtype(const BinaryOp* op) {
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

  // A scalar operand in `dtype`'s compute type, rounded to `dtype` first (as
  // ATen converts a wrapped scalar to the common dtype: half x == 0.1 compares
  // with 0.1 rounded to half).
  Expr scalarAs(const Val* operand, DataType dtype) {
    return convert(convert(scalar(operand), storageType(dtype)), computeType(dtype));
  }

  // A constant scalar's value, if `val` is one.
  static std::optional<double> constantValue(const Val* val) {
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

  // x ** exponent for a floating x: the constant exponents ATen computes
  // without pow (2, 3, 0.5, -0.5, -1, -2) the same way; else the C
  // library's pow in double (Halide's float32 pow is an exp/log
  // approximation that loses the last bits and IEEE's special cases: NaN
  // exponents, negative bases), rounded back to x's type.
  static Expr power(const Expr& x, const Expr& exponent, std::optional<double> constant) {
    Expr one = Halide::Internal::make_one(x.type());
    if (constant.has_value()) {
      double e = *constant;
      if (e == 2.0) {
        return x * x;
      }
      if (e == 3.0) {
        return x * x * x;
      }
      if (e == 0.5) {
        return Halide::sqrt(x);
      }
      if (e == -0.5) {
        return one / Halide::sqrt(x);
      }
      if (e == -1.0) {
        return one / x;
      }
      if (e == -2.0) {
        return one / (x * x);
      }
    }
    if (x.type().bits() == 64) {
      return Halide::pow(x, exponent);
    }
    Expr wide =
        Halide::pow(Halide::cast(Halide::Float(64), x), Halide::cast(Halide::Float(64), exponent));
    return Halide::cast(x.type(), wide);
  }

  // IEEE comparisons: a NaN operand compares false, and unequal. Halide's
  // simplifier assumes no NaN (x != x is false, a >= b is !(a < b)), so a
  // floating comparison tests for NaN explicitly.
  static Expr compare(BinaryOpType kind, const Expr& a, const Expr& b) {
    Expr result;
    switch (kind) {
      case BinaryOpType::Eq: result = a == b; break;
      case BinaryOpType::Ne: result = a != b; break;
      case BinaryOpType::Lt: result = a < b; break;
      case BinaryOpType::Le: result = a <= b; break;
      case BinaryOpType::Gt: result = a > b; break;
      case BinaryOpType::Ge: result = a >= b; break;
      default: HOSTIR_ASSERT(false, "not a comparison");
    }
    if (!a.type().is_float()) {
      return result;
    }
    Expr nan = Halide::is_nan(a) || Halide::is_nan(b);
    return Halide::select(nan, Halide::cast(Halide::Bool(), kind == BinaryOpType::Ne), result);
  }

  void lowerBinary(const BinaryOp* op) {
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
    const bool comparison = isComparison(op->type());
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
        case BinaryOpType::Pow: return power(a, b, constantValue(op->rhs()));
        case BinaryOpType::Eq:
        case BinaryOpType::Ne:
        case BinaryOpType::Lt:
        case BinaryOpType::Le:
        case BinaryOpType::Gt:
        case BinaryOpType::Ge: return compare(kind, a, b);
        case BinaryOpType::BitwiseAnd: return a & b;
        case BinaryOpType::BitwiseOr: return a | b;
        case BinaryOpType::BitwiseXor: return a ^ b;
        case BinaryOpType::BitwiseLeftShift:
        case BinaryOpType::BitwiseRightShift:
        case BinaryOpType::LogicalRightShift: return shift(kind, a, b);
        case BinaryOpType::Gcd: return gcd(a, b);
        case BinaryOpType::NextAfter: return nextafter(a, b);
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

  // An integer shift as the ATen interpreter's (aten_op_evaluator.cpp): a
  // count outside [0, width) shifts every bit out (0, or the sign for an
  // arithmetic right shift); Halide leaves such counts undefined.
  static Expr shift(BinaryOpType kind, const Expr& a, const Expr& count) {
    const int width = a.type().bits();
    Halide::Type bits = Halide::UInt(width);
    Expr zero = Halide::Internal::make_zero(a.type());
    Expr outside = count < 0 || count >= width;
    if (kind == BinaryOpType::BitwiseRightShift) {
      return a >> Halide::select(outside, Halide::cast(count.type(), width - 1), count);
    }
    Expr ua = Halide::reinterpret(bits, a);
    Expr ucount = Halide::reinterpret(bits, count);
    Expr shifted = kind == BinaryOpType::BitwiseLeftShift ? ua << ucount : ua >> ucount;
    return Halide::select(outside, zero, Halide::reinterpret(a.type(), shifted));
  }

  // torch.gcd's loop on |a| and |b| with C's remainder, unrolled for the
  // most steps Euclid takes on `width`-bit integers (consecutive Fibonacci
  // numbers: 46 for 32 bits, 92 for 64), each step a Let so the expression
  // stays linear in size.
  static Expr gcd(const Expr& a, const Expr& b) {
    Halide::Type type = a.type();
    const int steps = type.bits() * 3 / 2 + 2;
    std::vector<std::string> as;
    std::vector<std::string> bs;
    for (int k = 0; k <= steps; ++k) {
      as.push_back(Halide::Internal::unique_name('a'));
      bs.push_back(Halide::Internal::unique_name('b'));
    }
    auto var = [&](const std::string& name) {
      return Halide::Internal::Variable::make(type, name);
    };
    Expr body = var(bs[steps]);
    for (int k = steps; k >= 1; --k) {
      Expr previous_a = var(as[k - 1]);
      Expr previous_b = var(bs[k - 1]);
      Expr done = previous_a == 0;
      Expr next_b = Halide::select(done, previous_b, previous_a);
      Expr next_a =
          Halide::select(done, previous_a,
                         Halide::mod_round_to_zero(
                             previous_b, Halide::select(done, Halide::cast(type, 1), previous_a)));
      body = Halide::Internal::Let::make(bs[k], next_b, body);
      body = Halide::Internal::Let::make(as[k], next_a, body);
    }
    body = Halide::Internal::Let::make(bs[0], Halide::cast(type, Halide::abs(b)), body);
    return Halide::Internal::Let::make(as[0], Halide::cast(type, Halide::abs(a)), body);
  }

  // torch.nextafter: the neighbour of a toward b, one step in a's bits.
  static Expr nextafter(const Expr& a, const Expr& b) {
    Halide::Type type = a.type();
    Halide::Type bits = Halide::Int(type.bits());
    Expr tiny = Halide::reinterpret(type, Halide::cast(bits, 1));
    Expr step = Halide::select((a < b) == (a > 0), Halide::cast(bits, 1), Halide::cast(bits, -1));
    Expr away = Halide::reinterpret(type, Halide::reinterpret(bits, a) + step);
    Expr from_zero = Halide::select(b > 0, tiny, -tiny);
    Expr result = Halide::select(a == b, b, Halide::select(a == 0, from_zero, away));
    return Halide::select(Halide::is_nan(a) || Halide::is_nan(b), a + b, result);
  }

  // The selected operand converted to out's dtype (as ATen converts both
  // before selecting): a tensor operand broadcast, a scalar rounded to out's
  // dtype.
  void lowerWhere(const WhereOp* op) {
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
  void lowerIota(const IotaOp* op) {
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

  void lowerReduction(const ReductionOp* op) {
    const TensorView* in = op->in();
    const TensorView* out = op->out();
    std::vector<int64_t> axes = op->axes();
    std::sort(axes.begin(), axes.end());
    int64_t rank = in->rank();
    std::vector<int64_t> kept;
    for (int64_t axis = 0; axis < rank; ++axis) {
      if (!std::binary_search(axes.begin(), axes.end(), axis)) {
        kept.push_back(axis);
      }
    }
    for (size_t k = 0; k < kept.size(); ++k) {
      classes_.unite(in, kept[k], out, static_cast<int64_t>(k));
    }
    // The innermost reduced axis first: the RDom's first dimension is its
    // innermost loop.
    std::vector<Halide::Range> ranges;
    for (auto axis = axes.rbegin(); axis != axes.rend(); ++axis) {
      ranges.emplace_back(0, extent(in, *axis));
    }
    Halide::RDom domain(ranges, numbered("r", out->name()));
    Halide::Type type = computeType(out->dtype());
    std::vector<Var> vars = varsFor(static_cast<int64_t>(kept.size()));
    Index out_index(vars.rbegin(), vars.rend());
    Index in_index(static_cast<size_t>(rank));
    for (size_t k = 0; k < kept.size(); ++k) {
      in_index[kept[k]] = out_index[k];
    }
    for (size_t r = 0; r < axes.size(); ++r) {
      in_index[axes[axes.size() - 1 - r]] = domain[static_cast<int>(r)];
    }
    Expr element = convert(load(in, in_index), type);
    Expr init;
    switch (op->type()) {
      case ReductionOpType::Sum: init = Halide::Internal::make_zero(type); break;
      case ReductionOpType::Product: init = Halide::Internal::make_one(type); break;
      case ReductionOpType::Max:
        init = type.is_float() ? Halide::cast(type, Expr(-std::numeric_limits<double>::infinity()))
                               : type.min();
        break;
      case ReductionOpType::Min:
        init = type.is_float() ? Halide::cast(type, Expr(std::numeric_limits<double>::infinity()))
                               : type.max();
        break;
    }
    Func accumulator(numbered("acc", out->name()));
    std::vector<Expr> pure(vars.begin(), vars.end());
    // torch's max and min return NaN when any element is NaN; the engine's
    // max/min do not (a NaN accumulator loses to the next element). So a
    // floating max/min also counts NaN elements, as a second value of the
    // same reduction (a sum: the pair stays associative, so rfactor still
    // splits it), and the result is NaN where the count is not zero.
    const bool counts_nans = type.is_float() && (op->type() == ReductionOpType::Max ||
                                                 op->type() == ReductionOpType::Min);
    Expr zero = Halide::Internal::make_zero(type);
    auto assign = [&](const Halide::Tuple& value) {
      if (vars.empty()) {
        accumulator() = value;
      } else {
        accumulator(pure) = value;
      }
    };
    assign(counts_nans ? Halide::Tuple(init, zero) : Halide::Tuple(init));
    Halide::FuncRef current_ref = vars.empty() ? accumulator() : accumulator(pure);
    Expr current = counts_nans ? Halide::Tuple(current_ref)[0] : Expr(current_ref);
    Expr updated;
    switch (op->type()) {
      case ReductionOpType::Sum: updated = current + element; break;
      case ReductionOpType::Product: updated = current * element; break;
      case ReductionOpType::Max: updated = Halide::max(current, element); break;
      case ReductionOpType::Min: updated = Halide::min(current, element); break;
    }
    if (counts_nans) {
      Expr nans = Halide::Tuple(current_ref)[1] +
                  Halide::select(Halide::is_nan(element), Halide::Internal::make_one(type), zero);
      assign(Halide::Tuple(updated, nans));
    } else {
      assign(Halide::Tuple(updated));
    }
    reductions_.push_back({accumulator, op, !axes.empty() && axes.back() == rank - 1, domain});
    define(out, [&](const Index& i) {
      Halide::FuncRef ref = i.empty() ? accumulator() : accumulator(Index(i.rbegin(), i.rend()));
      if (!counts_nans) {
        return Expr(ref);
      }
      Halide::Tuple value(ref);
      return Halide::select(value[1] > zero,
                            Halide::cast(type, Expr(std::numeric_limits<double>::quiet_NaN())),
                            value[0]);
    });
  }

  void lowerReshape(const ReshapeOp* op) {
    const TensorView* in = op->in();
    const TensorView* out = op->out();
    define(out, [&](const Index& i) {
      Expr linear = 0;
      for (int64_t axis = 0; axis < out->rank(); ++axis) {
        linear = linear * extent(out, axis) + i[axis];
      }
      Index index(static_cast<size_t>(in->rank()));
      for (int64_t axis = in->rank() - 1; axis >= 0; --axis) {
        Expr n = extent(in, axis);
        index[axis] = linear % n;
        linear = linear / n;
      }
      return load(in, index);
    });
  }

  // Outputs: vectorized along the innermost axis (several registers per
  // step, so that a long dependent chain is throughput- not latency-bound)
  // and parallel over the outer axes.
  void scheduleOutput(Func& output, const TensorView* tv, std::vector<Var>& vars) {
    if (vars.empty()) {
      return;
    }
    int vector = lanes(tv) * 4;
    if (vars.size() == 1) {
      Var outer("d0o"), inner("d0i");
      output.split(vars[0], outer, inner, vector * 256, Halide::TailStrategy::GuardWithIf)
          .vectorize(inner, vector, Halide::TailStrategy::GuardWithIf)
          .parallel(outer);
      row_var_[output.name()] = outer;
      return;
    }
    output.vectorize(vars[0], vector, Halide::TailStrategy::GuardWithIf);
    Var rows = vars.back();
    for (size_t d = vars.size() - 2; d >= 1; --d) {
      Var fused(numbered("f", d));
      output.fuse(vars[d], rows, fused);
      rows = fused;
    }
    output.parallel(rows);
    row_var_[output.name()] = rows;
    output_tvs_[output.name()] = tv;
  }

  // A reduction is computed inside its consumer's parallel row loop when
  // its outermost kept axis is that loop's axis (softmax's and layer norm's
  // row statistics: the row stays in cache), else once at the root,
  // parallel over its own outer axes.
  void scheduleReductions(std::vector<Func>& outputs) {
    // Consumers first: a reduction can go inside an output's row loop only
    // if every reduction reading it went there too.
    std::unordered_map<const ReductionOp*, int>& placed = row_reductions_;
    for (auto it = reductions_.rbegin(); it != reductions_.rend(); ++it) {
      ReductionFunc& reduction = *it;
      const TensorView* out = reduction.op->out();
      Func& acc = reduction.accumulator;
      int64_t rank = out->rank();
      std::set<size_t> reading_outputs;
      std::set<const ReductionOp*> reading_reductions;
      std::set<const TensorView*> visited;
      consumersOf(out, reading_outputs, reading_reductions, visited);
      std::optional<size_t> row_output;
      if (reading_outputs.size() == 1) {
        size_t index = *reading_outputs.begin();
        bool together = std::all_of(
            reading_reductions.begin(), reading_reductions.end(), [&](const ReductionOp* r) {
              auto where = placed.find(r);
              return where != placed.end() && where->second == static_cast<int>(index);
            });
        if (together && rank >= 1 && rowAligned(out, signature_.outputs[index])) {
          row_output = index;
        }
      }
      std::optional<Func> row_consumer;
      if (row_output.has_value()) {
        row_consumer = outputs[*row_output];
        placed[reduction.op] = static_cast<int>(*row_output);
      }
      int vector = lanes(out);
      if (reduction.innermost_reduced) {
        // Vector lanes over the innermost reduced axis, combined at the end.
        Halide::RVar outer_r("ro"), inner_r("ri");
        Var lane("lane");
        Func partial = acc.update()
                           .split(reduction.domain[0], outer_r, inner_r, vector * 4,
                                  Halide::TailStrategy::GuardWithIf)
                           .rfactor(inner_r, lane);
        partial.compute_at(acc, rank >= 1 ? Var("d0") : Var::outermost());
        partial.vectorize(lane).update().vectorize(lane);
      } else if (rank >= 1) {
        acc.vectorize(Var("d0"), vector, Halide::TailStrategy::GuardWithIf);
        acc.update().vectorize(Var("d0"), vector, Halide::TailStrategy::GuardWithIf);
      }
      if (row_consumer.has_value()) {
        acc.compute_at(*row_consumer, row_var_.at(row_consumer->name()));
        continue;
      }
      acc.compute_root();
      if (rank >= 2) {
        Var outer(numbered("d", rank - 1));
        acc.parallel(outer);
        acc.update().parallel(outer);
      }
    }
  }

  // An expensive value (one with a transcendental op) that both a reduction
  // computed in an output's row loop and that output read would otherwise be
  // inlined into each and computed twice (softmax's exp(x - max) is read by
  // the sum and by the division): it is computed once per row instead, into a
  // row buffer that stays in cache.
  void scheduleSharedRowValues(std::vector<Func>& outputs) {
    std::set<const TensorView*> materialized;
    for (const hostir::Expr* expr : fusion_.exprs()) {
      if (expr->outputs().empty() || dynamic_cast<const ReductionOp*>(expr) != nullptr) {
        continue;
      }
      const auto* tv = dynamic_cast<const TensorView*>(expr->output(0));
      if (tv == nullptr || tv->rank() == 0 || !funcs_.count(tv) ||
          std::find(signature_.outputs.begin(), signature_.outputs.end(), tv) !=
              signature_.outputs.end()) {
        continue;
      }
      std::set<size_t> reading_outputs;
      std::set<const ReductionOp*> reading_reductions;
      std::set<const TensorView*> visited;
      consumersOf(tv, reading_outputs, reading_reductions, visited);
      if (reading_outputs.size() != 1 || reading_reductions.empty()) {
        continue;
      }
      size_t index = *reading_outputs.begin();
      bool in_row = std::all_of(
          reading_reductions.begin(), reading_reductions.end(), [&](const ReductionOp* r) {
            auto where = row_reductions_.find(r);
            return where != row_reductions_.end() && where->second == static_cast<int>(index);
          });
      const TensorView* output = signature_.outputs[index];
      if (!in_row || tv->rank() != output->rank() || !sameAxes(tv, output) ||
          !expensive(tv, materialized)) {
        continue;
      }
      Func& func = funcs_.at(tv);
      func.compute_at(outputs[index], row_var_.at(outputs[index].name()))
          .vectorize(Var("d0"), lanes(tv), Halide::TailStrategy::GuardWithIf);
      materialized.insert(tv);
    }
  }

  bool sameAxes(const TensorView* a, const TensorView* b) {
    for (int64_t axis = 0; axis < a->rank(); ++axis) {
      if (classes_.classOf(a, axis) != classes_.classOf(b, axis)) {
        return false;
      }
    }
    return true;
  }

  // Whether computing `tv` inline runs a transcendental op (stopping at
  // inputs, reductions and values already computed once per row).
  static bool expensive(const TensorView* tv, const std::set<const TensorView*>& materialized) {
    const hostir::Expr* definition = tv->definition();
    if (definition == nullptr || dynamic_cast<const ReductionOp*>(definition) != nullptr) {
      return false;
    }
    if (const auto* unary = dynamic_cast<const UnaryOp*>(definition)) {
      switch (unary->type()) {
        case UnaryOpType::Exp:
        case UnaryOpType::Log:
        case UnaryOpType::Sigmoid:
        case UnaryOpType::Tanh:
        case UnaryOpType::Gelu:
        case UnaryOpType::Erf: return true;
        default: break;
      }
    }
    return std::any_of(definition->inputs().begin(), definition->inputs().end(), [&](Val* in) {
      const auto* operand = dynamic_cast<const TensorView*>(in);
      return operand != nullptr && !materialized.count(operand) && expensive(operand, materialized);
    });
  }

  // The kernel outputs and the reductions that read `tv` through inlined
  // Funcs (pointwise ops and views are inlined into their readers).
  void consumersOf(const TensorView* tv, std::set<size_t>& outputs,
                   std::set<const ReductionOp*>& reductions, std::set<const TensorView*>& visited) {
    if (!visited.insert(tv).second) {
      return;
    }
    for (size_t i = 0; i < signature_.outputs.size(); ++i) {
      if (signature_.outputs[i] == tv) {
        outputs.insert(i);
      }
    }
    for (const hostir::Expr* use : tv->uses()) {
      if (const auto* reduction = dynamic_cast<const ReductionOp*>(use)) {
        reductions.insert(reduction);
        continue;
      }
      for (const Val* output : use->outputs()) {
        if (const auto* next = dynamic_cast<const TensorView*>(output)) {
          consumersOf(next, outputs, reductions, visited);
        }
      }
    }
  }

  // Whether every axis of `reduced` is the same-numbered outer axis of
  // `output`, which keeps at least its innermost axis for itself: then one
  // iteration of the output's row loop needs one element of `reduced`.
  bool rowAligned(const TensorView* reduced, const TensorView* output) {
    if (output->rank() < 2 || reduced->rank() > output->rank() - 1) {
      return false;
    }
    for (int64_t axis = 0; axis < reduced->rank(); ++axis) {
      if (classes_.classOf(reduced, axis) != classes_.classOf(output, axis)) {
        return false;
      }
    }
    return true;
  }

  const Fusion& fusion_;
  const KernelSignature& signature_;
  const KernelTarget& target_;
  std::vector<Halide::Argument> arguments_;
  std::vector<Expr> scalar_exprs_;
  std::unordered_map<const Val*, Func> funcs_;
  std::vector<ReductionFunc> reductions_;
  std::unordered_map<std::string, Var> row_var_;
  // Reductions computed inside an output's row loop -> that output's index.
  std::unordered_map<const ReductionOp*, int> row_reductions_;
  std::unordered_map<std::string, const TensorView*> output_tvs_;
  AxisClasses classes_;
};

}  // namespace

HalideKernel lowerToHalide(const Fusion& fusion, const KernelSignature& signature,
                           const KernelTarget& target) {
  HOSTIR_ASSERT(!signature.unsupported.has_value(), "lowering an unsupported segment");
  return Lowering(fusion, signature, target).run();
}

}  // namespace hostir
