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

  // A contiguous buffer of `shape` and `dtype`: one an earlier run left
  // unreferenced when there is one, else a new one.
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
  using Key = std::pair<at::ScalarType, std::vector<int64_t>>;
  std::map<Key, std::vector<at::Tensor>> free_;
  // What each buffer was handed out as: the caller may have changed the
  // tensor since (torch autograd attaches a grad_fn to a Function's output,
  // an in-place t_() or resize_() changes its shape), so a recycled buffer
  // is a fresh tensor of this key over the same memory.
  std::vector<std::pair<at::Tensor, Key>> handed_out_;
  int64_t free_bytes_ = 0;
  int64_t reused_ = 0;
};

// HOSTIR_BUFFER_POOL_MB in bytes (default 2 GiB); throws hostir::Error
// naming the variable for a value that is not a non-negative integer.
int64_t bufferPoolLimitBytes();

}  // namespace hostir
