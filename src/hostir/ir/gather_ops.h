#pragma once

#include <string>
#include <vector>

#include "hostir/ir/tensor_op.h"

namespace hostir {

class TensorView;

// How a GatherOp reads its index tensor (new values go at the end: a node's
// attribute holds the value's number).
//  - TakeAlongAxis: torch.gather(in, dim, index): index has in's rank, out
//    has index's shape, out[i][j] = in[index[i][j]][j] (dim 0); on the other
//    axes index may be shorter than in (nvFuser's gather and take_along_axis).
//  - IndexSelect: torch.index_select(in, dim, index): index is 1-D (or 0-D,
//    one index), out is in with dim's extent the number of indices.
enum class GatherKind { TakeAlongAxis, IndexSelect };
// "take_along_axis" or "index_select" (the op's printed name).
std::string toString(GatherKind kind);

// out = in read at the integer (Int64 or Int32) positions of `index` along
// `dim`. Inputs: {in, index}; attribute 0: dim, 1: GatherKind. An index
// outside [0, extent) is an error when it runs (ATen's). Evaluated by ATen
// or compiled into the segment's kernel when the index is a segment input
// (kernels/resize_gather_lowering.h).
class GatherOp : public TensorOp {
  HOSTIR_DECLARE_TENSOR_OP(GatherOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  TensorView* index() const {
    return tensorInput(1);
  }
  int64_t dim() const {
    return attribute<int64_t>(0);
  }
  GatherKind kind() const {
    return static_cast<GatherKind>(attribute<int64_t>(1));
  }
  std::string displayName() const override {
    return hostir::toString(kind());
  }
  std::vector<std::string> attributeNames() const override {
    return {"dim", ""};
  }
};

// torch.gather / nvFuser's take_along_axis and gather; torch.index_select.
// A negative dim counts from the end.
TensorView* takeAlongAxis(TensorView* in, TensorView* index, int64_t dim);
TensorView* indexSelect(TensorView* in, TensorView* index, int64_t dim);

}  // namespace hostir
