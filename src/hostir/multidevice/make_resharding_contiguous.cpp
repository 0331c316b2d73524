#include "hostir/ir/fusion.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/communication_plan.h"
#include "hostir/multidevice/presegmentation_passes.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

void makeContiguous(TensorView* tv) {
  tv->setAllocationDomain(tv->getAllocationDomain(), /*contiguous=*/true);
}

}  // namespace

void makeReshardingContiguous(Fusion* fusion) {
  for (Expr* expr : fusion->exprs()) {
    if (!isResharding(expr)) {
      continue;
    }
    TensorView* out = tensorOutput(expr);
    if (expr->isA<LoadStoreOp>()) {
      makeContiguous(expr->input(0)->as<TensorView>());
      makeContiguous(out);
    } else if (isLoweredDirectly(expr)) {
      makeContiguous(out);
      // The pipelined allgather + GEMM also communicates its first operand.
      if (classifyResharding(expr).pattern == ReshardingPattern::PipelinedAllgatherGemm) {
        makeContiguous(expr->input(0)->as<TensorView>());
      }
    }
  }
}

}  // namespace hostir
