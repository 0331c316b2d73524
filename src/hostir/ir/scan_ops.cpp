#include "hostir/ir/scan_ops.h"

#include "hostir/ir/dispatch.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

void ScanOp::validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes) {
  HOSTIR_ASSERT(inputs.size() == 1 && attributes.size() == 1 &&
                    std::holds_alternative<int64_t>(attributes[0]),
                "ScanOp built with the wrong operands");
  const auto* in = dynamic_cast<const TensorView*>(inputs[0]);
  HOSTIR_CHECK(in != nullptr, "cumsum: the operand must be a tensor, got ",
               inputs[0] == nullptr ? std::string("null") : inputs[0]->toInlineString());
  const int64_t dim = std::get<int64_t>(attributes[0]);
  HOSTIR_CHECK(dim >= 0 && dim < in->rank(), "cumsum(", in->toInlineString(), "): dim ", dim,
               " is out of range for rank ", in->rank(), "; valid: [0, ", in->rank(), ")");
}

TensorView* cumsum(TensorView* in, int64_t dim) {
  HOSTIR_CHECK(in != nullptr, "cumsum: the operand is null");
  const int64_t rank = in->rank();
  HOSTIR_CHECK(dim >= -rank && dim < rank, "cumsum(", in->toInlineString(), "): dim ", dim,
               " is out of range for rank ", rank, "; valid: [", -rank, ", ", rank, ")");
  std::vector<Attribute> attributes{dim < 0 ? dim + rank : dim};
  ScanOp::validate({in}, attributes);
  Fusion* container = in->container();
  std::vector<IterDomain*> ids;
  for (IterDomain* id : in->shapeDomain()) {
    ids.push_back(IrBuilder::createInContainer<IterDomain>(container, id->extent()));
  }
  DataType dtype =
      isFloatingType(in->dtype()) || isComplexType(in->dtype()) ? in->dtype() : DataType::Int64;
  TensorView* out = makeTensorOver(container, ids, dtype);
  IrBuilder::createInContainer<ScanOp>(container, std::vector<Val*>{in}, std::vector<Val*>{out},
                                       std::move(attributes));
  return out;
}

HOSTIR_DEFINE_TENSOR_OP(ScanOp)

}  // namespace hostir
