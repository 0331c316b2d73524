#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <ATen/ATen.h>

#include "hostir/ir/encoding.h"

namespace hostir {

// GEMMs through oneDNN 2.6 (docs/kernels.md, "GEMMs"): right operands in
// the blocked layout its matmul reads (Layout::DnnlBlocked), and epilogues
// run as the matmul's post-ops on the tile before it is stored.

// The elementwise function an epilogue applies: GELU (erf, as at::gelu) or
// ReLU.
enum class MatmulActivation { None, Gelu, Relu };

// What runs on out = lhs @ B before it is stored, in this order: + bias[N],
// the activation, + residual (out's shape, or [N]).
struct MatmulEpilogue {
  std::optional<at::Tensor> bias;
  MatmulActivation activation = MatmulActivation::None;
  std::optional<at::Tensor> residual;
};

// B[K, N] given as `plain_kn` (any strides: a linear's weight is W^T) into
// `packed` (`layout`'s blockedShape, zero padded), and back.
void dnnlReorderToBlocked(const at::Tensor& plain_kn, const Layout& layout,
                          const at::Tensor& packed);
void dnnlReorderFromBlocked(const at::Tensor& packed, const Layout& layout,
                            const at::Tensor& plain_kn);

// out[..., N] = lhs[..., K] @ B, then `epilogue`, with B in `packed`
// (`layout`). One cached oneDNN primitive per shape, strides and epilogue;
// it runs on the calling thread with its intra-op threads
// (at::get_num_threads(): oneDNN and ATen share the OpenMP runtime).
void dnnlMatmulOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& packed,
                   const Layout& layout, const MatmulEpilogue& epilogue = {});

// out[b] = lhs[b] @ rhs[b] for 3-D float tensors of any strides (the
// attention's q·kᵀ and p·v over the heads, on views of bigger buffers),
// through one cached oneDNN primitive per shapes and strides. Returns
// false, computing nothing, where oneDNN has no implementation for those
// strides (ATen then computes it).
bool dnnlBatchedMatmulOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& rhs);

// out = lhs @ rhs for 2-D float tensors of any strides, B read as it is
// (oneDNN's GEMM packs its panels as it goes, as BLAS does): a right
// operand read by one GEMM only, which packing first would cost a pass over
// it and a packed copy (matmulThroughDnnlOut). False, computing nothing,
// where oneDNN has no implementation for those strides but its reference
// loop nest.
bool dnnlPlainMatmulOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& rhs);

// How many matmul primitives are cached (at most 512, the oldest dropped
// first; for tests).
size_t dnnlCachedPrimitives();

// The layout oneDNN's matmul picks on this machine for float B[K, N], as
// oneDNN names it ("BA16a64b" with avx512_core, "ab", plain, with avx2),
// and the implementation that reads `layout` here ("brg:avx512_core").
std::string dnnlPreferredLayout(int64_t k, int64_t n);
// The N block of that layout when it is Layout::DnnlBlocked's form
// (BA16a<n>b), 0 when oneDNN keeps B plain here (it then packs per call,
// as OpenBLAS does) or when the process's target (localTarget()) is one
// that keeps B plain. Asked once per (k, n).
int64_t dnnlPreferredNBlock(int64_t k, int64_t n);
std::string dnnlImplementationFor(const Layout& layout, int64_t k, int64_t n);

}  // namespace hostir
