#include "hostir/ir/scatter_ops.h"

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

void ScatterOp::validate(const std::vector<Val*>& inputs,
                         const std::vector<Attribute>& attributes) {
  HOSTIR_ASSERT(inputs.size() == 3 && attributes.size() == 1 &&
                    std::holds_alternative<int64_t>(attributes[0]),
                "ScatterOp built with the wrong operands");
  const auto* in = dynamic_cast<const TensorView*>(inputs[0]);
  const auto* index = dynamic_cast<const TensorView*>(inputs[1]);
  const Val* src = inputs[2];
  const std::string call =
      "scatter(" + describe(inputs[0]) + ", " + describe(inputs[1]) + ", " + describe(src) + ")";
  HOSTIR_CHECK(in != nullptr && index != nullptr, call,
               ": the input and the index must be tensors");
  HOSTIR_CHECK(
      src != nullptr && (src->vtype() == ValType::TensorView || src->vtype() == ValType::Scalar),
      call, ": src must be a tensor or a scalar");
  const int64_t dim = std::get<int64_t>(attributes[0]);
  HOSTIR_CHECK(dim >= 0 && dim < in->rank(), call, ": dim ", dim, " is out of range for rank ",
               in->rank(), "; valid: [0, ", in->rank(), ")");
  HOSTIR_CHECK(index->dtype() == DataType::Int64 || index->dtype() == DataType::Int32, call,
               ": the index has dtype ", hostir::toString(index->dtype()),
               "; give Int64 or Int32 indices");
  HOSTIR_CHECK(index->rank() == in->rank(), call, ": the index has rank ", index->rank(),
               " but the input has rank ", in->rank(), "; scatter needs the same rank");
  if (const auto* src_tv = dynamic_cast<const TensorView*>(src)) {
    HOSTIR_CHECK(src_tv->rank() == in->rank(), call, ": src has rank ", src_tv->rank(),
                 " but the input has rank ", in->rank(), "; give src the same rank, or a scalar");
    HOSTIR_CHECK(src_tv->dtype() == in->dtype(), call, ": src has dtype ",
                 hostir::toString(src_tv->dtype()), ", the input ", hostir::toString(in->dtype()),
                 "; cast src first (as torch.scatter needs)");
  }
}

TensorView* scatter(TensorView* in, TensorView* index, Val* src, int64_t dim) {
  HOSTIR_CHECK(in != nullptr && index != nullptr && src != nullptr, "scatter: an operand is null");
  const int64_t rank = in->rank();
  HOSTIR_CHECK(dim >= -rank && dim < rank, "scatter(", describe(in), "): dim ", dim,
               " is out of range for rank ", rank, "; valid: [", -rank, ", ", rank, ")");
  std::vector<Attribute> attributes{dim < 0 ? dim + rank : dim};
  ScatterOp::validate({in, index, src}, attributes);
  Fusion* container = in->container();
  std::vector<IterDomain*> ids;
  for (IterDomain* id : in->shapeDomain()) {
    ids.push_back(IrBuilder::createInContainer<IterDomain>(container, id->extent()));
  }
  TensorView* out = makeTensorOver(container, ids, in->dtype());
  IrBuilder::createInContainer<ScatterOp>(container, std::vector<Val*>{in, index, src},
                                          std::vector<Val*>{out}, std::move(attributes));
  return out;
}

HOSTIR_DEFINE_TENSOR_OP(ScatterOp)

}  // namespace hostir
