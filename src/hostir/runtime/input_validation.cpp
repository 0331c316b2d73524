#include "hostir/runtime/input_validation.h"

#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/expression_evaluator.h"

namespace hostir {

namespace {
void validateTensor(const TensorView* tv, const at::Tensor& tensor, size_t index,
                    const std::string& what) {
  std::string name = "input " + std::to_string(index) + " " + tv->toInlineString();
  HOSTIR_CHECK(tensor.defined(), what, ": ", name, " is an undefined tensor");
  HOSTIR_CHECK(tensor.scalar_type() == toAtenType(tv->dtype()), what, ": ", name, " expects dtype ",
               toString(tv->dtype()), " but got ", c10::toString(tensor.scalar_type()));
  if (tv->hasEncoding() && tv->encoding()->isResolved() &&
      !tv->encoding()->resolved->isIdentity()) {
    // A launch must get its data in the layout its variant was compiled for.
    const int64_t tile = tv->encoding()->resolved->tile;
    HOSTIR_CHECK(tensor.dim() == 3 && tensor.size(2) == tile, what, ": ", name,
                 " expects panels of ", tile, " columns [ceilDiv(N, ", tile, "), K, ", tile,
                 "] but got sizes ", tensor.sizes(),
                 "; the data was laid out for another target than this variant's");
    return;
  }
  std::vector<IterDomain*> shape = tv->shapeDomain();
  std::vector<int64_t> divisors = shardDivisors(tv);
  HOSTIR_CHECK(static_cast<int64_t>(shape.size()) == tensor.dim(), what, ": ", name,
               " expects rank ", shape.size(), " but got sizes ", tensor.sizes());
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    int64_t size = tensor.size(static_cast<int64_t>(axis));
    if (shape[axis]->isBroadcast()) {
      HOSTIR_CHECK(size == 1, what, ": ", name, " axis ", axis, " ", shape[axis]->toInlineString(),
                   " is a broadcast axis and needs size 1, got ", size);
    }
    const auto* extent = shape[axis]->extent()->as<Scalar>();
    if (extent->isConstInt()) {
      int64_t expected = (extent->constInt() + divisors[axis] - 1) / divisors[axis];
      HOSTIR_CHECK(expected == size, what, ": ", name, " axis ", axis, " expects size ", expected,
                   divisors[axis] > 1 ? " (this device's shard)" : "", " but got ", size);
    }
  }
  const std::vector<bool>& contiguity = tv->domain()->contiguity();
  bool needs_contiguous = !contiguity.empty() && std::all_of(contiguity.begin(), contiguity.end(),
                                                             [](bool c) { return c; });
  HOSTIR_CHECK(!needs_contiguous || tensor.is_contiguous(), what, ": ", name,
               " was declared contiguous (makeContigTensor) but got a tensor with strides ",
               tensor.strides(), "; pass tensor.contiguous() or declare it makeSymbolicTensor");
}
}  // namespace

void validateInputs(const std::vector<Val*>& expected, const std::vector<PolymorphicValue>& given,
                    const std::string& what, int64_t my_device) {
  HOSTIR_CHECK(expected.size() == given.size(), what, " expects ", expected.size(),
               " inputs but got ", given.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const Val* input = expected[i];
    if (const auto* tv = dynamic_cast<const TensorView*>(input)) {
      HOSTIR_CHECK(isTensor(given[i]), what, ": input ", i, " ", tv->toInlineString(),
                   " expects a tensor but got ", describeValue(given[i]));
      const at::Tensor& tensor = std::get<at::Tensor>(given[i]);
      bool absent_here =
          my_device >= 0 && tv->hasDeviceMesh() && !tv->getDeviceMesh().has(my_device);
      if (absent_here) {
        HOSTIR_CHECK(!tensor.defined(), what, ": input ", i, " ", tv->toInlineString(),
                     " lives on ", tv->getDeviceMesh().toString(), ", not on device ", my_device,
                     "; pass an undefined tensor (at::Tensor()) for it");
        continue;
      }
      validateTensor(tv, tensor, i, what);
    } else {
      HOSTIR_CHECK(hasValue(given[i]) && !isTensor(given[i]), what, ": input ", i, " ",
                   input->toInlineString(), " expects a scalar but got ", describeValue(given[i]));
    }
  }
}

void validateOutputBuffer(const Val* output, const at::Tensor& buffer,
                          const std::vector<int64_t>& sizes) {
  HOSTIR_CHECK(buffer.defined(), "the buffer given for output ", output->toInlineString(),
               " is undefined");
  HOSTIR_CHECK(buffer.scalar_type() == toAtenType(output->dtype()), "the buffer given for output ",
               output->toInlineString(), " has dtype ", c10::toString(buffer.scalar_type()),
               "; expected ", toString(output->dtype()));
  HOSTIR_CHECK(buffer.sizes() == at::IntArrayRef(sizes), "the buffer given for output ",
               output->toInlineString(), " has sizes ", buffer.sizes(), "; expected ",
               at::IntArrayRef(sizes));
}

}  // namespace hostir
