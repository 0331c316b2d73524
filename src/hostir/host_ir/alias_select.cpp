#include "hostir/host_ir/alias_select.h"

#include <sstream>

#include "hostir/host_ir/host_dispatch.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

HirAliasSelect::HirAliasSelect(Fusion* container, TensorView* in, TensorView* out, int64_t axis,
                               Val* index)
    : HirAliasSelect(container, std::vector<Val*>{in, index}, std::vector<Val*>{out},
                     std::vector<Attribute>{axis}) {}

void HirAliasSelect::validateStructure() const {
  HOSTIR_ASSERT(inputs_.size() == 2 && outputs_.size() == 1 && attributes_.size() == 1 &&
                    attribute_vals_.empty(),
                "HirAliasSelect built with the wrong number of operands");
  auto* in = dynamic_cast<TensorView*>(inputs_[0]);
  auto* out = dynamic_cast<TensorView*>(outputs_[0]);
  HOSTIR_CHECK(in != nullptr && out != nullptr, "HirAliasSelect views a tensor as a tensor, got ",
               inputs_[0]->toInlineString(), " -> ", outputs_[0]->toInlineString());
  int64_t axis = std::get<int64_t>(attributes_[0]);
  HOSTIR_CHECK(axis >= 0 && axis < in->rank(), "HirAliasSelect of ", in->toInlineString(),
               ": axis ", axis, " is out of range; give an axis from 0 to ", in->rank() - 1);
  HOSTIR_CHECK(out->rank() == in->rank() - 1, "HirAliasSelect of ", in->toInlineString(),
               " along axis ", axis, ": the output ", out->toInlineString(), " has rank ",
               out->rank(), "; a selected view has rank ", in->rank() - 1);
  HOSTIR_CHECK(out->dtype() == in->dtype(), "HirAliasSelect of ", in->toInlineString(),
               ": the output ", out->toInlineString(), " must have the input's dtype ",
               hostir::toString(in->dtype()));
  Val* index = inputs_[1];
  HOSTIR_CHECK(index->vtype() == ValType::Scalar && isIntegralType(index->dtype()),
               "HirAliasSelect of ", in->toInlineString(),
               ": the index must be an integer scalar, got ", index->toInlineString());
}

TensorView* HirAliasSelect::in() const {
  return input(0)->as<TensorView>();
}

TensorView* HirAliasSelect::out() const {
  return output(0)->as<TensorView>();
}

IterDomain* HirAliasSelect::selectedAxis() const {
  return in()->shapeDomain().at(static_cast<size_t>(axis()));
}

std::string HirAliasSelect::toString(int indent) const {
  std::stringstream ss;
  std::string pad = indentString(indent);
  ss << pad << out()->toInlineString() << "\n"
     << pad << "   = HirAliasSelect( " << in()->toInlineString()
     << ", axis = " << selectedAxis()->toInlineString() << ", index = " << index()->toInlineString()
     << " )\n";
  return ss.str();
}

HOSTIR_DEFINE_HOST_EXPR(HirAliasSelect)

}  // namespace hostir
