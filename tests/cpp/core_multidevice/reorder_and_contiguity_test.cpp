#include <gtest/gtest.h>

#include "common/scoped_env.h"
#include "hostir/host_ir/passes/pass_registry.h"
#include "hostir/ir/arith.h"
#include "hostir/multidevice/communication_plan.h"
#include "hostir/multidevice/presegmentation_passes.h"
#include "hostir/multidevice/sharding.h"
#include "multidevice_test_utils.h"

namespace hostir::test {

using ReorderShardedAxisTest = MultiDeviceTest;
using Kinds = std::vector<std::string>;

TEST_F(ReorderShardedAxisTest, InnerShardedAxisMovesToTheFrontAndBack) {
  TensorView* a = shardedTensor({4, 6}, mesh2_, 1);
  fusion_.addInput(a);
  TensorView* b = sharded(set(a), mesh2_, -1);
  fusion_.addOutput(b);

  reorderShardedAxis(&fusion_);

  EXPECT_EQ(exprKinds(fusion_), (Kinds{"PermuteOp", "LoadStoreOp", "PermuteOp"}));
  auto* permute_back = b->definition()->as<PermuteOp>();
  EXPECT_EQ(permute_back->dims(), (std::vector<int64_t>{1, 0}));
  Expr* gather = permute_back->in()->definition();
  auto* front = gather->input(0)->as<TensorView>();
  EXPECT_EQ(getShardedLogicalAxis(front, ParallelType::DIDx), 0);
  EXPECT_EQ(constExtent(front->getLogicalDomain()[0]), 6);
  EXPECT_EQ(front->definition()->input(0), a);
  EXPECT_FALSE(isResharding(front->definition()));
  EXPECT_FALSE(isResharding(permute_back));
  CommunicationPlan plan = classifyResharding(gather);
  EXPECT_EQ(plan.type, CollectiveType::Allgather);
  EXPECT_EQ(plan.scattered_axis, 0);
  EXPECT_EQ(fusion_.outputs(), (std::vector<Val*>{b}));
}

TEST_F(ReorderShardedAxisTest, ScatterOntoAnInnerAxisIsReorderedToo) {
  TensorView* a = shardedTensor({4, 6, 2}, mesh2_, -1);
  fusion_.addInput(a);
  TensorView* b = sharded(set(a), mesh2_, 1);
  fusion_.addOutput(b);

  reorderShardedAxis(&fusion_);

  EXPECT_EQ(exprKinds(fusion_), (Kinds{"PermuteOp", "LoadStoreOp", "PermuteOp"}));
  Expr* scatter = b->definition()->input(0)->definition();
  EXPECT_EQ(getShardedLogicalAxis(scatter->output(0)->as<TensorView>(), ParallelType::DIDx), 0);
  EXPECT_EQ(classifyResharding(scatter).type, CollectiveType::Scatter);
  EXPECT_EQ(getShardedLogicalAxis(b, ParallelType::DIDx), 1);
}

TEST_F(ReorderShardedAxisTest, OutermostAxisAndBroadcastPrefixAreLeftAlone) {
  TensorView* a = shardedTensor({4, 6}, mesh2_, 0);
  TensorView* c = shardedTensor({1, 6}, mesh2_, 1);
  fusion_.addInput(a);
  fusion_.addInput(c);
  TensorView* b = sharded(set(a), mesh2_, -1);
  TensorView* d = sharded(set(c), mesh2_, -1);
  fusion_.addOutput(b);
  fusion_.addOutput(d);

  reorderShardedAxis(&fusion_);

  EXPECT_EQ(exprKinds(fusion_), (Kinds{"LoadStoreOp", "LoadStoreOp"}));
}

TEST_F(ReorderShardedAxisTest, CommunicatedBuffersBecomeContiguous) {
  TensorView* a = makeConcreteTensor({4, 6});  // any strides
  sharded(a, mesh2_, 0);
  fusion_.addInput(a);
  TensorView* b = sharded(set(a), mesh2_, -1);
  TensorView* c = relu(b);
  fusion_.addOutput(c);

  runPresegmentationPasses(&fusion_);

  for (TensorView* tv : {a, b}) {
    EXPECT_TRUE(tv->domain()->hasAllocation()) << tv->toString();
    EXPECT_EQ(tv->domain()->contiguity(), (std::vector<bool>{true, true})) << tv->toString();
  }
  EXPECT_FALSE(c->domain()->hasAllocation());
}

TEST_F(ReorderShardedAxisTest, PassesCanBeDisabledByName) {
  TensorView* a = shardedTensor({4, 6}, mesh2_, 1);
  fusion_.addInput(a);
  TensorView* b = sharded(set(a), mesh2_, -1);
  fusion_.addOutput(b);
  {
    ScopedEnv disable("HOSTIR_DISABLE_PASS", "reorder_sharded_axis");
    runPresegmentationPasses(&fusion_);
  }
  EXPECT_EQ(exprKinds(fusion_), (Kinds{"LoadStoreOp"}));
}

}  // namespace hostir::test
