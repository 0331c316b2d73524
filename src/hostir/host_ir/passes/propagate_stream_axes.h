#pragma once

namespace hostir {

class Fusion;

// Carries a Stream split forward from the tensors a user marked to the
// tensors computed from them, so that a composition's intermediates (the
// max, exp and sum inside softmax) join the loop without the user naming
// them. An op's output gets its input's Stream split, on the axis that
// input axis maps to, when the op is stream-parallelizable, not resharding
// (a collective moves whole tensors), the output has no Stream axis yet and
// the mapped axis is an unsplit, unparallelized iteration axis of it. The
// output of a resharding op is never a source: a pipelined allgather + GEMM
// carries its own chunked tail (communication_lowering).
void propagateStreamAxes(Fusion* fusion);

// The same, also from the output of a resharding op: what the lowering's
// pipelined allgather + GEMM then chunks in its tail gets the split too, so
// the fusion says the chunks every tensor is computed in. Autodiff places
// the grads by it; the lowering does not run it.
void propagateStreamAxesThroughPipelinedTails(Fusion* fusion);

}  // namespace hostir
