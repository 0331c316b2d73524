#include "hostir/segment/forwarding.h"

#include <algorithm>

#include "hostir/ir/fusion.h"
#include "hostir/ir/op_traits.h"
#include "hostir/ir/ops.h"
#include "hostir/segment/host_lowering_policy.h"

namespace hostir {

bool isForwardableOp(const Expr* expr) {
  // A GELU's derivative (an erf and an exp per element, what a backward
  // computes from the saved pre-GELU tensor, a program input) is computed
  // once, by a segment of its own, not copied into each reader's group: a
  // forwarded one ran whole through ATen ahead of the program and its result
  // was then copied into the buffer the segment writes in place.
  const auto* unary = dynamic_cast<const UnaryOp*>(expr);
  if (unary != nullptr && unary->type() == UnaryOpType::GeluDerivative) {
    return false;
  }
  return hasTrait(expr, OpTrait::Forwardable);
}

std::unordered_set<const Expr*> findForwardedExprs(const Fusion& fusion,
                                                   const std::vector<Expr*>& exprs) {
  std::unordered_set<const Expr*> forwarded;
  std::unordered_set<const Val*> inputs(fusion.inputs().begin(), fusion.inputs().end());
  std::unordered_set<const Val*> outputs(fusion.outputs().begin(), fusion.outputs().end());
  for (const Expr* expr : exprs) {
    // A Stream-parallel op is computed once, in the stream pass's loop: a
    // copy in each reader's group would be computed whole (and that group
    // would hold a Stream-parallel expr the lowering must not merge).
    if (!isForwardableOp(expr) || computesStreamParallelTensor(expr)) {
      continue;
    }
    bool produces_fusion_output =
        std::any_of(expr->outputs().begin(), expr->outputs().end(),
                    [&](const Val* out) { return outputs.count(out) != 0; });
    if (produces_fusion_output) {
      continue;
    }
    // Scalar operands (a fill value, extents) are recomputed with the clone;
    // only tensor operands decide where the chain starts.
    bool starts_at_root =
        std::all_of(expr->inputs().begin(), expr->inputs().end(), [&](const Val* in) {
          return in->vtype() != ValType::TensorView || inputs.count(in) != 0 ||
                 forwarded.count(in->definition()) != 0;
        });
    if (starts_at_root) {
      forwarded.insert(expr);
    }
  }
  return forwarded;
}

}  // namespace hostir
