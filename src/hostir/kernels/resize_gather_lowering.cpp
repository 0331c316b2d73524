#include "hostir/kernels/resize_gather_lowering.h"

#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

// `position` clamped into [0, extent): the read stays inside the operand
// (the run time guarantees extent >= 1).
Halide::Expr clampedInto(const Halide::Expr& position, const Halide::Expr& extent) {
  return Halide::clamp(position, 0, extent - 1);
}

}  // namespace

// out(i) = in(i - left) where that is inside in, else the fill value.
Halide::Expr padValue(const PadOp* op, const KernelIndex& i, const KernelReads& reads,
                      const Halide::Expr& fill) {
  const TensorView* in = op->in();
  KernelIndex source(i.size());
  Halide::Expr inside = Halide::cast(Halide::Bool(), true);
  for (int64_t axis = 0; axis < in->rank(); ++axis) {
    Halide::Expr left = Halide::cast(Halide::Int(32), reads.scalar(op->left(axis)));
    Halide::Expr n = reads.extent(in, axis);
    Halide::Expr position = i[axis] - left;
    inside = inside && position >= 0 && position < n;
    source[axis] = clampedInto(position, n);
  }
  return Halide::select(inside, reads.load(in, source), fill);
}

// The operands one after another along dim: the last one whose offset is
// at most the output's position is read.
Halide::Expr catValue(const CatOp* op, const KernelIndex& i, const KernelReads& reads) {
  const int64_t dim = op->dim();
  std::vector<Halide::Expr> offsets{Halide::Expr(0)};
  for (size_t k = 0; k + 1 < op->inputs().size(); ++k) {
    offsets.push_back(offsets.back() + reads.extent(op->input(k)->as<TensorView>(), dim));
  }
  Halide::Expr value;
  for (size_t k = op->inputs().size(); k-- > 0;) {
    const auto* in = op->input(k)->as<TensorView>();
    KernelIndex source(i);
    source[dim] = clampedInto(i[dim] - offsets[k], reads.extent(in, dim));
    Halide::Expr read = reads.load(in, source);
    value =
        k + 1 == op->inputs().size() ? read : Halide::select(i[dim] < offsets[k + 1], read, value);
  }
  return value;
}

// in read at the index's value along dim: take_along_axis reads the index
// at the output's position, index_select at the output's position on dim.
Halide::Expr gatherValue(const GatherOp* op, const KernelIndex& i, const KernelReads& reads) {
  const TensorView* index = op->index();
  const int64_t dim = op->dim();
  Halide::Expr position;
  if (op->kind() == GatherKind::TakeAlongAxis) {
    position = reads.load(index, i);
  } else {
    position = reads.load(index, index->rank() == 0 ? KernelIndex{} : KernelIndex{i[dim]});
  }
  Halide::Expr n = Halide::cast(Halide::Int(64), reads.extent(op->in(), dim));
  position =
      Halide::clamp(Halide::cast(Halide::Int(64), position), Halide::Expr(int64_t{0}), n - 1);
  KernelIndex source(i);
  source[dim] = Halide::cast(Halide::Int(32), position);
  return reads.load(op->in(), source);
}

}  // namespace hostir
