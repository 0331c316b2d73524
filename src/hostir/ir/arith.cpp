// The pointwise and reduction builders of arith.h (and what the other
// builder files share, arith_support.h).

#include "hostir/ir/arith.h"

#include <algorithm>
#include <optional>
#include <set>
#include <variant>

#include "hostir/ir/arith_support.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/scalar_arithmetic.h"
#include "hostir/ir/tensor_factories.h"

namespace hostir::arith_support {

std::string describe(const Val* val) {
  return val->toInlineString();
}

Scalar* constantIn(Fusion* container, int64_t value) {
  return IrBuilder::createInContainer<Scalar>(container, value);
}

const Scalar* asConstInt(const Val* val) {
  const auto* scalar = dynamic_cast<const Scalar*>(val);
  return scalar != nullptr && scalar->isConstInt() ? scalar : nullptr;
}

IterDomain* freshId(const IterDomain* like, IterType iter_type) {
  return IrBuilder::createInContainer<IterDomain>(like->container(), like->extent(), iter_type);
}

IterDomain* freshId(const IterDomain* like) {
  return freshId(like, like->iterType());
}

IterDomain* moreKnown(IterDomain* a, IterDomain* b) {
  return asConstInt(a->extent()) == nullptr && asConstInt(b->extent()) != nullptr ? b : a;
}

namespace {

std::optional<ScalarValue> foldConstants(BinaryOpType type, const Scalar* lhs, const Scalar* rhs) {
  if (!lhs->isConst() || !rhs->isConst()) {
    return std::nullopt;
  }
  return applyScalarBinaryOp(type, *lhs->value(), *rhs->value(), [&] {
    return toString(type) + "(" + lhs->toInlineString() + ", " + rhs->toInlineString() + ")";
  });
}

}  // namespace

Val* scalarBinaryOp(BinaryOpType type, Val* lhs, Val* rhs) {
  auto* l = lhs->as<Scalar>();
  auto* r = rhs->as<Scalar>();
  Fusion* container = lhs->container();
  if (auto folded = foldConstants(type, l, r)) {
    return std::visit(
        [&](auto v) -> Val* { return IrBuilder::createInContainer<Scalar>(container, v); },
        *folded);
  }
  // x * 1, x / 1 and ceilDiv(x, 1) are x: keeps printed extents readable.
  const Scalar* rc = asConstInt(rhs);
  bool identity =
      rc != nullptr && rc->constInt() == 1 &&
      (type == BinaryOpType::Mul || type == BinaryOpType::Div || type == BinaryOpType::CeilDiv);
  if (identity && isIntegralType(lhs->dtype())) {
    return lhs;
  }
  const Scalar* lc = asConstInt(lhs);
  if (lc != nullptr && lc->constInt() == 1 && type == BinaryOpType::Mul &&
      isIntegralType(rhs->dtype())) {
    return rhs;
  }
  DataType dtype = isComparison(type) ? DataType::Bool : promoteTypes(l->dtype(), r->dtype());
  auto* out = IrBuilder::createInContainer<Scalar>(container, dtype);
  IrBuilder::createInContainer<BinaryOp>(container, std::vector<Val*>{lhs, rhs},
                                         std::vector<Val*>{out},
                                         std::vector<Attribute>{static_cast<int64_t>(type)});
  return out;
}

int64_t normalizeAxis(int64_t axis, int64_t rank, const std::string& op, const Val* tv) {
  HOSTIR_CHECK(axis >= -rank && axis < rank, op, ": axis ", axis, " is out of range for ",
               describe(tv), " of rank ", rank, "; valid axes are [", -rank, ", ", rank, ")");
  return axis < 0 ? axis + rank : axis;
}

}  // namespace hostir::arith_support

namespace hostir {

using namespace arith_support;

namespace {

// Of each pair of right-aligned axes of two broadcastable shapes
// (BinaryOp::validate has checked them), the one the result takes.
std::vector<IterDomain*> pickBroadcastAxes(const std::vector<IterDomain*>& l,
                                           const std::vector<IterDomain*>& r) {
  size_t rank = std::max(l.size(), r.size());
  std::vector<IterDomain*> out;
  for (size_t i = 0; i < rank; ++i) {
    IterDomain* a = i + l.size() >= rank ? l[i + l.size() - rank] : nullptr;
    IterDomain* b = i + r.size() >= rank ? r[i + r.size() - rank] : nullptr;
    if (a == nullptr || (a->isBroadcast() && b != nullptr)) {
      out.push_back(b);
    } else if (b == nullptr || b->isBroadcast()) {
      out.push_back(a);
    } else {
      out.push_back(moreKnown(a, b));
    }
  }
  return out;
}

std::vector<IterDomain*> freshIds(const std::vector<IterDomain*>& like) {
  std::vector<IterDomain*> out;
  for (IterDomain* id : like) {
    out.push_back(freshId(id));
  }
  return out;
}

// The output axes of a pointwise op on two tensors.
std::vector<IterDomain*> broadcastShapes(TensorView* lhs, TensorView* rhs) {
  return freshIds(pickBroadcastAxes(lhs->shapeDomain(), rhs->shapeDomain()));
}

bool isFloatPromotingUnary(UnaryOpType type) {
  switch (type) {
    case UnaryOpType::Exp:
    case UnaryOpType::Log:
    case UnaryOpType::Sqrt:
    case UnaryOpType::Sigmoid:
    case UnaryOpType::Tanh:
    case UnaryOpType::Gelu:
    case UnaryOpType::GeluDerivative:
    case UnaryOpType::Rsqrt:
    case UnaryOpType::Erf:
    case UnaryOpType::Sin:
    case UnaryOpType::Cos: return true;
    default: return false;
  }
}

// A unary op's result dtype on an operand of `dtype` (Cast aside).
DataType unaryResultType(UnaryOpType type, DataType dtype) {
  if (type == UnaryOpType::Signbit) {
    return DataType::Bool;
  }
  if (isComplexType(dtype)) {
    const bool part =
        type == UnaryOpType::Real || type == UnaryOpType::Imag || type == UnaryOpType::Abs;
    return part ? complexPartType(dtype) : dtype;
  }
  return isFloatPromotingUnary(type) && !isFloatingType(dtype) ? DataType::Float : dtype;
}

// A unary op on a scalar: folded when the scalar is a constant.
Val* scalarUnaryOp(UnaryOpType type, Val* in, DataType out_dtype) {
  std::vector<Attribute> attributes{static_cast<int64_t>(type)};
  UnaryOp::validate({in}, attributes);
  Fusion* container = in->container();
  const auto* scalar = in->as<Scalar>();
  if (scalar->isConst()) {
    ScalarValue value = applyScalarUnaryOp(type, *scalar->value(), out_dtype);
    return std::visit(
        [&](auto v) -> Val* { return IrBuilder::createInContainer<Scalar>(container, v); }, value);
  }
  auto* out = IrBuilder::createInContainer<Scalar>(container, out_dtype);
  IrBuilder::createInContainer<UnaryOp>(container, std::vector<Val*>{in}, std::vector<Val*>{out},
                                        std::move(attributes));
  return out;
}

TensorView* unaryOp(UnaryOpType type, TensorView* in, DataType out_dtype) {
  HOSTIR_CHECK(in != nullptr, toString(type), ": input is null");
  std::vector<Attribute> attributes{static_cast<int64_t>(type)};
  UnaryOp::validate({in}, attributes);
  std::vector<IterDomain*> ids;
  for (IterDomain* id : in->shapeDomain()) {
    ids.push_back(freshId(id));
  }
  TensorView* out = makeTensorOver(in->container(), ids, out_dtype);
  IrBuilder::createInContainer<UnaryOp>(in->container(), std::vector<Val*>{in},
                                        std::vector<Val*>{out}, std::move(attributes));
  return out;
}

TensorView* unaryOp(UnaryOpType type, TensorView* in) {
  HOSTIR_CHECK(in != nullptr, toString(type), ": input is null");
  return unaryOp(type, in, unaryResultType(type, in->dtype()));
}

Val* binaryOp(BinaryOpType type, Val* lhs, Val* rhs) {
  const std::string op = toString(type);
  HOSTIR_CHECK(lhs != nullptr && rhs != nullptr, op, ": an operand is null");
  std::vector<Attribute> attributes{static_cast<int64_t>(type)};
  BinaryOp::validate({lhs, rhs}, attributes);
  HOSTIR_CHECK(lhs->container() == rhs->container(), op, ": ", describe(lhs), " and ",
               describe(rhs), " belong to different fusions");
  auto* lt = dynamic_cast<TensorView*>(lhs);
  auto* rt = dynamic_cast<TensorView*>(rhs);
  if (lt == nullptr && rt == nullptr) {
    return scalarBinaryOp(type, lhs, rhs);
  }
  DataType dtype;
  std::vector<IterDomain*> ids;
  if (lt != nullptr && rt != nullptr) {
    dtype = promoteTypes(lt->dtype(), rt->dtype());
    ids = broadcastShapes(lt, rt);
  } else {
    TensorView* tv = lt != nullptr ? lt : rt;
    Val* scalar = lt != nullptr ? rhs : lhs;
    dtype = promoteTensorWithScalar(tv->dtype(), scalar->dtype());
    for (IterDomain* id : tv->shapeDomain()) {
      ids.push_back(freshId(id));
    }
  }
  if (type == BinaryOpType::Div && !isFloatingType(dtype) && !isComplexType(dtype)) {
    dtype = DataType::Float;  // true division, as torch.div
  }
  if (isComparison(type)) {
    dtype = DataType::Bool;
  }
  HOSTIR_CHECK(type != BinaryOpType::NextAfter || isFloatingType(dtype), op, "(", describe(lhs),
               ", ", describe(rhs), "): the result would be ", toString(dtype),
               "; nextafter needs a floating-point operand tensor (as torch.nextafter)");
  TensorView* out = makeTensorOver(lhs->container(), ids, dtype);
  IrBuilder::createInContainer<BinaryOp>(lhs->container(), std::vector<Val*>{lhs, rhs},
                                         std::vector<Val*>{out}, std::move(attributes));
  return out;
}

TensorView* reductionOp(ReductionOpType type, TensorView* in, const std::vector<int64_t>& axes,
                        bool keep_dim) {
  const std::string op = toString(type);
  HOSTIR_CHECK(in != nullptr, op, ": input is null");
  std::vector<IterDomain*> shape = in->shapeDomain();
  auto rank = static_cast<int64_t>(shape.size());
  // Negative axes and repeats are the user's spelling; the node holds the
  // sorted normalized axes.
  std::set<int64_t> reduced;
  for (int64_t axis : axes) {
    int64_t normalized = normalizeAxis(axis, rank, op, in);
    HOSTIR_CHECK(reduced.insert(normalized).second, op, "(", describe(in), "): axis ", axis,
                 " is listed twice");
  }
  std::vector<Attribute> attributes{static_cast<int64_t>(type),
                                    std::vector<int64_t>(reduced.begin(), reduced.end())};
  ReductionOp::validate({in}, attributes);
  std::vector<IterDomain*> ids;
  for (int64_t i = 0; i < rank; ++i) {
    IterDomain* id = shape[static_cast<size_t>(i)];
    ids.push_back(reduced.count(i) ? freshId(id, IterType::Reduction) : freshId(id));
  }
  DataType dtype = in->dtype();
  if ((type == ReductionOpType::Sum || type == ReductionOpType::Product) &&
      !isFloatingType(dtype) && !isComplexType(dtype)) {
    dtype = DataType::Int64;  // as torch.sum and torch.prod
  }
  TensorView* out = makeTensorOver(in->container(), ids, dtype);
  IrBuilder::createInContainer<ReductionOp>(in->container(), std::vector<Val*>{in},
                                            std::vector<Val*>{out}, std::move(attributes));
  if (!keep_dim) {
    return out;
  }
  std::vector<bool> is_broadcast(static_cast<size_t>(rank), false);
  for (int64_t axis : reduced) {
    is_broadcast[static_cast<size_t>(axis)] = true;
  }
  return broadcast(out, is_broadcast);
}

}  // namespace

TensorView* set(TensorView* in) {
  HOSTIR_CHECK(in != nullptr, "set: input is null");
  LoadStoreOp::validate({in}, {});
  std::vector<IterDomain*> ids;
  for (IterDomain* id : in->shapeDomain()) {
    ids.push_back(freshId(id));
  }
  TensorView* out = makeTensorOver(in->container(), ids, in->dtype());
  IrBuilder::createInContainer<LoadStoreOp>(in->container(), std::vector<Val*>{in},
                                            std::vector<Val*>{out}, std::vector<Attribute>{});
  return out;
}

TensorView* neg(TensorView* in) {
  return unaryOp(UnaryOpType::Neg, in);
}
TensorView* abs(TensorView* in) {
  return unaryOp(UnaryOpType::Abs, in);
}
TensorView* exp(TensorView* in) {
  return unaryOp(UnaryOpType::Exp, in);
}
TensorView* log(TensorView* in) {
  return unaryOp(UnaryOpType::Log, in);
}
TensorView* sqrt(TensorView* in) {
  return unaryOp(UnaryOpType::Sqrt, in);
}
TensorView* relu(TensorView* in) {
  return unaryOp(UnaryOpType::Relu, in);
}
TensorView* sigmoid(TensorView* in) {
  return unaryOp(UnaryOpType::Sigmoid, in);
}
TensorView* tanh(TensorView* in) {
  return unaryOp(UnaryOpType::Tanh, in);
}
TensorView* gelu(TensorView* in) {
  return unaryOp(UnaryOpType::Gelu, in);
}
TensorView* geluDerivative(TensorView* in) {
  return unaryOp(UnaryOpType::GeluDerivative, in);
}
TensorView* castOp(DataType dtype, TensorView* in) {
  return unaryOp(UnaryOpType::Cast, in, dtype);
}
TensorView* rsqrt(TensorView* in) {
  return unaryOp(UnaryOpType::Rsqrt, in);
}
TensorView* erf(TensorView* in) {
  return unaryOp(UnaryOpType::Erf, in);
}
TensorView* sin(TensorView* in) {
  return unaryOp(UnaryOpType::Sin, in);
}
TensorView* cos(TensorView* in) {
  return unaryOp(UnaryOpType::Cos, in);
}
TensorView* signbit(TensorView* in) {
  return unaryOp(UnaryOpType::Signbit, in);
}
TensorView* real(TensorView* in) {
  return unaryOp(UnaryOpType::Real, in);
}
TensorView* imag(TensorView* in) {
  return unaryOp(UnaryOpType::Imag, in);
}

Val* unary(UnaryOpType type, Val* in, std::optional<DataType> cast_to) {
  HOSTIR_CHECK(in != nullptr, toString(type), ": input is null");
  HOSTIR_CHECK((type == UnaryOpType::Cast) == cast_to.has_value(), toString(type),
               ": a cast, and only a cast, names the dtype it casts to");
  DataType dtype = cast_to.value_or(unaryResultType(type, in->dtype()));
  if (auto* tv = dynamic_cast<TensorView*>(in)) {
    return unaryOp(type, tv, dtype);
  }
  HOSTIR_CHECK(in->vtype() == ValType::Scalar, toString(type), ": ", describe(in),
               " is neither a tensor nor a scalar");
  return scalarUnaryOp(type, in, dtype);
}

Val* binary(BinaryOpType type, Val* lhs, Val* rhs) {
  return binaryOp(type, lhs, rhs);
}

#define HOSTIR_DEFINE_BINARY(name, type)                                           \
  Val* name(Val* lhs, Val* rhs) {                                                  \
    return binaryOp(type, lhs, rhs);                                               \
  }                                                                                \
  TensorView* name(TensorView* lhs, Val* rhs) {                                    \
    return binaryOp(type, lhs, rhs)->as<TensorView>();                             \
  }                                                                                \
  TensorView* name(Val* lhs, TensorView* rhs) {                                    \
    return binaryOp(type, lhs, rhs)->as<TensorView>();                             \
  }                                                                                \
  TensorView* name(TensorView* lhs, TensorView* rhs) {                             \
    return binaryOp(type, lhs, rhs)->as<TensorView>();                             \
  }                                                                                \
  TensorView* name(TensorView* lhs, double rhs) {                                  \
    HOSTIR_CHECK(lhs != nullptr, #name ": input is null");                         \
    return name(lhs, IrBuilder::createInContainer<Scalar>(lhs->container(), rhs)); \
  }                                                                                \
  TensorView* name(double lhs, TensorView* rhs) {                                  \
    HOSTIR_CHECK(rhs != nullptr, #name ": input is null");                         \
    return name(IrBuilder::createInContainer<Scalar>(rhs->container(), lhs), rhs); \
  }                                                                                \
  TensorView* name(TensorView* lhs, int64_t rhs) {                                 \
    HOSTIR_CHECK(lhs != nullptr, #name ": input is null");                         \
    return name(lhs, IrBuilder::createInContainer<Scalar>(lhs->container(), rhs)); \
  }                                                                                \
  TensorView* name(int64_t lhs, TensorView* rhs) {                                 \
    HOSTIR_CHECK(rhs != nullptr, #name ": input is null");                         \
    return name(IrBuilder::createInContainer<Scalar>(rhs->container(), lhs), rhs); \
  }                                                                                \
  TensorView* name(TensorView* lhs, int rhs) {                                     \
    return name(lhs, static_cast<int64_t>(rhs));                                   \
  }                                                                                \
  TensorView* name(int lhs, TensorView* rhs) {                                     \
    return name(static_cast<int64_t>(lhs), rhs);                                   \
  }
HOSTIR_DEFINE_BINARY(add, BinaryOpType::Add)
HOSTIR_DEFINE_BINARY(sub, BinaryOpType::Sub)
HOSTIR_DEFINE_BINARY(mul, BinaryOpType::Mul)
HOSTIR_DEFINE_BINARY(div, BinaryOpType::Div)
HOSTIR_DEFINE_BINARY(maximum, BinaryOpType::Maximum)
HOSTIR_DEFINE_BINARY(minimum, BinaryOpType::Minimum)
HOSTIR_DEFINE_BINARY(pow, BinaryOpType::Pow)
HOSTIR_DEFINE_BINARY(eq, BinaryOpType::Eq)
HOSTIR_DEFINE_BINARY(ne, BinaryOpType::Ne)
HOSTIR_DEFINE_BINARY(lt, BinaryOpType::Lt)
HOSTIR_DEFINE_BINARY(le, BinaryOpType::Le)
HOSTIR_DEFINE_BINARY(gt, BinaryOpType::Gt)
HOSTIR_DEFINE_BINARY(ge, BinaryOpType::Ge)
HOSTIR_DEFINE_BINARY(gcd, BinaryOpType::Gcd)
HOSTIR_DEFINE_BINARY(nextafter, BinaryOpType::NextAfter)
HOSTIR_DEFINE_BINARY(bitwiseAnd, BinaryOpType::BitwiseAnd)
HOSTIR_DEFINE_BINARY(bitwiseOr, BinaryOpType::BitwiseOr)
HOSTIR_DEFINE_BINARY(bitwiseXor, BinaryOpType::BitwiseXor)
HOSTIR_DEFINE_BINARY(bitwiseLeftShift, BinaryOpType::BitwiseLeftShift)
HOSTIR_DEFINE_BINARY(bitwiseRightShift, BinaryOpType::BitwiseRightShift)
HOSTIR_DEFINE_BINARY(logicalRightShift, BinaryOpType::LogicalRightShift)
HOSTIR_DEFINE_BINARY(fmod, BinaryOpType::Fmod)
#undef HOSTIR_DEFINE_BINARY

Val* ceilDiv(Val* lhs, Val* rhs) {
  return binaryOp(BinaryOpType::CeilDiv, lhs, rhs);
}

Val* mod(Val* lhs, Val* rhs) {
  return binaryOp(BinaryOpType::Mod, lhs, rhs);
}

TensorView* sum(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim) {
  return reductionOp(ReductionOpType::Sum, in, axes, keep_dim);
}
TensorView* max(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim) {
  return reductionOp(ReductionOpType::Max, in, axes, keep_dim);
}
TensorView* min(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim) {
  return reductionOp(ReductionOpType::Min, in, axes, keep_dim);
}
TensorView* prod(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim) {
  return reductionOp(ReductionOpType::Product, in, axes, keep_dim);
}

TensorView* where(TensorView* condition, Val* a, Val* b) {
  HOSTIR_CHECK(condition != nullptr && a != nullptr && b != nullptr, "where: an operand is null");
  std::vector<Val*> inputs{condition, a, b};
  WhereOp::validate(inputs, {});
  Fusion* container = condition->container();
  HOSTIR_CHECK(a->container() == container && b->container() == container,
               "where: ", describe(condition), ", ", describe(a), " and ", describe(b),
               " belong to different fusions");
  auto* ta = dynamic_cast<TensorView*>(a);
  auto* tb = dynamic_cast<TensorView*>(b);
  DataType dtype;
  if (ta != nullptr && tb != nullptr) {
    dtype = promoteTypes(ta->dtype(), tb->dtype());
  } else if (ta != nullptr || tb != nullptr) {
    TensorView* tv = ta != nullptr ? ta : tb;
    dtype = promoteTensorWithScalar(tv->dtype(), (ta != nullptr ? b : a)->dtype());
  } else {
    // Two scalars: their promoted dtype, as nvFuser's where (a Double
    // constant gives Double, a Float one Float, an Int32 one Int32).
    dtype = promoteTypes(a->dtype(), b->dtype());
  }
  // The output's shape: the condition's broadcast with each tensor operand.
  std::vector<IterDomain*> ids = condition->shapeDomain();
  for (TensorView* tv : {ta, tb}) {
    if (tv != nullptr) {
      ids = pickBroadcastAxes(ids, tv->shapeDomain());
    }
  }
  TensorView* out = makeTensorOver(container, freshIds(ids), dtype);
  IrBuilder::createInContainer<WhereOp>(container, inputs, std::vector<Val*>{out},
                                        std::vector<Attribute>{});
  return out;
}

TensorView* where(TensorView* condition, TensorView* a, double b) {
  HOSTIR_CHECK(condition != nullptr, "where: the condition is null");
  return where(condition, a, IrBuilder::createInContainer<Scalar>(condition->container(), b));
}
TensorView* where(TensorView* condition, double a, TensorView* b) {
  HOSTIR_CHECK(condition != nullptr, "where: the condition is null");
  return where(condition, IrBuilder::createInContainer<Scalar>(condition->container(), a), b);
}
TensorView* where(TensorView* condition, TensorView* a, int b) {
  HOSTIR_CHECK(condition != nullptr, "where: the condition is null");
  return where(condition, a,
               IrBuilder::createInContainer<Scalar>(condition->container(), int64_t{b}));
}
TensorView* where(TensorView* condition, int a, TensorView* b) {
  HOSTIR_CHECK(condition != nullptr, "where: the condition is null");
  return where(condition, IrBuilder::createInContainer<Scalar>(condition->container(), int64_t{a}),
               b);
}

}  // namespace hostir
