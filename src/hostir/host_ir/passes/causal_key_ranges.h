#pragma once

#include <cstdint>

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
// chain is [.., stop] instead of [.., keys]. It does so per tile of the
// chunk's rows: a loop over tiles of at most kCausalQueryTileRows rows
// (index `QueryTile`) computes each tile against the keys its own rows
// see and writes its rows of O, so a long chunk (few chunks) skips as much
// as many short chunks would. About half of Q·Kᵀ, softmax and P·V is never
// computed. The chain's tensors become per-iteration
// allocations (their extent changes with the iteration); the loop kernel
// pass then keeps the softmax's inside one kernel. Any other shape of the
// chain (another reader of a chain tensor, a mask that is not causal from
// row 0, a fill other than -inf, an O that is not a buffer before the
// chain) is left as it is.
void narrowCausalKeyRanges(HostIrContainer& container);

// The rows of one query tile. One rank's attention in sp-layer's shape (8
// heads of 64, 2048 tokens, bench_attention_compute.py) measured 85.6 ms
// in 2 query chunks of 1024 rows against 67.7 in 8 of 256 and 67.8 in 32
// of 64: below ~256 rows a tile skips little more, and its GEMMs get
// shorter.
inline constexpr int64_t kCausalQueryTileRows = 256;

}  // namespace hostir
