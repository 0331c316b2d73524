// The host lowering's policy: host-lowerable ops alone, the rest merged.

#include "hostir/ir/ops.h"
#include "segment_test_utils.h"

namespace hostir::test {
namespace {

using Names = std::vector<std::vector<std::string>>;

TEST_F(SegmentTest, HostLowerableOps) {
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  fusion_.addInput(x);
  fusion_.addInput(w);
  auto is_host_lowerable = [](TensorView* tv) { return isHostLowerable(tv->definition()); };

  EXPECT_TRUE(is_host_lowerable(set(x)));
  EXPECT_TRUE(is_host_lowerable(matmul(x, w)));
  EXPECT_TRUE(is_host_lowerable(linear(x, w)));
  EXPECT_TRUE(is_host_lowerable(select(x, 0, 1)));
  EXPECT_TRUE(is_host_lowerable(slice(x, 0, 0, 1)));

  // Pointwise ops and reductions merge into segments, which compile into
  // kernels (docs/kernels.md).
  EXPECT_FALSE(is_host_lowerable(add(x, w)));
  EXPECT_FALSE(is_host_lowerable(sum(x, {0})));
  EXPECT_FALSE(is_host_lowerable(neg(x)));
  EXPECT_FALSE(is_host_lowerable(castOp(DataType::Half, x)));
  EXPECT_FALSE(is_host_lowerable(broadcast(x, {true, false, false})));
  EXPECT_FALSE(is_host_lowerable(permute(x, {1, 0})));
  EXPECT_FALSE(is_host_lowerable(reshape(x, {-1})));
  EXPECT_FALSE(is_host_lowerable(zeros({constant(2)})));
}

TEST_F(SegmentTest, HostPolicyKeepsHostLowerableOpsAloneAndMergesTheRest) {
  TensorView* x = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  fusion_.addInput(x);
  fusion_.addInput(y);
  TensorView* a = set(x);
  TensorView* b = abs(neg(a));
  TensorView* c = add(b, y);
  TensorView* d = permute(exp(relu(c)), {1, 0});
  TensorView* e = sum(d, {0});
  TensorView* f = set(e);
  fusion_.addOutput(f);

  auto segmented = segmentForHost(fusion_);

  EXPECT_EQ(
      groupOpNames(*segmented),
      (Names{{"Set"}, {"neg", "abs"}, {"add"}, {"relu", "exp", "permute"}, {"sum"}, {"Set"}}));
  for (const SegmentedGroup* group : segmented->runOrder()) {
    int64_t host_lowerable = std::count_if(group->exprs().begin(), group->exprs().end(),
                                           [](const Expr* expr) { return isHostLowerable(expr); });
    EXPECT_TRUE(host_lowerable == 0 || group->exprs().size() == 1) << group->toString();
  }
}

// Two host-lowerable ops next to each other stay in two groups.
TEST_F(SegmentTest, HostPolicyDoesNotMergeTwoHostLowerableOps) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  fusion_.addOutput(set(set(x)));
  auto segmented = segmentForHost(fusion_);
  EXPECT_EQ(groupOpNames(*segmented), (Names{{"Set"}, {"Set"}}));
  EXPECT_EQ(segmented->runOrder()[1]->producers(),
            (std::vector<SegmentedGroup*>{segmented->runOrder()[0]}));
}

}  // namespace
}  // namespace hostir::test
