#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hostir/ir/fusion.h"
#include "hostir/runtime/polymorphic_value.h"

namespace hostir {

class ExpressionEvaluator;

// Why a compiled kernel may not run this call of `fusion`'s pad, cat or
// gather ops, or nothing when it may. The kernel clamps every read into its
// operand (kernels/resize_gather_lowering.h), so the calls where a clamped
// read would be wrong run through ATen, which gives its result or its error:
// an operand with an empty axis (nothing to clamp into), a pad cropping more
// than an axis holds, cat operands of different extents off the cat axis, a
// take_along_axis index longer than its input off the gather axis, and an
// index outside [0, extent) (torch.gather's and torch.index_select's error;
// the index is a segment input, kernels/kernel_signature.cpp). `inputs` are
// the fusion's inputs, bound in `ee`.
std::optional<std::string> whyResizeOrGatherNeedsAten(const Fusion& fusion, ExpressionEvaluator& ee,
                                                      const std::vector<PolymorphicValue>& inputs);

}  // namespace hostir
