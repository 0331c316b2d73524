#include <gtest/gtest.h>

#include "hostir/ir/arith.h"
#include "hostir/multidevice/presegmentation_passes.h"
#include "hostir/multidevice/sharding.h"
#include "multidevice_test_utils.h"

namespace hostir::test {

using PropagateShardingsTest = MultiDeviceTest;

TEST_F(PropagateShardingsTest, ForwardThroughPointwiseOps) {
  TensorView* a = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(a);
  TensorView* b = relu(a);
  TensorView* c = add(b, b);
  fusion_.addOutput(c);
  propagateShardings(&fusion_);
  for (TensorView* tv : {b, c}) {
    ASSERT_TRUE(tv->hasDeviceMesh()) << tv->toString();
    EXPECT_EQ(tv->getDeviceMesh(), mesh2_);
    EXPECT_EQ(getShardedLogicalAxis(tv, ParallelType::DIDx), 0) << tv->toString();
  }
  EXPECT_FALSE(isResharding(c->definition()));
}

TEST_F(PropagateShardingsTest, ForwardKeepsTheSplitForm) {
  TensorView* a = makeContigConcreteTensor({8, 4});
  a->setDeviceMesh(mesh2_);
  a->split(1, 2, /*inner_split=*/false);
  a->axis(1)->parallelize(ParallelType::DIDx);
  fusion_.addInput(a);
  TensorView* b = neg(a);
  fusion_.addOutput(b);
  propagateShardings(&fusion_);
  EXPECT_EQ(b->nDims(), 3);
  EXPECT_EQ(b->axis(1)->getParallelType(), ParallelType::DIDx);
  EXPECT_EQ(getShardedLogicalAxis(b, ParallelType::DIDx), 1);
}

TEST_F(PropagateShardingsTest, ReductionOfTheShardedAxisGivesAnUnshardedOutput) {
  TensorView* a = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(a);
  TensorView* over_sharded = sum(a, {0});
  TensorView* over_other = sum(a, {1});
  fusion_.addOutput(over_sharded);
  fusion_.addOutput(over_other);
  propagateShardings(&fusion_);
  ASSERT_TRUE(over_sharded->hasDeviceMesh());
  EXPECT_FALSE(isSharded(over_sharded));
  EXPECT_EQ(getShardedLogicalAxis(over_other, ParallelType::DIDx), 0);
}

TEST_F(PropagateShardingsTest, LinearCarriesNButNotK) {
  TensorView* x = shardedTensor({8, 16}, mesh2_, -1);
  TensorView* w_col = shardedTensor({6, 16}, mesh2_, 0);
  TensorView* x_row = shardedTensor({8, 16}, mesh2_, 1);
  TensorView* w_row = shardedTensor({6, 16}, mesh2_, 1);
  for (TensorView* in : {x, w_col, x_row, w_row}) {
    fusion_.addInput(in);
  }
  TensorView* column = linear(x, w_col);
  TensorView* row = linear(x_row, w_row);
  fusion_.addOutput(column);
  fusion_.addOutput(row);
  propagateShardings(&fusion_);
  EXPECT_EQ(getShardedLogicalAxis(column, ParallelType::DIDx), 1);
  ASSERT_TRUE(row->hasDeviceMesh());
  EXPECT_FALSE(isSharded(row));
}

TEST_F(PropagateShardingsTest, MatmulCarriesTheRowAxisOfA) {
  TensorView* a = shardedTensor({8, 16}, mesh2_, 0);
  TensorView* b = shardedTensor({16, 6}, mesh2_, -1);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* c = matmul(a, b);
  fusion_.addOutput(c);
  propagateShardings(&fusion_);
  EXPECT_EQ(getShardedLogicalAxis(c, ParallelType::DIDx), 0);
}

TEST_F(PropagateShardingsTest, BackwardToUnannotatedProducers) {
  TensorView* x = makeContigConcreteTensor({8, 4});  // no mesh
  TensorView* w = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(x);
  fusion_.addInput(w);
  TensorView* y = relu(x);
  TensorView* z = add(y, w);
  fusion_.addOutput(z);
  propagateShardings(&fusion_);
  for (TensorView* tv : {x, y, z}) {
    ASSERT_TRUE(tv->hasDeviceMesh()) << tv->toString();
    EXPECT_EQ(getShardedLogicalAxis(tv, ParallelType::DIDx), 0) << tv->toString();
  }
}

TEST_F(PropagateShardingsTest, ForwardAgainAfterBackward) {
  TensorView* x = makeContigConcreteTensor({8, 4});
  TensorView* w = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(x);
  fusion_.addInput(w);
  TensorView* side = relu(x);  // only x, annotated by the backward sweep, feeds it
  TensorView* z = add(x, w);
  fusion_.addOutput(side);
  fusion_.addOutput(z);
  propagateShardings(&fusion_);
  ASSERT_TRUE(side->hasDeviceMesh());
  EXPECT_EQ(getShardedLogicalAxis(side, ParallelType::DIDx), 0);
}

TEST_F(PropagateShardingsTest, UserAnnotationsAreKept) {
  TensorView* a = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(a);
  TensorView* b = sharded(relu(a), mesh2_, -1);  // the user wants it unsharded
  TensorView* c = neg(b);
  fusion_.addOutput(c);
  propagateShardings(&fusion_);
  EXPECT_FALSE(isSharded(b));
  EXPECT_FALSE(isSharded(c));
  EXPECT_EQ(c->getDeviceMesh(), mesh2_);
}

TEST_F(PropagateShardingsTest, MeshOfTheMostShardedInput) {
  TensorView* a = shardedTensor({8, 4}, DeviceMesh({0}), -1);
  TensorView* b = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* c = add(a, b);
  fusion_.addOutput(c);
  propagateShardings(&fusion_);
  EXPECT_EQ(c->getDeviceMesh(), mesh2_);
  EXPECT_EQ(getShardedLogicalAxis(c, ParallelType::DIDx), 0);
}

TEST_F(PropagateShardingsTest, StreamAxisOfTheOutputIsLeftAlone) {
  TensorView* a = shardedTensor({8, 16}, mesh2_, 0);
  TensorView* b = shardedTensor({16, 6}, mesh2_, -1);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* c = matmul(a, b);
  c->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(c);
  propagateShardings(&fusion_);
  EXPECT_EQ(c->getDeviceMesh(), mesh2_);
  EXPECT_FALSE(isSharded(c));
  EXPECT_EQ(c->axis(0)->getParallelType(), ParallelType::Stream);
}

}  // namespace hostir::test
