#pragma once

namespace hostir {

class HostIrContainer;

// Causal attention computes each query chunk against the keys it can see.
// In a stream loop over query rows [start, stop), a softmax over keys
// masked by a causal mask (`causalMask`: key c visible from query r iff
// c <= r, rows counted from 0) gives every key c >= stop a probability of
// exactly 0: `where` puts -inf there, `max` ignores it (the diagonal is
// visible), `exp` makes it 0, `sum` adds 0 and the product with V adds 0.
// So the pass narrows the chain
//
//   S = matmul(Q_chunk, Kt)   (any scalar pointwise ops)   W = where(mask rows, ., -inf)
//   P = softmax(W) over keys  (max, broadcast, sub, exp, sum, broadcast, div)
//   O = matmul(P, V)
//
// to keys [0, stop): Kt's columns, V's rows and the mask rows' columns
// become slices whose extent is the loop's `stop`, and every tensor of the
// chain is [.., stop] instead of [.., keys]. About half of Q·Kᵀ, softmax
// and P·V is never computed. The chain's tensors become per-iteration
// allocations (their extent changes with the iteration); the loop kernel
// pass then keeps the softmax's inside one kernel. Any other shape of the
// chain (another reader of a chain tensor, a mask that is not causal from
// row 0, a fill other than -inf) is left as it is.
void narrowCausalKeyRanges(HostIrContainer& container);

}  // namespace hostir
