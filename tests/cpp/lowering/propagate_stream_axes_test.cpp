// The propagate_stream_axes pass: a Stream split a user marks reaches the
// tensors computed from the marked one, along the axis it maps to, and
// stops where an op cannot carry it. A propagated program runs as one loop
// and matches ATen.

#include <gtest/gtest.h>

#include "hostir/host_ir/passes/propagate_stream_axes.h"
#include "hostir/host_ir/passes/stream_axis.h"
#include "lowering/lowering_test_utils.h"

namespace hostir::test {
namespace {

class PropagateStreamAxesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }

  // `tv`'s Stream axis as the logical axis it walks and its chunk count
  // (0: one index per iteration), or {-1, -1} without one.
  static std::pair<int64_t, int64_t> streamAxis(const TensorView* tv) {
    std::optional<StreamAxis> axis = findStreamAxis(tv);
    if (!axis) {
      return {-1, -1};
    }
    const auto* chunks = dynamic_cast<const Scalar*>(axis->loop_id->extent());
    return {axis->logical_pos,
            axis->chunk_size == nullptr || chunks == nullptr ? 0 : chunks->constInt()};
  }

  Fusion fusion_;
  FusionGuard guard_{&fusion_};
};

// A softmax of a tensor split into 3 chunks on axis 0: the max, exp, sum
// and div inside the composition, which the user cannot name, get the same
// split on their axis 0; the reduced last axis does not stop it.
TEST_F(PropagateStreamAxesTest, ReachesACompositionsIntermediates) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* x = set(in);
  x->split(0, 3, /*inner_split=*/false);
  x->axis(0)->parallelize(ParallelType::Stream);
  TensorView* out = softmax(x, 1);
  fusion_.addOutput(out);

  propagateStreamAxes(&fusion_);
  int64_t with_axis = 0;
  for (Expr* expr : fusion_.exprs()) {
    auto* tv = dynamic_cast<TensorView*>(expr->output(0));
    ASSERT_NE(tv, nullptr);
    EXPECT_EQ(streamAxis(tv), (std::pair<int64_t, int64_t>{0, 3})) << tv->toString();
    ++with_axis;
  }
  EXPECT_GE(with_axis, 7);  // set, max, broadcast, sub, exp, sum, broadcast, div

  at::Tensor t0 = at::randn({7, 5});
  expectMatchesAten(fusion_, {t0}, {at::softmax(t0, 1)});
}

// The split follows the axis it maps to: axis 0 of x is axis 1 once a
// broadcast axis is put in front. A reduction over that axis ends the
// propagation: a reduced axis cannot be stream-parallel.
TEST_F(PropagateStreamAxesTest, FollowsMappedAxesAndStopsAtReductions) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* x = set(in);
  x->axis(0)->parallelize(ParallelType::Stream);
  TensorView* widened = broadcast(x, {true, false, false});
  TensorView* doubled = mul(widened, 2.0);
  TensorView* row_sums = sum(doubled, {1});
  fusion_.addOutput(doubled);
  fusion_.addOutput(row_sums);

  propagateStreamAxes(&fusion_);
  EXPECT_EQ(streamAxis(widened).first, 1);
  EXPECT_EQ(streamAxis(doubled).first, 1);
  EXPECT_EQ(streamAxis(row_sums).first, -1);
}

// A tensor the user already split keeps its own split, and two inputs
// split along different axes leave the op's output without one.
TEST_F(PropagateStreamAxesTest, MarkedTensorsAndDisagreeingInputsAreLeftAlone) {
  TensorView* a_in = makeContigTensor(2);
  TensorView* b_in = makeContigTensor(2);
  fusion_.addInput(a_in);
  fusion_.addInput(b_in);
  TensorView* a = set(a_in);
  TensorView* b = set(b_in);
  a->axis(0)->parallelize(ParallelType::Stream);
  b->axis(1)->parallelize(ParallelType::Stream);
  TensorView* both = add(a, b);
  TensorView* marked = relu(a);
  marked->split(0, 2, /*inner_split=*/false);
  marked->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(both);
  fusion_.addOutput(marked);

  propagateStreamAxes(&fusion_);
  EXPECT_EQ(streamAxis(both).first, -1);
  EXPECT_EQ(streamAxis(marked), (std::pair<int64_t, int64_t>{0, 2}));
}

}  // namespace
}  // namespace hostir::test
