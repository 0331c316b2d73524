// The reductions of a segment's lowering: sum, product, max and min (NaN
// propagated as torch does), each an update over an RDom.

#include "hostir/kernels/halide_lowering_state.h"

#include <algorithm>
#include <limits>

#include "hostir/ir/error.h"

namespace hostir::halide_lowering {

void Lowering::lowerReduction(const ReductionOp* op) {
  const TensorView* in = op->in();
  const TensorView* out = op->out();
  std::vector<int64_t> axes = op->axes();
  std::sort(axes.begin(), axes.end());
  int64_t rank = in->rank();
  std::vector<int64_t> kept;
  for (int64_t axis = 0; axis < rank; ++axis) {
    if (!std::binary_search(axes.begin(), axes.end(), axis)) {
      kept.push_back(axis);
    }
  }
  for (size_t k = 0; k < kept.size(); ++k) {
    classes_.unite(in, kept[k], out, static_cast<int64_t>(k));
  }
  // The innermost reduced axis first: the RDom's first dimension is its
  // innermost loop.
  std::vector<Halide::Range> ranges;
  for (auto axis = axes.rbegin(); axis != axes.rend(); ++axis) {
    ranges.emplace_back(0, extent(in, *axis));
  }
  Halide::RDom domain(ranges, numbered("r", out->name()));
  Halide::Type type = computeType(out->dtype());
  std::vector<Var> vars = varsFor(static_cast<int64_t>(kept.size()));
  Index out_index(vars.rbegin(), vars.rend());
  Index in_index(static_cast<size_t>(rank));
  for (size_t k = 0; k < kept.size(); ++k) {
    in_index[kept[k]] = out_index[k];
  }
  for (size_t r = 0; r < axes.size(); ++r) {
    in_index[axes[axes.size() - 1 - r]] = domain[static_cast<int>(r)];
  }
  Expr element = convert(load(in, in_index), type);
  Expr init;
  switch (op->type()) {
    case ReductionOpType::Sum: init = Halide::Internal::make_zero(type); break;
    case ReductionOpType::Product: init = Halide::Internal::make_one(type); break;
    case ReductionOpType::Max:
      init = type.is_float() ? Halide::cast(type, Expr(-std::numeric_limits<double>::infinity()))
                             : type.min();
      break;
    case ReductionOpType::Min:
      init = type.is_float() ? Halide::cast(type, Expr(std::numeric_limits<double>::infinity()))
                             : type.max();
      break;
  }
  Func accumulator(numbered("acc", out->name()));
  std::vector<Expr> pure(vars.begin(), vars.end());
  // torch's max and min return NaN when any element is NaN; the engine's
  // max/min do not (a NaN accumulator loses to the next element). So a
  // floating max/min also counts NaN elements, as a second value of the
  // same reduction (a sum: the pair stays associative, so rfactor still
  // splits it), and the result is NaN where the count is not zero.
  const bool counts_nans =
      type.is_float() && (op->type() == ReductionOpType::Max || op->type() == ReductionOpType::Min);
  Expr zero = Halide::Internal::make_zero(type);
  auto assign = [&](const Halide::Tuple& value) {
    if (vars.empty()) {
      accumulator() = value;
    } else {
      accumulator(pure) = value;
    }
  };
  assign(counts_nans ? Halide::Tuple(init, zero) : Halide::Tuple(init));
  Halide::FuncRef current_ref = vars.empty() ? accumulator() : accumulator(pure);
  Expr current = counts_nans ? Halide::Tuple(current_ref)[0] : Expr(current_ref);
  Expr updated;
  switch (op->type()) {
    case ReductionOpType::Sum: updated = current + element; break;
    case ReductionOpType::Product: updated = current * element; break;
    case ReductionOpType::Max: updated = Halide::max(current, element); break;
    case ReductionOpType::Min: updated = Halide::min(current, element); break;
  }
  if (counts_nans) {
    Expr nans = Halide::Tuple(current_ref)[1] +
                Halide::select(Halide::is_nan(element), Halide::Internal::make_one(type), zero);
    assign(Halide::Tuple(updated, nans));
  } else {
    assign(Halide::Tuple(updated));
  }
  reductions_.push_back({accumulator, op, !axes.empty() && axes.back() == rank - 1, domain});
  define(out, [&](const Index& i) {
    Halide::FuncRef ref = i.empty() ? accumulator() : accumulator(Index(i.rbegin(), i.rend()));
    if (!counts_nans) {
      return Expr(ref);
    }
    Halide::Tuple value(ref);
    return Halide::select(value[1] > zero,
                          Halide::cast(type, Expr(std::numeric_limits<double>::quiet_NaN())),
                          value[0]);
  });
}

}  // namespace hostir::halide_lowering
