#pragma once

#include <Halide.h>

#include <functional>
#include <vector>

#include "hostir/ir/gather_ops.h"
#include "hostir/ir/resize_ops.h"

namespace hostir {

// What the lowerings of pad, cat and the gathers read through the segment's
// lowering (halide_lowering.cpp): one coordinate per axis, outermost first.
using KernelIndex = std::vector<Halide::Expr>;
struct KernelReads {
  // A tensor of the segment at an index, in its compute type.
  std::function<Halide::Expr(const TensorView*, const KernelIndex&)> load;
  // The extent of a tensor's axis on this device, as an int32 argument.
  std::function<Halide::Expr(const TensorView*, int64_t)> extent;
  // A scalar operand (a constant or a run-time argument), as an int64.
  std::function<Halide::Expr(const Val*)> scalar;
};

// The value of each op's output at `i`. Every read of an operand is clamped
// into its extent, so the kernel never loads outside a buffer whatever the
// index; the run time (runtime/resize_gather_checks.h) sends a call to ATen
// where a clamped read would differ from ATen's result or error: an empty
// operand, a pad that crops more than the extent, an index out of range.
// `fill` is pad's value in the output's compute type.
Halide::Expr padValue(const PadOp* op, const KernelIndex& i, const KernelReads& reads,
                      const Halide::Expr& fill);
Halide::Expr catValue(const CatOp* op, const KernelIndex& i, const KernelReads& reads);
Halide::Expr gatherValue(const GatherOp* op, const KernelIndex& i, const KernelReads& reads);

}  // namespace hostir
