#pragma once

#include <string>
#include <vector>

#include "hostir/ir/tensor_op.h"

namespace hostir {

class TensorView;

// out = torch.scatter(in, dim, index, src): a copy of `in` in which
// out[index[i][j]][j] = src[i][j] (dim 0), src a tensor (read where index
// has entries: index off dim no longer than src and in) or a scalar (written
// everywhere index points). Inputs: {in, index, src}; attribute 0: dim. An
// index outside [0, extent) is an error when it runs (ATen's); where two
// positions write one element, which wins is ATen's choice, as torch's.
// Evaluated by ATen; the kernel layer has no lowering for it yet.
class ScatterOp : public TensorOp {
  HOSTIR_DECLARE_TENSOR_OP(ScatterOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  TensorView* index() const {
    return tensorInput(1);
  }
  Val* src() const {
    return input(2);
  }
  int64_t dim() const {
    return attribute<int64_t>(0);
  }
  std::string displayName() const override {
    return "scatter";
  }
  std::vector<std::string> attributeNames() const override {
    return {"dim"};
  }
};

// torch.scatter(in, dim, index, src); a negative dim counts from the end. A
// scalar src is cast to in's dtype.
TensorView* scatter(TensorView* in, TensorView* index, Val* src, int64_t dim);

}  // namespace hostir
