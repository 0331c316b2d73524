// The loop_host_units pass: runs of kernel ops in a stream loop's body become
// one HostUnit posted on the loop's stream, which runs as a compiled kernel;
// results match ATen with 1, 2 and 4 streams.

#include <gtest/gtest.h>

#include "core_ir/ir_check.h"
#include "hostir/runtime/compiled_segment.h"
#include "lowering/lowering_test_utils.h"

namespace hostir::test {
namespace {

class LoopHostUnitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }

  // The one PostOnStream of the program's loops; its segment runs compiled.
  static const PostOnStream* onlyLoopUnit(const HostIrContainer& hic) {
    std::vector<const PostOnStream*> posts = exprsOfKind<PostOnStream>(hic);
    EXPECT_EQ(posts.size(), 1u) << hic.toString();
    if (posts.empty()) {
      return nullptr;
    }
    EXPECT_EQ(describeSegmentExecution(*posts[0]->hostUnit()->fusion()).rfind("compiled kernel", 0),
              0u)
        << describeSegmentExecution(*posts[0]->hostUnit()->fusion());
    return posts[0];
  }

  Fusion fusion_;
  FusionGuard guard_{&fusion_};
};

// abs then exp, stream-parallel: both ops are one HostUnit in the loop,
// reading the input's slice and writing the output's slice in place.
TEST_F(LoopHostUnitsTest, UnaryChainBecomesOneUnitPerIteration) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* a = set(in);
  TensorView* b = abs(a);
  TensorView* c = exp(b);
  for (TensorView* tv : {a, b, c}) {
    tv->axis(0)->parallelize(ParallelType::Stream);
  }
  fusion_.addOutput(c);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      FOR StreamIdx in iStreamIdx2{i0}:
    CHECK:        = Set( T4_l_float
    CHECK-NOT:    = abs(
    CHECK:        PostOnStream (HostUnit
    CHECK-SAME:     outputs=(T7_l_float
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
    CHECK:      %Fusion {
    CHECK:        = abs(
    CHECK:        = exp(
  )"));
  onlyLoopUnit(*hic);
  at::Tensor t0 = at::randn({5, 9});
  expectMatchesAten(fusion_, {t0}, {at::exp(at::abs(t0))});
}

// A result only the unit reads stays inside its kernel: abs's slice, the
// ring buffer that held it and their views are gone, and the unit writes
// exp's slice alone.
TEST_F(LoopHostUnitsTest, IntermediatesOfTheRunStayInsideTheKernel) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* a = set(in);
  TensorView* b = abs(a);
  TensorView* c = exp(b);
  TensorView* d = neg(c);
  for (TensorView* tv : {a, b, c, d}) {
    tv->axis(0)->parallelize(ParallelType::Stream);
  }
  fusion_.addOutput(d);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  const PostOnStream* unit = onlyLoopUnit(*hic);
  ASSERT_NE(unit, nullptr);
  EXPECT_EQ(unit->outputs().size(), 1u) << hic->toString();
  // The set's ring buffer and the output: nothing holds abs's or exp's.
  EXPECT_EQ(exprsOfKind<Allocate>(*hic).size(), 2u) << hic->toString();
  at::Tensor t0 = at::randn({5, 9});
  expectMatchesAten(fusion_, {t0}, {at::neg(at::exp(at::abs(t0)))});
}

// A split Stream axis gives each slice its own chunk-extent expression; the
// unit reads the broadcast operand whole and the chunk of the other, and
// its output extents are the inputs' (uneven last chunk included).
TEST_F(LoopHostUnitsTest, ChunkedBinaryOpWithBroadcastOperand) {
  TensorView* x = makeContigTensor(2);
  TensorView* row = makeContigTensor(1);
  fusion_.addInput(x);
  fusion_.addInput(row);
  TensorView* sum_out = add(x, broadcast(row, {true, false}));
  TensorView* rectified = relu(sum_out);
  TensorView* out = mul(rectified, 2.0);
  for (TensorView* tv : {sum_out, rectified, out}) {
    tv->split(0, 3, /*inner_split=*/false);
    tv->axis(0)->parallelize(ParallelType::Stream);
  }
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  const PostOnStream* post = onlyLoopUnit(*hic);
  ASSERT_NE(post, nullptr);
  EXPECT_EQ(post->hostUnit()->fusion()->exprs().size(), 3u) << hic->toString();
  at::Tensor t0 = at::randn({10, 7});
  at::Tensor t1 = at::randn({7});
  expectMatchesAten(fusion_, {t0, t1}, {at::relu(t0 + t1) * 2.0});
}

// A reduction over the non-stream axis, then a pointwise op on its result:
// one unit per iteration, a row's statistics and the division computed
// together (softmax over each row).
TEST_F(LoopHostUnitsTest, RowSoftmaxPerIteration) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  TensorView* m = max(x, {1}, /*keep_dim=*/true);
  TensorView* e = exp(sub(x, m));
  TensorView* s = sum(e, {1}, /*keep_dim=*/true);
  TensorView* out = div(e, s);
  // Every intermediate (keep_dim adds broadcasts) is stream-parallel too.
  for (const Expr* expr : fusion_.exprs()) {
    for (Val* v : expr->outputs()) {
      auto* tv = dynamic_cast<TensorView*>(v);
      if (tv != nullptr && !tv->axis(0)->isStream()) {
        tv->axis(0)->parallelize(ParallelType::Stream);
      }
    }
  }
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  onlyLoopUnit(*hic);
  at::Tensor t0 = at::randn({6, 33});
  expectMatchesAten(fusion_, {t0}, {at::softmax(t0, 1)});
}

// A matmul in the loop stays a BLAS call; the relu after it is the unit.
TEST_F(LoopHostUnitsTest, MatmulStaysAndItsEpilogueIsAUnit) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* c = matmul(a, b);
  TensorView* d = relu(c);
  for (TensorView* tv : {c, d}) {
    tv->axis(0)->parallelize(ParallelType::Stream);
  }
  fusion_.addOutput(d);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      FOR StreamIdx in
    CHECK:        = matmul(
    CHECK-NOT:    = relu(
    CHECK:        PostOnStream (HostUnit
  )"));
  onlyLoopUnit(*hic);
  at::Tensor ta = at::randn({8, 5});
  at::Tensor tb = at::randn({5, 6});
  expectMatchesAten(fusion_, {ta, tb}, {at::relu(at::matmul(ta, tb))});
}

}  // namespace
}  // namespace hostir::test
