#include <gtest/gtest.h>

#include "hostir/ir/arith.h"
#include "hostir/multidevice/sharding.h"
#include "multidevice_test_utils.h"

namespace hostir::test {

using ShardingTest = MultiDeviceTest;

TEST_F(ShardingTest, LogicalAxisParallelizedWithDIDx) {
  TensorView* tv = shardedTensor({8, 4}, mesh2_, 0);
  EXPECT_TRUE(isSharded(tv));
  EXPECT_EQ(getShardedLogicalAxis(tv, ParallelType::DIDx), 0);
  EXPECT_EQ(getShardedLogicalAxis(tv, ParallelType::DIDy), -1);
  EXPECT_EQ(getShardedIterDomain(tv, ParallelType::DIDx), tv->getLogicalDomain()[0]);
  EXPECT_EQ(numDevices(tv, ParallelType::DIDx), 2);
  EXPECT_EQ(numDevices(tv, ParallelType::DIDy), 1);
  EXPECT_EQ(shardingParallelType(tv, tv->getLogicalDomain()[1]), ParallelType::Serial);
}

TEST_F(ShardingTest, OuterSplitMapsBackToItsLogicalAxis) {
  TensorView* tv = makeContigConcreteTensor({4, 6});
  tv->setDeviceMesh(DeviceMesh({0, 1, 2}));
  tv->split(1, 3, /*inner_split=*/false);
  tv->axis(1)->parallelize(ParallelType::DIDx);
  EXPECT_EQ(tv->nDims(), 3);
  EXPECT_EQ(getShardedLogicalAxis(tv, ParallelType::DIDx), 1);
  EXPECT_EQ(logicalIdOf(tv, tv->axis(1)), tv->getLogicalDomain()[1]);
  EXPECT_EQ(logicalIdOf(tv, tv->axis(2)), tv->getLogicalDomain()[1]);
  EXPECT_EQ(constExtent(tv->axis(1)), 3);
  std::vector<Val*> shape = localShape(tv);
  ASSERT_EQ(shape.size(), 2u);
  EXPECT_EQ(shape[0]->as<Scalar>()->constInt(), 4);
  EXPECT_EQ(shape[1]->as<Scalar>()->constInt(), 2);
}

TEST_F(ShardingTest, LocalExtentOfSymbolicShardedAxisIsCeilDiv) {
  TensorView* tv = makeContigTensor(2);
  sharded(tv, mesh2_, 0);
  Val* local = localExtent(tv, tv->getLogicalDomain()[0]);
  EXPECT_EQ(local->toInlineString(),
            "ceilDiv(" + tv->getLogicalDomain()[0]->extent()->toInlineString() + ", 2)");
  EXPECT_EQ(localExtent(tv, tv->getLogicalDomain()[1]), tv->getLogicalDomain()[1]->extent());
}

TEST_F(ShardingTest, LocalExtentRoundsUp) {
  TensorView* tv = shardedTensor({7, 4}, DeviceMesh({0, 1, 2}), 0);
  EXPECT_EQ(localExtent(tv, tv->getLogicalDomain()[0])->as<Scalar>()->constInt(), 3);
}

TEST_F(ShardingTest, TensorWithoutMeshIsUnsharded) {
  TensorView* tv = makeContigConcreteTensor({8, 4});
  EXPECT_FALSE(isSharded(tv));
  EXPECT_EQ(getShardedLogicalAxis(tv, ParallelType::DIDx), -1);
  EXPECT_EQ(numDevices(tv, ParallelType::DIDx), 1);
  EXPECT_EQ(shardingOf(tv).toString(), "no mesh");
}

TEST_F(ShardingTest, ShardedAxisIsCountedInShapeDims) {
  TensorView* in = shardedTensor({8, 4, 6}, mesh2_, -1);
  TensorView* out = sum(in, {0});
  out->setDeviceMesh(mesh2_);
  out->axis(2)->parallelize(ParallelType::DIDx);
  // Logical [r, i, i]: the third logical axis is the second dim of the shape.
  EXPECT_EQ(getShardedLogicalAxis(out, ParallelType::DIDx), 1);
  EXPECT_EQ(shardingOf(out).axisOf(ParallelType::DIDx), 2);
}

TEST_F(ShardingTest, TwoDimensionalMesh) {
  TensorView* tv = makeContigConcreteTensor({4, 6});
  tv->setDeviceMesh(DeviceMesh({0, 1, 2, 3, 4, 5}, {2, 3}));
  tv->axis(0)->parallelize(ParallelType::DIDy);
  tv->axis(1)->parallelize(ParallelType::DIDx);
  EXPECT_EQ(getShardedLogicalAxis(tv, ParallelType::DIDy), 0);
  EXPECT_EQ(getShardedLogicalAxis(tv, ParallelType::DIDx), 1);
  EXPECT_EQ(numDevices(tv, ParallelType::DIDy), 2);
  EXPECT_EQ(numDevices(tv, ParallelType::DIDx), 3);
  std::vector<Val*> shape = localShape(tv);
  EXPECT_EQ(shape[0]->as<Scalar>()->constInt(), 2);
  EXPECT_EQ(shape[1]->as<Scalar>()->constInt(), 2);
}

TEST_F(ShardingTest, MalformedShardingsNameTheTensor) {
  TensorView* no_mesh = makeContigConcreteTensor({8, 4});
  no_mesh->axis(0)->parallelize(ParallelType::DIDx);
  EXPECT_HOSTIR_ERROR(validateSharding(no_mesh),
                      {no_mesh->toInlineString(), "no device mesh", "setDeviceMesh"});

  TensorView* didy_on_1d = shardedTensor({8, 4}, mesh2_, -1);
  didy_on_1d->axis(0)->parallelize(ParallelType::DIDy);
  EXPECT_HOSTIR_ERROR(validateSharding(didy_on_1d), {didy_on_1d->toInlineString(), "1-D"});

  TensorView* twice = shardedTensor({8, 4}, mesh2_, 0);
  twice->axis(1)->parallelize(ParallelType::DIDx);
  EXPECT_HOSTIR_ERROR(validateSharding(twice), {twice->toInlineString(), "two axes"});

  TensorView* wrong_factor = shardedTensor({8, 4}, mesh2_, -1);
  wrong_factor->split(0, 4, /*inner_split=*/false);
  wrong_factor->axis(0)->parallelize(ParallelType::DIDx);
  EXPECT_HOSTIR_ERROR(validateSharding(wrong_factor),
                      {wrong_factor->toInlineString(), "extent 4", "DeviceMesh{0 1}", "2 devices"});

  TensorView* inner_part = shardedTensor({8, 4}, mesh2_, -1);
  inner_part->split(0, 2, /*inner_split=*/false);
  inner_part->axis(1)->parallelize(ParallelType::DIDx);
  EXPECT_HOSTIR_ERROR(validateSharding(inner_part),
                      {inner_part->toInlineString(), "outer part of a Split"});
}

TEST_F(ShardingTest, PointwiseWithSameShardingDoesNotReshard) {
  TensorView* a = shardedTensor({8, 4}, mesh2_, 0);
  TensorView* b = shardedTensor({8, 4}, mesh2_, 0);
  TensorView* c = sharded(add(a, b), mesh2_, 0);
  EXPECT_FALSE(isResharding(c->definition()));
}

TEST_F(ShardingTest, BroadcastOperandDoesNotReshard) {
  TensorView* a = shardedTensor({8, 4}, mesh2_, 0);
  TensorView* b = shardedTensor({1, 4}, mesh2_, -1);
  TensorView* c = sharded(add(a, b), mesh2_, 0);
  EXPECT_FALSE(isResharding(c->definition()));
}

TEST_F(ShardingTest, SetChangingShardingOrMeshReshards) {
  TensorView* a = shardedTensor({8, 4}, mesh2_, -1);
  TensorView* scattered = sharded(set(a), mesh2_, 0);
  EXPECT_TRUE(isResharding(scattered->definition()));
  TensorView* moved = sharded(set(a), DeviceMesh({2, 3}), -1);
  EXPECT_TRUE(isResharding(moved->definition()));
  EXPECT_EQ(involvedDevices(moved->definition()), (std::vector<int64_t>{0, 1, 2, 3}));
  TensorView* copy = sharded(set(a), mesh2_, -1);
  EXPECT_FALSE(isResharding(copy->definition()));
}

TEST_F(ShardingTest, ReductionReshardsOnlyOverTheShardedAxis) {
  TensorView* a = shardedTensor({8, 4}, mesh2_, 0);
  TensorView* over_sharded = sharded(sum(a, {0}), mesh2_, -1);
  EXPECT_TRUE(isResharding(over_sharded->definition()));
  TensorView* over_other = sharded(sum(a, {1}), mesh2_, 0);
  EXPECT_FALSE(isResharding(over_other->definition()));
}

TEST_F(ShardingTest, LinearRolesDecideResharding) {
  // Column-parallel: weight sharded on N, output sharded on N.
  TensorView* x = shardedTensor({8, 16}, mesh2_, -1);
  TensorView* w_col = shardedTensor({6, 16}, mesh2_, 0);
  TensorView* column = sharded(linear(x, w_col), mesh2_, 1);
  EXPECT_FALSE(isResharding(column->definition()));
  // Row-parallel: K sharded on both operands: a partial sum per device.
  TensorView* x_row = shardedTensor({8, 16}, mesh2_, 1);
  TensorView* w_row = shardedTensor({6, 16}, mesh2_, 1);
  TensorView* row = sharded(linear(x_row, w_row), mesh2_, -1);
  EXPECT_TRUE(isResharding(row->definition()));
}

TEST_F(ShardingTest, MatmulRolesDecideResharding) {
  TensorView* a = shardedTensor({8, 16}, mesh2_, 0);
  TensorView* b = shardedTensor({16, 6}, mesh2_, -1);
  TensorView* rows = sharded(matmul(a, b), mesh2_, 0);
  EXPECT_FALSE(isResharding(rows->definition()));
  TensorView* gathered = sharded(matmul(a, b), mesh2_, -1);
  EXPECT_TRUE(isResharding(gathered->definition()));
}

TEST_F(ShardingTest, ExprsWithoutMeshesNeverReshard) {
  TensorView* a = makeContigConcreteTensor({8, 4});
  TensorView* b = relu(a);
  EXPECT_FALSE(isResharding(b->definition()));
  EXPECT_TRUE(involvedDevices(b->definition()).empty());
}

TEST_F(ShardingTest, DescribeShardingsNamesEveryOperand) {
  TensorView* a = shardedTensor({8, 4}, mesh2_, 0);
  TensorView* b = sharded(set(a), mesh2_, -1);
  EXPECT_TRUE(
      containsAll(describeShardings(b->definition()),
                  {a->toInlineString(), "DeviceMesh{0 1} with logical axis 0 on deviceIdx.x",
                   b->toInlineString(), "DeviceMesh{0 1} unsharded"}));
}

}  // namespace hostir::test
