#pragma once

#include "hostir/ir/types.h"

namespace hostir {

class ReductionOp;

// Whether `reduction` reduces the axis of its input that `parallel_type`
// shards: each device then holds a partial result, and the lowering sums
// them with a collective (an allreduce, or a reduce-scatter when the output
// is sharded). Both the resharding pass (what it lowers directly) and
// autodiff's save policy (a collective's result is kept, not recomputed)
// ask it.
bool reducesShardedAxis(const ReductionOp* reduction, ParallelType parallel_type);

}  // namespace hostir
