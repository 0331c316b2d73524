#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

namespace hostir {

// The large buffers a host program allocated in earlier runs, given again
// to later runs (docs/streams.md, "Buffers across runs"). A program
// allocates the same intermediates on every run; a fresh allocation of
// megabytes is a fresh mapping whose pages the kernel faults in and zeroes
// on first touch, every run. A buffer is reused only once nothing but the
// pool references its memory: not an output the caller holds, nor a view
// of one, nor a tensor queued work still uses.
class BufferPool {
 public:
  // Buffers smaller than this come from malloc's heap cheaply: not pooled.
  static constexpr int64_t kMinBytes = int64_t{1} << 20;

  // A contiguous tensor of `shape` and `dtype`: over the memory of a buffer
  // of the same size in bytes that an earlier run left unreferenced when
  // there is one, else new. (Reusing a larger buffer for a shorter request,
  // as a sequence whose length changes would, did not pay: docs/
  // performance.md, "Sequence lengths that change between calls".)
  at::Tensor take(const std::vector<int64_t>& shape, at::ScalarType dtype);
  // At the start of a run, after the last run's bindings are dropped: the
  // buffers handed out since the last call that nobody else references any
  // more become reusable, up to the byte limit (HOSTIR_BUFFER_POOL_MB,
  // default 2048; 0 turns the pool off); pooled buffers the last run did
  // not ask for are released.
  void recycle();

  // Buffers handed out again rather than allocated, since construction.
  int64_t reused() const {
    return reused_;
  }

 private:
  // Free memory by its size in bytes. Only the memory is kept, never the
  // tensor a caller had: torch autograd attaches a grad_fn to the output
  // of a Function, an in-place t_() changes its strides; the next run gets
  // a fresh, plain tensor over the memory.
  std::multimap<int64_t, c10::Storage> free_;
  // The memory of the buffers handed out, never their tensors: a caller's
  // output may get a grad_fn that holds the program owning this pool.
  std::vector<c10::Storage> handed_out_;
  int64_t free_bytes_ = 0;
  int64_t reused_ = 0;
};

// HOSTIR_BUFFER_POOL_MB in bytes (default 2 GiB); throws hostir::Error
// naming the variable for a value that is not a non-negative integer.
int64_t bufferPoolLimitBytes();

}  // namespace hostir
