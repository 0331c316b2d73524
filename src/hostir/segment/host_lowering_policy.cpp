#include "hostir/segment/host_lowering_policy.h"

#include <algorithm>

#include "hostir/ir/iter_domain.h"
#include "hostir/ir/op_traits.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

bool holdsLoneOp(const SegmentedGroup& group, const StaysAlone& stays_alone) {
  return std::any_of(group.exprs().begin(), group.exprs().end(), stays_alone);
}

}  // namespace

bool computesStreamParallelTensor(const Expr* expr) {
  return std::any_of(expr->outputs().begin(), expr->outputs().end(), [](const Val* output) {
    const auto* tv = dynamic_cast<const TensorView*>(output);
    return tv != nullptr && std::any_of(tv->getLoopDomain().begin(), tv->getLoopDomain().end(),
                                        [](const IterDomain* id) { return id->isStream(); });
  });
}

namespace {

bool holdsStreamParallelExpr(const SegmentedGroup& group) {
  return std::any_of(group.exprs().begin(), group.exprs().end(), computesStreamParallelTensor);
}

}  // namespace

bool isHostLowerable(const Expr* expr) {
  return hasTrait(expr, OpTrait::HostLowerable);
}

bool isGemmOperandView(const Expr* expr) {
  if (!expr->isA<PermuteOp>() || expr->output(0)->isFusionOutput()) {
    return false;
  }
  const std::vector<Expr*>& uses = expr->output(0)->uses();
  return !uses.empty() && std::all_of(uses.begin(), uses.end(), [expr](const Expr* use) {
    return use->isA<MatmulOp>() && use->as<MatmulOp>()->a() == expr->output(0) &&
           use->as<MatmulOp>()->b() != expr->output(0);
  });
}

MergePredicate hostLoweringMergePolicy(StaysAlone stays_alone) {
  return [stays_alone](const SegmentedGroup& producer, const SegmentedGroup& consumer) {
    return !holdsLoneOp(producer, stays_alone) && !holdsLoneOp(consumer, stays_alone) &&
           !holdsStreamParallelExpr(producer) && !holdsStreamParallelExpr(consumer);
  };
}

}  // namespace hostir
