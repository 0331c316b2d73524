#include "hostir/ir/arith.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <sstream>

#include "hostir/ir/fusion.h"
#include "hostir/ir/scalar_arithmetic.h"
#include "hostir/ir/tensor_factories.h"

namespace hostir {

namespace {

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

// Of two axes that must match, the one whose extent says the most.
IterDomain* moreKnown(IterDomain* a, IterDomain* b) {
  return asConstInt(a->extent()) == nullptr && asConstInt(b->extent()) != nullptr ? b : a;
}

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

std::optional<ScalarValue> foldConstants(BinaryOpType type, const Scalar* lhs, const Scalar* rhs) {
  if (!lhs->isConst() || !rhs->isConst()) {
    return std::nullopt;
  }
  return applyScalarBinaryOp(type, *lhs->value(), *rhs->value(), [&] {
    return toString(type) + "(" + lhs->toInlineString() + ", " + rhs->toInlineString() + ")";
  });
}

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

int64_t normalizeAxis(int64_t axis, int64_t rank, const std::string& op, const Val* tv) {
  HOSTIR_CHECK(axis >= -rank && axis < rank, op, ": axis ", axis, " is out of range for ",
               describe(tv), " of rank ", rank, "; valid axes are [", -rank, ", ", rank, ")");
  return axis < 0 ? axis + rank : axis;
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

TensorView* iota(Val* length, Val* start, Val* step, DataType dtype) {
  HOSTIR_CHECK(length != nullptr && start != nullptr && step != nullptr,
               "iota: an operand is null");
  std::vector<Val*> inputs{length, start, step};
  IotaOp::validate(inputs, {});
  HOSTIR_CHECK(dtype != DataType::Bool, "iota(", describe(length),
               "): dtype Bool is not valid; use a numeric dtype");
  HOSTIR_CHECK(
      !isIntegralType(dtype) || (isIntegralType(start->dtype()) && isIntegralType(step->dtype())),
      "iota(", describe(length), ", start=", describe(start), ", step=", describe(step),
      "): an integer dtype (", toString(dtype),
      ") needs integer start and step; use a floating dtype");
  Fusion* container = length->container();
  auto* id = IrBuilder::createInContainer<IterDomain>(container, length);
  TensorView* out = makeTensorOver(container, {id}, dtype);
  IrBuilder::createInContainer<IotaOp>(container, inputs, std::vector<Val*>{out},
                                       std::vector<Attribute>{});
  return out;
}

TensorView* arange(Val* end, DataType dtype) {
  HOSTIR_CHECK(end != nullptr, "arange: end is null");
  return arange(constantIn(end->container(), 0), end, constantIn(end->container(), 1), dtype);
}

TensorView* arange(Val* start, Val* end, Val* step, DataType dtype) {
  HOSTIR_CHECK(start != nullptr && end != nullptr && step != nullptr, "arange: an operand is null");
  for (const Val* bound : {start, end, step}) {
    HOSTIR_CHECK(bound->vtype() == ValType::Scalar && isIntegralType(bound->dtype()),
                 "arange: start, end and step must be integer scalars, got ", describe(bound),
                 "; for floating values use iota(length, start, step, dtype)");
  }
  const Scalar* c_step = asConstInt(step);
  HOSTIR_CHECK(c_step == nullptr || c_step->constInt() != 0, "arange(", describe(start), ", ",
               describe(end), ", step=0): the step must not be zero");
  const Scalar* c_start = asConstInt(start);
  const Scalar* c_end = asConstInt(end);
  if (c_start != nullptr && c_end != nullptr && c_step != nullptr) {
    int64_t span = c_end->constInt() - c_start->constInt();
    HOSTIR_CHECK(span == 0 || (span > 0) == (c_step->constInt() > 0), "arange(", describe(start),
                 ", ", describe(end), ", ", describe(step),
                 "): the step's sign does not lead from start to end");
  }
  // arange(n) has extent n, not ( n - 0 ) (ceilDiv by 1 folds away).
  Val* span = c_start != nullptr && c_start->constInt() == 0 ? end : sub(end, start);
  return iota(ceilDiv(span, step), start, step, dtype);
}

TensorView* causalMask(Val* num_queries, Val* num_keys, Val* query_offset) {
  HOSTIR_CHECK(num_queries != nullptr && num_keys != nullptr,
               "causalMask: the number of queries or keys is null");
  Fusion* container = num_queries->container();
  if (query_offset == nullptr) {
    query_offset = constantIn(container, 0);
  }
  HOSTIR_CHECK(isIntegralType(query_offset->dtype()) && query_offset->vtype() == ValType::Scalar,
               "causalMask: the query offset must be an integer scalar, got ",
               describe(query_offset));
  TensorView* rows = iota(num_queries, query_offset, constantIn(container, 1));
  TensorView* cols = iota(num_keys, constantIn(container, 0), constantIn(container, 1));
  return ge(broadcast(rows, {false, true}), broadcast(cols, {true, false}));
}

namespace {

void checkFloating(const char* op, const TensorView* in) {
  HOSTIR_CHECK(in != nullptr, op, ": input is null");
  HOSTIR_CHECK(isFloatingType(in->dtype()), op, "(", describe(in), "): needs a floating-point ",
               "tensor, got ", toString(in->dtype()), "; cast it first (castOp)");
}

// The number of elements `axes` of `in` hold, as an integer scalar, and the
// axes normalized and sorted.
std::pair<Val*, std::vector<int64_t>> reducedCount(const char* op, TensorView* in,
                                                   const std::vector<int64_t>& axes) {
  std::vector<IterDomain*> shape = in->shapeDomain();
  auto rank = static_cast<int64_t>(shape.size());
  std::set<int64_t> normalized;
  for (int64_t axis : axes) {
    normalized.insert(normalizeAxis(axis, rank, op, in));
  }
  HOSTIR_CHECK(!normalized.empty(), op, "(", describe(in), "): give at least one axis to reduce");
  Val* count = constantIn(in->container(), 1);
  for (int64_t axis : normalized) {
    count = mul(count, shape[static_cast<size_t>(axis)]->extent());
  }
  return {count, std::vector<int64_t>(normalized.begin(), normalized.end())};
}

std::vector<bool> broadcastFlags(size_t rank, const std::vector<int64_t>& axes) {
  std::vector<bool> flags(rank, false);
  for (int64_t axis : axes) {
    flags[static_cast<size_t>(axis)] = true;
  }
  return flags;
}

// The last `normalized_ndims` axes of `in`, checked, with weight and bias
// shaped as them.
std::vector<int64_t> normalizedAxes(const char* op, TensorView* in, int64_t normalized_ndims,
                                    TensorView* weight, TensorView* bias) {
  checkFloating(op, in);
  auto rank = static_cast<int64_t>(in->shapeDomain().size());
  HOSTIR_CHECK(normalized_ndims >= 1 && normalized_ndims <= rank, op, "(", describe(in),
               "): normalized_ndims ", normalized_ndims, " is out of range; valid: [1, ", rank,
               "] (the number of trailing axes to normalize)");
  for (const auto& [what, tv] : {std::pair<const char*, TensorView*>{"weight", weight},
                                 std::pair<const char*, TensorView*>{"bias", bias}}) {
    if (tv == nullptr) {
      continue;
    }
    auto tv_rank = static_cast<int64_t>(tv->shapeDomain().size());
    HOSTIR_CHECK(tv_rank == normalized_ndims, op, "(", describe(in), "): the ", what, " ",
                 describe(tv), " has rank ", tv_rank, "; it must be shaped as the ",
                 normalized_ndims, " normalized trailing axes");
    std::vector<IterDomain*> shape = in->shapeDomain();
    std::vector<IterDomain*> ws = tv->shapeDomain();
    for (int64_t i = 0; i < tv_rank; ++i) {
      const Scalar* a = asConstInt(shape[static_cast<size_t>(rank - tv_rank + i)]->extent());
      const Scalar* b = asConstInt(ws[static_cast<size_t>(i)]->extent());
      HOSTIR_CHECK(a == nullptr || b == nullptr || a->constInt() == b->constInt(), op, "(",
                   describe(in), "): the ", what, " ", describe(tv),
                   " does not match the normalized axes; it must be shaped as the last ",
                   normalized_ndims, " axes of the input");
    }
  }
  std::vector<int64_t> axes;
  for (int64_t i = rank - normalized_ndims; i < rank; ++i) {
    axes.push_back(i);
  }
  return axes;
}

TensorView* affine(TensorView* y, TensorView* weight, TensorView* bias) {
  if (weight != nullptr) {
    y = mul(y, weight);
  }
  if (bias != nullptr) {
    y = add(y, bias);
  }
  return y;
}

}  // namespace

TensorView* mean(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim) {
  checkFloating("mean", in);
  auto [count, normalized] = reducedCount("mean", in, axes);
  return div(sum(in, normalized, keep_dim), count);
}

std::pair<TensorView*, TensorView*> varMean(TensorView* in, const std::vector<int64_t>& axes,
                                            int64_t correction, bool keep_dim) {
  checkFloating("var_mean", in);
  HOSTIR_CHECK(correction >= 0, "var_mean(", describe(in), "): correction ", correction,
               " is negative; valid: >= 0 (1: unbiased, 0: population variance)");
  auto [count, normalized] = reducedCount("var_mean", in, axes);
  TensorView* m = div(sum(in, normalized), count);
  TensorView* m_kept = broadcast(m, broadcastFlags(in->shapeDomain().size(), normalized));
  TensorView* centered = sub(in, m_kept);
  Val* dof = correction == 0 ? count : sub(count, constantIn(in->container(), correction));
  TensorView* v = div(sum(mul(centered, centered), normalized, keep_dim), dof);
  return {v, keep_dim ? m_kept : m};
}

TensorView* var(TensorView* in, const std::vector<int64_t>& axes, int64_t correction,
                bool keep_dim) {
  return varMean(in, axes, correction, keep_dim).first;
}

TensorView* softmax(TensorView* in, int64_t dim) {
  checkFloating("softmax", in);
  TensorView* shifted = sub(in, max(in, {dim}, /*keep_dim=*/true));
  TensorView* e = exp(shifted);
  return div(e, sum(e, {dim}, /*keep_dim=*/true));
}

TensorView* logSoftmax(TensorView* in, int64_t dim) {
  checkFloating("log_softmax", in);
  TensorView* shifted = sub(in, max(in, {dim}, /*keep_dim=*/true));
  return sub(shifted, log(sum(exp(shifted), {dim}, /*keep_dim=*/true)));
}

TensorView* layerNorm(TensorView* in, int64_t normalized_ndims, TensorView* weight,
                      TensorView* bias, double eps) {
  std::vector<int64_t> axes = normalizedAxes("layer_norm", in, normalized_ndims, weight, bias);
  auto [count, normalized] = reducedCount("layer_norm", in, axes);
  std::vector<bool> flags = broadcastFlags(in->shapeDomain().size(), normalized);
  TensorView* centered = sub(in, broadcast(div(sum(in, normalized), count), flags));
  TensorView* variance = div(sum(mul(centered, centered), normalized), count);
  TensorView* inv_std = broadcast(rsqrt(add(variance, eps)), flags);
  return affine(mul(centered, inv_std), weight, bias);
}

TensorView* rmsNorm(TensorView* in, int64_t normalized_ndims, TensorView* weight, TensorView* bias,
                    double eps) {
  std::vector<int64_t> axes = normalizedAxes("rms_norm", in, normalized_ndims, weight, bias);
  auto [count, normalized] = reducedCount("rms_norm", in, axes);
  std::vector<bool> flags = broadcastFlags(in->shapeDomain().size(), normalized);
  TensorView* mean_square = div(sum(mul(in, in), normalized), count);
  TensorView* inv_rms = broadcast(rsqrt(add(mean_square, eps)), flags);
  return affine(mul(in, inv_rms), weight, bias);
}

TensorView* broadcast(TensorView* in, const std::vector<bool>& is_broadcast_dim) {
  HOSTIR_CHECK(in != nullptr, "broadcast: input is null");
  std::vector<IterDomain*> shape = in->shapeDomain();
  std::vector<int64_t> flags;
  for (bool is_broadcast : is_broadcast_dim) {
    flags.push_back(is_broadcast ? 1 : 0);
  }
  BroadcastOp::validate({in}, {flags});
  Fusion* container = in->container();
  std::vector<IterDomain*> ids;
  size_t next = 0;
  for (bool is_broadcast : is_broadcast_dim) {
    if (is_broadcast) {
      ids.push_back(IrBuilder::createInContainer<IterDomain>(container, constantIn(container, 1),
                                                             IterType::Broadcast));
    } else {
      ids.push_back(freshId(shape[next++]));
    }
  }
  TensorView* out = makeTensorOver(container, ids, in->dtype());
  IrBuilder::createInContainer<BroadcastOp>(container, std::vector<Val*>{in},
                                            std::vector<Val*>{out}, std::vector<Attribute>{flags});
  return out;
}

TensorView* matmul(TensorView* a, TensorView* b) {
  HOSTIR_CHECK(a != nullptr && b != nullptr, "matmul: an input is null");
  MatmulOp::validate({a, b}, {});
  std::vector<IterDomain*> as = a->shapeDomain();
  std::vector<IterDomain*> bs = b->shapeDomain();
  std::vector<IterDomain*> ids;
  for (const auto& [x, y] : matmulBatchAxes(as, bs)) {
    if (x == nullptr || (x->isBroadcast() && y != nullptr)) {
      ids.push_back(freshId(y));
    } else if (y == nullptr || y->isBroadcast()) {
      ids.push_back(freshId(x));
    } else {
      ids.push_back(freshId(moreKnown(x, y)));
    }
  }
  if (as.size() >= 2) {
    ids.push_back(freshId(as[as.size() - 2]));
  }
  if (bs.size() >= 2) {
    ids.push_back(freshId(bs.back()));
  }
  TensorView* out = makeTensorOver(a->container(), ids, a->dtype());
  IrBuilder::createInContainer<MatmulOp>(a->container(), std::vector<Val*>{a, b},
                                         std::vector<Val*>{out}, std::vector<Attribute>{});
  return out;
}

TensorView* linear(TensorView* in, TensorView* weight, TensorView* bias) {
  HOSTIR_CHECK(in != nullptr && weight != nullptr, "linear: an input is null");
  std::vector<Val*> inputs{in, weight};
  if (bias != nullptr) {
    inputs.push_back(bias);
  }
  LinearOp::validate(inputs, {});
  std::vector<IterDomain*> xs = in->shapeDomain();
  std::vector<IterDomain*> ws = weight->shapeDomain();
  std::vector<IterDomain*> ids;
  for (size_t i = 0; i + 1 < xs.size(); ++i) {
    ids.push_back(freshId(xs[i]));
  }
  if (ws.size() == 2) {
    ids.push_back(freshId(ws[0]));
  }
  TensorView* out = makeTensorOver(in->container(), ids, in->dtype());
  IrBuilder::createInContainer<LinearOp>(in->container(), inputs, std::vector<Val*>{out},
                                         std::vector<Attribute>{});
  return out;
}

TensorView* select(TensorView* in, int64_t dim, Val* index) {
  HOSTIR_CHECK(in != nullptr && index != nullptr, "select: an operand is null");
  std::vector<IterDomain*> shape = in->shapeDomain();
  int64_t axis = normalizeAxis(dim, static_cast<int64_t>(shape.size()), "select", in);
  SelectOp::validate({in, index}, {axis});
  std::vector<IterDomain*> ids;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (static_cast<int64_t>(i) != axis) {
      ids.push_back(freshId(shape[i]));
    }
  }
  TensorView* out = makeViewOver(in->container(), ids, in->dtype());
  IrBuilder::createInContainer<SelectOp>(in->container(), std::vector<Val*>{in, index},
                                         std::vector<Val*>{out}, std::vector<Attribute>{axis});
  return out;
}

TensorView* select(TensorView* in, int64_t dim, int64_t index) {
  HOSTIR_CHECK(in != nullptr, "select: input is null");
  return select(in, dim, constantIn(in->container(), index));
}

namespace {

// A slice bound as torch takes it, in [0, n]: a negative bound counts from
// the end, then it is clamped. Only min and max on integers, so the extent
// folds when everything is constant and never overflows at run time
// (stop = INT64_MAX, start = INT64_MIN): clamped = max(min(b, n), -n) lies
// in [-n, n], and min(max(-clamped, 0), 1) is 1 exactly when it is negative.
Val* torchSliceBound(Val* bound, Val* n) {
  Fusion* container = bound->container();
  auto constant = [&](int64_t value) -> Val* {
    return IrBuilder::createInContainer<Scalar>(container, value);
  };
  const Scalar* c_bound = asConstInt(bound);
  if ((c_bound != nullptr && c_bound->constInt() == 0) || bound == n) {
    return bound;  // 0 and the extent itself (x[s:x.size(0)]) are in range
  }
  Val* upper = scalarBinaryOp(BinaryOpType::Minimum, bound, n);
  if (c_bound != nullptr && c_bound->constInt() > 0) {
    return upper;  // a constant that cannot be negative: readable extents
  }
  Val* clamped = scalarBinaryOp(BinaryOpType::Maximum, upper,
                                scalarBinaryOp(BinaryOpType::Sub, constant(0), n));
  Val* negative = scalarBinaryOp(
      BinaryOpType::Minimum,
      scalarBinaryOp(BinaryOpType::Maximum, scalarBinaryOp(BinaryOpType::Sub, constant(0), clamped),
                     constant(0)),
      constant(1));
  return scalarBinaryOp(BinaryOpType::Add, clamped, scalarBinaryOp(BinaryOpType::Mul, n, negative));
}

// The extent torch gives x[start:stop] on an axis of extent n:
// max(0, bound(stop) - bound(start)). Constant bounds are validated to lie in
// [0, n] (SliceOp::validate), so their extent stays stop - start.
Val* torchSliceExtent(Val* start, Val* stop, Val* n) {
  if (asConstInt(start) != nullptr && asConstInt(stop) != nullptr) {
    return sub(stop, start);
  }
  Val* first = torchSliceBound(start, n);
  Val* last = torchSliceBound(stop, n);
  // Both lie in [0, n]: from 0, or up to n itself, the difference is >= 0.
  if (const Scalar* zero = asConstInt(first); zero != nullptr && zero->constInt() == 0) {
    return last;
  }
  if (last == n) {
    return scalarBinaryOp(BinaryOpType::Sub, n, first);
  }
  Fusion* container = start->container();
  return scalarBinaryOp(BinaryOpType::Maximum, scalarBinaryOp(BinaryOpType::Sub, last, first),
                        IrBuilder::createInContainer<Scalar>(container, int64_t{0}));
}

}  // namespace

TensorView* slice(TensorView* in, int64_t dim, Val* start, Val* stop) {
  HOSTIR_CHECK(in != nullptr && start != nullptr && stop != nullptr, "slice: an operand is null");
  std::vector<IterDomain*> shape = in->shapeDomain();
  int64_t axis = normalizeAxis(dim, static_cast<int64_t>(shape.size()), "slice", in);
  SliceOp::validate({in, start, stop}, {axis});
  std::vector<IterDomain*> ids;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (static_cast<int64_t>(i) == axis) {
      Val* extent = torchSliceExtent(start, stop, shape[i]->extent());
      ids.push_back(IrBuilder::createInContainer<IterDomain>(in->container(), extent));
    } else {
      ids.push_back(freshId(shape[i]));
    }
  }
  TensorView* out = makeViewOver(in->container(), ids, in->dtype());
  IrBuilder::createInContainer<SliceOp>(in->container(), std::vector<Val*>{in, start, stop},
                                        std::vector<Val*>{out}, std::vector<Attribute>{axis});
  return out;
}

TensorView* slice(TensorView* in, int64_t dim, int64_t start, int64_t stop) {
  HOSTIR_CHECK(in != nullptr, "slice: input is null");
  return slice(in, dim, constantIn(in->container(), start), constantIn(in->container(), stop));
}

TensorView* permute(TensorView* in, const std::vector<int64_t>& dims) {
  HOSTIR_CHECK(in != nullptr, "permute: input is null");
  std::vector<IterDomain*> shape = in->shapeDomain();
  auto rank = static_cast<int64_t>(shape.size());
  // Negative dims are the user's spelling (normalized when the count is
  // right; PermuteOp::validate says what is wrong with a wrong count).
  std::vector<int64_t> normalized = dims;
  if (static_cast<int64_t>(dims.size()) == rank) {
    for (int64_t& d : normalized) {
      d = normalizeAxis(d, rank, "permute", in);
    }
  }
  PermuteOp::validate({in}, {normalized});
  std::vector<IterDomain*> ids;
  for (int64_t d : normalized) {
    ids.push_back(freshId(shape[static_cast<size_t>(d)]));
  }
  TensorView* out = makeTensorOver(in->container(), ids, in->dtype());
  IrBuilder::createInContainer<PermuteOp>(in->container(), std::vector<Val*>{in},
                                          std::vector<Val*>{out},
                                          std::vector<Attribute>{normalized});
  return out;
}

TensorView* reshape(TensorView* in, const std::vector<int64_t>& new_sizes) {
  HOSTIR_CHECK(in != nullptr, "reshape: input is null");
  ReshapeOp::validate({in}, {});
  Fusion* container = in->container();
  std::vector<IterDomain*> shape = in->shapeDomain();
  auto inferred = std::count(new_sizes.begin(), new_sizes.end(), -1);
  HOSTIR_CHECK(inferred <= 1, "reshape(", describe(in), "): at most one size may be -1");
  int64_t known = 1;
  for (int64_t size : new_sizes) {
    HOSTIR_CHECK(size >= -1, "reshape(", describe(in), "): invalid size ", size);
    known *= size == -1 ? 1 : size;
  }
  Val* numel = constantIn(container, 1);
  for (IterDomain* id : shape) {
    numel = mul(numel, id->extent());
  }
  const Scalar* c_numel = asConstInt(numel);
  if (c_numel != nullptr) {
    bool ok =
        inferred ? (known != 0 && c_numel->constInt() % known == 0) : c_numel->constInt() == known;
    std::stringstream sizes;
    for (size_t i = 0; i < new_sizes.size(); ++i) {
      sizes << (i ? ", " : "") << new_sizes[i];
    }
    HOSTIR_CHECK(ok, "reshape(", describe(in), "): ", c_numel->constInt(),
                 " elements cannot be viewed as {", sizes.str(),
                 "}; the new sizes must hold the same number of elements");
  }
  std::vector<IterDomain*> ids;
  for (int64_t size : new_sizes) {
    Val* extent = size == -1 ? div(numel, constantIn(container, known))
                             : static_cast<Val*>(constantIn(container, size));
    ids.push_back(IrBuilder::createInContainer<IterDomain>(container, extent));
  }
  TensorView* out = makeTensorOver(container, ids, in->dtype());
  IrBuilder::createInContainer<ReshapeOp>(container, std::vector<Val*>{in}, std::vector<Val*>{out},
                                          std::vector<Attribute>{});
  return out;
}

TensorView* reshapeToExtents(TensorView* in, const std::vector<Val*>& new_sizes) {
  HOSTIR_CHECK(in != nullptr, "reshape: input is null");
  std::vector<int64_t> constant_sizes;
  for (Val* size : new_sizes) {
    HOSTIR_CHECK(
        size != nullptr && size->vtype() == ValType::Scalar && isIntegralType(size->dtype()),
        "reshape(", describe(in), "): a size is ",
        size == nullptr ? std::string("null") : describe(size), "; give integer scalars");
    if (const Scalar* c = asConstInt(size)) {
      constant_sizes.push_back(c->constInt());
    }
  }
  if (constant_sizes.size() == new_sizes.size()) {
    return reshape(in, constant_sizes);
  }
  // Sizes known at run time: ATen's reshape checks the element count there
  // (a constant -1 is the elements over the product of the other sizes).
  ReshapeOp::validate({in}, {});
  Fusion* container = in->container();
  size_t inferred = new_sizes.size();
  for (size_t i = 0; i < new_sizes.size(); ++i) {
    const Scalar* c = asConstInt(new_sizes[i]);
    HOSTIR_CHECK(c == nullptr || c->constInt() >= -1, "reshape(", describe(in), "): invalid size ",
                 describe(new_sizes[i]));
    if (c != nullptr && c->constInt() == -1) {
      HOSTIR_CHECK(inferred == new_sizes.size(), "reshape(", describe(in),
                   "): at most one size may be -1");
      inferred = i;
    }
  }
  Val* inferred_size = nullptr;
  if (inferred < new_sizes.size()) {
    Val* numel = constantIn(container, 1);
    for (IterDomain* id : in->shapeDomain()) {
      numel = mul(numel, id->extent());
    }
    Val* known = constantIn(container, 1);
    for (size_t i = 0; i < new_sizes.size(); ++i) {
      known = i == inferred ? known : mul(known, new_sizes[i]);
    }
    inferred_size = div(numel, known);
  }
  std::vector<IterDomain*> ids;
  std::vector<Val*> operands{in};
  for (size_t i = 0; i < new_sizes.size(); ++i) {
    Val* extent = i == inferred ? inferred_size : new_sizes[i];
    ids.push_back(IrBuilder::createInContainer<IterDomain>(container, extent));
    if (i != inferred && asConstInt(extent) == nullptr) {
      operands.push_back(extent);
    }
  }
  TensorView* out = makeTensorOver(container, ids, in->dtype());
  IrBuilder::createInContainer<ReshapeOp>(container, std::move(operands), std::vector<Val*>{out},
                                          std::vector<Attribute>{});
  return out;
}

TensorView* full(const std::vector<Val*>& shape, Val* fill_value, DataType dtype) {
  std::vector<Val*> inputs{fill_value};
  inputs.insert(inputs.end(), shape.begin(), shape.end());
  FullOp::validate(inputs, {});
  Fusion* container = fill_value->container();
  std::vector<IterDomain*> ids;
  for (Val* extent : shape) {
    ids.push_back(IrBuilder::createInContainer<IterDomain>(container, extent));
  }
  TensorView* out = makeTensorOver(container, ids, dtype);
  IrBuilder::createInContainer<FullOp>(container, inputs, std::vector<Val*>{out},
                                       std::vector<Attribute>{});
  return out;
}

TensorView* zeros(const std::vector<Val*>& shape, DataType dtype) {
  Fusion* container = FusionGuard::getCurFusion();
  HOSTIR_CHECK(container != nullptr, "zeros: no current Fusion");
  return full(shape, IrBuilder::createInContainer<Scalar>(container, int64_t{0}), dtype);
}

TensorView* ones(const std::vector<Val*>& shape, DataType dtype) {
  Fusion* container = FusionGuard::getCurFusion();
  HOSTIR_CHECK(container != nullptr, "ones: no current Fusion");
  return full(shape, IrBuilder::createInContainer<Scalar>(container, int64_t{1}), dtype);
}

namespace {

std::vector<Val*> constantExtents(const char* op, const std::vector<int64_t>& shape) {
  Fusion* container = FusionGuard::getCurFusion();
  HOSTIR_CHECK(container != nullptr, op, ": no current Fusion; create it inside a FusionGuard");
  std::vector<Val*> extents;
  for (int64_t extent : shape) {
    HOSTIR_CHECK(extent >= 0, op, ": extents must be non-negative, got ", extent);
    extents.push_back(IrBuilder::createInContainer<Scalar>(container, extent));
  }
  return extents;
}

}  // namespace

TensorView* full(std::initializer_list<int64_t> shape, double fill_value, DataType dtype) {
  std::vector<Val*> extents = constantExtents("full", shape);
  return full(extents,
              IrBuilder::createInContainer<Scalar>(FusionGuard::getCurFusion(), fill_value), dtype);
}

TensorView* zeros(std::initializer_list<int64_t> shape, DataType dtype) {
  return zeros(constantExtents("zeros", shape), dtype);
}

TensorView* ones(std::initializer_list<int64_t> shape, DataType dtype) {
  return ones(constantExtents("ones", shape), dtype);
}

}  // namespace hostir
