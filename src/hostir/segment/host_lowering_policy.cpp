#include "hostir/segment/host_lowering_policy.h"

#include <algorithm>

#include "hostir/ir/op_traits.h"

namespace hostir {

namespace {

bool holdsHostLowerableOp(const SegmentedGroup& group) {
  return std::any_of(group.exprs().begin(), group.exprs().end(), isHostLowerable);
}

}  // namespace

bool isHostLowerable(const Expr* expr) {
  return hasTrait(expr, OpTrait::HostLowerable);
}

MergePredicate hostLoweringMergePolicy() {
  return [](const SegmentedGroup& producer, const SegmentedGroup& consumer) {
    return !holdsHostLowerableOp(producer) && !holdsHostLowerableOp(consumer);
  };
}

}  // namespace hostir
