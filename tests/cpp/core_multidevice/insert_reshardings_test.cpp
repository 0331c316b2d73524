#include <gtest/gtest.h>

#include "hostir/host_ir/passes/pass_registry.h"
#include "hostir/ir/arith.h"
#include "hostir/multidevice/communication_plan.h"
#include "hostir/multidevice/presegmentation_passes.h"
#include "hostir/multidevice/sharding.h"
#include "multidevice_test_utils.h"

namespace hostir::test {

using InsertReshardingsTest = MultiDeviceTest;

using Kinds = std::vector<std::string>;

TEST_F(InsertReshardingsTest, ComputeKeepsInputShardingThenSetReshards) {
  TensorView* a = shardedTensor({8, 4}, mesh2_, 0);
  TensorView* b = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* c = sharded(add(a, b), mesh2_, -1);
  fusion_.addOutput(c);

  insertReshardings(&fusion_);

  EXPECT_EQ(exprKinds(fusion_), (Kinds{"BinaryOp", "LoadStoreOp"}));
  Expr* reshard = c->definition();
  ASSERT_TRUE(reshard->isA<LoadStoreOp>());
  auto* local = reshard->input(0)->as<TensorView>();
  EXPECT_EQ(local->definition()->input(0), a);
  EXPECT_EQ(local->definition()->input(1), b);
  EXPECT_EQ(getShardedLogicalAxis(local, ParallelType::DIDx), 0);
  EXPECT_FALSE(isResharding(local->definition()));
  EXPECT_EQ(classifyResharding(reshard).type, CollectiveType::Allgather);
  EXPECT_EQ(fusion_.outputs(), (std::vector<Val*>{c}));
}

TEST_F(InsertReshardingsTest, DisagreeingInputIsReshardedBefore) {
  TensorView* a = shardedTensor({8, 4}, mesh2_, 0);
  TensorView* b = shardedTensor({8, 4}, mesh2_, -1);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* c = sharded(add(a, b), mesh2_, 0);
  fusion_.addOutput(c);

  insertReshardings(&fusion_);

  EXPECT_EQ(exprKinds(fusion_), (Kinds{"LoadStoreOp", "BinaryOp"}));
  Expr* compute = c->definition();
  EXPECT_EQ(compute->input(0), a);
  auto* b_sharded = compute->input(1)->as<TensorView>();
  EXPECT_EQ(b_sharded->definition()->input(0), b);
  EXPECT_EQ(getShardedLogicalAxis(b_sharded, ParallelType::DIDx), 0);
  EXPECT_FALSE(isResharding(compute));
  EXPECT_EQ(classifyResharding(b_sharded->definition()).type, CollectiveType::Scatter);
}

TEST_F(InsertReshardingsTest, MatmulWithOneShardedKGathersIt) {
  TensorView* a = shardedTensor({8, 16}, mesh2_, 1);
  TensorView* b = shardedTensor({16, 6}, mesh2_, -1);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* c = sharded(matmul(a, b), mesh2_, -1);
  fusion_.addOutput(c);

  insertReshardings(&fusion_);

  EXPECT_EQ(exprKinds(fusion_), (Kinds{"LoadStoreOp", "MatmulOp"}));
  auto* gathered = c->definition()->input(0)->as<TensorView>();
  EXPECT_FALSE(isSharded(gathered));
  EXPECT_EQ(classifyResharding(gathered->definition()).type, CollectiveType::Allgather);
}

TEST_F(InsertReshardingsTest, DirectlyLoweredPatternsStay) {
  TensorView* a = shardedTensor({8, 4}, mesh2_, 0);
  TensorView* x = shardedTensor({8, 16}, mesh2_, 1);
  TensorView* w = shardedTensor({6, 16}, mesh2_, 1);
  for (TensorView* in : {a, x, w}) {
    fusion_.addInput(in);
  }
  TensorView* reduced = sharded(sum(a, {0}), mesh2_, -1);
  TensorView* row_parallel = sharded(linear(x, w), mesh2_, -1);
  TensorView* gathered = sharded(set(a), mesh2_, -1);
  for (TensorView* out : {reduced, row_parallel, gathered}) {
    fusion_.addOutput(out);
  }

  insertReshardings(&fusion_);

  EXPECT_EQ(exprKinds(fusion_), (Kinds{"ReductionOp", "LinearOp", "LoadStoreOp"}));
  EXPECT_TRUE(isLoweredDirectly(reduced->definition()));
  EXPECT_TRUE(isLoweredDirectly(row_parallel->definition()));
  EXPECT_FALSE(isLoweredDirectly(gathered->definition()));
}

TEST_F(InsertReshardingsTest, BiasOfARowParallelLinearIsAddedAfterTheReduction) {
  TensorView* x = shardedTensor({8, 16}, mesh2_, 1);
  TensorView* w = shardedTensor({6, 16}, mesh2_, 1);
  TensorView* bias = shardedTensor({6}, mesh2_, -1);
  for (TensorView* in : {x, w, bias}) {
    fusion_.addInput(in);
  }
  TensorView* out = sharded(linear(x, w, bias), mesh2_, -1);
  fusion_.addOutput(out);

  insertReshardings(&fusion_);

  EXPECT_EQ(exprKinds(fusion_), (Kinds{"LinearOp", "BinaryOp"}));
  Expr* add_bias = out->definition();
  ASSERT_TRUE(add_bias->isA<BinaryOp>());
  EXPECT_EQ(add_bias->input(1), bias);
  EXPECT_FALSE(isResharding(add_bias));
  Expr* product = add_bias->input(0)->definition();
  EXPECT_EQ(product->inputs(), (std::vector<Val*>{x, w}));
  CommunicationPlan plan = classifyResharding(product);
  EXPECT_EQ(plan.pattern, ReshardingPattern::ShardedContraction);
  EXPECT_EQ(plan.type, CollectiveType::Allreduce);
}

TEST_F(InsertReshardingsTest, ReductionOnAnotherMeshWithOtherChangesIsSplit) {
  // Reduces the sharded axis and also moves the kept axis onto a sharding:
  // the reduction keeps the input's layout, a set reshards the result.
  TensorView* a = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(a);
  TensorView* s = sum(a, {0});
  s->setDeviceMesh(DeviceMesh({2, 3}));
  s->axis(1)->parallelize(ParallelType::DIDx);
  fusion_.addOutput(s);

  insertReshardings(&fusion_);

  EXPECT_EQ(exprKinds(fusion_), (Kinds{"ReductionOp", "LoadStoreOp"}));
  Expr* reduction = s->definition()->input(0)->definition();
  EXPECT_EQ(classifyResharding(reduction).type, CollectiveType::Allreduce);
  EXPECT_EQ(classifyResharding(s->definition()).type, CollectiveType::Scatter);
}

TEST_F(InsertReshardingsTest, EveryReshardingExprOfAnMlpClassifies) {
  // Megatron MLP: column-parallel, GELU, row-parallel with a bias.
  TensorView* x = shardedTensor({8, 16}, mesh2_, -1);
  TensorView* w1 = shardedTensor({32, 16}, mesh2_, 0);
  TensorView* b1 = shardedTensor({32}, mesh2_, 0);
  TensorView* w2 = shardedTensor({16, 32}, mesh2_, 1);
  TensorView* b2 = shardedTensor({16}, mesh2_, -1);
  for (TensorView* in : {x, w1, b1, w2, b2}) {
    fusion_.addInput(in);
  }
  TensorView* h = gelu(linear(x, w1, b1));
  TensorView* y = linear(h, w2, b2);
  fusion_.addOutput(y);

  runPresegmentationPasses(&fusion_);

  EXPECT_EQ(exprKinds(fusion_), (Kinds{"LinearOp", "UnaryOp", "LinearOp", "BinaryOp"}));
  int resharding = 0;
  for (Expr* expr : fusion_.exprs()) {
    if (isResharding(expr)) {
      ++resharding;
      EXPECT_EQ(classifyResharding(expr).type, CollectiveType::Allreduce);
    }
  }
  EXPECT_EQ(resharding, 1);
}

}  // namespace hostir::test

namespace hostir::test {

TEST_F(InsertReshardingsTest, PipelinedAllgatherGemmSurvivesThePasses) {
  TensorView* a = shardedTensor({8, 16}, mesh2_, 0);
  TensorView* b = shardedTensor({16, 6}, mesh2_, -1);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* c = matmul(a, b);
  c->setDeviceMesh(mesh2_);
  c->split(0, 2);
  c->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(c);

  runPresegmentationPasses(&fusion_);

  EXPECT_EQ(exprKinds(fusion_), (Kinds{"MatmulOp"}));
  EXPECT_EQ(classifyResharding(c->definition()).pattern, ReshardingPattern::PipelinedAllgatherGemm);
  EXPECT_TRUE(a->domain()->hasAllocation());
  EXPECT_EQ(a->domain()->contiguity(), (std::vector<bool>{true, true}));
}

// Two readers that need one tensor resharded the same way share one set
// (one collective): a backward's dgrad and wgrad both read the gathered
// output grad, the wgrad transposed. A permuted tensor is resharded before
// the permute, so the transposed reader shares the set too.
TEST_F(InsertReshardingsTest, ReadersOfOneReshardingShareOneSetThroughAPermute) {
  TensorView* dy = shardedTensor({8, 4}, mesh2_, 0);  // rows sharded
  TensorView* w = shardedTensor({4, 6}, mesh2_, 1);   // columns sharded
  TensorView* g = shardedTensor({8, 6}, mesh2_, 1);
  fusion_.addInput(dy);
  fusion_.addInput(w);
  fusion_.addInput(g);
  TensorView* dgrad = sharded(matmul(dy, w), mesh2_, 1);
  TensorView* wgrad = sharded(matmul(permute(dy, {1, 0}), g), mesh2_, 1);
  fusion_.addOutput(dgrad);
  fusion_.addOutput(wgrad);

  propagateShardings(&fusion_);  // the transposed dy is sharded on its axis 1
  insertReshardings(&fusion_);

  int64_t sets = 0;
  for (Expr* expr : fusion_.exprs()) {
    sets += expr->isA<LoadStoreOp>() ? 1 : 0;
  }
  EXPECT_EQ(sets, 1) << fusion_.toString();
  auto* gathered = dgrad->definition()->input(0)->as<TensorView>();
  ASSERT_TRUE(gathered->definition()->isA<LoadStoreOp>());
  EXPECT_EQ(gathered->definition()->input(0), dy);
  EXPECT_EQ(classifyResharding(gathered->definition()).type, CollectiveType::Allgather);
  // The wgrad reads the same gathered tensor, transposed after the gather.
  auto* transposed = wgrad->definition()->input(0)->as<TensorView>();
  ASSERT_TRUE(transposed->definition()->isA<PermuteOp>());
  EXPECT_EQ(transposed->definition()->input(0), gathered);
  EXPECT_FALSE(isResharding(wgrad->definition()));
}

}  // namespace hostir::test
