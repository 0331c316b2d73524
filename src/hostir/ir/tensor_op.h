#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hostir/ir/statement.h"

namespace hostir {

class IterDomain;
class TensorView;

// An axis's extent when it is a constant, else -1: the static checks of the
// ops' validate() compare extents only where both are known.
int64_t constExtentOr(const IterDomain* id);

// The checks the indexed ops (gathers, scatters) share, for `call` (the op
// as the message names it): dim in [0, in's rank), an Int64 or Int32 index.
void checkDimAndIndexDtype(const std::string& call, const TensorView* in, const TensorView* index,
                           int64_t dim);

// The base of the fusion ops of the *_ops.h files (gather, scatter, scan,
// pad, cat, random) that make one tensor: the accessors and the structural
// check each of them repeated. A node derives from it with
// HOSTIR_DECLARE_TENSOR_OP, states its operand rules in a static
// validate(inputs, attributes) (which its builder calls too, so a bad call
// fails before a node is made) and ends its .cpp with
// HOSTIR_DEFINE_TENSOR_OP, whose structural check is "one tensor output,
// then validate" (a node with rules on its output writes its own
// validateStructure and uses HOSTIR_DEFINE_EXPR).
class TensorOp : public Expr {
 public:
  using Expr::Expr;
  // Input 0, the tensor the op reads (an internal error when it is not one).
  TensorView* in() const;
  // The one output.
  TensorView* out() const;

 protected:
  // Input `i` as a tensor (an internal error when it is not one).
  TensorView* tensorInput(size_t i) const;
  // One tensor output, then the node's operand rules.
  void checkOneTensorOutputAnd(void (*validate)(const std::vector<Val*>&,
                                                const std::vector<Attribute>&)) const;
};

#define HOSTIR_DECLARE_TENSOR_OP(ClassName) HOSTIR_DECLARE_EXPR_OF(ClassName, TensorOp)

// The out-of-line boilerplate of a TensorOp whose structural check is
// checkOneTensorOutputAnd(validate).
#define HOSTIR_DEFINE_TENSOR_OP(ClassName)    \
  void ClassName::validateStructure() const { \
    checkOneTensorOutputAnd(validate);        \
  }                                           \
  HOSTIR_DEFINE_EXPR(ClassName)

}  // namespace hostir
