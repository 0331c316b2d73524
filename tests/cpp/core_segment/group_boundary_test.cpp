// Group inputs and outputs.

#include "hostir/ir/ops.h"
#include "segment_test_utils.h"

namespace hostir::test {
namespace {

TEST_F(SegmentTest, GroupInputsAndOutputsFollowTheValuesCrossingIt) {
  TensorView* x = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  fusion_.addInput(x);
  fusion_.addInput(y);
  TensorView* a = set(x);
  TensorView* b = neg(a);
  TensorView* c = abs(b);  // read by the add and a fusion output
  TensorView* d = add(c, y);
  TensorView* e = mul(d, a);
  fusion_.addOutput(c);
  fusion_.addOutput(e);

  auto segmented = segmentForHost(fusion_);
  const auto& order = segmented->runOrder();
  ASSERT_EQ(order.size(), 4u);

  EXPECT_EQ(order[0]->inputs(), (std::vector<Val*>{x}));
  EXPECT_EQ(order[0]->outputs(), (std::vector<Val*>{a}));
  EXPECT_EQ(order[1]->inputs(), (std::vector<Val*>{a}));
  EXPECT_EQ(order[1]->outputs(), (std::vector<Val*>{c}));  // b stays inside
  EXPECT_EQ(order[2]->inputs(), (std::vector<Val*>{c, y}));
  EXPECT_EQ(order[2]->outputs(), (std::vector<Val*>{d}));
  EXPECT_EQ(order[3]->inputs(), (std::vector<Val*>{d, a}));
  EXPECT_EQ(order[3]->outputs(), (std::vector<Val*>{e}));

  EXPECT_EQ(order[0]->consumers(), (std::vector<SegmentedGroup*>{order[1], order[3]}));
  EXPECT_EQ(order[3]->producers(), (std::vector<SegmentedGroup*>{order[0], order[2]}));
  EXPECT_EQ(segmented->groupOf(b->definition()), order[1]);
}

TEST_F(SegmentTest, AValueReadTwiceIsOneInput) {
  TensorView* x = makeContigTensor(1);
  fusion_.addInput(x);
  fusion_.addOutput(add(x, x));
  auto segmented = segmentForHost(fusion_);
  EXPECT_EQ(segmented->runOrder()[0]->inputs(), (std::vector<Val*>{x}));
}

// A scalar fusion input is an input of the groups that use it.
TEST_F(SegmentTest, ScalarFusionInputIsAGroupInput) {
  TensorView* x = makeContigTensor(1);
  Scalar* alpha = IrBuilder::create<Scalar>(DataType::Double);
  fusion_.addInput(x);
  fusion_.addInput(alpha);
  fusion_.addOutput(mul(neg(set(x)), alpha));

  auto segmented = segmentForHost(fusion_);
  const SegmentedGroup& mul_group = *segmented->runOrder().back();
  EXPECT_EQ(mul_group.inputs().size(), 2u);
  EXPECT_TRUE(containsVal(mul_group.inputs(), alpha));
  EXPECT_FALSE(containsVal(segmented->runOrder()[0]->inputs(), alpha));
}

// An extent a group's exprs need but that none of its tensor inputs carries
// must be passed in; one its tensor inputs carry is bound by them.
TEST_F(SegmentTest, ExtentNotCarriedByATensorInputIsAScalarInput) {
  TensorView* x = makeContigTensor(1);
  TensorView* y = makeContigTensor(1);
  fusion_.addInput(x);
  fusion_.addInput(y);
  Val* extent = x->axis(0)->extent();
  TensorView* t = add(set(y), constant(1));
  TensorView* z = set(slice(t, 0, constant(0), extent));
  fusion_.addOutput(z);
  fusion_.addOutput(set(slice(x, 0, constant(0), extent)));

  auto segmented = segmentForHost(fusion_);
  for (const SegmentedGroup* group : segmented->runOrder()) {
    const Expr* expr = group->exprs().front();
    if (!expr->isA<SliceOp>()) {
      continue;
    }
    if (expr->input(0) == x) {
      EXPECT_EQ(group->inputs(), (std::vector<Val*>{x})) << group->toString();
    } else {
      EXPECT_EQ(group->inputs(), (std::vector<Val*>{t, extent})) << group->toString();
    }
  }
}

}  // namespace
}  // namespace hostir::test
