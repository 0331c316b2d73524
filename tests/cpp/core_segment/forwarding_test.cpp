// Forwarding: cheap chains from fusion inputs and factory ops are recomputed
// in each segment that reads them.

#include "hostir/segment/forwarding.h"
#include "hostir/ir/ops.h"
#include "segment_test_utils.h"

namespace hostir::test {
namespace {

using Names = std::vector<std::vector<std::string>>;

TEST_F(SegmentTest, FullIsRecomputedInEachSegmentThatReadsIt) {
  TensorView* x = makeContigConcreteTensor({4, 8});
  TensorView* y = makeContigConcreteTensor({4, 8});
  fusion_.addInput(x);
  fusion_.addInput(y);
  TensorView* t = full({constant(4), constant(8)}, IrBuilder::create<Scalar>(2.0), DataType::Float);
  TensorView* a = add(x, t);
  TensorView* b = mul(y, t);
  fusion_.addOutput(a);
  fusion_.addOutput(b);

  auto segmented = segmentForHost(fusion_);

  EXPECT_EQ(groupOpNames(*segmented), (Names{{"full", "add"}, {"full", "mul"}}));
  for (const SegmentedGroup* group : segmented->runOrder()) {
    EXPECT_FALSE(containsVal(group->inputs(), t)) << group->toString();
    EXPECT_FALSE(containsVal(group->outputs(), t)) << group->toString();
    EXPECT_TRUE(group->producers().empty());
    EXPECT_EQ(group->forwardedExprs(), (std::vector<Expr*>{t->definition()}));
    EXPECT_TRUE(group->isForwarded(t->definition()));
    EXPECT_FALSE(group->isForwarded(group->exprs().back()));

    auto segment = segmented->makeFusion(group);
    EXPECT_EQ(countExprs<FullOp>(*segment), 1);
    EXPECT_EQ(segment->inputs().size(), 1u);
  }
  EXPECT_EQ(segmented->runOrder()[0]->inputs(), (std::vector<Val*>{x}));
  EXPECT_EQ(segmented->runOrder()[1]->inputs(), (std::vector<Val*>{y}));
  EXPECT_TRUE(segmented->isForwarded(t->definition()));
  EXPECT_EQ(segmented->groupOf(t->definition()), nullptr);
  EXPECT_TRUE(containsAll(segmented->toString(), {"// forwarded"}));
}

TEST_F(SegmentTest, WithoutForwardingFullIsPassedThroughMemory) {
  TensorView* x = makeContigConcreteTensor({4});
  TensorView* y = makeContigConcreteTensor({4});
  fusion_.addInput(x);
  fusion_.addInput(y);
  TensorView* t = zeros({constant(4)});
  fusion_.addOutput(add(x, t));
  fusion_.addOutput(mul(y, t));

  SegmentOptions options;
  options.should_merge = hostLoweringMergePolicy(aloneWithBinaryOps);
  options.forward_cheap_chains = false;
  auto segmented = SegmentCandidateFinder::segment(&fusion_, options);

  EXPECT_EQ(groupOpNames(*segmented), (Names{{"full"}, {"add"}, {"mul"}}));
  EXPECT_EQ(segmented->runOrder()[0]->outputs(), (std::vector<Val*>{t}));
  EXPECT_TRUE(containsVal(segmented->runOrder()[1]->inputs(), t));
}

// Forwarding never splits what would merge anyway.
TEST_F(SegmentTest, ForwardedChainMergesNormallyWhenThePolicyAllows) {
  TensorView* x = makeContigConcreteTensor({4});
  TensorView* y = makeContigConcreteTensor({4});
  fusion_.addInput(x);
  fusion_.addInput(y);
  TensorView* t = ones({constant(4)});
  fusion_.addOutput(add(x, t));
  fusion_.addOutput(mul(y, t));

  auto segmented = SegmentCandidateFinder::segment(&fusion_);
  EXPECT_EQ(groupOpNames(*segmented), (Names{{"full", "add", "mul"}}));
}

TEST_F(SegmentTest, UnaryChainFromAFusionInputIsRecomputedInEachReader) {
  TensorView* x = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  TensorView* z = makeContigTensor(2);
  fusion_.addInput(x);
  fusion_.addInput(y);
  fusion_.addInput(z);
  TensorView* u = abs(neg(x));
  TensorView* a = add(u, y);
  TensorView* b = mul(u, z);
  fusion_.addOutput(a);
  fusion_.addOutput(b);

  auto segmented = segmentForHost(fusion_);

  EXPECT_EQ(groupOpNames(*segmented), (Names{{"neg", "abs", "add"}, {"neg", "abs", "mul"}}));
  EXPECT_EQ(segmented->runOrder()[0]->inputs(), (std::vector<Val*>{x, y}));
  EXPECT_EQ(segmented->runOrder()[1]->inputs(), (std::vector<Val*>{x, z}));
  EXPECT_EQ(segmented->runOrder()[0]->outputs(), (std::vector<Val*>{a}));
  EXPECT_EQ(segmented->runOrder()[1]->outputs(), (std::vector<Val*>{b}));
  auto segment = segmented->makeFusion(segmented->runOrder()[1]);
  EXPECT_EQ(countExprs<UnaryOp>(*segment), 2);
  EXPECT_EQ(countExprs<BinaryOp>(*segment), 1);
  EXPECT_EQ(segment->inputs().size(), 2u);
}

// A broadcast of a fusion input is forwarded too.
TEST_F(SegmentTest, BroadcastOfAFusionInputIsForwarded) {
  TensorView* bias = makeContigTensor(1);
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(bias);
  fusion_.addInput(x);
  TensorView* row = broadcast(bias, {true, false});
  fusion_.addOutput(add(set(x), row));

  auto segmented = segmentForHost(fusion_);
  EXPECT_EQ(groupOpNames(*segmented), (Names{{"Set"}, {"broadcast", "add"}}));
  EXPECT_TRUE(containsVal(segmented->runOrder()[1]->inputs(), bias));
}

// Something must compute a fusion output once: an op producing one is not
// forwarded, nor is what is computed from it; what comes before still is.
TEST_F(SegmentTest, ChainProducingAFusionOutputIsNotForwarded) {
  TensorView* x = makeContigTensor(1);
  TensorView* y = makeContigTensor(1);
  fusion_.addInput(x);
  fusion_.addInput(y);
  TensorView* u = neg(x);
  TensorView* v = relu(u);  // a fusion output
  TensorView* w = exp(v);
  fusion_.addOutput(v);
  fusion_.addOutput(add(w, y));

  std::vector<Expr*> exprs = fusion_.exprs();
  auto forwarded = findForwardedExprs(fusion_, exprs);
  EXPECT_EQ(forwarded.size(), 1u);
  EXPECT_TRUE(forwarded.count(u->definition()));

  auto segmented = segmentForHost(fusion_);
  EXPECT_EQ(groupOpNames(*segmented), (Names{{"neg", "relu", "exp"}, {"add"}}));
  EXPECT_EQ(segmented->runOrder()[0]->outputs(), (std::vector<Val*>{v, w}));
}

// Only cheap ops are forwarded: a Set of a fusion input is not.
TEST_F(SegmentTest, OnlyCheapOpsAreForwardable) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  EXPECT_TRUE(isForwardableOp(neg(x)->definition()));
  EXPECT_TRUE(isForwardableOp(broadcast(x, {false, true, false})->definition()));
  EXPECT_TRUE(isForwardableOp(zeros({constant(2)})->definition()));
  EXPECT_FALSE(isForwardableOp(set(x)->definition()));
  EXPECT_FALSE(isForwardableOp(permute(x, {1, 0})->definition()));
  EXPECT_FALSE(isForwardableOp(add(x, x)->definition()));
}

// A full whose size comes from another tensor's extent takes that extent as
// a scalar input where the tensor is not an input.
TEST_F(SegmentTest, ForwardedFullTakesItsSymbolicExtentsAsScalarInputs) {
  TensorView* x = makeContigTensor(1);
  TensorView* y = makeContigTensor(1);
  fusion_.addInput(x);
  fusion_.addInput(y);
  Val* n = x->axis(0)->extent();
  TensorView* t = full({n}, IrBuilder::create<Scalar>(1.0), DataType::Float);
  fusion_.addOutput(add(x, t));
  fusion_.addOutput(mul(set(y), t));

  auto segmented = segmentForHost(fusion_);
  ASSERT_EQ(groupOpNames(*segmented), (Names{{"full", "add"}, {"Set"}, {"full", "mul"}}));
  EXPECT_EQ(segmented->runOrder()[0]->inputs(), (std::vector<Val*>{x}));
  const SegmentedGroup* mul_group = segmented->runOrder()[2];
  ASSERT_EQ(mul_group->inputs().size(), 2u);
  EXPECT_EQ(mul_group->inputs()[0], n);
  auto segment = segmented->makeFusion(mul_group);
  EXPECT_EQ(segment->inputs()[0]->vtype(), ValType::Scalar);
  EXPECT_EQ(countExprs<FullOp>(*segment), 1);
}

}  // namespace
}  // namespace hostir::test
