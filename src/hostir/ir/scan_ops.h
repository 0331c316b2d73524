#pragma once

#include <string>
#include <vector>

#include "hostir/ir/tensor_op.h"

namespace hostir {

class TensorView;

// out = torch.cumsum(in, dim): the running sum along `dim`. Inputs: {in};
// attribute 0: dim (normalized). Integer and Bool inputs sum in Int64, as
// torch's. Evaluated by ATen; the kernel layer has no lowering for it yet
// (its segment runs through ATen, which the segment's kernel signature names).
class ScanOp : public TensorOp {
  HOSTIR_DECLARE_TENSOR_OP(ScanOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  int64_t dim() const {
    return attribute<int64_t>(0);
  }
  std::string displayName() const override {
    return "cumsum";
  }
  std::vector<std::string> attributeNames() const override {
    return {"dim"};
  }
};

// torch.cumsum(in, dim); a negative dim counts from the end.
TensorView* cumsum(TensorView* in, int64_t dim);

}  // namespace hostir
