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

// How a ScatterAddOp reads its index (new values go at the end: a node's
// attribute holds the value's number); each is the grad of a GatherKind.
//  - ScatterAdd: torch.scatter_add(in, dim, index, src): index has in's and
//    src's rank and is no longer than either off dim (nor than src on dim);
//    out[index[i][j]][j] += src[i][j] (dim 0). take_along_axis's grad.
//  - IndexAdd: torch.index_add(in, dim, index, src): index is 1-D (or 0-D,
//    one index), src is in with dim's extent the number of indices;
//    out[index[i]] += src[i] (dim 0). index_select's grad.
enum class ScatterAddKind { ScatterAdd, IndexAdd };
// "scatter_add" or "index_add" (the op's printed name).
std::string toString(ScatterAddKind kind);

// out = a copy of `in` with src's elements added at the integer (Int64 or
// Int32) positions of `index` along `dim`; positions that repeat add up.
// Inputs: {in, index, src}; attribute 0: dim, 1: ScatterAddKind. An index
// outside [0, extent) is an error when it runs (ATen's). Evaluated by ATen:
// the segment's kernel defines each output element by one expression of its
// coordinates, and a scatter-add's element is a sum over the src elements
// whose index points at it, which is not one (a Halide update definition
// over src's domain would be; not written).
class ScatterAddOp : public TensorOp {
  HOSTIR_DECLARE_TENSOR_OP(ScatterAddOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  TensorView* index() const {
    return tensorInput(1);
  }
  TensorView* src() const {
    return tensorInput(2);
  }
  int64_t dim() const {
    return attribute<int64_t>(0);
  }
  ScatterAddKind kind() const {
    return static_cast<ScatterAddKind>(attribute<int64_t>(1));
  }
  std::string displayName() const override {
    return hostir::toString(kind());
  }
  std::vector<std::string> attributeNames() const override {
    return {"dim", ""};
  }
};

// torch.scatter_add(in, dim, index, src) and torch.index_add(in, dim, index,
// src); a negative dim counts from the end.
TensorView* scatterAdd(TensorView* in, TensorView* index, TensorView* src, int64_t dim);
TensorView* indexAdd(TensorView* in, TensorView* index, TensorView* src, int64_t dim);

}  // namespace hostir
