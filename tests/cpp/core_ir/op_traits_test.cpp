#include <gtest/gtest.h>

#include "hostir/ir/arith.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/gather_ops.h"
#include "hostir/ir/op_traits.h"
#include "hostir/ir/random_ops.h"
#include "hostir/ir/resize_ops.h"
#include "hostir/ir/scan_ops.h"
#include "hostir/ir/scatter_ops.h"
#include "hostir/ir/tensor_factories.h"

namespace hostir {
namespace {

// The one table answers for every op the builders make.
TEST(OpTraits, EachBuilderOpHasItsTraits) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  fusion.addInput(x);
  fusion.addInput(w);
  auto traits = [](TensorView* tv) { return traitsToString(tv->definition()); };
  EXPECT_EQ(traits(set(x)), "Pointwise|HostLowerable|StreamParallelizable|AtenEvaluable");
  EXPECT_EQ(traits(relu(x)), "Pointwise|StreamParallelizable|AtenEvaluable|Forwardable");
  EXPECT_EQ(traits(add(x, w)), "Pointwise|StreamParallelizable|AtenEvaluable");
  EXPECT_EQ(traits(sum(x, {1})), "Reduction|StreamParallelizable|AtenEvaluable");
  EXPECT_EQ(traits(linear(x, w)), "Contraction|HostLowerable|StreamParallelizable|AtenEvaluable");
  EXPECT_EQ(traits(matmul(x, w)), "Contraction|HostLowerable|StreamParallelizable|AtenEvaluable");
  EXPECT_EQ(traits(permute(x, {1, 0})), "View|AtenEvaluable");
  EXPECT_EQ(traits(slice(x, 0, 0, 1)), "View|HostLowerable|AtenEvaluable");
  EXPECT_EQ(traits(zeros({2, 3})), "Factory|AtenEvaluable|Forwardable");
  // The transformer ops merge into compiled segments as the pointwise ops
  // and factories they are (none is a host node of its own).
  TensorView* mask = lt(x, w);
  EXPECT_EQ(traits(mask), "Pointwise|StreamParallelizable|AtenEvaluable");
  EXPECT_EQ(traits(pow(x, 2.0)), "Pointwise|StreamParallelizable|AtenEvaluable");
  EXPECT_EQ(traits(where(mask, x, 0.0)), "Pointwise|StreamParallelizable|AtenEvaluable");
  EXPECT_EQ(traits(rsqrt(x)), "Pointwise|StreamParallelizable|AtenEvaluable|Forwardable");
  EXPECT_EQ(traits(erf(x)), "Pointwise|StreamParallelizable|AtenEvaluable|Forwardable");
  EXPECT_EQ(traits(arange(x->axis(0)->extent())), "Factory|AtenEvaluable|Forwardable");
  // pad, cat and the gathers merge into segments (no host node of their own)
  // and are evaluated by ATen; a slice or select output is a view, so it
  // does not promise contiguous memory to the segment reading it.
  EXPECT_EQ(traits(pad(x, std::vector<int64_t>{1, 2})), "AtenEvaluable");
  EXPECT_EQ(traits(cat({x, w}, 0)), "AtenEvaluable");
  TensorView* index = makeContigTensor(1, DataType::Int64);
  EXPECT_EQ(traits(indexSelect(x, index, 1)), "AtenEvaluable");
  EXPECT_EQ(traits(takeAlongAxis(x, castOp(DataType::Int64, w), 0)), "AtenEvaluable");
  // cumsum and scatter (scan_ops.h, scatter_ops.h) too; the new pointwise
  // ops are UnaryOps and BinaryOps.
  EXPECT_EQ(traits(cumsum(x, 1)), "AtenEvaluable");
  EXPECT_EQ(traits(scatter(x, castOp(DataType::Int64, w), w, 0)), "AtenEvaluable");
  // scatter_add and index_add too (no kernel lowering: ScatterAddOp's comment).
  EXPECT_EQ(traits(scatterAdd(x, castOp(DataType::Int64, w), w, 0)), "AtenEvaluable");
  EXPECT_EQ(traits(indexAdd(x, index, x, 1)), "AtenEvaluable");
  EXPECT_EQ(traits(sin(x)), "Pointwise|StreamParallelizable|AtenEvaluable|Forwardable");
  // A random tensor is never recomputed in a second segment (other values).
  Val* one = IrBuilder::create<Scalar>(1.0);
  EXPECT_EQ(traits(uniform(one, one, {x->axis(0)->extent()}, DataType::Float)),
            "Factory|AtenEvaluable");
  EXPECT_EQ(slice(x, 0, 0, 1)->domain()->contiguity(), (std::vector<bool>{false, false}));
  EXPECT_EQ(select(x, 1, 0)->domain()->contiguity(), (std::vector<bool>{false}));
}

// Scalar arithmetic is a BinaryOp too, but not a tensor op.
TEST(OpTraits, ScalarArithmeticIsNotAtenEvaluable) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  Val* extent = add(x->axis(0)->extent(), x->axis(1)->extent());
  ASSERT_NE(extent->definition(), nullptr);
  EXPECT_FALSE(hasTrait(extent->definition(), OpTrait::AtenEvaluable));
  EXPECT_TRUE(hasTrait(extent->definition(), OpTrait::Pointwise));
  Val* negated = unary(UnaryOpType::Neg, extent);  // a unary op on a scalar
  EXPECT_FALSE(hasTrait(negated->definition(), OpTrait::AtenEvaluable));
}

}  // namespace
}  // namespace hostir
