#pragma once

#include <optional>

#include "hostir/ir/tensor_view.h"

namespace hostir {

// Where a tensor's Stream-parallel axis is and how a host loop walks it.
struct StreamAxis {
  // The Stream-parallel loop axis; its extent is the number of iterations.
  IterDomain* loop_id = nullptr;
  // The logical axis it comes from (a position in the logical domain).
  int64_t logical_pos = -1;
  // nullptr: one index of the logical axis per iteration. Otherwise the axis
  // was split and the Stream axis is the outer part: each iteration covers a
  // chunk of this many indices (the last one shorter when it does not divide).
  Val* chunk_size = nullptr;
};

// The tensor's Stream axis, if any. Throws hostir::Error naming the tensor
// for forms that cannot be lowered: more than one Stream axis, a reduced
// Stream axis, one produced by a merge, or the inner part of a split.
std::optional<StreamAxis> findStreamAxis(const TensorView* tv);

// Whether two Stream axes iterate the same way, so their loops can fuse.
bool sameIteration(const StreamAxis& a, const StreamAxis& b);

}  // namespace hostir
