#pragma once

#include "hostir/segment/segment_candidate_finder.h"

namespace hostir {

// The segmentation policy of the host IR lowering.
//
// A host-lowerable op is one the host program runs directly, as a top-level
// expr of its own (a set, binary, reduction, matmul, linear, select or slice,
// and host Communication nodes): each stays in a group of its own (plus its
// copy of any forwarded chain it reads). Every other op (unary, broadcast,
// permute, reshape, full, ...) merges with its neighbours into a group that
// the lowering wraps in a HostUnit.
bool isHostLowerable(const Expr* expr);

// An op computing a tensor with a Stream axis also stays alone: the stream
// pass wraps each such top-level op in a loop over the Stream axis, so a
// group merging it with others would have to be split again by the lowering.
//
// Whether one of the expr's outputs has a Stream axis in its loop domain.
bool computesStreamParallelTensor(const Expr* expr);

// Merges two groups only when neither holds a host-lowerable op nor an op
// computing a Stream-parallel tensor.
MergePredicate hostLoweringMergePolicy();

}  // namespace hostir
