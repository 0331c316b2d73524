// Tensor-creating builders of arith.h: iota, arange, the causal mask, full,
// zeros and ones.

#include "hostir/ir/arith.h"

#include <initializer_list>
#include <vector>

#include "hostir/ir/arith_support.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_factories.h"

namespace hostir {

using namespace arith_support;

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

// iota(n, 0, 1) broadcast along `broadcast_axis` of a 2-D tensor.
bool isIndexAlong(const Val* val, int64_t broadcast_axis) {
  const auto* broadcast = dynamic_cast<const BroadcastOp*>(val->definition());
  if (broadcast == nullptr || broadcast->isBroadcastDims().size() != 2 ||
      broadcast->isBroadcastDims()[static_cast<size_t>(broadcast_axis)] == 0 ||
      broadcast->isBroadcastDims()[static_cast<size_t>(1 - broadcast_axis)] != 0) {
    return false;
  }
  const auto* iota = dynamic_cast<const IotaOp*>(broadcast->in()->definition());
  return iota != nullptr && isConstantScalar(iota->start(), 0) && isConstantScalar(iota->step(), 1);
}

}  // namespace

bool isCausalMaskFromZero(const Val* mask) {
  const auto* ge = dynamic_cast<const BinaryOp*>(mask->definition());
  return ge != nullptr && ge->type() == BinaryOpType::Ge && isIndexAlong(ge->lhs(), 1) &&
         isIndexAlong(ge->rhs(), 0);
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
