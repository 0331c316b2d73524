#include "hostir/runtime/packed_gemm.h"

#include <atomic>
#include <mutex>
#include <vector>

#include "hostir/ir/error.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

using WeakTensorImpl = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>;

std::mutex sizes_mutex;
std::vector<std::pair<WeakTensorImpl, std::vector<int64_t>>> plain_sizes;

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

at::Tensor packMatmulRhs(const at::Tensor& plain, int64_t tile, int64_t n_axis) {
  HOSTIR_CHECK(plain.dim() == 2, "packing a GEMM right operand needs a 2-D tensor, got sizes ",
               plain.sizes());
  HOSTIR_CHECK(tile > 0 && (n_axis == 0 || n_axis == 1), "bad panel layout: tile ", tile,
               ", N axis ", n_axis, "; give a positive tile and N axis 0 or 1");
  at::Tensor b = n_axis == 0 ? plain.t() : plain;  // [K, N]
  const int64_t k = b.size(0);
  const int64_t n = b.size(1);
  const int64_t panels = (n + tile - 1) / tile;
  at::Tensor padded = at::zeros({k, panels * tile}, plain.options());
  padded.narrow(1, 0, n).copy_(b);
  at::Tensor packed = padded.view({k, panels, tile}).permute({1, 0, 2}).contiguous();
  rememberPlainSizes(packed, plain.sizes().vec());
  return packed;
}

at::Tensor unpackMatmulRhs(const at::Tensor& packed, int64_t n, int64_t n_axis) {
  HOSTIR_CHECK(packed.dim() == 3, "unpacking needs a [panels, K, tile] tensor, got sizes ",
               packed.sizes());
  const int64_t panels = packed.size(0);
  const int64_t k = packed.size(1);
  const int64_t tile = packed.size(2);
  HOSTIR_CHECK(n <= panels * tile && n > (panels - 1) * tile, "N = ", n, " does not fit ", panels,
               " panels of ", tile, " columns");
  at::Tensor b = packed.permute({1, 0, 2}).reshape({k, panels * tile}).narrow(1, 0, n);
  return (n_axis == 0 ? b.t() : b).contiguous();
}

namespace {

struct CacheEntry {
  explicit CacheEntry(WeakTensorImpl weak) : source(std::move(weak)) {}
  WeakTensorImpl source;
  const void* data = nullptr;
  int64_t version = 0;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t tile = 0;
  int64_t n_axis = 0;
  at::Tensor packed;
};

std::mutex cache_mutex;
std::vector<CacheEntry> cache;
std::atomic<int64_t> cache_hits{0};
constexpr size_t kMaxCacheEntries = 64;

}  // namespace

at::Tensor packMatmulRhsCached(const at::Tensor& plain, int64_t tile, int64_t n_axis) {
  std::lock_guard<std::mutex> lock(cache_mutex);
  // Drop the entries whose source tensor is gone.
  std::erase_if(cache, [](const CacheEntry& entry) { return entry.source.expired(); });
  for (const CacheEntry& entry : cache) {
    if (entry.source._unsafe_get_target() == plain.unsafeGetTensorImpl() &&
        entry.data == plain.data_ptr() && entry.version == plain._version() &&
        entry.sizes == plain.sizes().vec() && entry.strides == plain.strides().vec() &&
        entry.tile == tile && entry.n_axis == n_axis) {
      ++cache_hits;
      return entry.packed;
    }
  }
  CacheEntry entry{WeakTensorImpl(plain.getIntrusivePtr())};
  entry.data = plain.data_ptr();
  entry.version = plain._version();
  entry.sizes = plain.sizes().vec();
  entry.strides = plain.strides().vec();
  entry.tile = tile;
  entry.n_axis = n_axis;
  entry.packed = packMatmulRhs(plain, tile, n_axis);
  if (cache.size() >= kMaxCacheEntries) {
    cache.erase(cache.begin());
  }
  cache.push_back(entry);
  return entry.packed;
}

int64_t packCacheHits() {
  return cache_hits.load();
}

bool isPacked(const TensorView* tv, const at::Tensor& tensor) {
  return tensor.defined() && tv->hasEncoding() && tensor.dim() == tv->rank() + 1;
}

void packedMatmulOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& packed,
                     const std::optional<at::Tensor>& bias) {
  HOSTIR_CHECK(packed.dim() == 3, "a packed GEMM operand is [panels, K, tile], got sizes ",
               packed.sizes());
  const int64_t k = packed.size(1);
  const int64_t tile = packed.size(2);
  const int64_t n = out.size(-1);
  HOSTIR_CHECK(lhs.size(-1) == k, "packed GEMM: the left operand has K = ", lhs.size(-1),
               " but the packed operand has K = ", k);
  HOSTIR_CHECK(n <= packed.size(0) * tile && n > (packed.size(0) - 1) * tile,
               "packed GEMM: the output has N = ", n, " but the packed operand holds ",
               packed.size(0), " panels of ", tile);
  at::Tensor x = lhs.reshape({-1, k});
  const bool direct = out.is_contiguous();
  at::Tensor result = direct ? out.view({x.size(0), n}) : at::empty({x.size(0), n}, out.options());
  for (int64_t p = 0; p * tile < n; ++p) {
    const int64_t width = std::min(tile, n - p * tile);
    at::Tensor columns = result.narrow(1, p * tile, width);
    at::mm_out(columns, x, packed.select(0, p).narrow(1, 0, width));
  }
  if (bias.has_value()) {
    result.add_(*bias);
  }
  if (!direct) {
    out.copy_(result.view(out.sizes()));
  }
}

}  // namespace hostir
