#include "hostir/runtime/run_buffers.h"

#include "hostir/ir/tensor_view.h"
#include "hostir/runtime/binding_lifetimes.h"
#include "hostir/runtime/deferred_memory.h"
#include "hostir/runtime/packed_gemm.h"
#include "hostir/runtime/polymorphic_value.h"

namespace hostir {

RunBuffers::RunBuffers(const HostIrContainer& program) : dead_after_(tensorsDeadAfter(program)) {}

at::Tensor RunBuffers::deferred(const std::vector<int64_t>& shape, const TensorView* tv,
                                bool zero_init) {
  const at::ScalarType dtype = toAtenType(tv->dtype());
  // A small buffer costs less than the lock its deferral takes per use.
  if (c10::multiply_integers(shape) * c10::elementSize(dtype) < BufferPool::kMinBytes) {
    const auto options = at::TensorOptions().dtype(dtype);
    return zero_init ? at::zeros(shape, options) : at::empty(shape, options);
  }
  return zero_init ? deferredZeros(shape, dtype, &pool_) : deferredEmpty(shape, dtype, &pool_);
}

at::Tensor RunBuffers::allocate(const TensorView* tv, const std::vector<int64_t>& shape,
                                const std::optional<Layout>& layout, bool zero_init) {
  std::optional<Layout> chosen = layout;
  if (!chosen.has_value() && tv->hasEncoding() && tv->encoding()->isResolved()) {
    chosen = tv->encoding()->resolved;
  }
  if (chosen.has_value() && !chosen->isIdentity()) {
    // An encoded tensor held in oneDNN's blocked layout (docs/targets.md).
    HOSTIR_CHECK(shape.size() == 2, tv->toInlineString(), " is laid out as ", chosen->toString(),
                 " but has ", shape.size(), " axes; a blocked layout holds a 2-D tensor");
    std::vector<int64_t> blocked = chosen->blockedShape(
        shape[static_cast<size_t>(chosen->n_axis)], shape[static_cast<size_t>(1 - chosen->n_axis)]);
    at::Tensor buffer = deferred(blocked, tv, zero_init);
    rememberPlainSizes(buffer, shape);
    return buffer;
  }
  return deferred(shape, tv, zero_init);
}

}  // namespace hostir
