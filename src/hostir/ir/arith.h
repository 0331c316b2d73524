#pragma once

#include <initializer_list>
#include <type_traits>
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
TensorView* gelu(TensorView* in);  // tanh approximation off: exact erf GELU
TensorView* castOp(DataType dtype, TensorView* in);

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
#undef HOSTIR_DECLARE_BINARY

// Integer scalar arithmetic for extents and loop indices.
Val* ceilDiv(Val* lhs, Val* rhs);
Val* mod(Val* lhs, Val* rhs);

TensorView* sum(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim = false);
TensorView* max(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim = false);
TensorView* min(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim = false);
TensorView* prod(TensorView* in, const std::vector<int64_t>& axes, bool keep_dim = false);

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

TensorView* full(const std::vector<Val*>& shape, Val* fill_value, DataType dtype);
TensorView* zeros(const std::vector<Val*>& shape, DataType dtype = DataType::Float);
TensorView* ones(const std::vector<Val*>& shape, DataType dtype = DataType::Float);
// The same with constant extents, e.g. zeros({2, 3}) (in the current Fusion).
// Initializer lists, so that {4} and {extent_a, extent_b} both resolve.
TensorView* full(std::initializer_list<int64_t> shape, double fill_value, DataType dtype);
TensorView* zeros(std::initializer_list<int64_t> shape, DataType dtype = DataType::Float);
TensorView* ones(std::initializer_list<int64_t> shape, DataType dtype = DataType::Float);

}  // namespace hostir
