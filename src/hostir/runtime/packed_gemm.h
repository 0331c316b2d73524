#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "hostir/ir/encoding.h"
#include "hostir/runtime/dnnl_matmul.h"
#include "hostir/runtime/pack_cache.h"

namespace hostir {

class TensorView;

// Encoded GEMM right operands (docs/targets.md) as ATen tensors: a plain
// tensor packed into a Layout::DnnlBlocked (a oneDNN reorder), the packed
// tensor's plain sizes, and the GEMM that reads it (oneDNN's matmul).

// `plain` (B[K, N], or a linear's weight W[N, K] with layout.n_axis = 0)
// in `layout`: a tensor of layout.blockedShape(N, K).
at::Tensor packMatmulRhs(const at::Tensor& plain, const Layout& layout);
// The inverse: the plain tensor of sizes `plain_sizes`.
at::Tensor unpackMatmulRhs(const at::Tensor& packed, const Layout& layout,
                           const std::vector<int64_t>& plain_sizes);

// The plain sizes of a tensor packed by this file (the layout pads N and K,
// so they are remembered per packed tensor); nullopt for another.
std::optional<std::vector<int64_t>> plainSizesOf(const at::Tensor& packed);
// Records `plain_sizes` for `packed` (a buffer packed into by other means).
void rememberPlainSizes(const at::Tensor& packed, std::vector<int64_t> plain_sizes);

// Whether `tensor` holds `tv` in a blocked layout (one more axis than `tv`).
bool isPacked(const TensorView* tv, const at::Tensor& tensor);

// A plain linear, out = in @ weight^T (+ bias), then `epilogue`'s GELU and
// residual add, through oneDNN where that pays (docs/kernels.md, "GEMMs"):
// the weight packed once per version (packMatmulRhsCached) into the blocked
// layout oneDNN's matmul prefers on this machine, then that matmul with the
// epilogue as post-ops. Returns false, computing nothing, where it does not
// apply: HOSTIR_GEMM=aten, a dtype other than float, a 1-D input or a weight
// that is not 2-D, a residual of neither out's sizes nor [N] or overlapping
// out, an empty operand, or a machine where oneDNN keeps B plain (avx2);
// `why_not` then says which. Throws for a HOSTIR_GEMM other than dnnl or
// aten.
bool linearThroughDnnlOut(const at::Tensor& out, const at::Tensor& in, const at::Tensor& weight,
                          const MatmulEpilogue& epilogue, std::string* why_not = nullptr);
bool linearThroughDnnlOut(const at::Tensor& out, const at::Tensor& in, const at::Tensor& weight,
                          const c10::optional<at::Tensor>& bias);
// The same for a matmul, out = lhs @ rhs with rhs a 2-D [K, N] operand
// (packed once per tensor and version: a GEMM per chunk against one B
// packs it once).
bool matmulThroughDnnlOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& rhs);
// A batched matmul, out[b] = lhs[b] @ rhs[b], all three 3-D float tensors
// of one batch size (views of any strides: the attention's q·kᵀ and p·v),
// through oneDNN with its operands as they are (nothing packed: one is an
// activation). False, computing nothing, with HOSTIR_GEMM=aten, another
// dtype or rank, a broadcast batch, an empty operand or strides oneDNN
// has no implementation for.
bool batchedMatmulThroughDnnlOut(const at::Tensor& out, const at::Tensor& lhs,
                                 const at::Tensor& rhs);

// How a linear with a [n, k] float weight runs its GEMM in this process,
// as the benchmarks print it (docs/performance.md): decided as
// linearThroughDnnlOut decides. "oneDNN on packed weights, epilogues as
// post-ops (brg:avx512_core)" (the implementation oneDNN runs), or
// "ATen/BLAS, epilogues op by op (oneDNN keeps plain weights on cpu:avx2)",
// or "... (HOSTIR_GEMM=aten)".
std::string describeGemmPath(int64_t k, int64_t n);

// out[..., N] = lhs[..., K] @ B (+ bias) with B packed in `layout`; the
// second form also runs the epilogue's GELU and residual add as post-ops.
void packedMatmulOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& packed,
                     const Layout& layout, const std::optional<at::Tensor>& bias = std::nullopt);
void packedMatmulOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& packed,
                     const Layout& layout, const MatmulEpilogue& epilogue);

}  // namespace hostir
