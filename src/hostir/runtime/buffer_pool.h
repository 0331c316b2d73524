#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

namespace hostir {

// The large buffers host programs allocated in earlier runs, given again
// to later runs (docs/streams.md, "Buffers across runs"). A program
// allocates the same intermediates on every run; a fresh allocation of
// megabytes is a fresh mapping whose pages the kernel faults in and zeroes
// on first touch, every run (and on these VMs, memory the process gives
// back is reported to the host, which must back it again). Each buffer is
// a lease on one of the pool's blocks: when its storage's last reference
// goes (the caller's output, a view of it, queued work), the block comes
// back to the pool's reserve at once, for the next request of its size in
// bytes. Every evaluator of the process takes its buffers from shared(): a
// training step's backward reuses the buffers its forward let go
// (docs/training.md, "Peak memory of a step"). Thread-safe; a lease may
// outlive its pool.
class BufferPool {
 public:
  // Buffers smaller than this come from malloc's heap cheaply: not pooled.
  static constexpr int64_t kMinBytes = int64_t{1} << 20;
  // Buffers from this size on start on a huge page's boundary and are
  // advised huge pages (newPoolMemory).
  static constexpr int64_t kHugePageBytes = int64_t{2} << 20;
  // glibc's largest block from a heap (its DEFAULT_MMAP_THRESHOLD_MAX; set
  // by keepFreedMemoryMapped): a larger one is a mapping of its own, whose
  // pages no other allocation gets once it is freed.
  static constexpr int64_t kLargestHeapBlock = int64_t{32} << 20;
  // A block of the reserve that this many runs in a row did not ask for is
  // freed. Eight: three training steps' programs run in turn (forward and
  // backward each) ask for a size every sixth run; with four, each step's
  // sizes were freed and made again every time
  // (ThreeTrainingStepsInTurnKeepTheirBlocks).
  static constexpr int64_t kIdleRuns = 8;

  BufferPool();
  // Frees the reserve; blocks still leased are freed when they come back.
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // The pool of the process's host programs.
  static BufferPool& shared();

  // A contiguous tensor of `shape` and `dtype` over a lease of `bytes`
  // (takeMemory).
  at::Tensor take(const std::vector<int64_t>& shape, at::ScalarType dtype);
  // Memory of `bytes`: a block of the reserve of that size in bytes (an
  // earlier run's, or one this run let go of already), else a new one.
  // (Serving a shorter request from a longer block, as a sequence whose
  // length changes would, did not pay: docs/performance.md, "Sequence
  // lengths that change between calls".) A request no block fits first
  // frees the reserve's blocks of sizes this run is the first to ask for (a
  // program's first run: what the pool holds during a run is then what the
  // run has alive at once; an earlier run's sizes stay, for the same
  // program's next run) or, for a size no run asked for before (a length
  // that changed), every block this run has not asked for; and, over the
  // byte limit, the least recently asked for; it keeps those that runs ask
  // for again and again (a training step's forward and backward ask for
  // different sizes in turn: freeing one's blocks for the other's made
  // both allocate anew every step, docs/performance.md, "The buffer pool
  // across a training step's programs"). While leased, the memory counts
  // as tensor memory (tensor_memory.h); in the reserve it does not, as
  // malloc's free memory does not (reserveBytes() says how much).
  c10::Storage takeMemory(int64_t bytes);
  // At the start of a run: applies the byte limit (HOSTIR_BUFFER_POOL_MB,
  // default 2048; 0 turns the pool off) and frees the reserve's blocks that
  // the last kIdleRuns runs did not ask for.
  void recycle();

  // Frees the reserve; blocks leased now are freed when they come back
  // (`hostir sp-mlp --train` measures a step's memory from there).
  void release();
  // The memory of the pool's blocks: the reserve and those leased.
  int64_t heldBytes() const;
  // The reserve alone: blocks nobody uses, kept for later requests.
  int64_t reserveBytes() const;

  // Requests served from the reserve rather than new memory, since
  // construction.
  int64_t reused() const;
  // New blocks made, since construction.
  int64_t made() const;

  // The reserve and what is leased, shared with every lease (buffer_pool.cpp).
  struct Shelf;

 private:
  std::shared_ptr<Shelf> shelf_;
};

// A new block of `bytes` for the pool (docs/streams.md, "Buffers across
// runs"). From BufferPool::kHugePageBytes on, a block that starts on a 2 MiB
// boundary and that madvise(MADV_HUGEPAGE) marks for transparent huge pages
// (Linux; THP in `always` or `madvise` mode): its first touch faults a 2 MiB
// page at a time, not 4 KiB (64 MiB of new memory written in 26-38 ms
// against 525-678 ms on this VM, docs/performance.md, "Huge pages for the
// pool's blocks"). It comes from glibc's malloc like the rest (so memory let
// go stays mapped, keepFreedMemoryMapped). Smaller blocks, those of a
// process with HOSTIR_HUGE_PAGES=0 (poolHugePages), and any where THP is
// unknown: c10's default CPU allocator. Not counted as tensor memory: the
// pool counts its leases (BufferPool::takeMemory).
c10::DataPtr newPoolMemory(int64_t bytes);
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
