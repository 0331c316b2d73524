// The only file of the stream runtime that touches ATen, so the rest builds
// and runs under ThreadSanitizer without it.
#include "hostir/runtime/thread_budget_aten.h"

#include <ATen/Config.h>
#include <ATen/Parallel.h>

#include <atomic>

#if AT_PARALLEL_OPENMP
#include <omp.h>

// ATen's per-thread "count set" flag: the thread_local of the inline
// at::internal::lazy_init_num_threads (ATen/Parallel.h), one object per
// thread for every library (a unique global symbol). Set, ATen's first call
// on the thread does not set the count again.
extern thread_local bool aten_thread_count_initialized asm(
    "_ZZN2at8internal21lazy_init_num_threadsEvE4init");
#endif

namespace hostir::runtime {
namespace {

// The count last given to at::set_num_threads by the budget (0: none).
std::atomic<int> g_process_count{0};

// Under ATen's OpenMP backend the intra-op count is OpenMP's, per thread.
// at::set_num_threads sets it on the calling thread and stores a
// process-wide count, which threads hostir does not run (c10d's Gloo
// threads) take at their first ATen call; but libtorch 1.13 also re-creates
// caffe2's pthreadpool (QNNPACK's and XNNPACK's, which hostir never calls) at
// every call, whatever the count, and calls it again on the first ATen call
// of every new thread once a count is stored (its per-thread lazy init): the
// transformer layer's first run started 9 pools, each spinning a thread
// (docs/performance.md, "Compile stage and first run"). So the process-wide
// count is set only when it changes, and a thread of the budget gets its
// count from OpenMP directly, ATen's lazy init marked done.
//
// A new thread of an OpenMP team runs the same lazy init at its first ATen
// call (a reduction's parallel body calls at::get_num_threads), so it too
// re-created the pool, in the first run. startTeam starts the calling
// thread's team of `threads` ahead, each team thread marked done; OpenMP
// keeps a team's threads for the thread's later parallel regions.
void startTeam(int threads) {
#if AT_PARALLEL_OPENMP && defined(_OPENMP)
  thread_local int started = 1;  // this thread's team size marked so far
  if (threads <= started) {
    return;
  }
#pragma omp parallel num_threads(threads)
  { aten_thread_count_initialized = true; }
  started = threads;
#endif
}

void setIntraOpThreads(int threads) {
  if (g_process_count.exchange(threads) != threads) {
    at::set_num_threads(threads);  // this thread's and the process's count
    startTeam(threads);
    return;
  }
#if AT_PARALLEL_OPENMP
  aten_thread_count_initialized = true;
  if (omp_get_max_threads() != threads) {
    omp_set_num_threads(threads);
  }
  startTeam(threads);
#else
  if (at::get_num_threads() != threads) {
    at::set_num_threads(threads);  // the native backends keep one count
  }
#endif
}

}  // namespace

void adoptBudgetOnForeignThread() {
#if AT_PARALLEL_OPENMP && defined(_OPENMP)
  const int threads = g_process_count.load();
  if (threads <= 0) {
    return;
  }
  // What ATen's lazy init would do (at::set_num_threads with the stored
  // count: this thread's OpenMP count) without re-creating the pool.
  aten_thread_count_initialized = true;
  omp_set_num_threads(threads);
#endif
}

ThreadBudget applyThreadBudget(StreamPool& pool, bool communicates, int ranks_sharing_cores) {
  const ThreadBudget budget =
      computeThreadBudget(pool.numberOfStreams(), communicates, ranks_sharing_cores);
  const int threads = budget.intra_op_threads;
  setIntraOpThreads(threads);
  pool.setWorkerSetup([threads] { setIntraOpThreads(threads); });
  return budget;
}

}  // namespace hostir::runtime
