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

// For a thread hostir does not run (c10d's Gloo threads), called on it
// before its first ATen call: gives it the budget's process-wide count
// through OpenMP with ATen's lazy init marked done, so that first call does
// not re-create caffe2's pthreadpool (a new thread spinning in the first
// run). Does nothing while the budget has set no process-wide count (ATen's
// lazy init then starts no pool).
void adoptBudgetOnForeignThread();

}  // namespace hostir::runtime
