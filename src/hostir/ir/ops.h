#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hostir/ir/statement.h"

namespace hostir {

class IterDomain;
class TensorView;

// New values go at the end (a node's attribute holds the value's number).
// Rsqrt is 1 / sqrt(x), Erf the error function; both compute integer and
// bool inputs in float, as exp does (NaN in, NaN out; rsqrt(0) = inf,
// rsqrt(x < 0) = NaN). Sin and Cos compute integers in float too; Signbit
// (torch.signbit: true for negative numbers, -0.0 included) gives Bool.
// Real and Imag (torch.real / torch.imag) take a complex operand and give
// its parts in the matching real dtype (ComplexFloat -> Float).
// GeluDerivative is d gelu(x) / dx = Phi(x) + x phi(x) (torch's
// gelu_backward divided by its grad): what differentiating a gelu gives,
// computed as one op so a kernel takes gelu's fast erf for it (the erf
// op is correctly rounded, ~6x the time). Integer inputs compute in float.
// Every type also applies to a scalar operand (a scalar result).
enum class UnaryOpType {
  Neg,
  Abs,
  Exp,
  Log,
  Sqrt,
  Relu,
  Sigmoid,
  Tanh,
  Gelu,
  Cast,
  Rsqrt,
  Erf,
  Sin,
  Cos,
  Signbit,
  Real,
  Imag,
  GeluDerivative
};
// Pow is lhs ** rhs, promoted as add is (an integer tensor to an integer
// power stays integer). Eq..Ge compare in the promoted dtype of the
// operands and give Bool; a NaN compares false with everything (Ne: true),
// as in IEEE and torch. Both are tensor ops: at least one operand is a
// tensor, except that comparisons of two scalars give a Bool scalar (for
// extents computed at run time). Gcd, the bitwise ops and the shifts take
// integers (and/or/xor bools too), as torch's; NextAfter (torch.nextafter) a
// floating result; Fmod is torch.fmod (C's remainder: the dividend's sign).
// BitwiseRightShift is arithmetic (the sign fills), LogicalRightShift fills
// zeros (nvFuser's logical_right_shift); a shift by the width or more gives
// 0 (-1 for a negative arithmetic shift), as nvFuser's.
enum class BinaryOpType {
  Add,
  Sub,
  Mul,
  Div,
  Maximum,
  Minimum,
  CeilDiv,
  Mod,
  Pow,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  Gcd,
  NextAfter,
  BitwiseAnd,
  BitwiseOr,
  BitwiseXor,
  BitwiseLeftShift,
  BitwiseRightShift,
  LogicalRightShift,
  Fmod
};
// How a reduction combines values: a fusion's ReductionOp and a reducing
// collective (host IR's ReduceOp is this enum) use the same one.
enum class ReductionOpType { Sum, Max, Min, Product };

std::string toString(UnaryOpType type);
std::string toString(BinaryOpType type);
std::string toString(ReductionOpType type);

// Whether `type` is a comparison (Eq, Ne, Lt, Le, Gt, Ge: a Bool result).
bool isComparison(BinaryOpType type);
// Whether `type` takes only integer operands (Gcd, the shifts) or integers
// and bools (BitwiseAnd, BitwiseOr, BitwiseXor).
bool isIntegerOnly(BinaryOpType type);
bool isBitwiseLogical(BinaryOpType type);

// The op types by name (toString's names), for frontends that look ops up.
std::vector<UnaryOpType> allUnaryOpTypes();
std::vector<BinaryOpType> allBinaryOpTypes();

// Each fusion op has
//
//   static void validate(const std::vector<Val*>& inputs,
//                        const std::vector<Attribute>& attributes);
//
// its semantic checks (operand kinds, ranks, dtypes, axes, broadcast and
// contraction compatibility): it throws hostir::Error naming the operands in
// IR notation and saying what is valid. The node's constructor runs it (with
// the checks that need the outputs), so a node a pass makes through
// IrBuilder or Expr::newObject, or a clone, is checked as a builder's is;
// a builder (arith.h) runs it before it shapes the output and keeps only
// what is its own (null pointers, negative axes, type promotion, the output's
// shape).

// out = in (a copy; also what a resharding `set` is).
class LoadStoreOp : public Expr {
  HOSTIR_DECLARE_EXPR(LoadStoreOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  Val* in() const {
    return input(0);
  }
  Val* out() const {
    return output(0);
  }
  std::string displayName() const override {
    return "Set";
  }
};

// Attribute 0: UnaryOpType. A Cast's target dtype is the output's dtype.
class UnaryOp : public Expr {
  HOSTIR_DECLARE_EXPR(UnaryOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  UnaryOpType type() const {
    return static_cast<UnaryOpType>(attribute<int64_t>(0));
  }
  Val* in() const {
    return input(0);
  }
  Val* out() const {
    return output(0);
  }
  std::string displayName() const override;
  std::vector<std::string> attributeNames() const override {
    return {""};
  }
};

// Tensor or scalar arithmetic. Attribute 0: BinaryOpType. On integer
// scalars Div is integer division; on tensors it is true division.
class BinaryOp : public Expr {
  HOSTIR_DECLARE_EXPR(BinaryOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  BinaryOpType type() const {
    return static_cast<BinaryOpType>(attribute<int64_t>(0));
  }
  Val* lhs() const {
    return input(0);
  }
  Val* rhs() const {
    return input(1);
  }
  Val* out() const {
    return output(0);
  }
  std::string displayName() const override {
    return hostir::toString(type());
  }
  std::vector<std::string> attributeNames() const override {
    return {""};
  }
  // Scalar arithmetic prints as an infix expression, e.g. "( i0 * i2 )".
  std::string toInlineString() const override;
};

// Attribute 0: ReductionOpType; 1: reduced axes of the input's shape. The
// output keeps reduced axes as reduction IterDomains (rS).
class ReductionOp : public Expr {
  HOSTIR_DECLARE_EXPR(ReductionOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  ReductionOpType type() const {
    return static_cast<ReductionOpType>(attribute<int64_t>(0));
  }
  const std::vector<int64_t>& axes() const {
    return attribute<std::vector<int64_t>>(1);
  }
  TensorView* in() const;
  TensorView* out() const;
  std::string displayName() const override {
    return hostir::toString(type());
  }
  std::vector<std::string> attributeNames() const override {
    return {"", "axes"};
  }
};

// Attribute 0: per output axis, 1 if it is a new broadcast axis.
class BroadcastOp : public Expr {
  HOSTIR_DECLARE_EXPR(BroadcastOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  const std::vector<int64_t>& isBroadcastDims() const {
    return attribute<std::vector<int64_t>>(0);
  }
  TensorView* in() const;
  TensorView* out() const;
  std::string displayName() const override {
    return "broadcast";
  }
  std::vector<std::string> attributeNames() const override {
    return {"is_broadcast"};
  }
};

// The batch axes of matmul(a, b) from the operands' shapes: all but the last
// two axes of each (the last one of a 1-D operand), paired right-aligned;
// nullptr where one operand has fewer.
std::vector<std::pair<IterDomain*, IterDomain*>> matmulBatchAxes(
    const std::vector<IterDomain*>& a_shape, const std::vector<IterDomain*>& b_shape);

// out = a @ b with at::matmul's semantics (1-D, 2-D and batched).
class MatmulOp : public Expr {
  HOSTIR_DECLARE_EXPR(MatmulOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  TensorView* a() const;
  TensorView* b() const;
  TensorView* out() const;
  std::string displayName() const override {
    return "matmul";
  }
};

// out = a @ weight^T (+ bias), weight is [N, K].
class LinearOp : public Expr {
  HOSTIR_DECLARE_EXPR(LinearOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  TensorView* in() const;
  TensorView* weight() const;
  bool hasBias() const {
    return inputs().size() == 3;
  }
  TensorView* bias() const;
  TensorView* out() const;
  std::string displayName() const override {
    return "linear";
  }
};

// out = in.select(dim, index). Inputs: {in, index}; attribute 0: dim.
class SelectOp : public Expr {
  HOSTIR_DECLARE_EXPR(SelectOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  TensorView* in() const;
  Val* index() const {
    return input(1);
  }
  int64_t dim() const {
    return attribute<int64_t>(0);
  }
  TensorView* out() const;
  std::string displayName() const override {
    return "select";
  }
  std::vector<std::string> attributeNames() const override {
    return {"dim"};
  }
};

// out = in.narrow(dim, start, stop - start). Inputs: {in, start, stop}.
class SliceOp : public Expr {
  HOSTIR_DECLARE_EXPR(SliceOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  TensorView* in() const;
  Val* start() const {
    return input(1);
  }
  Val* stop() const {
    return input(2);
  }
  int64_t dim() const {
    return attribute<int64_t>(0);
  }
  TensorView* out() const;
  std::string displayName() const override {
    return "slice";
  }
  std::vector<std::string> attributeNames() const override {
    return {"dim"};
  }
};

// out = in.permute(dims); attribute 0: dims.
class PermuteOp : public Expr {
  HOSTIR_DECLARE_EXPR(PermuteOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  TensorView* in() const;
  TensorView* out() const;
  const std::vector<int64_t>& dims() const {
    return attribute<std::vector<int64_t>>(0);
  }
  std::string displayName() const override {
    return "permute";
  }
  std::vector<std::string> attributeNames() const override {
    return {"dims"};
  }
};

// out = in.reshape(shape of out). Inputs: {in} or {in, sizes...}: the
// output's extents known only at run time that are not the input's (scalar
// inputs, say) are operands, so that they are bound where the op runs.
class ReshapeOp : public Expr {
  HOSTIR_DECLARE_EXPR(ReshapeOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  TensorView* in() const;
  TensorView* out() const;
  std::string displayName() const override {
    return "reshape";
  }
};

// out = where(condition, a, b): a where the Bool tensor `condition` is
// true, else b (torch.where). Inputs: {condition, a, b}; a and b are tensors
// or scalars; the three broadcast as a binary op's operands do (right-
// aligned, size-1 broadcast axes expand). out's dtype is a's and b's
// promoted as add promotes them (two scalars: Float for floating ones,
// else their promoted dtype). NaNs pass through from the selected operand.
class WhereOp : public Expr {
  HOSTIR_DECLARE_EXPR(WhereOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  TensorView* condition() const;
  Val* a() const {
    return input(1);
  }
  Val* b() const {
    return input(2);
  }
  TensorView* out() const;
  std::string displayName() const override {
    return "where";
  }
};

// out[i] = start + i * step for i in [0, length): a 1-D tensor of extent
// `length` (symbolic or constant) and out's dtype (torch.arange computes
// start + i * step in double for floating dtypes, as here). Inputs:
// {length, start, step}; length is an integer scalar, start and step
// scalars (integers for an integer dtype; a Bool dtype is invalid).
class IotaOp : public Expr {
  HOSTIR_DECLARE_EXPR(IotaOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  Val* length() const {
    return input(0);
  }
  Val* start() const {
    return input(1);
  }
  Val* step() const {
    return input(2);
  }
  TensorView* out() const;
  std::string displayName() const override {
    return "iota";
  }
};

// out = a tensor of out's shape filled with inputs[0]. The remaining inputs
// are out's extents, so that they are operands (and get cloned and bound).
class FullOp : public Expr {
  HOSTIR_DECLARE_EXPR(FullOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  Val* fillValue() const {
    return input(0);
  }
  TensorView* out() const;
  std::string displayName() const override {
    return "full";
  }
};

}  // namespace hostir
