#pragma once

#include <string>

namespace hostir {

class Fusion;

// Why `fusion`'s Stream splits cannot run with uneven shards (torch.chunk:
// the first devices hold ceilDiv(n, devices) rows, the last fewer), or
// empty when they can. A pipelined allgather + GEMM cuts every device's
// chunks from the largest shard, so its chunks, and those of the pointwise
// ops and the contraction after it (the reduce-scatter tail), match on
// every rank (host_ir/passes/gather_pipeline.h). A Stream split of a
// device's own rows that no collective touches runs too (each device loops
// over its own rows), and so does a sum over the sharded axis of a tensor
// chunked along its whole (unsharded) rows, allreduced or reduce-scattered
// onto them (the attention's sum over the heads, forward and backward:
// stream_parallelization pads every member's rows to the largest shard).
// Refused: any other Stream-parallel tensor that a collective writes or
// reads, whose chunks would differ in size across ranks.
std::string streamSplitsRefusingUnevenShards(const Fusion& fusion);

}  // namespace hostir
