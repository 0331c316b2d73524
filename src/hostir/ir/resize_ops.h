#pragma once

#include <string>
#include <vector>

#include "hostir/ir/tensor_op.h"

namespace hostir {

class TensorView;

// The ops that change an axis's extent by placing data in a larger tensor:
// pad (torch.nn.functional.pad, mode "constant") and cat (torch.cat). Both
// are fusion ops: merged into segments, evaluated by ATen or compiled into
// the segment's kernel (kernels/resize_gather_lowering.h).

// out = in with `left[a]` elements of `value` before and `right[a]` after
// each axis a. Inputs: {in, value, left_0, right_0, ..., left_{r-1},
// right_{r-1}} (one pair per axis of in's shape, in axis order; integer
// scalars, symbolic or constant, >= 0). out has in's dtype.
class PadOp : public TensorOp {
  HOSTIR_DECLARE_TENSOR_OP(PadOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  Val* value() const {
    return input(1);
  }
  Val* left(int64_t axis) const {
    return input(2 + 2 * axis);
  }
  Val* right(int64_t axis) const {
    return input(3 + 2 * axis);
  }
  std::string displayName() const override {
    return "pad";
  }
};

// out = torch.cat(inputs, dim): the tensors (one dtype, one rank, equal
// extents but on `dim`) one after another along dim. Attribute 0: dim.
class CatOp : public TensorOp {
  HOSTIR_DECLARE_TENSOR_OP(CatOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  int64_t dim() const {
    return attribute<int64_t>(0);
  }
  std::string displayName() const override {
    return "cat";
  }
  std::vector<std::string> attributeNames() const override {
    return {"dim"};
  }
};

// Builders. `widths` as torch.nn.functional.pad takes them: pairs (left,
// right) from the last axis backwards, at most one pair per axis; missing
// pairs are 0. `value` null pads with zero (false for Bool).
TensorView* pad(TensorView* in, const std::vector<Val*>& widths, Val* value = nullptr);
TensorView* pad(TensorView* in, const std::vector<int64_t>& widths, Val* value = nullptr);
// torch.cat; a negative dim counts from the end.
TensorView* cat(const std::vector<TensorView*>& inputs, int64_t dim);

}  // namespace hostir
