// The only file of the stream runtime that touches ATen, so the rest builds
// and runs under ThreadSanitizer without it.
#include "hostir/runtime/thread_budget_aten.h"

#include <ATen/Parallel.h>

namespace hostir::runtime {
namespace {

void setIntraOpThreads(int threads) {
  if (at::get_num_threads() != threads) {
    at::set_num_threads(threads);
  }
}

}  // namespace

ThreadBudget applyThreadBudget(StreamPool& pool, bool communicates, int ranks_sharing_cores) {
  const ThreadBudget budget =
      computeThreadBudget(pool.numberOfStreams(), communicates, ranks_sharing_cores);
  const int threads = budget.intra_op_threads;
  setIntraOpThreads(threads);
  pool.setWorkerSetup([threads] { setIntraOpThreads(threads); });
  return budget;
}

}  // namespace hostir::runtime
