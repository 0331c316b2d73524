#pragma once

namespace hostir {

class Fusion;

// The multi-device passes that run on a user's fusion before segmentation.
// Their order (each relies on the previous ones) is the pass registry's
// (host_ir/passes/pass_registry.h, `hostir passes`), which also runs them.

// Throws hostir::Error naming the first tensor whose sharding is malformed
// (see shardingOf).
void validateShardings(Fusion* fusion);

// Forward over the exprs in topological order, a tensor without a mesh
// takes the sharding its producers imply (shardingFromProducers); then
// backward, a tensor still without a mesh takes the sharding of a consumer
// (shardingFromConsumer); then forward once more for tensors whose only
// annotated neighbours were found by the backward sweep. Tensors with a
// mesh (what the user annotated, unsharded ones included) are never changed.
void propagateShardings(Fusion* fusion);

// Makes each resharding expr a single communication-shaped op. A `set` and
// the patterns the lowering handles directly (isLoweredDirectly) stay. A
// linear with a bias that contracts a sharded K becomes linear + add (the
// bias is added once, after the reduction). Any other resharding expr is
// split: when its inputs agree with each other, it computes into a new
// tensor that keeps the inputs' sharding and a `set` reshards that into the
// original output; otherwise each input that disagrees with the output is
// resharded by a `set` first.
void insertReshardings(Fusion* fusion);

// A resharding `set` whose sharded axis is not the outermost (in allocation
// order, broadcast axes aside) on either side becomes permute + set +
// permute, with the sharded axis moved to the front, so that each device's
// block is contiguous for the collective. The set's output keeps its
// identity (it is now defined by the permute back).
void reorderShardedAxis(Fusion* fusion);

// Gives the tensors a collective reads or writes (both sides of a resharding
// set; the output of a reduction or sharded contraction; A and the output
// of the pipelined allgather + GEMM) an allocation domain with full
// contiguity. For a fusion input this is a requirement on the caller.
void makeReshardingContiguous(Fusion* fusion);

}  // namespace hostir
