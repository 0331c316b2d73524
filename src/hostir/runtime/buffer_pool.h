#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

namespace hostir {

// The large buffers host programs allocated in earlier runs, given again
// to later runs (docs/streams.md, "Buffers across runs"). A program
// allocates the same intermediates on every run; a fresh allocation of
// megabytes is a fresh mapping whose pages the kernel faults in and zeroes
// on first touch, every run. A buffer is reused only once nothing but the
// pool references its memory: not an output the caller holds, nor a view
// of one, nor a tensor queued work still uses. Every evaluator of the
// process takes its buffers from shared(): a training step's backward
// reuses the buffers its forward let go (docs/training.md, "Peak memory of
// a step"). Thread-safe.
class BufferPool {
 public:
  // Buffers smaller than this come from malloc's heap cheaply: not pooled.
  static constexpr int64_t kMinBytes = int64_t{1} << 20;
  // Buffers from this size on start on a huge page's boundary and are
  // advised huge pages (newPoolMemory).
  static constexpr int64_t kHugePageBytes = int64_t{2} << 20;
  // A pooled buffer that this many runs in a row did not ask for is freed.
  static constexpr int64_t kIdleRuns = 4;

  // The pool of the process's host programs.
  static BufferPool& shared();

  // A contiguous tensor of `shape` and `dtype`: over the memory of a buffer
  // of the same size in bytes that nobody else refers to any more (an
  // earlier run's, or one this run let go of already: the evaluator drops a
  // binding after its last use, binding_lifetimes.h), when there is one,
  // else new. (Reusing a larger buffer for a shorter request, as a sequence
  // whose length changes would, did not pay: docs/performance.md, "Sequence
  // lengths that change between calls".) Nor is free memory kept while
  // new memory is made: a request that no free buffer fits first lets go of
  // every buffer nobody refers to, so what the pool holds during a run is
  // never more than what the run has alive at once (docs/training.md, "Peak
  // memory of a step").
  at::Tensor take(const std::vector<int64_t>& shape, at::ScalarType dtype);
  // The same, as memory of `bytes` (a deferred tensor's, deferred_memory.h).
  c10::Storage takeMemory(int64_t bytes);
  // At the start of a run: the buffers handed out so far that nobody else
  // references any more become free, up to the byte limit
  // (HOSTIR_BUFFER_POOL_MB, default 2048; 0 turns the pool off); free
  // buffers that the last kIdleRuns runs did not ask for are released.
  void recycle();

  // Lets go of every buffer: the pooled ones are freed, the handed-out ones
  // live on as long as someone else refers to them (as before the first
  // run: `hostir sp-mlp --train` measures a step's memory from there).
  void release();
  // The memory the pool keeps alive: its free buffers and those it handed
  // out (which others may also refer to).
  int64_t heldBytes() const;

  // Buffers handed out again rather than allocated, since construction.
  int64_t reused() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return reused_;
  }

 private:
  // Only the memory is kept, never the tensor a caller had: torch autograd
  // attaches a grad_fn to the output of a Function (which holds the program
  // owning this pool: test_autograd_lifetime), an in-place t_() changes its
  // strides; the next run gets a fresh, plain tensor over the memory.
  static bool unreferenced(const c10::Storage& memory);
  // Frees the free buffers and the handed-out ones nobody refers to any
  // more. Under mutex_.
  void releaseUnreferencedLocked();
  struct Free {
    c10::Storage memory;
    int64_t last_run;  // the run that last asked for it
  };
  struct HandedOut {
    c10::Storage memory;
    int64_t run;
  };

  mutable std::mutex mutex_;
  std::multimap<int64_t, Free> free_;  // by size in bytes
  std::vector<HandedOut> handed_out_;
  int64_t free_bytes_ = 0;
  int64_t runs_ = 0;  // recycle() calls
  int64_t reused_ = 0;
};

// New memory of `bytes` for the pool (docs/streams.md, "Buffers across
// runs"). From BufferPool::kHugePageBytes on, a block that starts on a 2 MiB
// boundary and that madvise(MADV_HUGEPAGE) marks for transparent huge pages
// (Linux; THP in `always` or `madvise` mode): its first touch faults a 2 MiB
// page at a time, not 4 KiB (64 MiB of new memory written in 26-38 ms
// against 525-678 ms on this VM, docs/performance.md, "Huge pages for the
// pool's blocks"). It comes from glibc's malloc like the rest (so memory let
// go stays mapped, keepFreedMemoryMapped) and counts as tensor memory
// (tensor_memory.h). Smaller blocks, those of a process with
// HOSTIR_HUGE_PAGES=0 (poolHugePages), and any where THP is unknown: at::empty.
c10::Storage newPoolMemory(int64_t bytes);
// HOSTIR_HUGE_PAGES: 1 (the default, also when unset or empty) or 0; throws
// hostir::Error naming the variable for anything else.
bool poolHugePages();

// HOSTIR_BUFFER_POOL_MB in bytes (default 2 GiB); throws hostir::Error
// naming the variable for a value that is not a non-negative integer.
int64_t bufferPoolLimitBytes();

// Memory let go keeps its pages for the next allocation (docs/performance.md,
// "Sequence lengths that change between calls"). A new sequence length's
// buffers are sizes no free buffer has: the pool lets its free ones go and
// asks for new memory, and ATen's ops, oneDNN and Gloo allocate new sizes
// too. All of it goes through glibc's malloc (c10's CPU allocator calls
// posix_memalign), which by default gives a freed block of a few MiB back to
// the system (munmap, or trimming its heap's top past a threshold of twice
// the largest block freed so far), so the next length's memory was new
// mappings whose every page faulted in (~20 us a 4 KiB page on the VMs
// measured). Here blocks up to 32 MiB (the most glibc allows) come from its
// heaps, and a heap's free top is kept up to `limit_bytes` (the pool's
// HOSTIR_BUFFER_POOL_MB): above it, it goes back to the system as before.
// What is kept is memory the process had in use at once (its peak), handed
// to the next allocation of any size that fits; the free memory in a heap's
// middle was never given back, before or now. recycle() applies it with the
// pool's limit at every run's start (once per limit); a limit of 0 (pool
// off) sets glibc's default trim threshold (128 KiB). Without glibc, nothing.
void keepFreedMemoryMapped(int64_t limit_bytes);

}  // namespace hostir
