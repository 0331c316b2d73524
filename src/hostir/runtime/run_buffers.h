#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <ATen/ATen.h>

#include "hostir/host_ir/host_ir_container.h"
#include "hostir/ir/encoding.h"
#include "hostir/runtime/buffer_pool.h"

namespace hostir {

class TensorView;

// The memory side of a host program's run: the buffers its tensors get
// (plain ones from the process's pool of large buffers, buffer_pool.h;
// encoded ones in their panel layout), and when a top-level tensor's
// binding can go (binding_lifetimes.h), so its memory serves later
// allocations of the same run. Binding is the interpreter's.
class RunBuffers {
 public:
  explicit RunBuffers(const HostIrContainer& program);

  // The last run's bindings are gone: its buffers that nobody holds any
  // more can serve this run.
  void startRun() {
    pool_.recycle();
  }
  // A buffer for `tv` of `shape`, laid out as `layout`, else as its
  // resolved encoding says (e.g. what a collective delivers), else plain.
  // Panels: [ceilDiv(N, tile), K, tile], the plain sizes remembered.
  // `zero_init`: zero-filled. A large buffer's memory is deferred
  // (deferred_memory.h): the pool's, taken when a stream first uses it (and
  // zeroed then, on that stream, for `zero_init`: the pool's buffers hold
  // an earlier run's data).
  at::Tensor allocate(const TensorView* tv, const std::vector<int64_t>& shape,
                      const std::optional<Layout>& layout = std::nullopt, bool zero_init = false);
  // The tensors no top-level expr after the `index`-th refers to.
  const std::vector<const Val*>& deadAfter(size_t index) const {
    return dead_after_.at(index);
  }

  // The large buffers kept for later runs, the process's: what they hold,
  // and letting them go (not during a run).
  int64_t pooledBytes() const {
    return pool_.heldBytes();
  }
  void releasePooled() {
    pool_.release();
  }

 private:
  at::Tensor deferred(const std::vector<int64_t>& shape, const TensorView* tv, bool zero_init);

  BufferPool& pool_ = BufferPool::shared();
  std::vector<std::vector<const Val*>> dead_after_;
};

}  // namespace hostir
