#include "hostir/ir/fusion.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/presegmentation_passes.h"
#include "hostir/multidevice/sharding_propagation.h"

namespace hostir {

namespace {

void propagateForward(const std::vector<Expr*>& exprs) {
  for (Expr* expr : exprs) {
    TensorView* out = tensorOutput(expr);
    if (out != nullptr && !out->hasDeviceMesh()) {
      applySharding(out, shardingFromProducers(expr, out, /*respect_consumer_loop=*/true));
    }
  }
}

void propagateBackward(const std::vector<Expr*>& exprs) {
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    for (TensorView* in : tensorInputs(*it)) {
      if (!in->hasDeviceMesh()) {
        applySharding(in, shardingFromConsumer(*it, in));
      }
    }
  }
}

}  // namespace

void propagateShardings(Fusion* fusion) {
  std::vector<Expr*> exprs = fusion->exprs();
  propagateForward(exprs);
  propagateBackward(exprs);
  propagateForward(exprs);
}

}  // namespace hostir
