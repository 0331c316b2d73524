// The compositions of arith.h: mean, var, softmax, layer and RMS norm, each
// emitted as the primitive ops (reductions with keep_dim, broadcast, pointwise).

#include "hostir/ir/arith.h"

#include <set>
#include <utility>
#include <vector>

#include "hostir/ir/arith_support.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/tensor_factories.h"

namespace hostir {

using namespace arith_support;

namespace {

void checkFloating(const char* op, const TensorView* in) {
  HOSTIR_CHECK(in != nullptr, op, ": input is null");
  HOSTIR_CHECK(isFloatingType(in->dtype()), op, "(", describe(in), "): needs a floating-point ",
               "tensor, got ", toString(in->dtype()), "; cast it first (castOp)");
}

// The number of elements `axes` of `in` hold, as an integer scalar, and the
// axes normalized and sorted.
std::pair<Val*, std::vector<int64_t>> reducedCount(const char* op, TensorView* in,
                                                   const std::vector<int64_t>& axes) {
  std::vector<IterDomain*> shape = in->shapeDomain();
  auto rank = static_cast<int64_t>(shape.size());
  std::set<int64_t> normalized;
  for (int64_t axis : axes) {
    normalized.insert(normalizeAxis(axis, rank, op, in));
  }
  HOSTIR_CHECK(!normalized.empty(), op, "(", describe(in), "): give at least one axis to reduce");
  Val* count = constantIn(in->container(), 1);
  for (int64_t axis : normalized) {
    count = mul(count, shape[static_cast<size_t>(axis)]->extent());
  }
  return {count, std::vector<int64_t>(normalized.begin(), normalized.end())};
}

std::vector<bool> broadcastFlags(size_t rank, const std::vector<int64_t>& axes) {
  std::vector<bool> flags(rank, false);
  for (int64_t axis : axes) {
    flags[static_cast<size_t>(axis)] = true;
  }
  return flags;
}

// The last `normalized_ndims` axes of `in`, checked, with weight and bias
// shaped as them.
std::vector<int64_t> normalizedAxes(const char* op, TensorView* in, int64_t normalized_ndims,
                                    TensorView* weight, TensorView* bias) {
  checkFloating(op, in);
  auto rank = static_cast<int64_t>(in->shapeDomain().size());
  HOSTIR_CHECK(normalized_ndims >= 1 && normalized_ndims <= rank, op, "(", describe(in),
               "): normalized_ndims ", normalized_ndims, " is out of range; valid: [1, ", rank,
               "] (the number of trailing axes to normalize)");
  for (const auto& [what, tv] : {std::pair<const char*, TensorView*>{"weight", weight},
                                 std::pair<const char*, TensorView*>{"bias", bias}}) {
    if (tv == nullptr) {
      continue;
    }
    auto tv_rank = static_cast<int64_t>(tv->shapeDomain().size());
    HOSTIR_CHECK(tv_rank == normalized_ndims, op, "(", describe(in), "): the ", what, " ",
                 describe(tv), " has rank ", tv_rank, "; it must be shaped as the ",
                 normalized_ndims, " normalized trailing axes");
    std::vector<IterDomain*> shape = in->shapeDomain();
    std::vector<IterDomain*> ws = tv->shapeDomain();
    for (int64_t i = 0; i < tv_rank; ++i) {
      const Scalar* a = asConstInt(shape[static_cast<size_t>(rank - tv_rank + i)]->extent());
      const Scalar* b = asConstInt(ws[static_cast<size_t>(i)]->extent());
      HOSTIR_CHECK(a == nullptr || b == nullptr || a->constInt() == b->constInt(), op, "(",
                   describe(in), "): the ", what, " ", describe(tv),
                   " does not match the normalized axes; it must be shaped as the last ",
                   normalized_ndims, " axes of the input");
    }
  }
  std::vector<int64_t> axes;
  for (int64_t i = rank - normalized_ndims; i < rank; ++i) {
    axes.push_back(i);
  }
  return axes;
}

TensorView* affine(TensorView* y, TensorView* weight, TensorView* bias) {
  if (weight != nullptr) {
    y = mul(y, weight);
  }
  if (bias != nullptr) {
    y = add(y, bias);
  }
  return y;
}

}  // namespace

TensorView* mean(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim) {
  checkFloating("mean", in);
  auto [count, normalized] = reducedCount("mean", in, axes);
  return div(sum(in, normalized, keep_dim), count);
}

std::pair<TensorView*, TensorView*> varMean(TensorView* in, const std::vector<int64_t>& axes,
                                            int64_t correction, bool keep_dim) {
  checkFloating("var_mean", in);
  HOSTIR_CHECK(correction >= 0, "var_mean(", describe(in), "): correction ", correction,
               " is negative; valid: >= 0 (1: unbiased, 0: population variance)");
  auto [count, normalized] = reducedCount("var_mean", in, axes);
  TensorView* m = div(sum(in, normalized), count);
  TensorView* m_kept = broadcast(m, broadcastFlags(in->shapeDomain().size(), normalized));
  TensorView* centered = sub(in, m_kept);
  Val* dof = correction == 0 ? count : sub(count, constantIn(in->container(), correction));
  TensorView* v = div(sum(mul(centered, centered), normalized, keep_dim), dof);
  return {v, keep_dim ? m_kept : m};
}

TensorView* var(TensorView* in, const std::vector<int64_t>& axes, int64_t correction,
                bool keep_dim) {
  return varMean(in, axes, correction, keep_dim).first;
}

TensorView* softmax(TensorView* in, int64_t dim) {
  checkFloating("softmax", in);
  TensorView* shifted = sub(in, max(in, {dim}, /*keep_dim=*/true));
  TensorView* e = exp(shifted);
  return div(e, sum(e, {dim}, /*keep_dim=*/true));
}

TensorView* logSoftmax(TensorView* in, int64_t dim) {
  checkFloating("log_softmax", in);
  TensorView* shifted = sub(in, max(in, {dim}, /*keep_dim=*/true));
  return sub(shifted, log(sum(exp(shifted), {dim}, /*keep_dim=*/true)));
}

TensorView* layerNorm(TensorView* in, int64_t normalized_ndims, TensorView* weight,
                      TensorView* bias, double eps) {
  std::vector<int64_t> axes = normalizedAxes("layer_norm", in, normalized_ndims, weight, bias);
  auto [count, normalized] = reducedCount("layer_norm", in, axes);
  std::vector<bool> flags = broadcastFlags(in->shapeDomain().size(), normalized);
  TensorView* centered = sub(in, broadcast(div(sum(in, normalized), count), flags));
  TensorView* variance = div(sum(mul(centered, centered), normalized), count);
  TensorView* inv_std = broadcast(rsqrt(add(variance, eps)), flags);
  return affine(mul(centered, inv_std), weight, bias);
}

TensorView* rmsNorm(TensorView* in, int64_t normalized_ndims, TensorView* weight, TensorView* bias,
                    double eps) {
  std::vector<int64_t> axes = normalizedAxes("rms_norm", in, normalized_ndims, weight, bias);
  auto [count, normalized] = reducedCount("rms_norm", in, axes);
  std::vector<bool> flags = broadcastFlags(in->shapeDomain().size(), normalized);
  TensorView* mean_square = div(sum(mul(in, in), normalized), count);
  TensorView* inv_rms = broadcast(rsqrt(add(mean_square, eps)), flags);
  return affine(mul(in, inv_rms), weight, bias);
}

}  // namespace hostir
