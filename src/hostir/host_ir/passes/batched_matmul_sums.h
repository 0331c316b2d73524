#pragma once

namespace hostir {

class HostIrContainer;

// A sum over the batch axis of a batched matmul is one GEMM over the merged
// contraction: sum_b A[b] @ B[b] = [A[0] | A[1] | ...] @ [B[0]; B[1]; ...].
// The attention's out-projection per head followed by the sum over the
// heads is this pattern, and the batched form writes a [heads, rows, H]
// tensor only to read it back once for the sum. The pass rewrites
//
//   P = matmul(A [b, m, k], B [b, k, n]);  R = sum(P, {0})
//
// as R = matmul(reshape(permute(A, {1, 0, 2}), [m, b·k]), reshape(B, [b·k, n])):
// one copy of A (b·m·k elements) instead of a b·m·n intermediate and its
// sum, and one GEMM with b times the contraction. Only when nothing else
// reads P (its views and buffer go with it), in any scope.
void mergeBatchedMatmulSums(HostIrContainer& container);

}  // namespace hostir
