#include "hostir/ir/tensor_domain.h"

#include <algorithm>
#include <sstream>

#include "hostir/ir/cloner.h"
#include "hostir/ir/fusion.h"

namespace hostir {

TensorDomain::TensorDomain(Fusion* container, std::vector<IterDomain*> logical,
                           std::vector<bool> contiguity)
    : TensorDomain(container, logical, logical, {}, std::move(contiguity)) {}

TensorDomain::TensorDomain(Fusion* container, std::vector<IterDomain*> logical,
                           std::vector<IterDomain*> loop, std::vector<IterDomain*> allocation,
                           std::vector<bool> contiguity)
    : Val(container, ValType::TensorDomain, DataType::Int64),
      logical_(std::move(logical)),
      loop_(std::move(loop)),
      allocation_(std::move(allocation)),
      contiguity_(std::move(contiguity)) {
  if (contiguity_.empty()) {
    contiguity_.assign(logical_.size(), false);
  }
  HOSTIR_ASSERT(contiguity_.size() == logical_.size(), "contiguity has ", contiguity_.size(),
                " entries for ", logical_.size(), " axes");
}

void TensorDomain::setContiguity(std::vector<bool> contiguity) {
  HOSTIR_CHECK(contiguity.size() == logical_.size(), "contiguity of ", toInlineString(), " needs ",
               logical_.size(), " entries, got ", contiguity.size());
  contiguity_ = std::move(contiguity);
}

void TensorDomain::setAllocation(std::vector<IterDomain*> allocation) {
  std::vector<IterDomain*> sorted_alloc = allocation;
  std::vector<IterDomain*> sorted_logical = logical_;
  std::sort(sorted_alloc.begin(), sorted_alloc.end());
  std::sort(sorted_logical.begin(), sorted_logical.end());
  HOSTIR_CHECK(sorted_alloc == sorted_logical, "the allocation domain of ", toInlineString(),
               " must be a permutation of its logical domain");
  allocation_ = std::move(allocation);
}

size_t TensorDomain::normalizeLoopAxis(int64_t axis) const {
  auto rank = static_cast<int64_t>(loop_.size());
  HOSTIR_CHECK(axis >= -rank && axis < rank, "axis ", axis, " is out of range for ",
               toInlineString(), " of rank ", rank, "; valid: [", -rank, ", ", rank, ")");
  return static_cast<size_t>(axis < 0 ? axis + rank : axis);
}

void TensorDomain::split(int64_t axis, Val* factor, bool inner_split) {
  size_t pos = normalizeLoopAxis(axis);
  auto [outer, inner] = IterDomain::split(loop_[pos], factor, inner_split);
  loop_[pos] = outer;
  loop_.insert(loop_.begin() + static_cast<std::ptrdiff_t>(pos) + 1, inner);
}

void TensorDomain::merge(int64_t axis_outer, int64_t axis_inner) {
  size_t outer = normalizeLoopAxis(axis_outer);
  size_t inner = normalizeLoopAxis(axis_inner);
  HOSTIR_CHECK(inner == outer + 1, "merge of ", toInlineString(),
               " needs adjacent axes (outer, outer + 1), got ", axis_outer, " and ", axis_inner);
  IterDomain* merged = IterDomain::merge(loop_[outer], loop_[inner]);
  loop_[outer] = merged;
  loop_.erase(loop_.begin() + static_cast<std::ptrdiff_t>(inner));
}

std::vector<IterDomain*> TensorDomain::noReductions(const std::vector<IterDomain*>& ids) {
  std::vector<IterDomain*> result;
  std::copy_if(ids.begin(), ids.end(), std::back_inserter(result),
               [](IterDomain* id) { return !id->isReduction(); });
  return result;
}

bool TensorDomain::sameAs(const Val* other) const {
  if (other == this) {
    return true;
  }
  const auto* td = dynamic_cast<const TensorDomain*>(other);
  if (td == nullptr || td->loop_.size() != loop_.size() || td->logical_.size() != logical_.size()) {
    return false;
  }
  for (size_t i = 0; i < loop_.size(); ++i) {
    if (!loop_[i]->sameAs(td->loop_[i])) {
      return false;
    }
  }
  for (size_t i = 0; i < logical_.size(); ++i) {
    if (!logical_[i]->sameAs(td->logical_[i])) {
      return false;
    }
  }
  return true;
}

Val* TensorDomain::cloneInto(IrCloner& cloner) const {
  std::vector<IterDomain*> logical = cloner.clone(logical_);
  std::vector<IterDomain*> loop = cloner.clone(loop_);
  std::vector<IterDomain*> allocation = cloner.clone(allocation_);
  return IrBuilder::createInContainer<TensorDomain>(cloner.target(), logical, loop, allocation,
                                                    contiguity_);
}

std::string TensorDomain::toInlineString() const {
  std::stringstream ss;
  ss << "[";
  for (size_t i = 0; i < loop_.size(); ++i) {
    ss << (i ? ", " : "") << loop_[i]->toInlineString();
  }
  ss << "]";
  return ss.str();
}

std::string TensorDomain::toString(int /*indent*/) const {
  return toInlineString();
}

}  // namespace hostir
