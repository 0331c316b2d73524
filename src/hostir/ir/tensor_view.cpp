#include "hostir/ir/tensor_view.h"

#include <sstream>

#include "hostir/ir/cloner.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/scalar.h"

namespace hostir {

TensorView::TensorView(Fusion* container, TensorDomain* domain, DataType dtype,
                       MemoryType memory_type)
    : Val(container, ValType::TensorView, dtype), domain_(domain), memory_type_(memory_type) {
  HOSTIR_ASSERT(domain != nullptr);
}

namespace {
// Normalizes a loop-domain axis of `tv`; the error names the tensor.
size_t loopAxis(const TensorView* tv, int64_t axis, const char* what) {
  int64_t rank = tv->nDims();
  HOSTIR_CHECK(axis >= -rank && axis < rank, what, " of ", tv->toInlineString(), ": axis ", axis,
               " is out of range; valid axes are [", -rank, ", ", rank, ")");
  return static_cast<size_t>(axis < 0 ? axis + rank : axis);
}
}  // namespace

IterDomain* TensorView::axis(int64_t position) const {
  return domain_->loop()[loopAxis(this, position, "axis")];
}

TensorView* TensorView::split(int64_t axis, int64_t factor, bool inner_split) {
  return split(axis, IrBuilder::createInContainer<Scalar>(container(), factor), inner_split);
}

TensorView* TensorView::split(int64_t axis, Val* factor, bool inner_split) {
  HOSTIR_CHECK(factor->vtype() == ValType::Scalar && isIntegralType(factor->dtype()),
               "split factor of ", toInlineString(), " must be an integer scalar, got ",
               factor->toInlineString());
  IterDomain* id = domain_->loop()[loopAxis(this, axis, "split")];
  HOSTIR_CHECK(!id->isBroadcast(), "split of ", toInlineString(), ": cannot split broadcast axis ",
               id->toInlineString(), "; only iteration and reduction axes can be split");
  domain_->split(axis, factor, inner_split);
  return this;
}

TensorView* TensorView::merge(int64_t axis_outer, int64_t axis_inner) {
  size_t outer = loopAxis(this, axis_outer, "merge");
  size_t inner = loopAxis(this, axis_inner, "merge");
  HOSTIR_CHECK(inner == outer + 1, "merge of ", toInlineString(), ": axes ", axis_outer, " and ",
               axis_inner, " are not adjacent; merge an axis with the next one (outer, outer + 1)");
  IterDomain* a = domain_->loop()[outer];
  IterDomain* b = domain_->loop()[inner];
  HOSTIR_CHECK(a->iterType() == b->iterType(), "merge of ", toInlineString(), ": cannot merge ",
               a->toInlineString(), " with ", b->toInlineString(),
               "; both must be iteration, reduction or broadcast axes alike");
  domain_->merge(axis_outer, axis_inner);
  return this;
}

void TensorView::setAllocationDomain(std::vector<IterDomain*> allocation, bool contiguous) {
  domain_->setAllocation(std::move(allocation));
  domain_->setContiguity(std::vector<bool>(domain_->logical().size(), contiguous));
}

const DeviceMesh& TensorView::getDeviceMesh() const {
  HOSTIR_CHECK(hasDeviceMesh(), toInlineString(), " has no device mesh; call setDeviceMesh");
  return *mesh_;
}

bool TensorView::sameAs(const Val* other) const {
  if (other == this) {
    return true;
  }
  const auto* tv = dynamic_cast<const TensorView*>(other);
  return tv != nullptr && tv->dtype() == dtype() && tv->mesh_ == mesh_ &&
         tv->encoding_ == encoding_ && tv->zero_above_diagonal_ == zero_above_diagonal_ &&
         domain_->sameAs(tv->domain_);
}

Val* TensorView::cloneInto(IrCloner& cloner) const {
  auto* domain = cloner.clone(domain_);
  auto* tv =
      IrBuilder::createInContainer<TensorView>(cloner.target(), domain, dtype(), memory_type_);
  tv->mesh_ = mesh_;
  tv->encoding_ = encoding_;
  tv->zero_above_diagonal_ = zero_above_diagonal_;
  return tv;
}

std::string TensorView::toInlineString() const {
  std::stringstream ss;
  ss << "T" << name() << "_" << (memory_type_ == MemoryType::Global ? "g" : "l") << "_"
     << hostir::toString(dtype()) << domain_->toInlineString();
  if (encoding_.has_value()) {
    ss << "#" << encoding_->toString();
  }
  if (zero_above_diagonal_) {
    ss << "#zero_above_diagonal";
  }
  return ss.str();
}

std::string TensorView::toString(int /*indent*/) const {
  std::string result = toInlineString();
  if (hasDeviceMesh()) {
    result += " (" + mesh_->toString() + ")";
  }
  return result;
}

}  // namespace hostir
