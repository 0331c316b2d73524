// The reductions of a segment's lowering: sum, product, max and min (NaN
// propagated as torch does), each an update over an RDom.

#include "hostir/kernels/halide_lowering_state.h"

#include <algorithm>
#include <limits>

#include "hostir/ir/error.h"

namespace hostir::halide_lowering {

namespace {

// What a reduction starts from: 0, 1, or the lowest (highest) value of the
// type for max (min), -inf (+inf) for floats.
Expr initialValue(ReductionOpType op, Halide::Type type) {
  switch (op) {
    case ReductionOpType::Sum: return Halide::Internal::make_zero(type);
    case ReductionOpType::Product: return Halide::Internal::make_one(type);
    case ReductionOpType::Max:
      return type.is_float() ? Halide::cast(type, Expr(-std::numeric_limits<double>::infinity()))
                             : type.min();
    case ReductionOpType::Min:
      return type.is_float() ? Halide::cast(type, Expr(std::numeric_limits<double>::infinity()))
                             : type.max();
  }
  HOSTIR_ASSERT(false, "kernel lowering: an unknown reduction");
}

// The running value after one more element.
Expr combine(ReductionOpType op, const Expr& current, const Expr& element) {
  switch (op) {
    case ReductionOpType::Sum: return current + element;
    case ReductionOpType::Product: return current * element;
    case ReductionOpType::Max: return Halide::max(current, element);
    case ReductionOpType::Min: return Halide::min(current, element);
  }
  HOSTIR_ASSERT(false, "kernel lowering: an unknown reduction");
}

// The axes of a rank-`rank` input that a reduction over `axes` (sorted)
// keeps, in order.
std::vector<int64_t> keptAxes(int64_t rank, const std::vector<int64_t>& axes) {
  std::vector<int64_t> kept;
  for (int64_t axis = 0; axis < rank; ++axis) {
    if (!std::binary_search(axes.begin(), axes.end(), axis)) {
      kept.push_back(axis);
    }
  }
  return kept;
}

}  // namespace

void Lowering::lowerReduction(const ReductionOp* op) {
  const TensorView* in = op->in();
  const TensorView* out = op->out();
  std::vector<int64_t> axes = op->axes();
  std::sort(axes.begin(), axes.end());
  int64_t rank = in->rank();
  const std::vector<int64_t> kept = keptAxes(rank, axes);
  for (size_t k = 0; k < kept.size(); ++k) {
    classes_.unite(in, kept[k], out, static_cast<int64_t>(k));
  }
  // A reduction over broadcast axes alone (extent 1 each: the VJP of a
  // broadcast gives them) reads its one element: a pure Func inlined into
  // its readers, not an update loop whose vector lanes and tail LLVM would
  // compile (layer norm's backward had two).
  const std::vector<IterDomain*> shape = in->shapeDomain();
  const bool one_element = std::all_of(axes.begin(), axes.end(),
                                       [&](int64_t axis) { return shape[axis]->isBroadcast(); });
  const bool innermost_reduced = !axes.empty() && axes.back() == rank - 1;
  ReductionDomains domains;
  if (!one_element) {
    domains = reductionDomains(in, out, axes, innermost_reduced);
  }
  Halide::Type type = computeType(out->dtype());
  std::vector<Var> vars = varsFor(static_cast<int64_t>(kept.size()));
  Index out_index(vars.rbegin(), vars.rend());
  // The element at the reduced position `reduced` (an RDom's dimensions, or
  // none for one element).
  auto elementAt = [&](const Halide::RDom* reduced) {
    Index in_index(static_cast<size_t>(rank));
    for (size_t k = 0; k < kept.size(); ++k) {
      in_index[kept[k]] = out_index[k];
    }
    for (size_t r = 0; r < axes.size(); ++r) {
      in_index[axes[axes.size() - 1 - r]] =
          reduced == nullptr ? Expr(0) : Expr((*reduced)[static_cast<int>(r)]);
    }
    return convert(load(in, in_index), type);
  };
  Expr init = initialValue(op->type(), type);
  Func accumulator(numbered("acc", out->name()));
  std::vector<Expr> pure(vars.begin(), vars.end());
  // torch's max and min return NaN when any element is NaN; the engine's
  // max/min do not (a NaN accumulator loses to the next element). So a
  // floating max/min also counts NaN elements, as a second value of the
  // same reduction (a sum: the pair stays associative, so rfactor still
  // splits it), and the result is NaN where the count is not zero.
  const bool extremum = op->type() == ReductionOpType::Max || op->type() == ReductionOpType::Min;
  const bool counts_nans = type.is_float() && extremum;
  Expr zero = Halide::Internal::make_zero(type);
  auto assign = [&](const Halide::Tuple& value) {
    if (vars.empty()) {
      accumulator() = value;
    } else {
      accumulator(pure) = value;
    }
  };
  // The running value and NaN count: the initial ones for one element.
  Expr current = init;
  Expr current_nans = zero;
  if (!one_element) {
    assign(counts_nans ? Halide::Tuple(init, zero) : Halide::Tuple(init));
    Halide::FuncRef current_ref = vars.empty() ? accumulator() : accumulator(pure);
    current = counts_nans ? Halide::Tuple(current_ref)[0] : Expr(current_ref);
    current_nans = counts_nans ? Halide::Tuple(current_ref)[1] : zero;
  }
  // One element: a sum adds it to 0 (torch's sum of -0.0 is +0.0), a
  // product multiplies it by 1; max and min are the element itself (NaN
  // counted below), since combined with the type's lowest value Halide 14's
  // folding gave 1 for int64 (an expand over a size-1 input axis,
  // test_nvfuser_spellings.py).
  auto update = [&](const Halide::RDom* reduced) {
    Expr element = elementAt(reduced);
    Expr updated = one_element && extremum ? element : combine(op->type(), current, element);
    if (counts_nans) {
      Expr nans = current_nans +
                  Halide::select(Halide::is_nan(element), Halide::Internal::make_one(type), zero);
      assign(Halide::Tuple(updated, nans));
    } else {
      assign(Halide::Tuple(updated));
    }
  };
  update(one_element ? nullptr : &domains.whole);
  if (domains.remainder.has_value()) {
    update(&*domains.remainder);
  }
  if (!one_element) {
    reductions_.push_back({accumulator, op, innermost_reduced, domains.whole});
  }
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

// The innermost reduced axis first: an RDom's first dimension is its
// innermost loop. An innermost reduction runs over the whole vectors of its
// axis, then over the rest one element at a time (a second update): as one
// loop with a predicated last vector, Halide compiled its body three times
// (the loop, and the last vector's partition both full and predicated),
// most of the compile of a kernel with several reductions.
Lowering::ReductionDomains Lowering::reductionDomains(const TensorView* in, const TensorView* out,
                                                      const std::vector<int64_t>& axes,
                                                      bool innermost_reduced) {
  std::vector<Halide::Range> ranges;
  for (auto axis = axes.rbegin(); axis != axes.rend(); ++axis) {
    ranges.emplace_back(0, extent(in, *axis));
  }
  ReductionDomains domains;
  if (innermost_reduced) {
    const int step = reductionStep(out);
    Expr whole = (ranges[0].extent / step) * step;
    std::vector<Halide::Range> remainder = ranges;
    remainder[0] = Halide::Range(whole, ranges[0].extent - whole);
    ranges[0] = Halide::Range(0, whole);
    domains.remainder = Halide::RDom(remainder, numbered("rest", out->name()));
  }
  domains.whole = Halide::RDom(ranges, numbered("r", out->name()));
  return domains;
}

}  // namespace hostir::halide_lowering
