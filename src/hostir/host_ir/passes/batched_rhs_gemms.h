#pragma once

namespace hostir {

class HostIrContainer;

// A matrix times a batch of matrices is one GEMM against the batch's
// columns side by side: A [m, k] @ B [b, k, n] is, per batch entry j,
// columns [j·n, (j+1)·n) of A @ [B[0] | B[1] | ...] ([k, b·n]). The
// attention's Q, K and V projections per head are this pattern (the heads
// are the batch); ATen runs them as b GEMMs n wide (64 for a head), which
// reach ~3/4 of one GEMM b·n wide. The pass rewrites
//
//   P = matmul(A [m, k], B [b, k, n])
//
// as W = reshape(permute(B, {1, 0, 2}), [k, b·n]) (a copy of B, made once
// at the start of the program when B is a program input, so a stream loop
// computing P per chunk makes it once), Y = matmul(A, W) [m, b·n], and
// P = set(permute(reshape(Y, [m, b, n]), {1, 0, 2})): one copy of the
// product into P's buffer (which may be a chunk's slice of a bigger one).
void mergeBatchedRhsGemms(HostIrContainer& container);

}  // namespace hostir
