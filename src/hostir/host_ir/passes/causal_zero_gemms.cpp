// The GEMMs that read a causally zero operand skip its zero blocks
// (skipCausalZeroBlocks, causal_key_ranges.h).
#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hostir/host_ir/allocation.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/passes/causal_key_ranges.h"
#include "hostir/host_ir/passes/stream_loop.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/scalar.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

// What a value holds where key c (its last axis) is after query
// `offset` + r (r: its axis before the last): exactly 0, or -inf.
enum class Fill { Zero, NegInf };
struct Causal {
  Fill fill;
  Val* offset;
};

// The values of one scope, each as the op that computes it (not the view
// that binds it to a buffer's slice).
class CausalValues {
 public:
  explicit CausalValues(const Scope& scope) {
    for (Expr* expr : scope) {
      const bool computes = expr->isA<BinaryOp>() || expr->isA<UnaryOp>() || expr->isA<WhereOp>();
      for (Val* out : expr->outputs()) {
        if (computes) {
          writer_[out] = expr;
        }
        if (!isView(expr)) {
          written_.insert(out);
        }
      }
    }
  }

  static bool isView(const Expr* expr) {
    return expr->isA<SliceOp>() || expr->isA<PermuteOp>() || expr->isA<BroadcastOp>() ||
           expr->isA<Allocate>();
  }

  // Whether an op of the scope (not a view of a buffer) writes `val`.
  bool isWritten(const Val* val) const {
    return written_.count(val) != 0;
  }

  std::optional<Causal> of(const Val* val) const {
    auto it = writer_.find(val);
    if (it == writer_.end()) {
      return std::nullopt;
    }
    const Expr* expr = it->second;
    if (const auto* where = dynamic_cast<const WhereOp*>(expr)) {
      return ofWhere(where);
    }
    if (const auto* unary = dynamic_cast<const UnaryOp*>(expr)) {
      std::optional<Causal> in = of(unary->input(0));
      if (in && unary->type() == UnaryOpType::Exp && in->fill == Fill::NegInf) {
        return Causal{Fill::Zero, in->offset};  // exp(-inf) = 0
      }
      if (in && unary->type() == UnaryOpType::Neg && in->fill == Fill::Zero) {
        return in;
      }
      return std::nullopt;
    }
    const auto* binary = expr->as<BinaryOp>();
    std::optional<Causal> lhs = of(binary->lhs());
    std::optional<Causal> rhs = of(binary->rhs());
    switch (binary->type()) {
      case BinaryOpType::Mul:  // 0 times a finite value
        return lhs && lhs->fill == Fill::Zero   ? lhs
               : rhs && rhs->fill == Fill::Zero ? rhs
                                                : std::nullopt;
      case BinaryOpType::Div:  // 0 over a nonzero one (a softmax's row sum)
        return lhs && lhs->fill == Fill::Zero ? lhs : std::nullopt;
      case BinaryOpType::Sub:  // -inf minus a finite value (the row max)
        return lhs && lhs->fill == Fill::NegInf && !rhs ? lhs : std::nullopt;
      default: return std::nullopt;
    }
  }

 private:
  // where(rows [start, stop) of a causal mask, x, 0 or -inf).
  static std::optional<Causal> ofWhere(const WhereOp* where) {
    Val* offset = nullptr;
    const auto* rows = dynamic_cast<const SliceOp*>(where->condition()->definition());
    if (rows != nullptr && rows->dim() == 0 && rows->in()->rank() == 2 &&
        isCausalMask(rows->in())) {
      offset = rows->start();
    } else {
      return std::nullopt;
    }
    if (isConstantScalar(where->b(), 0.0)) {
      return Causal{Fill::Zero, offset};
    }
    if (isConstantScalar(where->b(), -INFINITY)) {
      return Causal{Fill::NegInf, offset};
    }
    return std::nullopt;
  }

  std::unordered_map<const Val*, const Expr*> writer_;
  std::unordered_set<const Val*> written_;
};

// Every scope of the program, outermost first.
void collectScopes(Scope& scope, std::vector<Scope*>& scopes) {
  scopes.push_back(&scope);
  for (Expr* expr : scope) {
    if (auto* loop = dynamic_cast<ForLoop*>(expr)) {
      collectScopes(loop->body(), scopes);
    }
  }
}

// A top-level buffer is causally zero (offset 0) when every op that writes
// it writes rows [start, stop) of it, as a slice along its rows, with a
// value 0 past key start + r; it is written at least once and only so.
bool isCausallyZeroBuffer(const TensorView* buffer, const std::vector<Scope*>& scopes) {
  if (buffer->rank() < 2) {
    return false;
  }
  int writes = 0;
  for (const Scope* scope : scopes) {
    const CausalValues values(*scope);
    if (values.isWritten(buffer)) {
      return false;
    }
    for (const Expr* expr : *scope) {
      const std::vector<Val*>& inputs = expr->inputs();
      const bool reads = std::find(inputs.begin(), inputs.end(), buffer) != inputs.end();
      if (reads && !CausalValues::isView(expr) && !expr->isA<MatmulOp>()) {
        return false;  // another view (an alias, a reshape) or an op that might write it
      }
      const auto* slice = dynamic_cast<const SliceOp*>(expr);
      if (slice == nullptr || slice->in() != buffer || !values.isWritten(slice->out())) {
        continue;  // not a slice of it, or one that is only read
      }
      std::optional<Causal> value = values.of(slice->out());
      if (slice->dim() != buffer->rank() - 2 || !value || value->fill != Fill::Zero ||
          !value->offset->sameAs(slice->start())) {
        return false;
      }
      ++writes;
    }
  }
  return writes > 0;
}

// A program input its producer vouches is 0 above the diagonal of its last
// two axes (a causal softmax's probabilities saved by the forward for the
// backward, TensorView::zeroAboveDiagonal), read whole: neither of those
// axes split across devices (this rank's rows would start past row 0) and
// no op of the program writing it.
bool isCausallyZeroInput(const TensorView* input, const std::vector<Scope*>& scopes) {
  if (!input->zeroAboveDiagonal() || input->rank() < 2) {
    return false;
  }
  const std::vector<IterDomain*> shape = input->shapeDomain();
  for (size_t axis = shape.size() - 2; axis < shape.size(); ++axis) {
    if (isDeviceDim(shardingParallelType(input, shape[axis]))) {
      return false;
    }
  }
  return std::none_of(scopes.begin(), scopes.end(),
                      [&](const Scope* scope) { return CausalValues(*scope).isWritten(input); });
}

// How a GEMM operand reads a causally zero buffer.
enum class Reads { Rows, Transposed };
struct CausalOperand {
  Reads reads;
  Val* offset;  // its first row is the buffer's row `offset`
};

class CausalBuffers {
 public:
  CausalBuffers(HostIrContainer& container, const std::vector<Scope*>& scopes) {
    for (Val* input : container.inputs()) {
      const auto* tv = dynamic_cast<const TensorView*>(input);
      if (tv != nullptr && isCausallyZeroInput(tv, scopes)) {
        zero_.push_back(tv);
      }
    }
    for (Expr* expr : container.topLevel()) {
      if (const auto* allocate = dynamic_cast<const Allocate*>(expr)) {
        if (isCausallyZeroBuffer(allocate->buffer(), scopes)) {
          zero_.push_back(allocate->buffer());
        }
      }
    }
  }

  bool any() const {
    return !zero_.empty();
  }

  // The buffer itself, rows [start, ..) of it, or it with its last two axes
  // swapped; `scope` must hold the view (or the view be top-level). A slice
  // that an op of `scope` then writes has that op as its definition: the
  // slice that binds it is looked up in `scope`.
  std::optional<CausalOperand> of(const TensorView* operand, Val* zero, const Scope& scope) const {
    if (isZero(operand)) {
      return CausalOperand{Reads::Rows, zero};
    }
    const Expr* def = operand->definition();
    for (const Expr* expr : scope) {
      const auto* binding = dynamic_cast<const SliceOp*>(expr);
      if (binding != nullptr && binding->out() == operand) {
        def = binding;
        break;
      }
    }
    if (const auto* slice = dynamic_cast<const SliceOp*>(def)) {
      if (isZero(slice->in()) && slice->dim() == slice->in()->rank() - 2) {
        return CausalOperand{Reads::Rows, slice->start()};
      }
    }
    if (const auto* permute = dynamic_cast<const PermuteOp*>(def)) {
      const std::vector<int64_t>& dims = permute->dims();
      const auto n = static_cast<int64_t>(dims.size());
      bool swaps_last_two = n >= 2 && dims[n - 1] == n - 2 && dims[n - 2] == n - 1;
      for (int64_t i = 0; i + 2 < n; ++i) {
        swaps_last_two = swaps_last_two && dims[i] == i;
      }
      if (swaps_last_two && isZero(permute->in())) {
        return CausalOperand{Reads::Transposed, zero};
      }
    }
    return std::nullopt;
  }

 private:
  bool isZero(const TensorView* tv) const {
    return std::find(zero_.begin(), zero_.end(), tv) != zero_.end();
  }
  std::vector<const TensorView*> zero_;
};

Val* constant(HostIrContainer& container, int64_t value) {
  return IrBuilder::createInContainer<Scalar>(&container, value);
}

Val* extentOf(TensorView* tv, int64_t axis_from_end) {
  const std::vector<IterDomain*> shape = tv->shapeDomain();
  return localExtent(tv, shape[shape.size() - static_cast<size_t>(axis_from_end)]);
}

// out = a · b as a loop over tiles of the axis `tiled` (a's rows, or b's
// columns), each tile against the part of the contraction its rows see.
enum class Tiled { LowerRows, UpperRows, UpperColumns };

void tile(HostIrContainer& container, Scope& scope, MatmulOp* matmul, Tiled tiled, Val* offset) {
  TensorView* a = matmul->a();
  TensorView* b = matmul->b();
  auto* out = matmul->out()->as<TensorView>();
  const int64_t a_rows = a->rank() - 2;
  const int64_t b_rows = b->rank() - 2;
  const int64_t out_rows = out->rank() - 2;
  Val* extent = tiled == Tiled::UpperColumns ? extentOf(b, 1) : extentOf(a, 2);
  Val* contraction = extentOf(a, 1);

  std::vector<Expr*> before;
  if (!boundBefore(scope, out, matmul)) {
    before.push_back(IrBuilder::createInContainer<Allocate>(&container, out));
  }
  Val* tile_rows = constant(container, kCausalQueryTileRows);
  auto* index = IrBuilder::createInContainer<Scalar>(&container, kQueryTile, DataType::Int64);
  auto* tiles =
      IrBuilder::createInContainer<ForLoop>(&container, index, constant(container, 0),
                                            ceilDiv(extent, tile_rows), constant(container, 1));
  const auto [start, stop] = chunkBounds(index, tile_rows, extent);
  std::vector<Expr*> body;
  TensorView* a_tile = nullptr;
  TensorView* b_tile = nullptr;
  TensorView* out_tile = nullptr;
  if (tiled == Tiled::LowerRows) {
    // Rows [start, stop) see keys [0, offset + stop).
    Val* keys = minimum(add(offset, stop), contraction);
    TensorView* rows = sliceAlong(container, a, a_rows, start, stop, body);
    a_tile = sliceAlong(container, rows, a_rows + 1, nullptr, keys, body);
    b_tile = sliceAlong(container, b, b_rows, nullptr, keys, body);
    out_tile = sliceAlong(container, out, out_rows, start, stop, body);
  } else if (tiled == Tiled::UpperRows) {
    // Keys [start, stop) are seen by queries [start, end).
    TensorView* rows = sliceAlong(container, a, a_rows, start, stop, body);
    a_tile = sliceAlong(container, rows, a_rows + 1, start, contraction, body);
    b_tile = sliceAlong(container, b, b_rows, start, contraction, body);
    out_tile = sliceAlong(container, out, out_rows, start, stop, body);
  } else {
    // Output columns (keys) [start, stop) sum over queries [start, end).
    a_tile = sliceAlong(container, a, a_rows + 1, start, contraction, body);
    TensorView* rows = sliceAlong(container, b, b_rows, start, contraction, body);
    b_tile = sliceAlong(container, rows, b_rows + 1, start, stop, body);
    out_tile = sliceAlong(container, out, out_rows + 1, start, stop, body);
  }
  body.push_back(matmul->newObject(&container, {a_tile, b_tile}, {out_tile}, matmul->attributes(),
                                   matmul->attributeVals()));
  for (Expr* expr : body) {
    tiles->body().push_back(expr);
  }
  before.push_back(tiles);
  scope.replace(matmul, before);
}

void tileMatmuls(HostIrContainer& container, Scope& scope, const CausalBuffers& buffers) {
  Val* zero = constant(container, 0);
  const CausalValues values(scope);
  for (Expr* expr : scope.toVector()) {
    auto* matmul = dynamic_cast<MatmulOp*>(expr);
    // A right operand this scope writes is left whole; so is a left one,
    // unless it is rows of a causally zero buffer that this scope wrote
    // before (a query loop's dS chunk times K: dQ).
    if (matmul == nullptr || matmul->a()->rank() < 2 || matmul->b()->rank() < 2 ||
        values.isWritten(matmul->b())) {
      continue;
    }
    std::optional<CausalOperand> a = buffers.of(matmul->a(), zero, scope);
    std::optional<CausalOperand> b = buffers.of(matmul->b(), zero, scope);
    if (values.isWritten(matmul->a()) && !(a && a->reads == Reads::Rows)) {
      continue;
    }
    if (a && a->reads == Reads::Rows) {
      tile(container, scope, matmul, Tiled::LowerRows, a->offset);
    } else if (a) {
      tile(container, scope, matmul, Tiled::UpperRows, zero);
    } else if (b && b->reads == Reads::Rows && isConstantScalar(b->offset, 0.0)) {
      tile(container, scope, matmul, Tiled::UpperColumns, zero);
    }
  }
}

}  // namespace

void skipCausalZeroBlocks(HostIrContainer& container) {
  std::vector<Scope*> scopes;
  collectScopes(container.topLevel(), scopes);
  const CausalBuffers buffers(container, scopes);
  if (!buffers.any()) {
    return;
  }
  for (Scope* scope : scopes) {
    tileMatmuls(container, *scope, buffers);
  }
}

}  // namespace hostir
