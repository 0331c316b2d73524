#include "hostir/runtime/packed_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "hostir/ir/error.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/runtime/buffer_pool.h"
#include "hostir/runtime/target_detection.h"

namespace hostir {

namespace {

using WeakTensorImpl = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>;

std::mutex sizes_mutex;
std::vector<std::pair<WeakTensorImpl, std::vector<int64_t>>> plain_sizes;

// B[K, N] as a view of the plain tensor (a linear's weight W[N, K] is W^T).
at::Tensor kByN(const at::Tensor& plain, const Layout& layout) {
  return layout.n_axis == 0 ? plain.t() : plain;
}

void checkLayout(const at::Tensor& plain, const Layout& layout) {
  HOSTIR_CHECK(plain.dim() == 2, "packing a GEMM right operand needs a 2-D tensor, got sizes ",
               plain.sizes());
  HOSTIR_CHECK(plain.scalar_type() == at::kFloat, "oneDNN's GEMMs here take float32, got ",
               plain.scalar_type());
  HOSTIR_CHECK(!layout.isIdentity() && (layout.n_axis == 0 || layout.n_axis == 1),
               "bad blocked layout ", layout.toString(),
               "; give a oneDNN layout with N axis 0 or 1");
}

}  // namespace

void rememberPlainSizes(const at::Tensor& packed, std::vector<int64_t> sizes) {
  std::lock_guard<std::mutex> lock(sizes_mutex);
  std::erase_if(plain_sizes, [](const auto& entry) { return entry.first.expired(); });
  plain_sizes.emplace_back(WeakTensorImpl(packed.getIntrusivePtr()), std::move(sizes));
}

std::optional<std::vector<int64_t>> plainSizesOf(const at::Tensor& packed) {
  std::lock_guard<std::mutex> lock(sizes_mutex);
  for (const auto& [weak, sizes] : plain_sizes) {
    if (!weak.expired() && weak._unsafe_get_target() == packed.unsafeGetTensorImpl()) {
      return sizes;
    }
  }
  return std::nullopt;
}

at::Tensor packMatmulRhs(const at::Tensor& plain, const Layout& layout) {
  checkLayout(plain, layout);
  at::Tensor b = kByN(plain, layout);
  // A computed operand is packed every run: the pool's memory, not fresh.
  at::Tensor packed =
      BufferPool::shared().take(layout.blockedShape(b.size(1), b.size(0)), plain.scalar_type());
  dnnlReorderToBlocked(b, layout, packed);
  rememberPlainSizes(packed, plain.sizes().vec());
  return packed;
}

at::Tensor unpackMatmulRhs(const at::Tensor& packed, const Layout& layout,
                           const std::vector<int64_t>& sizes) {
  at::Tensor plain = at::empty(sizes, packed.options());
  checkLayout(plain, layout);
  HOSTIR_CHECK(
      packed.sizes().vec() == layout.blockedShape(sizes[static_cast<size_t>(layout.n_axis)],
                                                  sizes[static_cast<size_t>(1 - layout.n_axis)]),
      "unpacking ", layout.toString(), " into sizes ", at::IntArrayRef(sizes),
      " needs the layout's blocked shape, got sizes ", packed.sizes());
  dnnlReorderFromBlocked(packed, layout, kByN(plain, layout));
  return plain;
}

bool isPacked(const TensorView* tv, const at::Tensor& tensor) {
  return tensor.defined() && tv->hasEncoding() && tensor.dim() == tv->rank() + 1;
}

void packedMatmulOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& packed,
                     const Layout& layout, const std::optional<at::Tensor>& bias) {
  MatmulEpilogue epilogue;
  epilogue.bias = bias;
  packedMatmulOut(out, lhs, packed, layout, epilogue);
}

void packedMatmulOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& packed,
                     const Layout& layout, const MatmulEpilogue& epilogue) {
  HOSTIR_CHECK(packed.dim() == 3 && packed.size(2) == layout.n_block, "a GEMM operand packed in ",
               layout.toString(), " is [ceilDiv(N, ", layout.n_block, "), K rounded up to ",
               Layout::kDnnlKBlock, ", ", layout.n_block, "], got sizes ", packed.sizes());
  const int64_t k = lhs.size(-1);
  const int64_t n = out.size(-1);
  HOSTIR_CHECK(packed.sizes().vec() == layout.blockedShape(n, k), "packed GEMM: ", lhs.sizes(),
               " @ B -> ", out.sizes(), " needs B packed in sizes ",
               at::IntArrayRef(layout.blockedShape(n, k)), " but it has sizes ", packed.sizes());
  if (auto sizes = plainSizesOf(packed)) {
    // K is padded in the layout: a smaller K would silently read the padding.
    const int64_t packed_k = (*sizes)[static_cast<size_t>(1 - layout.n_axis)];
    HOSTIR_CHECK(packed_k == k, "packed GEMM: ", lhs.sizes(), " @ B -> ", out.sizes(),
                 " needs B with K = ", k, " but it was packed with K = ", packed_k);
  }
  if (out.is_meta() || lhs.is_meta() || packed.is_meta()) {
    return;  // a shape check (FusionChecks): oneDNN needs data
  }
  dnnlMatmulOut(out, lhs, packed, layout, epilogue);
}

namespace {

// Whether HOSTIR_GEMM leaves GEMMs to oneDNN (unset, empty or "dnnl").
bool dnnlChosen() {
  const char* engine = std::getenv("HOSTIR_GEMM");
  if (engine != nullptr && *engine != '\0' && std::strcmp(engine, "dnnl") != 0) {
    HOSTIR_CHECK(std::strcmp(engine, "aten") == 0, "HOSTIR_GEMM='", engine,
                 "' is not a GEMM engine; valid: dnnl (the default) or aten");
    return false;
  }
  return true;
}

// Why oneDNN does not run out = in @ B (+ epilogue), B the 2-D `rhs` with
// its N axis at `n_axis`, or nothing when it does; its n_block in
// `n_block` then. See linearThroughDnnlOut.
std::optional<std::string> whyNotThroughDnnl(const at::Tensor& out, const at::Tensor& in,
                                             const at::Tensor& rhs, int64_t n_axis,
                                             const MatmulEpilogue& epilogue, int64_t& n_block) {
  if (!dnnlChosen()) {
    return "HOSTIR_GEMM=aten";
  }
  const std::optional<at::Tensor>& bias = epilogue.bias;
  const std::optional<at::Tensor>& residual = epilogue.residual;
  const bool floats = in.scalar_type() == at::kFloat && rhs.scalar_type() == at::kFloat &&
                      out.scalar_type() == at::kFloat &&
                      (!bias.has_value() || (bias->scalar_type() == at::kFloat &&
                                             bias->dim() == 1 && bias->size(0) == out.size(-1))) &&
                      (!residual.has_value() || residual->scalar_type() == at::kFloat);
  if (!floats) {
    return "oneDNN's GEMMs here take float32 operands, a 1-D float32 bias of N elements and a "
           "float32 residual";
  }
  if (in.dim() < 2 || rhs.dim() != 2) {
    return "oneDNN's GEMMs here take an input of rank 2 or more and a 2-D weight";
  }
  // Meta tensors (FusionChecks' shape checks) and empty chunks: ATen's linear
  // checks and computes those without data.
  if (in.numel() == 0 || rhs.numel() == 0) {
    return "an empty operand (input sizes " + c10::str(in.sizes()) + ", weight sizes " +
           c10::str(rhs.sizes()) + ")";
  }
  if (in.is_meta() || rhs.is_meta() || out.is_meta() ||
      (residual.has_value() && residual->is_meta())) {
    return "meta tensors (a shape check)";
  }
  if (residual.has_value()) {
    // The post-op reads a tensor of the result's sizes or one row of it; one
    // sharing out's memory would be read while the GEMM writes it.
    const bool row = residual->dim() == 1 && residual->size(0) == out.size(-1);
    if (!row && residual->sizes() != out.sizes()) {
      return "the residual's sizes " + c10::str(residual->sizes()) + " are neither the result's " +
             c10::str(out.sizes()) + " nor one row of it";
    }
    if (residual->is_alias_of(out)) {
      return "the residual shares the result's memory";
    }
  }
  n_block = dnnlPreferredNBlock(rhs.size(1 - n_axis), rhs.size(n_axis));
  if (n_block == 0) {
    return "oneDNN keeps plain weights on " + localTarget().toString() +
           ", so it has no packed GEMM to run post-ops on";
  }
  return std::nullopt;
}

// out = lhs @ rhs with rhs read plain (dnnlPlainMatmulOut); false, computing
// nothing, where oneDNN has no fast kernel for the strides.
bool plainMatmulOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& rhs) {
  const int64_t k = lhs.size(-1);
  const int64_t n = rhs.size(1);
  const at::Tensor x = lhs.reshape({-1, k});
  const bool direct = out.dim() == 2 && out.stride(1) == 1;
  const at::Tensor result = direct ? out : at::empty({x.size(0), n}, out.options());
  if (!dnnlPlainMatmulOut(result, x, rhs)) {
    return false;
  }
  if (!direct) {
    out.copy_(result.view(out.sizes()));
  }
  return true;
}

bool gemmThroughDnnlOut(const at::Tensor& out, const at::Tensor& in, const at::Tensor& rhs,
                        int64_t n_axis, const MatmulEpilogue& epilogue, std::string* why_not) {
  int64_t n_block = 0;
  if (std::optional<std::string> why = whyNotThroughDnnl(out, in, rhs, n_axis, epilogue, n_block)) {
    if (why_not != nullptr) {
      *why_not = std::move(*why);
    }
    return false;
  }
  const Layout layout = Layout::dnnlBlocked(n_block, n_axis);
  // A matmul's (n_axis 1, no epilogue) right operand that a weight
  // gradient reads once per step (x, gelu(h)): read plain, not packed per
  // step and kept packed (readOnceUnpacked).
  if (n_axis == 1 && readOnceUnpacked(rhs, layout) && plainMatmulOut(out, in, rhs)) {
    return true;
  }
  packedMatmulOut(out, in, packMatmulRhsCached(rhs, layout), layout, epilogue);
  return true;
}

}  // namespace

bool linearThroughDnnlOut(const at::Tensor& out, const at::Tensor& in, const at::Tensor& weight,
                          const MatmulEpilogue& epilogue, std::string* why_not) {
  return gemmThroughDnnlOut(out, in, weight, /*n_axis=*/0, epilogue, why_not);
}

std::string describeGemmPath(int64_t k, int64_t n) {
  const std::string aten = "ATen/BLAS, epilogues op by op";
  if (!dnnlChosen()) {
    return aten + " (HOSTIR_GEMM=aten)";
  }
  const int64_t n_block = dnnlPreferredNBlock(k, n);
  if (n_block == 0) {
    return aten + " (oneDNN keeps plain weights on " + localTarget().toString() + ")";
  }
  return "oneDNN on packed weights, epilogues as post-ops (" +
         dnnlImplementationFor(Layout::dnnlBlocked(n_block, /*n_axis=*/0), k, n) + ")";
}

bool matmulThroughDnnlOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& rhs) {
  return gemmThroughDnnlOut(out, lhs, rhs, /*n_axis=*/1, MatmulEpilogue{}, nullptr);
}

bool batchedMatmulThroughDnnlOut(const at::Tensor& out, const at::Tensor& lhs,
                                 const at::Tensor& rhs) {
  if (!dnnlChosen()) {
    return false;
  }
  for (const at::Tensor* t : {&out, &lhs, &rhs}) {
    // Expanded (stride 0) operands and empty chunks stay with ATen.
    if (t->scalar_type() != at::kFloat || t->dim() != 3 || t->numel() == 0 || t->is_meta() ||
        std::find(t->strides().begin(), t->strides().end(), 0) != t->strides().end()) {
      return false;
    }
  }
  if (lhs.size(0) != rhs.size(0) || lhs.size(2) != rhs.size(1) || out.size(0) != lhs.size(0) ||
      out.size(1) != lhs.size(1) || out.size(2) != rhs.size(2) || out.is_alias_of(lhs) ||
      out.is_alias_of(rhs)) {
    return false;
  }
  return dnnlBatchedMatmulOut(out, lhs, rhs);
}

bool linearThroughDnnlOut(const at::Tensor& out, const at::Tensor& in, const at::Tensor& weight,
                          const c10::optional<at::Tensor>& bias) {
  MatmulEpilogue epilogue;
  if (bias.has_value()) {
    epilogue.bias = *bias;
  }
  return linearThroughDnnlOut(out, in, weight, epilogue);
}

}  // namespace hostir
