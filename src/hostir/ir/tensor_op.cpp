#include "hostir/ir/tensor_op.h"

#include "hostir/ir/tensor_view.h"

namespace hostir {

TensorView* TensorOp::in() const {
  return tensorInput(0);
}

TensorView* TensorOp::out() const {
  return output(0)->as<TensorView>();
}

TensorView* TensorOp::tensorInput(size_t i) const {
  return input(i)->as<TensorView>();
}

void TensorOp::checkOneTensorOutputAnd(void (*validate)(const std::vector<Val*>&,
                                                        const std::vector<Attribute>&)) const {
  HOSTIR_ASSERT(outputs_.size() == 1 && output(0)->isA<TensorView>(), opName(),
                " built with the wrong outputs");
  validate(inputs_, attributes_);
}

}  // namespace hostir
