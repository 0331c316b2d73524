#include "hostir/autodiff/vjp_rules.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <variant>

#include "hostir/ir/arith.h"
#include "hostir/ir/dispatch.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/gather_ops.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/random_ops.h"
#include "hostir/ir/resize_ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/scan_ops.h"
#include "hostir/ir/scatter_ops.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

TensorView* asTensor(Val* val) {
  return val != nullptr && val->isA<TensorView>() ? val->as<TensorView>() : nullptr;
}

std::vector<Val*> extentsOf(const TensorView* tv) {
  std::vector<Val*> extents;
  for (IterDomain* id : tv->shapeDomain()) {
    extents.push_back(id->extent());
  }
  return extents;
}

// `grad` (an op's result shape) summed down to `operand`'s shape, undoing
// the broadcast of a binary op: leading axes the operand lacks are summed
// away, and its size-1 broadcast axes that the result expanded are summed
// keeping the axis.
TensorView* sumToShape(TensorView* grad, const TensorView* operand) {
  const int64_t lead = grad->rank() - operand->rank();
  if (lead > 0) {
    std::vector<int64_t> axes(static_cast<size_t>(lead));
    std::iota(axes.begin(), axes.end(), 0);
    grad = sum(grad, axes);
  }
  std::vector<IterDomain*> operand_shape = operand->shapeDomain();
  std::vector<IterDomain*> grad_shape = grad->shapeDomain();
  std::vector<int64_t> expanded;
  for (size_t i = 0; i < operand_shape.size(); ++i) {
    if (operand_shape[i]->isBroadcast() && !grad_shape[i]->isBroadcast()) {
      expanded.push_back(static_cast<int64_t>(i));
    }
  }
  return expanded.empty() ? grad : sum(grad, expanded, /*keep_dim=*/true);
}

// `grad` with size-1 axes expanded to `like`'s shape (same rank).
TensorView* expandTo(TensorView* grad, const TensorView* like) {
  return add(grad, zeros(extentsOf(like), grad->dtype()));
}

// The last two axes swapped.
TensorView* transposeLast2(TensorView* tv) {
  std::vector<int64_t> dims(static_cast<size_t>(tv->rank()));
  std::iota(dims.begin(), dims.end(), 0);
  std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
  return permute(tv, dims);
}

// A size-1 broadcast axis inserted before position `at` (0..rank).
TensorView* unsqueeze(TensorView* tv, int64_t at) {
  std::vector<bool> flags(static_cast<size_t>(tv->rank() + 1), false);
  flags[static_cast<size_t>(at)] = true;
  return broadcast(tv, flags);
}

class Rules : public OptInDispatch {
 public:
  Rules(TensorView* out_grad, PrimalValues& primals) : g_(out_grad), primals_(primals) {}

  std::vector<TensorView*> run(const Expr* expr) {
    grads_.assign(expr->inputs().size(), nullptr);
    dispatch(expr);
    return grads_;
  }

 private:
  TensorView* primal(const Val* val) {
    return primals_.primal(val)->as<TensorView>();
  }
  Val* primalVal(const Val* val) {
    return primals_.primal(val);
  }
  // Sets input i's contribution when that input takes a grad.
  void give(const Expr* expr, size_t i, TensorView* grad) {
    if (takesGrad(expr->input(i))) {
      grads_[i] = grad;
    }
  }

  void handle(const LoadStoreOp* op) override {
    give(op, 0, set(g_));
  }

  void handle(const UnaryOp* op) override {
    if (!takesGrad(op->in())) {
      return;
    }
    TensorView* g = g_;
    switch (op->type()) {
      case UnaryOpType::Neg: give(op, 0, neg(g)); return;
      case UnaryOpType::Abs: {
        // sign(x) * g, 0 at x == 0 as torch's abs backward.
        TensorView* x = primal(op->in());
        give(op, 0, where(gt(x, 0.0), g, where(lt(x, 0.0), neg(g), 0.0)));
        return;
      }
      case UnaryOpType::Exp: give(op, 0, mul(g, primal(op->out()))); return;
      case UnaryOpType::Log: give(op, 0, div(g, primal(op->in()))); return;
      case UnaryOpType::Sqrt: give(op, 0, div(g, mul(primal(op->out()), 2.0))); return;
      case UnaryOpType::Relu:
        // 0 where x <= 0, as torch's threshold_backward.
        give(op, 0, where(gt(primal(op->out()), 0.0), g, 0.0));
        return;
      case UnaryOpType::Sigmoid: {
        TensorView* y = primal(op->out());
        give(op, 0, mul(g, mul(y, sub(1.0, y))));
        return;
      }
      case UnaryOpType::Tanh: {
        TensorView* y = primal(op->out());
        give(op, 0, mul(g, sub(1.0, mul(y, y))));
        return;
      }
      case UnaryOpType::Gelu:
        // Exact (erf) GELU: d/dx x Phi(x) = Phi(x) + x phi(x), one op, so a
        // kernel computes it with gelu's erf (ops.h).
        give(op, 0, mul(g, geluDerivative(primal(op->in()))));
        return;
      case UnaryOpType::GeluDerivative: {
        // d/dx (Phi(x) + x phi(x)) = 2 phi(x) + x phi'(x) = phi(x) (2 - x^2).
        TensorView* x = primal(op->in());
        TensorView* pdf = mul(exp(mul(mul(x, x), -0.5)), 0.5 * M_2_SQRTPI * M_SQRT1_2);
        give(op, 0, mul(g, mul(pdf, sub(2.0, mul(x, x)))));
        return;
      }
      case UnaryOpType::Cast: give(op, 0, castOp(op->in()->dtype(), g)); return;
      case UnaryOpType::Rsqrt: {
        TensorView* y = primal(op->out());
        give(op, 0, mul(g, mul(mul(mul(y, y), y), -0.5)));
        return;
      }
      case UnaryOpType::Erf: {
        TensorView* x = primal(op->in());
        give(op, 0, mul(g, mul(exp(neg(mul(x, x))), M_2_SQRTPI)));
        return;
      }
      case UnaryOpType::Sin: give(op, 0, mul(g, cos(primal(op->in())))); return;
      case UnaryOpType::Cos: give(op, 0, neg(mul(g, sin(primal(op->in()))))); return;
      case UnaryOpType::Signbit:
        return;  // a Bool result carries no grad
      // Complex tensors take no grad (takesGrad: floating dtypes only).
      case UnaryOpType::Real:
      case UnaryOpType::Imag: return;
    }
  }

  // Contribution to a binary op's operand i, summed to its shape.
  void giveOperand(const BinaryOp* op, size_t i, TensorView* grad) {
    if (takesGrad(op->input(i))) {
      grads_[i] = sumToShape(grad, op->input(i)->as<TensorView>());
    }
  }

  // d(a^b)/db = a^b log(a), 0 where a == 0 and b >= 0 (as torch, which
  // takes the limit there instead of 0 * -inf).
  TensorView* powExponentGrad(const BinaryOp* op, TensorView* g) {
    TensorView* b = primal(op->rhs());
    TensorView* scaled = mul(g, primal(op->out()));
    if (TensorView* a = asTensor(primalVal(op->lhs()))) {
      TensorView* term = mul(scaled, log(a));
      return where(eq(a, 0.0), where(ge(b, 0.0), 0.0, term), term);
    }
    const auto* base = op->lhs()->as<Scalar>();
    HOSTIR_CHECK(base->isConst(), "no gradient rule for ", op->toInlineString(),
                 " with respect to its exponent when the base is a symbolic scalar; make the "
                 "base a tensor or a constant");
    const double c = scalarAsDouble(*base->value());
    TensorView* term = mul(scaled, std::log(c));
    return c == 0.0 ? where(ge(b, 0.0), 0.0, term) : term;
  }

  void handle(const BinaryOp* op) override {
    const bool lhs_grad = takesGrad(op->lhs());
    const bool rhs_grad = takesGrad(op->rhs());
    if (!lhs_grad && !rhs_grad) {
      return;
    }
    TensorView* g = g_;
    auto a = [&] { return primalVal(op->lhs()); };
    auto b = [&] { return primalVal(op->rhs()); };
    switch (op->type()) {
      case BinaryOpType::Add:
        giveOperand(op, 0, g);
        giveOperand(op, 1, g);
        return;
      case BinaryOpType::Sub:
        giveOperand(op, 0, g);
        if (rhs_grad) {
          giveOperand(op, 1, neg(g));
        }
        return;
      case BinaryOpType::Mul:
        if (lhs_grad) {
          giveOperand(op, 0, mul(g, b()));
        }
        if (rhs_grad) {
          giveOperand(op, 1, mul(g, a()));
        }
        return;
      case BinaryOpType::Div:
        if (lhs_grad) {
          giveOperand(op, 0, div(g, b()));
        }
        if (rhs_grad) {
          // d(a / b)/db = -(a / b) / b
          giveOperand(op, 1, neg(div(mul(g, primal(op->out())), b())));
        }
        return;
      case BinaryOpType::Maximum:
      case BinaryOpType::Minimum: {
        // The larger (smaller) operand takes the grad; a tie splits it in
        // halves, as torch's maximum/minimum backward.
        const bool is_max = op->type() == BinaryOpType::Maximum;
        TensorView* wins = (is_max ? gt(a(), b()) : lt(a(), b()))->as<TensorView>();
        TensorView* ties = eq(a(), b())->as<TensorView>();
        TensorView* half = mul(g, 0.5);
        if (lhs_grad) {
          giveOperand(op, 0, where(wins, g, where(ties, half, 0.0)));
        }
        if (rhs_grad) {
          giveOperand(op, 1, where(wins, 0.0, where(ties, half, g)));
        }
        return;
      }
      case BinaryOpType::Pow: {
        if (lhs_grad) {
          // b * a^(b - 1)
          Val* b_minus_1 = sub(b(), IrBuilder::create<Scalar>(1.0));
          giveOperand(op, 0, mul(g, mul(pow(a(), b_minus_1), b())->as<TensorView>()));
        }
        if (rhs_grad) {
          giveOperand(op, 1, powExponentGrad(op, g));
        }
        return;
      }
      case BinaryOpType::Fmod:
        // fmod(a, b) = a - trunc(a / b) * b: da = g, db = -g * trunc(a / b),
        // as torch's. trunc(a / b) is taken as (a - fmod(a, b)) / b, exact
        // but for rounding, which needs no trunc op and cannot overflow.
        giveOperand(op, 0, g);
        if (rhs_grad) {
          TensorView* quotient = div(sub(a(), primal(op->out())), b())->as<TensorView>();
          giveOperand(op, 1, neg(mul(g, quotient)));
        }
        return;
      default:
        HOSTIR_THROW("no gradient rule for ", op->toInlineString(), " (", toString(op->type()),
                     "): it is not differentiable; differentiate only through add, sub, mul, "
                     "div, maximum, minimum, pow and fmod, or leave its operands out of the "
                     "grad inputs");
    }
  }

  void handle(const ReductionOp* op) override {
    if (!takesGrad(op->in())) {
      return;
    }
    TensorView* x = primal(op->in());
    const std::vector<int64_t>& axes = op->axes();
    std::vector<bool> reduced(static_cast<size_t>(x->rank()), false);
    for (int64_t axis : axes) {
      reduced[static_cast<size_t>(axis)] = true;
    }
    TensorView* spread = broadcast(g_, reduced);
    switch (op->type()) {
      case ReductionOpType::Sum: give(op, 0, expandTo(spread, x)); return;
      case ReductionOpType::Max:
      case ReductionOpType::Min: {
        // Split evenly among the elements equal to the extremum, as torch's
        // amax/amin backward.
        TensorView* hit = eq(x, broadcast(primal(op->out()), reduced));
        TensorView* count = sum(castOp(g_->dtype(), hit), axes, /*keep_dim=*/true);
        give(op, 0, where(hit, div(spread, count), 0.0));
        return;
      }
      case ReductionOpType::Product:
        give(op, 0, mul(spread, productOfTheOthers(x, axes, reduced)));
        return;
    }
  }

  // Per element of x, the product of the other elements of its slice (the
  // reduced axes), as torch's prod backward: prod / x without zeros in the
  // slice; with one zero, the product of the rest at the zero and 0
  // elsewhere; with more, 0. No division by a zero, no 0 * inf.
  static TensorView* productOfTheOthers(TensorView* x, const std::vector<int64_t>& axes,
                                        const std::vector<bool>& reduced) {
    TensorView* is_zero = eq(x, 0.0);
    TensorView* nonzero = where(is_zero, 1.0, x);
    TensorView* rest = broadcast(prod(nonzero, axes), reduced);
    TensorView* zeros = broadcast(sum(castOp(x->dtype(), is_zero), axes), reduced);
    TensorView* at_the_zero = where(eq(zeros, 1.0), rest, 0.0);
    return where(eq(zeros, 0.0), div(rest, nonzero), where(is_zero, at_the_zero, 0.0));
  }

  void handle(const BroadcastOp* op) override {
    std::vector<int64_t> inserted;
    const std::vector<int64_t>& flags = op->isBroadcastDims();
    for (size_t i = 0; i < flags.size(); ++i) {
      if (flags[i] != 0) {
        inserted.push_back(static_cast<int64_t>(i));
      }
    }
    give(op, 0, inserted.empty() ? set(g_) : sum(g_, inserted));
  }

  void handle(const MatmulOp* op) override {
    // 1-D operands as at::matmul treats them: a [K] lhs is [1, K] whose
    // row axis the result drops, a [K] rhs is [K, 1] whose column it drops.
    TensorView* a = primal(op->a());
    TensorView* b = primal(op->b());
    const bool a_vector = a->rank() == 1;
    const bool b_vector = b->rank() == 1;
    TensorView* a2 = a_vector ? unsqueeze(a, 0) : a;
    TensorView* b2 = b_vector ? unsqueeze(b, 1) : b;
    TensorView* g2 = g_;
    if (a_vector) {
      g2 = unsqueeze(g2, b_vector ? 0 : g2->rank() - 1);  // before N
    }
    if (b_vector) {
      g2 = unsqueeze(g2, g2->rank());
    }
    if (takesGrad(op->a())) {
      TensorView* ga = sumToShape(matmul(g2, transposeLast2(b2)), a2);
      give(op, 0, a_vector ? sum(ga, {0}) : ga);
    }
    if (takesGrad(op->b())) {
      TensorView* gb = sumToShape(matmul(transposeLast2(a2), g2), b2);
      give(op, 1, b_vector ? sum(gb, {1}) : gb);
    }
  }

  void handle(const LinearOp* op) override {
    // out[..., N] = in[..., K] @ W[N, K]^T (+ bias[N]).
    TensorView* in = primal(op->in());
    TensorView* weight = primal(op->weight());
    if (takesGrad(op->in())) {
      give(op, 0, matmul(g_, weight));
    }
    if (takesGrad(op->weight())) {
      TensorView* g2 = g_;
      TensorView* in2 = in;
      if (in->rank() == 1) {
        g2 = unsqueeze(g_, 0);
        in2 = unsqueeze(in, 0);
      } else if (in->rank() > 2) {
        // The rows of every leading axis as one [M, .] matrix.
        Val* rows = IrBuilder::create<Scalar>(int64_t{1});
        std::vector<IterDomain*> shape = in->shapeDomain();
        for (size_t i = 0; i + 1 < shape.size(); ++i) {
          rows = mul(rows, shape[i]->extent());
        }
        g2 = reshapeToExtents(g_, {rows, g_->shapeDomain().back()->extent()});
        in2 = reshapeToExtents(in, {rows, shape.back()->extent()});
      }
      give(op, 1, matmul(transposeLast2(g2), in2));
    }
    if (op->hasBias() && takesGrad(op->bias())) {
      std::vector<int64_t> rows(static_cast<size_t>(g_->rank() - 1));
      std::iota(rows.begin(), rows.end(), 0);
      give(op, 2, rows.empty() ? set(g_) : sum(g_, rows));
    }
  }

  void handle(const SelectOp* op) override {
    // The grad lands in row `index` of `dim`; every other row gets 0.
    const auto* in = op->in()->as<TensorView>();
    for (ParallelType parallel_type : kDeviceParallelTypes) {
      HOSTIR_CHECK(getShardedLogicalAxis(in, parallel_type) != op->dim(),
                   "not supported yet: the grad of ", op->toInlineString(), " selects on axis ",
                   op->dim(),
                   ", which is sharded over the devices; the gradient fuzzer found that grad "
                   "wrong (tests/python/grad_fuzz.py, docs/reliability.md), so it is refused "
                   "until fixed. Select on a replicated axis (gather the tensor first)");
    }
    TensorView* x = primal(op->in());
    const auto dim = static_cast<size_t>(op->dim());
    std::vector<IterDomain*> shape = x->shapeDomain();
    TensorView* positions = iota(shape[dim]->extent(), IrBuilder::create<Scalar>(int64_t{0}),
                                 IrBuilder::create<Scalar>(int64_t{1}));
    std::vector<bool> around(shape.size(), true);
    around[dim] = false;
    TensorView* row = eq(broadcast(positions, around), primalVal(op->index()))->as<TensorView>();
    give(op, 0, where(row, unsqueeze(g_, op->dim()), 0.0));
  }

  // The slice's grad in place, zeros around it: a pad by the bounds torch
  // took (negative ones count from the end, then clamp to [0, n]).
  void handle(const SliceOp* op) override {
    refuseAlongAShardedAxis(op, {op->dim()});
    const auto dim = static_cast<size_t>(op->dim());
    Val* n = primals_.extent(op->in()->shapeDomain()[dim]->extent());
    Val* left = torchBound(primalVal(op->start()), n);
    Val* stop = maximum(torchBound(primalVal(op->stop()), n), left);
    std::vector<Val*> widths;  // torch's order: from the last axis backwards
    for (int64_t axis = op->in()->rank() - 1; axis >= 0; --axis) {
      bool sliced = static_cast<size_t>(axis) == dim;
      widths.push_back(sliced ? left : IrBuilder::create<Scalar>(int64_t{0}));
      widths.push_back(sliced ? sub(n, stop) : IrBuilder::create<Scalar>(int64_t{0}));
    }
    give(op, 0, pad(g_, widths));
  }

  // The rules of the ops that index along an axis (slice, pad, cat,
  // cumsum, the gathers and scatters) take the whole axis: on a shard of it
  // their bounds and positions would be the global ones. The gradient
  // fuzzer with --resize-ops found a slice's grad so wrong (2 ranks, seed
  // 6); such grads are refused, as select's, until the rules know shards.
  static void refuseAlongAShardedAxis(const Expr* op, const std::vector<int64_t>& axes) {
    const int64_t rank = op->output(0)->as<TensorView>()->rank();
    std::vector<const Val*> tensors(op->inputs().begin(), op->inputs().end());
    tensors.push_back(op->output(0));
    for (const Val* val : tensors) {
      const auto* tv = dynamic_cast<const TensorView*>(val);
      if (tv == nullptr || tv->rank() != rank) {
        continue;  // a scalar, a 1-D index of index_select
      }
      for (ParallelType parallel_type : kDeviceParallelTypes) {
        const int64_t sharded = getShardedLogicalAxis(tv, parallel_type);
        HOSTIR_CHECK(sharded < 0 || std::find(axes.begin(), axes.end(), sharded) == axes.end(),
                     "not supported yet: the grad of ", op->toInlineString(), " along axis ",
                     sharded, ", which is sharded over the devices (", tv->toString(),
                     "); its rule takes the whole axis, and the gradient fuzzer found such a "
                     "grad wrong (tests/python/grad_fuzz.py --resize-ops, docs/reliability.md), "
                     "so it is refused until fixed. Work along a replicated axis (gather the "
                     "tensor first)");
      }
    }
  }

  static Val* torchBound(Val* bound, Val* n) {
    auto constant = [](int64_t value) { return IrBuilder::create<Scalar>(value); };
    Val* negative = minimum(maximum(sub(constant(0), bound), constant(0)), constant(1));
    return minimum(maximum(add(bound, mul(n, negative)), constant(0)), n);
  }

  // The input's part of the padded grad: a slice per padded axis.
  void handle(const PadOp* op) override {
    std::vector<int64_t> padded;
    for (int64_t axis = 0; axis < op->in()->rank(); ++axis) {
      const auto* left = dynamic_cast<const Scalar*>(op->left(axis));
      const auto* right = dynamic_cast<const Scalar*>(op->right(axis));
      if (!(left && right && left->isConstInt() && right->isConstInt() && left->constInt() == 0 &&
            right->constInt() == 0)) {
        padded.push_back(axis);
      }
    }
    refuseAlongAShardedAxis(op, padded);
    TensorView* grad = g_;
    std::vector<IterDomain*> shape = op->in()->shapeDomain();
    for (int64_t axis : padded) {
      Val* start = primalVal(op->left(axis));
      Val* n = primals_.extent(shape[static_cast<size_t>(axis)]->extent());
      grad = slice(grad, axis, start, add(start, n));
    }
    give(op, 0, grad);
  }

  // d cumsum: each input element reaches the outputs after it, so its grad
  // is the reversed cumsum of g: sum(g) - cumsum(g) + g.
  void handle(const ScanOp* op) override {
    refuseAlongAShardedAxis(op, {op->dim()});
    TensorView* total = sum(g_, {op->dim()}, /*keep_dim=*/true);
    give(op, 0, add(sub(total, cumsum(g_, op->dim())), g_));
  }

  // The input's grad is g where nothing was written (zeros where src was);
  // a src tensor's grad is g read back at the positions it was written to.
  // src may be longer than the index: its elements past the index's
  // extents were not read and get zeros.
  void handle(const ScatterOp* op) override {
    refuseAlongAShardedAxis(op, {op->dim()});
    give(op, 0, scatter(g_, primal(op->index()), IrBuilder::create<Scalar>(0.0), op->dim()));
    if (op->src()->vtype() == ValType::TensorView) {
      TensorView* read = takeAlongAxis(g_, primal(op->index()), op->dim());
      give(op, 2, padToShape(read, op->index(), op->src()->as<TensorView>()));
    }
  }

  // The grad of a gather goes back where each element was read from, added
  // up where positions repeat: a scatter-add into zeros.
  void handle(const GatherOp* op) override {
    if (!takesGrad(op->in())) {
      return;
    }
    refuseAlongAShardedAxis(op, {op->dim()});
    std::vector<Val*> extents;
    for (IterDomain* id : op->in()->shapeDomain()) {
      extents.push_back(primals_.extent(id->extent()));
    }
    TensorView* zero = zeros(extents, g_->dtype());
    TensorView* index = primal(op->index());
    give(op, 0,
         op->kind() == GatherKind::IndexSelect ? indexAdd(zero, index, g_, op->dim())
                                               : scatterAdd(zero, index, g_, op->dim()));
  }

  // The input's grad is g; src's is g read back where it was added (zeros
  // past the index's extents, as for scatter).
  void handle(const ScatterAddOp* op) override {
    refuseAlongAShardedAxis(op, {op->dim()});
    give(op, 0, set(g_));
    if (!takesGrad(op->src())) {
      return;
    }
    TensorView* index = primal(op->index());
    if (op->kind() == ScatterAddKind::IndexAdd) {
      give(op, 2, indexSelect(g_, index, op->dim()));
      return;
    }
    give(op, 2, padToShape(takeAlongAxis(g_, index, op->dim()), op->index(), op->src()));
  }

  // `grad`, shaped as the forward's `from`, padded with zeros at the end of
  // each axis to `to`'s extents (the same rank); itself where they agree.
  TensorView* padToShape(TensorView* grad, const TensorView* from, const TensorView* to) {
    const std::vector<IterDomain*> from_shape = from->shapeDomain();
    const std::vector<IterDomain*> to_shape = to->shapeDomain();
    std::vector<Val*> widths;  // torch's order: from the last axis backwards
    bool grows = false;
    for (size_t i = from_shape.size(); i-- > 0;) {
      const int64_t n = constExtentOr(from_shape[i]);
      const bool same = from_shape[i]->extent() == to_shape[i]->extent() ||
                        (n >= 0 && n == constExtentOr(to_shape[i]));
      widths.push_back(IrBuilder::create<Scalar>(int64_t{0}));
      widths.push_back(same ? IrBuilder::create<Scalar>(int64_t{0})
                            : sub(primals_.extent(to_shape[i]->extent()),
                                  primals_.extent(from_shape[i]->extent())));
      grows = grows || !same;
    }
    return grows ? pad(grad, widths) : grad;
  }

  // Each input's stretch of the grad along dim.
  void handle(const CatOp* op) override {
    refuseAlongAShardedAxis(op, {op->dim()});
    Val* offset = IrBuilder::create<Scalar>(int64_t{0});
    for (size_t i = 0; i < op->inputs().size(); ++i) {
      const auto* in = op->input(i)->as<TensorView>();
      Val* n = primals_.extent(in->shapeDomain()[static_cast<size_t>(op->dim())]->extent());
      give(op, i, slice(g_, op->dim(), offset, add(offset, n)));
      offset = add(offset, n);
    }
  }

  void handle(const PermuteOp* op) override {
    const std::vector<int64_t>& dims = op->dims();
    std::vector<int64_t> inverse(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) {
      inverse[static_cast<size_t>(dims[i])] = static_cast<int64_t>(i);
    }
    give(op, 0, permute(g_, inverse));
  }

  void handle(const ReshapeOp* op) override {
    std::vector<Val*> extents;
    for (IterDomain* id : op->in()->shapeDomain()) {
      extents.push_back(primals_.extent(id->extent()));
    }
    give(op, 0, reshapeToExtents(g_, extents));
  }

  void handle(const WhereOp* op) override {
    refusePositionsOnAShardedAxis(op);
    TensorView* condition = primal(op->condition());
    if (takesGrad(op->a())) {
      grads_[1] = sumToShape(where(condition, g_, 0.0), op->a()->as<TensorView>());
    }
    if (takesGrad(op->b())) {
      grads_[2] = sumToShape(where(condition, 0.0, g_), op->b()->as<TensorView>());
    }
  }

  // A condition computed from positions (an iota: the causal mask) along an
  // axis the devices shard: the backward recomputes the positions from 0 on
  // every device's shard, so each shard after the first is masked as if it
  // held the first keys (the gradient fuzzer's seed 15 on 4 ranks; the
  // forward is right). Refused as select on a sharded axis is.
  static void refusePositionsOnAShardedAxis(const WhereOp* op) {
    if (!op->condition()->isA<TensorView>() || !computedFromPositions(op->condition())) {
      return;
    }
    const auto* out = op->out()->as<TensorView>();
    const auto* condition = op->condition()->as<TensorView>();
    const std::vector<IterDomain*> condition_shape = condition->shapeDomain();
    const auto offset = static_cast<int64_t>(out->shapeDomain().size() - condition_shape.size());
    for (ParallelType parallel_type : kDeviceParallelTypes) {
      const int64_t axis = getShardedLogicalAxis(out, parallel_type) - offset;
      HOSTIR_CHECK(axis < 0 || condition_shape[static_cast<size_t>(axis)]->isBroadcast(),
                   "not supported yet: the grad of ", op->toInlineString(),
                   ", whose condition is computed from positions (a causal mask) along axis ",
                   axis + offset,
                   ", which is sharded over the devices; the gradient fuzzer found that grad "
                   "wrong (tests/python/grad_fuzz.py, docs/reliability.md), so it is refused "
                   "until fixed. Shard another axis (the heads or the batch) or gather the keys "
                   "first");
    }
  }

  static bool computedFromPositions(const Val* val) {
    const Expr* definition = val->definition();
    if (definition == nullptr) {
      return false;
    }
    if (definition->isA<IotaOp>()) {
      return true;
    }
    return std::any_of(definition->inputs().begin(), definition->inputs().end(),
                       [](const Val* input) { return computedFromPositions(input); });
  }

  // Constants: nothing flows back.
  void handle(const FullOp* /*op*/) override {}
  void handle(const IotaOp* /*op*/) override {}
  void handle(const RandomOp* /*op*/) override {}

  void unhandled(const Expr* expr) override {
    HOSTIR_THROW("no gradient rule for ", expr->toInlineString(), ": ", expr->displayName(),
                 " is not differentiable here");
  }

  std::vector<TensorView*> grads_;
  TensorView* g_;
  PrimalValues& primals_;
};

}  // namespace

bool takesGrad(const Val* val) {
  return val->isA<TensorView>() && isFloatingType(val->dtype());
}

std::vector<TensorView*> vectorJacobianProduct(const Expr* expr, TensorView* out_grad,
                                               PrimalValues& primals) {
  return Rules(out_grad, primals).run(expr);
}

}  // namespace hostir
