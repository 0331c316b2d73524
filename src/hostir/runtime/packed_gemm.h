#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <ATen/ATen.h>

namespace hostir {

class TensorView;

// The panel layout of a GEMM right operand (docs/targets.md): B[K, N] cut
// into column panels of `tile` columns, stored [ceilDiv(N, tile), K, tile],
// the last panel zero-padded. `n_axis` is the axis of `plain` that is N (0
// for a linear's weight W[N, K], 1 for a matmul's B[K, N]).
at::Tensor packMatmulRhs(const at::Tensor& plain, int64_t tile, int64_t n_axis);
// The inverse: the plain tensor with N = `n` along `n_axis`.
at::Tensor unpackMatmulRhs(const at::Tensor& packed, int64_t n, int64_t n_axis);

// packMatmulRhs, remembered per (tensor, version, tile, n axis): a weight
// passed to every run is packed on the first and reused after; writing to
// it in place (a new version) or freeing it drops the entry.
at::Tensor packMatmulRhsCached(const at::Tensor& plain, int64_t tile, int64_t n_axis);
// Calls of packMatmulRhsCached that reused a packed tensor (for tests).
int64_t packCacheHits();

// The plain sizes of a tensor packed by this file (panels lose N to the
// padding, so it is remembered per packed tensor); nullopt for another.
std::optional<std::vector<int64_t>> plainSizesOf(const at::Tensor& packed);
// Records `plain_sizes` for `packed` (a buffer packed into by other means).
void rememberPlainSizes(const at::Tensor& packed, std::vector<int64_t> plain_sizes);

// Whether `tensor` holds `tv` in a panel layout (one more axis than `tv`).
bool isPacked(const TensorView* tv, const at::Tensor& tensor);

// out[..., N] = lhs[..., K] @ B (+ bias): one BLAS GEMM per panel of B, each
// reading the panel's contiguous [K, tile] block and writing its columns of
// `out`. N is out.size(-1).
void packedMatmulOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& packed,
                     const std::optional<at::Tensor>& bias = std::nullopt);

}  // namespace hostir
