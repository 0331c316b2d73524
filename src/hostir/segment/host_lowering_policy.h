#pragma once

#include <functional>

#include "hostir/segment/segment_candidate_finder.h"

namespace hostir {

// The segmentation policy of the host IR lowering.
//
// A host-lowerable op is one the host program runs directly, as a top-level
// expr of its own (a set, matmul, linear, select or slice): each stays in
// a group of its own (plus its copy of any forwarded chain it reads). Every
// other op (pointwise, reduction, broadcast, permute, reshape, full, ...)
// merges with its neighbours into a group that the lowering wraps in a
// HostUnit, which runs as one compiled kernel (docs/kernels.md).
bool isHostLowerable(const Expr* expr);

// An op computing a tensor with a Stream axis also stays alone: the stream
// pass wraps each such top-level op in a loop over the Stream axis, so a
// group merging it with others would have to be split again by the lowering.
//
// Whether one of the expr's outputs has a Stream axis in its loop domain.
bool computesStreamParallelTensor(const Expr* expr);

// A permute whose result only a matmul reads as its left operand, and that
// is no fusion output: run alone, the host makes it a strided view and the
// GEMM reads the transpose in place (oneDNN and ATen take any strides), as
// torch passes `dh.t()` to its wgrad GEMM. Merged into a HostUnit it would
// be materialized, a copy as large as its input alive until the GEMM ends
// (the backward's `permute(dh)` and `dyᵀ`: docs/training.md).
bool isGemmOperandView(const Expr* expr);

// Whether an expr stays alone in its group: host-lowerable, or what the
// caller adds (the lowering: an op that reshards, which becomes a
// collective).
using StaysAlone = std::function<bool(const Expr*)>;

// Merges two groups only when neither holds an op that stays alone nor an
// op computing a Stream-parallel tensor.
MergePredicate hostLoweringMergePolicy(StaysAlone stays_alone = isHostLowerable);

}  // namespace hostir
