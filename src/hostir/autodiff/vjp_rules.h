#pragma once

#include <vector>

namespace hostir {

class Expr;
class TensorView;
class Val;

// Where a rule reads the forward's values: the backward fusion's copy of a
// forward Val (an input, a saved tensor, or recomputed there).
class PrimalValues {
 public:
  virtual ~PrimalValues() = default;
  virtual Val* primal(const Val* forward_val) = 0;
  // The backward's copy of a forward scalar that shapes tensors (an
  // extent): cloned, never an input.
  virtual Val* extent(const Val* forward_extent) = 0;
};

// Whether a grad flows to `val`: a floating-point tensor.
bool takesGrad(const Val* val);

// The vector-Jacobian product of one forward op: given the grad of its
// output (built in the backward fusion, the current FusionGuard's), the
// contribution to the grad of each input, in input order; nullptr for an
// input that gets none (a scalar, an integer or Bool tensor, a mask). Each
// contribution has its input's shape and dtype. Throws hostir::Error naming
// the op when it has no rule.
std::vector<TensorView*> vectorJacobianProduct(const Expr* expr, TensorView* out_grad,
                                               PrimalValues& primals);

}  // namespace hostir
