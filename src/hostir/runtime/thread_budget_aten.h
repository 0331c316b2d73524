#pragma once

#include "hostir/runtime/streams/stream_pool.h"
#include "hostir/runtime/streams/thread_budget.h"

namespace hostir::runtime {

// Puts the thread budget (thread_budget.h) for `pool` into effect: sets ATen's
// intra-op thread count on the calling thread and, before their next work
// item, on every worker of the pool. It is set per thread because ATen's
// OpenMP backend keeps the count per thread; ATen's process-wide count is
// set only when it changes, and the workers start no thread pool (the .cpp
// says why). Call it when a run starts; repeating it is cheap. Returns the
// budget applied.
ThreadBudget applyThreadBudget(StreamPool& pool, bool communicates = false,
                               int ranks_sharing_cores = 1);

}  // namespace hostir::runtime
