#include "hostir/ir/gather_ops.h"

#include "hostir/ir/dispatch.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

std::string describe(const Val* val) {
  return val == nullptr ? std::string("null") : val->toInlineString();
}

}  // namespace

std::string toString(GatherKind kind) {
  return kind == GatherKind::IndexSelect ? "index_select" : "take_along_axis";
}

void GatherOp::validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes) {
  HOSTIR_ASSERT(inputs.size() == 2 && attributes.size() == 2 &&
                    std::holds_alternative<int64_t>(attributes[0]) &&
                    std::holds_alternative<int64_t>(attributes[1]),
                "GatherOp built with the wrong operands");
  const int64_t kind_value = std::get<int64_t>(attributes[1]);
  HOSTIR_ASSERT(kind_value >= 0 && kind_value <= static_cast<int64_t>(GatherKind::IndexSelect),
                "GatherOp attribute 1 is not a GatherKind: ", kind_value);
  const auto kind = static_cast<GatherKind>(kind_value);
  const std::string op = hostir::toString(kind);
  const auto* in = dynamic_cast<const TensorView*>(inputs[0]);
  const auto* index = dynamic_cast<const TensorView*>(inputs[1]);
  HOSTIR_CHECK(in != nullptr && index != nullptr, op, ": both operands must be tensors, got ",
               describe(inputs[0]), " and ", describe(inputs[1]));
  const std::string call = op + "(" + describe(in) + ", " + describe(index) + ")";
  const int64_t dim = std::get<int64_t>(attributes[0]);
  checkDimAndIndexDtype(call, in, index, dim);
  if (kind == GatherKind::IndexSelect) {
    HOSTIR_CHECK(index->rank() <= 1, call, ": the index has rank ", index->rank(),
                 "; index_select takes a 1-D (or 0-D) index");
    return;
  }
  HOSTIR_CHECK(index->rank() == in->rank(), call, ": the index has rank ", index->rank(),
               " but the input has rank ", in->rank(), "; take_along_axis needs the same rank");
  std::vector<IterDomain*> in_shape = in->shapeDomain();
  std::vector<IterDomain*> index_shape = index->shapeDomain();
  for (size_t axis = 0; axis < in_shape.size(); ++axis) {
    int64_t n = constExtentOr(in_shape[axis]);
    int64_t m = constExtentOr(index_shape[axis]);
    HOSTIR_CHECK(static_cast<int64_t>(axis) == dim || n < 0 || m < 0 || m <= n, call, ": on axis ",
                 axis, " the index has extent ", m, " but the input only ", n,
                 "; off dim the index may not be longer than the input");
  }
}

namespace {

TensorView* gatherOp(GatherKind kind, TensorView* in, TensorView* index, int64_t dim) {
  const std::string op = hostir::toString(kind);
  HOSTIR_CHECK(in != nullptr && index != nullptr, op, ": an operand is null");
  const int64_t rank = in->rank();
  HOSTIR_CHECK(dim >= -rank && dim < rank, op, "(", describe(in), "): dim ", dim,
               " is out of range for rank ", rank, "; valid: [", -rank, ", ", rank, ")");
  const int64_t axis = dim < 0 ? dim + rank : dim;
  std::vector<Attribute> attributes{axis, static_cast<int64_t>(kind)};
  GatherOp::validate({in, index}, attributes);
  Fusion* container = in->container();
  std::vector<IterDomain*> ids;
  std::vector<IterDomain*> shape =
      kind == GatherKind::IndexSelect ? in->shapeDomain() : index->shapeDomain();
  for (size_t a = 0; a < shape.size(); ++a) {
    Val* extent = shape[a]->extent();
    if (kind == GatherKind::IndexSelect && static_cast<int64_t>(a) == axis) {
      extent = index->rank() == 0 ? IrBuilder::createInContainer<Scalar>(container, int64_t{1})
                                  : index->shapeDomain()[0]->extent();
    }
    ids.push_back(IrBuilder::createInContainer<IterDomain>(container, extent));
  }
  TensorView* out = makeTensorOver(container, ids, in->dtype());
  IrBuilder::createInContainer<GatherOp>(container, std::vector<Val*>{in, index},
                                         std::vector<Val*>{out}, std::move(attributes));
  return out;
}

}  // namespace

TensorView* takeAlongAxis(TensorView* in, TensorView* index, int64_t dim) {
  return gatherOp(GatherKind::TakeAlongAxis, in, index, dim);
}

TensorView* indexSelect(TensorView* in, TensorView* index, int64_t dim) {
  return gatherOp(GatherKind::IndexSelect, in, index, dim);
}

HOSTIR_DEFINE_TENSOR_OP(GatherOp)

}  // namespace hostir
