#include "hostir/ir/tensor_op.h"

#include "hostir/ir/iter_domain.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

int64_t constExtentOr(const IterDomain* id) {
  const auto* scalar = dynamic_cast<const Scalar*>(id->extent());
  return scalar != nullptr && scalar->isConstInt() ? scalar->constInt() : -1;
}

void checkDimAndIndexDtype(const std::string& call, const TensorView* in, const TensorView* index,
                           int64_t dim) {
  HOSTIR_CHECK(dim >= 0 && dim < in->rank(), call, ": dim ", dim, " is out of range for rank ",
               in->rank(), "; valid: [0, ", in->rank(), ")");
  HOSTIR_CHECK(index->dtype() == DataType::Int64 || index->dtype() == DataType::Int32, call,
               ": the index has dtype ", hostir::toString(index->dtype()),
               "; give Int64 or Int32 indices");
}

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
