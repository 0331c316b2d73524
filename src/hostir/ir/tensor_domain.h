#pragma once

#include <vector>

#include "hostir/ir/iter_domain.h"

namespace hostir {

// The axes of a tensor: the logical domain (its shape, reductions included),
// the loop domain (logical after Split/Merge, where parallel types live) and
// the allocation domain (memory order; empty means logical order).
class TensorDomain : public Val {
 public:
  TensorDomain(Fusion* container, std::vector<IterDomain*> logical,
               std::vector<bool> contiguity = {});
  TensorDomain(Fusion* container, std::vector<IterDomain*> logical, std::vector<IterDomain*> loop,
               std::vector<IterDomain*> allocation, std::vector<bool> contiguity);

  const std::vector<IterDomain*>& logical() const {
    return logical_;
  }
  const std::vector<IterDomain*>& loop() const {
    return loop_;
  }
  const std::vector<IterDomain*>& allocation() const {
    return allocation_.empty() ? logical_ : allocation_;
  }
  bool hasAllocation() const {
    return !allocation_.empty();
  }
  // Per logical axis: whether the input must be contiguous there.
  const std::vector<bool>& contiguity() const {
    return contiguity_;
  }
  void setContiguity(std::vector<bool> contiguity);
  void setAllocation(std::vector<IterDomain*> allocation);

  // Axis position normalized against the loop domain (negative from the end).
  size_t normalizeLoopAxis(int64_t axis) const;
  void split(int64_t axis, Val* factor, bool inner_split);
  void merge(int64_t axis_outer, int64_t axis_inner);

  // The logical axes without reductions: the shape of the tensor.
  static std::vector<IterDomain*> noReductions(const std::vector<IterDomain*>& ids);

  bool sameAs(const Val* other) const override;
  Val* cloneInto(IrCloner& cloner) const override;
  std::string toString(int indent = 0) const override;
  std::string toInlineString() const override;

 private:
  std::vector<IterDomain*> logical_;
  std::vector<IterDomain*> loop_;
  std::vector<IterDomain*> allocation_;
  std::vector<bool> contiguity_;
};

}  // namespace hostir
