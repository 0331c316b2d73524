#include <gtest/gtest.h>

#include "hostir/ir/arith.h"
#include "hostir/multidevice/communication_plan.h"
#include "hostir/multidevice/sharding.h"
#include "multidevice_test_utils.h"

namespace hostir::test {

using CommunicationPlanTest = MultiDeviceTest;
using Devices = std::vector<int64_t>;

TEST_F(CommunicationPlanTest, SetUnshardedToShardedIsScatter) {
  DeviceMesh mesh({0, 1, 2});
  TensorView* a = shardedTensor({6, 4}, mesh, -1);
  TensorView* b = sharded(set(a), mesh, 0);
  CommunicationPlan plan = classifyResharding(b->definition());
  EXPECT_EQ(plan.pattern, ReshardingPattern::Set);
  EXPECT_EQ(plan.type, CollectiveType::Scatter);
  ASSERT_EQ(plan.collectives.size(), 1u);
  EXPECT_EQ(plan.collectives[0].team, (Devices{0, 1, 2}));
  EXPECT_EQ(plan.collectives[0].root, 0);
  EXPECT_EQ(plan.scattered_axis, 0);
}

TEST_F(CommunicationPlanTest, SetShardedToUnshardedOnOneMeshIsAllgather) {
  TensorView* a = shardedTensor({4, 6}, mesh2_, 0);
  TensorView* b = sharded(set(a), mesh2_, -1);
  CommunicationPlan plan = classifyResharding(b->definition());
  EXPECT_EQ(plan.type, CollectiveType::Allgather);
  EXPECT_EQ(plan.parallel_type, ParallelType::DIDx);
  ASSERT_EQ(plan.collectives.size(), 1u);
  EXPECT_EQ(plan.collectives[0].team, (Devices{0, 1}));
  EXPECT_EQ(plan.collectives[0].root, -1);
  EXPECT_EQ(plan.scattered_axis, 0);
  EXPECT_FALSE(plan.reduce_op.has_value());
}

TEST_F(CommunicationPlanTest, SetShardedToAnotherMeshIsOneGatherPerReceiver) {
  TensorView* a = shardedTensor({4, 6}, mesh2_, 0);
  TensorView* b = sharded(set(a), DeviceMesh({2, 3}), -1);
  CommunicationPlan plan = classifyResharding(b->definition());
  EXPECT_EQ(plan.type, CollectiveType::Gather);
  ASSERT_EQ(plan.collectives.size(), 2u);
  EXPECT_EQ(plan.collectives[0].team, (Devices{0, 1, 2}));
  EXPECT_EQ(plan.collectives[0].root, 2);
  EXPECT_EQ(plan.collectives[1].team, (Devices{0, 1, 3}));
  EXPECT_EQ(plan.collectives[1].root, 3);
  EXPECT_EQ(plan.collectivesFor(0).size(), 2u);
  EXPECT_EQ(plan.collectivesFor(3).size(), 1u);
  EXPECT_TRUE(plan.collectivesFor(5).empty());
}

// A collective that moves blocks gives block i to the i-th member of its
// team, and device d holds block mesh.idxOf(d): teams list a sharded mesh
// in mesh order, not sorted (found by the sharded fuzzer, issue 11).
TEST_F(CommunicationPlanTest, TeamsOfAReversedMeshAreInMeshOrder) {
  const DeviceMesh reversed({1, 0});
  TensorView* a = shardedTensor({4, 6}, mesh2_, -1);
  TensorView* scattered = sharded(set(a), reversed, 0);
  TensorView* gathered = sharded(set(scattered), reversed, -1);
  TensorView* onto_two = sharded(set(scattered), DeviceMesh({2}), -1);
  CommunicationPlan scatter = classifyResharding(scattered->definition());
  EXPECT_EQ(scatter.type, CollectiveType::Scatter);
  ASSERT_EQ(scatter.collectives.size(), 1u);
  EXPECT_EQ(scatter.collectives[0].team, (Devices{1, 0}));
  CommunicationPlan allgather = classifyResharding(gathered->definition());
  EXPECT_EQ(allgather.type, CollectiveType::Allgather);
  ASSERT_EQ(allgather.collectives.size(), 1u);
  EXPECT_EQ(allgather.collectives[0].team, (Devices{1, 0}));
  CommunicationPlan gather = classifyResharding(onto_two->definition());
  EXPECT_EQ(gather.type, CollectiveType::Gather);
  ASSERT_EQ(gather.collectives.size(), 1u);
  EXPECT_EQ(gather.collectives[0].team, (Devices{1, 0, 2}));
}

TEST_F(CommunicationPlanTest, SetBetweenMeshesWithTheSameShardingIsSendRecvPerShard) {
  TensorView* a = shardedTensor({4, 6}, mesh2_, 0);
  TensorView* b = sharded(set(a), DeviceMesh({2, 3}), 0);
  CommunicationPlan plan = classifyResharding(b->definition());
  EXPECT_EQ(plan.type, CollectiveType::SendRecv);
  ASSERT_EQ(plan.collectives.size(), 2u);
  EXPECT_EQ(plan.collectives[0].root, 0);
  EXPECT_EQ(plan.collectives[0].receiver, 2);
  EXPECT_EQ(plan.collectives[0].team, (Devices{0, 2}));
  EXPECT_EQ(plan.collectives[1].root, 1);
  EXPECT_EQ(plan.collectives[1].receiver, 3);
}

TEST_F(CommunicationPlanTest, SetOfAnUnshardedTensorToAnotherMeshIsBroadcast) {
  TensorView* a = shardedTensor({4, 6}, DeviceMesh({0}), -1);
  TensorView* b = sharded(set(a), DeviceMesh({1, 2}), -1);
  CommunicationPlan plan = classifyResharding(b->definition());
  EXPECT_EQ(plan.type, CollectiveType::Broadcast);
  ASSERT_EQ(plan.collectives.size(), 1u);
  EXPECT_EQ(plan.collectives[0].root, 0);
  EXPECT_EQ(plan.collectives[0].team, (Devices{0, 1, 2}));
}

TEST_F(CommunicationPlanTest, BroadcastPrefersASenderThatAlsoReceives) {
  TensorView* a = shardedTensor({4, 6}, DeviceMesh({0, 1}), -1);
  TensorView* b = sharded(set(a), DeviceMesh({1, 2}), -1);
  CommunicationPlan plan = classifyResharding(b->definition());
  EXPECT_EQ(plan.collectives[0].root, 1);
  EXPECT_EQ(plan.collectives[0].team, (Devices{1, 2}));
}

TEST_F(CommunicationPlanTest, SetFromOneDeviceToAShardedMeshIsScatter) {
  TensorView* a = shardedTensor({4, 6}, DeviceMesh({0}), -1);
  TensorView* b = sharded(set(a), DeviceMesh({1, 2}), 1);
  CommunicationPlan plan = classifyResharding(b->definition());
  EXPECT_EQ(plan.type, CollectiveType::Scatter);
  EXPECT_EQ(plan.collectives[0].root, 0);
  // The receiving mesh in mesh order, then the root, which receives nothing.
  EXPECT_EQ(plan.collectives[0].team, (Devices{1, 2, 0}));
  EXPECT_EQ(plan.scattered_axis, 1);
}

TEST_F(CommunicationPlanTest, ReductionOverShardedAxisWithShardedOutputIsReduceScatter) {
  TensorView* a = shardedTensor({2, 6}, mesh2_, 0);
  TensorView* s = sharded(sum(a, {0}), mesh2_, 1);
  CommunicationPlan plan = classifyResharding(s->definition());
  EXPECT_EQ(plan.pattern, ReshardingPattern::ReductionOverShardedAxis);
  EXPECT_EQ(plan.type, CollectiveType::ReduceScatter);
  EXPECT_EQ(plan.reduce_op, ReductionOpType::Sum);
  EXPECT_EQ(plan.reduced_axis, 0);
  EXPECT_EQ(plan.scattered_axis, 0);  // the output's shape is [6]
  EXPECT_EQ(plan.collectives[0].team, (Devices{0, 1}));
}

TEST_F(CommunicationPlanTest, ReductionOverShardedAxisWithUnshardedOutputIsAllreduce) {
  TensorView* a = shardedTensor({4, 2}, mesh2_, 1);
  TensorView* s = sharded(max(a, {1}), mesh2_, -1);
  CommunicationPlan plan = classifyResharding(s->definition());
  EXPECT_EQ(plan.type, CollectiveType::Allreduce);
  EXPECT_EQ(plan.reduce_op, ReductionOpType::Max);
  EXPECT_EQ(plan.reduced_axis, 1);
  EXPECT_EQ(plan.scattered_axis, -1);
}

TEST_F(CommunicationPlanTest, ReductionOverShardedAxisOntoAnotherMeshIsReduce) {
  TensorView* a = shardedTensor({2, 6}, mesh2_, 0);
  TensorView* s = sharded(sum(a, {0}), DeviceMesh({2}), -1);
  CommunicationPlan plan = classifyResharding(s->definition());
  EXPECT_EQ(plan.type, CollectiveType::Reduce);
  ASSERT_EQ(plan.collectives.size(), 1u);
  EXPECT_EQ(plan.collectives[0].root, 2);
  EXPECT_EQ(plan.collectives[0].team, (Devices{0, 1, 2}));
}

TEST_F(CommunicationPlanTest, MatmulContractingShardedKIsPartialThenAllreduce) {
  TensorView* a = shardedTensor({8, 16}, mesh2_, 1);
  TensorView* b = shardedTensor({16, 6}, mesh2_, 0);
  TensorView* c = sharded(matmul(a, b), mesh2_, -1);
  CommunicationPlan plan = classifyResharding(c->definition());
  EXPECT_EQ(plan.pattern, ReshardingPattern::ShardedContraction);
  EXPECT_EQ(plan.type, CollectiveType::Allreduce);
  EXPECT_EQ(plan.reduce_op, ReductionOpType::Sum);
}

TEST_F(CommunicationPlanTest, LinearContractingShardedKWithShardedOutputIsReduceScatter) {
  TensorView* x = shardedTensor({8, 16}, mesh2_, 1);
  TensorView* w = shardedTensor({6, 16}, mesh2_, 1);
  TensorView* y = sharded(linear(x, w), mesh2_, 0);
  CommunicationPlan plan = classifyResharding(y->definition());
  EXPECT_EQ(plan.pattern, ReshardingPattern::ShardedContraction);
  EXPECT_EQ(plan.type, CollectiveType::ReduceScatter);
  EXPECT_EQ(plan.scattered_axis, 0);
}

TEST_F(CommunicationPlanTest, RowShardedAWithStreamParallelOutputIsPipelinedAllgather) {
  TensorView* a = shardedTensor({8, 16}, mesh2_, 0);
  TensorView* b = shardedTensor({16, 6}, mesh2_, -1);
  TensorView* c = sharded(matmul(a, b), mesh2_, -1);
  c->split(0, 2);
  c->axis(0)->parallelize(ParallelType::Stream);
  CommunicationPlan plan = classifyResharding(c->definition());
  EXPECT_EQ(plan.pattern, ReshardingPattern::PipelinedAllgatherGemm);
  EXPECT_EQ(plan.type, CollectiveType::Allgather);
  EXPECT_EQ(plan.scattered_axis, 0);
  EXPECT_EQ(plan.stream_axis, 0);
  EXPECT_EQ(plan.collectives[0].team, (Devices{0, 1}));
  EXPECT_TRUE(isLoweredDirectly(c->definition()));
}

TEST_F(CommunicationPlanTest, PipelinedLinearWithBatchedInput) {
  TensorView* x = shardedTensor({3, 8, 16}, mesh2_, 1);
  TensorView* w = shardedTensor({6, 16}, mesh2_, -1);
  TensorView* y = sharded(linear(x, w), mesh2_, -1);
  y->axis(1)->parallelize(ParallelType::Stream);
  CommunicationPlan plan = classifyResharding(y->definition());
  EXPECT_EQ(plan.pattern, ReshardingPattern::PipelinedAllgatherGemm);
  EXPECT_EQ(plan.scattered_axis, 1);
  EXPECT_EQ(plan.stream_axis, 1);
}

TEST_F(CommunicationPlanTest, AllgatherAlongOneDimensionOfA2DMeshHasOneTeamPerSlice) {
  DeviceMesh mesh({0, 1, 2, 3}, {2, 2});
  TensorView* a = makeContigConcreteTensor({4, 6});
  a->setDeviceMesh(mesh);
  a->axis(0)->parallelize(ParallelType::DIDy);
  a->axis(1)->parallelize(ParallelType::DIDx);
  TensorView* b = set(a);
  b->setDeviceMesh(mesh);
  b->axis(0)->parallelize(ParallelType::DIDy);
  CommunicationPlan plan = classifyResharding(b->definition());
  EXPECT_EQ(plan.type, CollectiveType::Allgather);
  EXPECT_EQ(plan.parallel_type, ParallelType::DIDx);
  EXPECT_EQ(plan.scattered_axis, 1);
  ASSERT_EQ(plan.collectives.size(), 2u);
  EXPECT_EQ(plan.collectives[0].team, (Devices{0, 1}));
  EXPECT_EQ(plan.collectives[1].team, (Devices{2, 3}));
  ASSERT_EQ(plan.collectivesFor(3).size(), 1u);
  EXPECT_EQ(plan.collectivesFor(3)[0].team, (Devices{2, 3}));
}

TEST_F(CommunicationPlanTest, AllToAllIsRejectedNamingTheShardings) {
  TensorView* a = shardedTensor({4, 6}, mesh2_, 0);
  TensorView* b = sharded(set(a), mesh2_, 1);
  EXPECT_HOSTIR_ERROR(classifyResharding(b->definition()),
                      {"cannot lower", b->toInlineString(), a->toInlineString(),
                       "DeviceMesh{0 1} with logical axis 0 on deviceIdx.x",
                       "DeviceMesh{0 1} with logical axis 1 on deviceIdx.x", "all-to-all"});
}

TEST_F(CommunicationPlanTest, ComputeThatAlsoReshardsIsRejected) {
  TensorView* a = shardedTensor({4, 6}, mesh2_, 0);
  TensorView* c = sharded(relu(a), mesh2_, -1);
  EXPECT_HOSTIR_ERROR(classifyResharding(c->definition()),
                      {"cannot lower", "relu", c->toInlineString(), "computes and reshards",
                       "runPresegmentationPasses"});
}

TEST_F(CommunicationPlanTest, RowParallelLinearWithBiasIsRejected) {
  TensorView* x = shardedTensor({8, 16}, mesh2_, 1);
  TensorView* w = shardedTensor({6, 16}, mesh2_, 1);
  TensorView* bias = shardedTensor({6}, mesh2_, -1);
  TensorView* y = sharded(linear(x, w, bias), mesh2_, -1);
  EXPECT_HOSTIR_ERROR(classifyResharding(y->definition()), {"linear", "bias"});
}

TEST_F(CommunicationPlanTest, NonReshardingExprIsRejected) {
  TensorView* a = shardedTensor({4, 6}, mesh2_, 0);
  TensorView* b = sharded(set(a), mesh2_, 0);
  EXPECT_HOSTIR_ERROR(classifyResharding(b->definition()), {"does not reshard"});
}

TEST_F(CommunicationPlanTest, PlanPrintsItsFields) {
  TensorView* a = shardedTensor({2, 6}, mesh2_, 0);
  TensorView* s = sharded(sum(a, {0}), mesh2_, -1);
  EXPECT_EQ(classifyResharding(s->definition()).toString(),
            "CommunicationPlan(pattern=ReductionOverShardedAxis, type=Allreduce, "
            "along=deviceIdx.x, reduce_op=sum, reduced_axis=0, collectives={team=(0 1)})");
}

}  // namespace hostir::test
