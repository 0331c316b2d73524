// Standalone segment fusions and the segments dump.

#include <cstdlib>

#include "hostir/ir/ops.h"
#include "segment_test_utils.h"

namespace hostir::test {
namespace {

TEST_F(SegmentTest, SegmentFusionHasTheGroupsInputsOutputsAndExprs) {
  TensorView* x = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  fusion_.addInput(x);
  fusion_.addInput(y);
  TensorView* a = set(x);
  TensorView* b = abs(neg(a));
  TensorView* c = add(b, y);
  fusion_.addOutput(c);

  auto segmented = segmentForHost(fusion_);
  const SegmentedGroup* unary_group = segmented->runOrder()[1];
  ASSERT_EQ(opNames(*unary_group), (std::vector<std::string>{"neg", "abs"}));

  std::unique_ptr<Fusion> segment = segmented->makeFusion(unary_group);

  ASSERT_EQ(segment->inputs().size(), 1u);
  ASSERT_EQ(segment->outputs().size(), 1u);
  Val* in = segment->inputs()[0];
  Val* out = segment->outputs()[0];
  EXPECT_NE(in, a);
  EXPECT_EQ(in->container(), segment.get());
  EXPECT_EQ(in->definition(), nullptr);
  EXPECT_TRUE(in->sameAs(in));
  EXPECT_EQ(in->as<TensorView>()->rank(), 2);
  ASSERT_NE(out->definition(), nullptr);
  EXPECT_TRUE(out->definition()->isA<UnaryOp>());
  EXPECT_EQ(out->definition()->displayName(), "abs");
  EXPECT_EQ(countExprs<UnaryOp>(*segment), 2);
  EXPECT_EQ(segment->exprs().size(), 2u);

  // The complete fusion is untouched.
  EXPECT_EQ(fusion_.exprs().size(), 4u);
  EXPECT_EQ(a->definition()->output(0), a);

  std::string printed = segment->toString();
  EXPECT_TRUE(containsAll(printed,
                          {"%Fusion {", "inputs:", "outputs:", "= neg(", "= abs(", "} // %Fusion"}))
      << printed;
  EXPECT_EQ(printed.find("add("), std::string::npos) << printed;
  EXPECT_EQ(printed.find("Set("), std::string::npos) << printed;
}

TEST_F(SegmentTest, SegmentFusionOfAHostLowerableOp) {
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  fusion_.addInput(x);
  fusion_.addInput(w);
  TensorView* y = matmul(relu(set(x)), w);
  fusion_.addOutput(y);

  auto segmented = segmentForHost(fusion_);
  const SegmentedGroup* matmul_group = segmented->runOrder().back();
  auto segment = segmented->makeFusion(matmul_group);
  ASSERT_EQ(segment->inputs().size(), 2u);
  EXPECT_EQ(segment->outputs().size(), 1u);
  EXPECT_EQ(countExprs<MatmulOp>(*segment), 1);
  EXPECT_EQ(segment->exprs().size(), 1u);
  // Inputs in the group's order: the relu output, then w.
  EXPECT_EQ(matmul_group->inputs()[1], w);
  EXPECT_EQ(segment->outputs()[0]->definition()->input(0), segment->inputs()[0]);
  EXPECT_EQ(segment->outputs()[0]->definition()->input(1), segment->inputs()[1]);
}

TEST_F(SegmentTest, SegmentsDumpPrintsEveryGroupInRunOrder) {
  TensorView* x = makeContigTensor(1);
  fusion_.addInput(x);
  TensorView* a = set(x);
  TensorView* b = neg(a);
  fusion_.addOutput(b);

  auto segmented = segmentForHost(fusion_);
  std::string text = segmented->toString();
  const std::string expected =
      "%SegmentedFusion {\n"
      "  group 0 (producers: none; consumers: 1) {\n"
      "    inputs:\n"
      "      " +
      x->toInlineString() +
      "\n"
      "    outputs:\n"
      "      " +
      a->toInlineString() +
      "\n"
      "    exprs:\n" +
      a->definition()->toString(3) +
      "  } // group 0\n"
      "  group 1 (producers: 0; consumers: none) {\n"
      "    inputs:\n"
      "      " +
      a->toInlineString() +
      "\n"
      "    outputs:\n"
      "      " +
      b->toInlineString() +
      "\n"
      "    exprs:\n" +
      b->definition()->toString(3) +
      "  } // group 1\n"
      "} // %SegmentedFusion\n";
  EXPECT_EQ(text, expected);

  // HOSTIR_DUMP=segments prints it when segmenting.
  setenv("HOSTIR_DUMP", "segments", 1);
  testing::internal::CaptureStdout();
  segmentForHost(fusion_);
  std::string dumped = testing::internal::GetCapturedStdout();
  unsetenv("HOSTIR_DUMP");
  EXPECT_EQ(dumped, expected);

  testing::internal::CaptureStdout();
  segmentForHost(fusion_);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
}

}  // namespace
}  // namespace hostir::test
