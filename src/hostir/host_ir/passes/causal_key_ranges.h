#pragma once

#include <cstdint>
#include <vector>

namespace hostir {

class Expr;
class HostIrContainer;
class Scope;
class TensorView;
class Val;

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
// pass then keeps the softmax's inside one kernel. P may instead be rows of
// a buffer others read (a training forward's saved probabilities): each
// tile writes its keys' probabilities there and zeros past them. Any other
// shape of the chain (another reader of a chain tensor, a mask that is not causal from
// row 0, a fill other than -inf, an O that is not a buffer before the
// chain) is left as it is.
//
// Then it tiles the GEMMs that read a causally zero operand
// (skipCausalZeroBlocks).
void narrowCausalKeyRanges(HostIrContainer& container);

// The GEMMs of a causal attention's backward skip the zero blocks of their
// causal operand. A tensor is causally zero when entry (r, c) of its last two
// axes is exactly 0 wherever key c is after query r: a buffer whose every
// write in a query loop is `where(causal mask rows, x, 0)`, or the softmax of
// `where(causal mask rows, x, -inf)` (exp of -inf is 0), times or divided by
// anything (the softmax backward's dS and the recomputed probabilities P);
// or a program input marked TensorView::zeroAboveDiagonal whose last two
// axes are not split across devices (the probabilities the forward saved,
// marked by differentiation).
// Its GEMMs then become loops over tiles of kCausalQueryTileRows:
//
//   Z[rows of a query chunk] · B   rows [t0, t1) against keys [0, chunk start + t1)  (dQ = dS·K)
//   permute(Z)[keys] · B           keys [t0, t1) against queries [t0, end)          (dV = Pᵀ·dO)
//   A · Z                          keys [t0, t1) of the output, queries [t0, end)   (dKᵀ = Qᵀ·dS)
//
// About half of each GEMM is never multiplied. The products skipped are
// 0 times an entry of the other operand, so the result is the same sum over
// fewer terms where that operand is finite (as causal_key_ranges, which
// skips 0 times V).
void skipCausalZeroBlocks(HostIrContainer& container);

// Shared by the two: whether `mask` is causalMask(n) (key c visible from query r iff c <= r),
// a HostUnit's output followed into its segment; slice(tv, start, stop)
// along its shape axis `dim` as a new expr appended to `emitted` (`start`
// nullptr slices from 0); whether an expr of `body` other than `writer`
// binds `out` (a slice of a buffer the stream pass takes, an allocation)
// before `writer` runs.
bool isCausalMask(const TensorView* mask);
TensorView* sliceAlong(HostIrContainer& container, TensorView* tv, int64_t dim, Val* start,
                       Val* stop, std::vector<Expr*>& emitted);
bool boundBefore(const Scope& body, const Val* out, const Expr* writer);

// The rows of one query tile. One rank's attention in sp-layer's shape (8
// heads of 64, 2048 tokens, bench_attention_compute.py) measured 85.6 ms
// in 2 query chunks of 1024 rows against 67.7 in 8 of 256 and 67.8 in 32
// of 64: below ~256 rows a tile skips little more, and its GEMMs get
// shorter.
inline constexpr int64_t kCausalQueryTileRows = 256;

}  // namespace hostir
