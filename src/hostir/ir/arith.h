#pragma once

#include <initializer_list>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "hostir/ir/ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"

// Op builders: the user API for writing fusions. Each validates its operands
// and throws hostir::Error naming the tensors in IR notation.
namespace hostir {

TensorView* set(TensorView* in);

TensorView* neg(TensorView* in);
TensorView* abs(TensorView* in);
TensorView* exp(TensorView* in);
TensorView* log(TensorView* in);
TensorView* sqrt(TensorView* in);
TensorView* relu(TensorView* in);
TensorView* sigmoid(TensorView* in);
TensorView* tanh(TensorView* in);
TensorView* gelu(TensorView* in);            // tanh approximation off: exact erf GELU
TensorView* geluDerivative(TensorView* in);  // d gelu(x) / dx; integer inputs compute in float
TensorView* castOp(DataType dtype, TensorView* in);
TensorView* rsqrt(TensorView* in);  // 1 / sqrt(x); integer inputs compute in float
TensorView* erf(TensorView* in);    // the error function; integer inputs compute in float
TensorView* sin(TensorView* in);    // integer inputs compute in float
TensorView* cos(TensorView* in);
TensorView* signbit(TensorView* in);  // Bool: true for negative numbers and -0.0
TensorView* real(TensorView* in);     // a complex tensor's real part (torch.real)
TensorView* imag(TensorView* in);     // its imaginary part (torch.imag)

// Any unary op by type on a tensor or a scalar (a scalar result, folded when
// the scalar is a constant); `cast_to` is a Cast's dtype and only a Cast's.
// Frontends that look ops up by name (toString) build through these.
Val* unary(UnaryOpType type, Val* in, std::optional<DataType> cast_to = std::nullopt);
Val* binary(BinaryOpType type, Val* lhs, Val* rhs);

// Binary ops on tensors and/or scalars; tensors broadcast as in PyTorch
// (right-aligned, size-1 broadcast axes expand). On two scalars they build
// scalar arithmetic, folded when both are constants. An integer constant
// (`add(x, 0)`) is an int64 scalar, promoted as PyTorch promotes a Python
// int; the int and int64_t overloads exist so such a literal is not
// ambiguous with the null pointer and double overloads.
#define HOSTIR_DECLARE_BINARY(name)                   \
  Val* name(Val* lhs, Val* rhs);                      \
  TensorView* name(TensorView* lhs, Val* rhs);        \
  TensorView* name(Val* lhs, TensorView* rhs);        \
  TensorView* name(TensorView* lhs, TensorView* rhs); \
  TensorView* name(TensorView* lhs, double rhs);      \
  TensorView* name(double lhs, TensorView* rhs);      \
  TensorView* name(TensorView* lhs, int64_t rhs);     \
  TensorView* name(int64_t lhs, TensorView* rhs);     \
  TensorView* name(TensorView* lhs, int rhs);         \
  TensorView* name(int lhs, TensorView* rhs);
HOSTIR_DECLARE_BINARY(add)
HOSTIR_DECLARE_BINARY(sub)
HOSTIR_DECLARE_BINARY(mul)
HOSTIR_DECLARE_BINARY(div)
HOSTIR_DECLARE_BINARY(maximum)
HOSTIR_DECLARE_BINARY(minimum)
// lhs ** rhs (torch.pow): promoted as add; at least one operand a tensor.
HOSTIR_DECLARE_BINARY(pow)
// Comparisons (torch.eq, ne, lt, le, gt, ge): compare in the operands'
// promoted dtype, give a Bool tensor; at least one operand a tensor. A NaN
// compares false (ne: true).
HOSTIR_DECLARE_BINARY(eq)
HOSTIR_DECLARE_BINARY(ne)
HOSTIR_DECLARE_BINARY(lt)
HOSTIR_DECLARE_BINARY(le)
HOSTIR_DECLARE_BINARY(gt)
HOSTIR_DECLARE_BINARY(ge)
// torch.gcd, torch.nextafter, torch.bitwise_and/or/xor,
// torch.bitwise_left_shift / bitwise_right_shift (arithmetic) and nvFuser's
// logical_right_shift (zeros shifted in); ops.h has their operand dtypes.
HOSTIR_DECLARE_BINARY(gcd)
HOSTIR_DECLARE_BINARY(nextafter)
HOSTIR_DECLARE_BINARY(bitwiseAnd)
HOSTIR_DECLARE_BINARY(bitwiseOr)
HOSTIR_DECLARE_BINARY(bitwiseXor)
HOSTIR_DECLARE_BINARY(bitwiseLeftShift)
HOSTIR_DECLARE_BINARY(bitwiseRightShift)
HOSTIR_DECLARE_BINARY(logicalRightShift)
HOSTIR_DECLARE_BINARY(fmod)  // torch.fmod
#undef HOSTIR_DECLARE_BINARY

// where(condition, a, b) (torch.where): a where the Bool tensor `condition`
// is true, else b; a and b are tensors or scalars, the three broadcast as in
// PyTorch and a, b promote as add's operands do. E.g. masked attention
// scores: where(mask, scores, -INFINITY).
TensorView* where(TensorView* condition, Val* a, Val* b);
TensorView* where(TensorView* condition, TensorView* a, double b);
TensorView* where(TensorView* condition, double a, TensorView* b);
TensorView* where(TensorView* condition, TensorView* a, int b);
TensorView* where(TensorView* condition, int a, TensorView* b);

// iota: out[i] = start + i * step for i in [0, length), a 1-D tensor of
// `dtype` whose extent is `length` (an integer scalar, symbolic or constant).
// An integer dtype needs integer start and step.
TensorView* iota(Val* length, Val* start, Val* step, DataType dtype = DataType::Int64);
// arange (torch.arange) on integer scalars: [0, end) or [start, end) by
// step, as iota(ceilDiv(end - start, step), start, step, dtype).
TensorView* arange(Val* end, DataType dtype = DataType::Int64);
TensorView* arange(Val* start, Val* end, Val* step, DataType dtype = DataType::Int64);

// A causal attention mask: a [num_queries, num_keys] Bool tensor, true where
// query (query_offset + i) may attend key j, i.e. query_offset + i >= j.
// Built from two iotas, their broadcasts and ge (a composition); a null
// query_offset is 0. Use it as where(mask, scores, -INFINITY).
TensorView* causalMask(Val* num_queries, Val* num_keys, Val* query_offset = nullptr);
// Whether `mask` is computed as causalMask(n, m) (or the Python frontend's
// causal_mask) computes it with a query offset of 0: key c visible from
// query r iff c <= r, both counted from 0.
bool isCausalMaskFromZero(const Val* mask);

// Integer scalar arithmetic for extents and loop indices.
Val* ceilDiv(Val* lhs, Val* rhs);
Val* mod(Val* lhs, Val* rhs);

TensorView* sum(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim = false);
TensorView* max(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim = false);
TensorView* min(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim = false);
TensorView* prod(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim = false);

// --- compositions: each emits the primitive ops above (reductions with
// keep_dim, broadcast, sub, mul, div, exp, log, rsqrt), so a later fusing
// layer sees only primitives. All need a floating-point input. Axes may be
// negative (counted from the end).

// sum(in, axes) / (number of elements reduced); as torch.mean.
TensorView* mean(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim = false);
// sum((in - mean)^2, axes) / (N - correction), N the number of elements
// reduced; as torch.var(in, axes, correction=correction). correction 1 is
// the unbiased estimate, 0 the population variance.
TensorView* var(TensorView* in, const std::vector<int64_t>& axes, int64_t correction = 1,
                bool keep_dim = false);
// {variance, mean}, as torch.var_mean (one mean for both).
std::pair<TensorView*, TensorView*> varMean(TensorView* in, const std::vector<int64_t>& axes,
                                            int64_t correction = 1, bool keep_dim = false);
// exp(x - max) / sum(exp(x - max)) along dim (numerically stable: the max
// is subtracted first). A row that is all -inf gives NaN, as torch.softmax.
TensorView* softmax(TensorView* in, int64_t dim);
// (x - max) - log(sum(exp(x - max))) along dim, as torch.log_softmax.
TensorView* logSoftmax(TensorView* in, int64_t dim);
// Layer norm over the last `normalized_ndims` axes (torch.layer_norm with a
// normalized_shape of that many axes): (x - mean) * rsqrt(var + eps), the
// population variance, then * weight and + bias when given (each shaped as
// the normalized axes).
TensorView* layerNorm(TensorView* in, int64_t normalized_ndims, TensorView* weight = nullptr,
                      TensorView* bias = nullptr, double eps = 1e-5);
// RMS norm over the last `normalized_ndims` axes: x * rsqrt(mean(x^2) + eps),
// then * weight and + bias when given.
TensorView* rmsNorm(TensorView* in, int64_t normalized_ndims, TensorView* weight = nullptr,
                    TensorView* bias = nullptr, double eps = 1e-6);

// Inserts size-1 broadcast axes where is_broadcast_dim is true; the false
// entries must match the input's rank.
TensorView* broadcast(TensorView* in, const std::vector<bool>& is_broadcast_dim);

TensorView* matmul(TensorView* a, TensorView* b);
TensorView* linear(TensorView* in, TensorView* weight, TensorView* bias = nullptr);

TensorView* select(TensorView* in, int64_t dim, Val* index);
TensorView* select(TensorView* in, int64_t dim, int64_t index);
// Any other integer index (an int literal: `select(tv, 0, 0)` would
// otherwise be ambiguous with the Val* overload, 0 being a null pointer
// constant; a size_t would be ambiguous too).
template <typename Int,
          typename = std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, int64_t>>>
TensorView* select(TensorView* in, int64_t dim, Int index) {
  return select(in, dim, static_cast<int64_t>(index));
}
// Elements [start, stop) along dim (step 1).
TensorView* slice(TensorView* in, int64_t dim, Val* start, Val* stop);
TensorView* slice(TensorView* in, int64_t dim, int64_t start, int64_t stop);
TensorView* permute(TensorView* in, const std::vector<int64_t>& dims);
// One entry may be -1 (inferred), as in at::reshape.
TensorView* reshape(TensorView* in, const std::vector<int64_t>& new_sizes);
// Sizes that are integer scalars, known at run time (e.g. scalar inputs or
// another tensor's extents), one may be a constant -1; all constant is
// reshape above. ATen checks the element count when it runs.
TensorView* reshapeToExtents(TensorView* in, const std::vector<Val*>& new_sizes);

TensorView* full(const std::vector<Val*>& shape, Val* fill_value, DataType dtype);
TensorView* zeros(const std::vector<Val*>& shape, DataType dtype = DataType::Float);
TensorView* ones(const std::vector<Val*>& shape, DataType dtype = DataType::Float);
// The same with constant extents, e.g. zeros({2, 3}) (in the current Fusion).
// Initializer lists, so that {4} and {extent_a, extent_b} both resolve.
TensorView* full(std::initializer_list<int64_t> shape, double fill_value, DataType dtype);
TensorView* zeros(std::initializer_list<int64_t> shape, DataType dtype = DataType::Float);
TensorView* ones(std::initializer_list<int64_t> shape, DataType dtype = DataType::Float);

}  // namespace hostir
