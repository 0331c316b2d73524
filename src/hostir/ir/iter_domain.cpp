#include "hostir/ir/iter_domain.h"

#include <sstream>

#include "hostir/ir/arith.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/dispatch.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/scalar.h"

namespace hostir {

IterDomain::IterDomain(Fusion* container, Val* extent, IterType iter_type,
                       ParallelType parallel_type)
    : Val(container, ValType::IterDomain, DataType::Int64),
      extent_(extent),
      iter_type_(iter_type),
      parallel_type_(parallel_type) {
  HOSTIR_ASSERT(
      extent != nullptr && extent->vtype() == ValType::Scalar && isIntegralType(extent->dtype()),
      "an IterDomain extent must be an integer scalar");
}

void IterDomain::parallelize(ParallelType parallel_type) {
  HOSTIR_CHECK(parallel_type == ParallelType::Serial || !isBroadcast(), toInlineString(),
               " is a broadcast axis and cannot be parallelized with ",
               hostir::toString(parallel_type), "; parallelize an iteration axis");
  parallel_type_ = parallel_type;
}

IterDomain* IterDomain::cloneWithoutParallelization(IterType iter_type) const {
  return IrBuilder::createInContainer<IterDomain>(container(), extent_, iter_type);
}

bool IterDomain::sameAs(const Val* other) const {
  if (other == this) {
    return true;
  }
  const auto* id = dynamic_cast<const IterDomain*>(other);
  return id != nullptr && id->iter_type_ == iter_type_ && id->parallel_type_ == parallel_type_ &&
         extent_->sameAs(id->extent_);
}

Val* IterDomain::cloneInto(IrCloner& cloner) const {
  return IrBuilder::createInContainer<IterDomain>(cloner.target(), cloner.clone(extent_),
                                                  iter_type_, parallel_type_);
}

std::string IterDomain::toInlineString() const {
  std::stringstream ss;
  ss << (isReduction()   ? "r"
         : isBroadcast() ? "b"
                         : "i")
     << hostir::toString(parallel_type_) << name() << "{" << extent_->toInlineString() << "}";
  return ss.str();
}

std::string IterDomain::toString(int /*indent*/) const {
  return toInlineString();
}

std::pair<IterDomain*, IterDomain*> IterDomain::split(IterDomain* in, Val* factor,
                                                      bool inner_split) {
  HOSTIR_CHECK(!in->isBroadcast(), "cannot split broadcast axis ", in->toInlineString(),
               "; only iteration and reduction axes can be split");
  if (auto* constant = dynamic_cast<Scalar*>(factor); constant && constant->isConstInt()) {
    HOSTIR_CHECK(constant->constInt() > 0, "split factor of ", in->toInlineString(),
                 " must be positive, got ", constant->constInt());
  }
  Fusion* container = in->container();
  Val* remainder = ceilDiv(in->extent(), factor);
  Val* outer_extent = inner_split ? remainder : factor;
  Val* inner_extent = inner_split ? factor : remainder;
  auto* outer = IrBuilder::createInContainer<IterDomain>(container, outer_extent, in->iterType());
  auto* inner = IrBuilder::createInContainer<IterDomain>(container, inner_extent, in->iterType());
  IrBuilder::createInContainer<Split>(container, std::vector<Val*>{in, factor},
                                      std::vector<Val*>{outer, inner},
                                      std::vector<Attribute>{inner_split});
  return {outer, inner};
}

IterDomain* IterDomain::merge(IterDomain* outer, IterDomain* inner) {
  HOSTIR_CHECK(outer->iterType() == inner->iterType(), "cannot merge ", outer->toInlineString(),
               " with ", inner->toInlineString(),
               ": both must be iteration, reduction or broadcast axes alike");
  Fusion* container = outer->container();
  auto* out = IrBuilder::createInContainer<IterDomain>(
      container, mul(outer->extent(), inner->extent()), outer->iterType());
  IrBuilder::createInContainer<Merge>(container, std::vector<Val*>{outer, inner},
                                      std::vector<Val*>{out}, std::vector<Attribute>{});
  return out;
}

void Split::validateStructure() const {
  HOSTIR_ASSERT(inputs_.size() == 2 && outputs_.size() == 2 && attributes_.size() == 1);
}

std::string Split::toString(int indent) const {
  std::stringstream ss;
  ss << indentString(indent) << (innerSplit() ? "Split: " : "Outer split: ")
     << in()->toInlineString() << " by factor " << factor()->toInlineString() << " -> "
     << outer()->toInlineString() << ", " << inner()->toInlineString() << "\n";
  return ss.str();
}

void Merge::validateStructure() const {
  HOSTIR_ASSERT(inputs_.size() == 2 && outputs_.size() == 1);
}

std::string Merge::toString(int indent) const {
  std::stringstream ss;
  ss << indentString(indent) << "Merge: " << outer()->toInlineString() << " and "
     << inner()->toInlineString() << " -> " << out()->toInlineString() << "\n";
  return ss.str();
}

HOSTIR_DEFINE_EXPR(Split)
HOSTIR_DEFINE_EXPR(Merge)

}  // namespace hostir
