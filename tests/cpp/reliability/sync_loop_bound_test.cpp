// Issue 11, test gap (a): the loop that makes the worker streams wait for
// the caller's stream runs min(extent, numberOfStreams) iterations. A bound
// of numberOfStreams alone would create (and synchronize) streams that no
// iteration uses; these tests evaluate the bound and count the streams.

#include "hostir/runtime/expression_evaluator.h"
#include "reliability/reliability_test_utils.h"

namespace hostir::test {
namespace {

class SyncLoopBoundTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TensorView* in = makeContigTensor(2);
    fusion_.addInput(in);
    TensorView* out = set(in);
    out->axis(0)->parallelize(ParallelType::Stream);
    fusion_.addOutput(out);
  }
  Fusion fusion_;
  FusionGuard guard_{&fusion_};
};

TEST_F(SyncLoopBoundTest, BoundIsTheMinimumOfExtentAndNumberOfStreams) {
  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  std::vector<const ForLoop*> loops = topLevelLoops(*hic);
  ASSERT_EQ(loops.size(), 2u);
  const ForLoop* sync_loop = loops[0];
  for (auto [rows, streams, expected] :
       {std::tuple{2, 4, 2}, std::tuple{6, 4, 4}, std::tuple{4, 4, 4}, std::tuple{1, 7, 1},
        std::tuple{0, 3, 0}}) {
    ExpressionEvaluator ee;
    ee.bindNamed(kNumberOfStreams, int64_t{streams});
    ee.bind(hic->inputs()[0], at::empty({rows, 5}));
    EXPECT_EQ(ee.evaluateInt(sync_loop->stop()) - ee.evaluateInt(sync_loop->start()), expected)
        << "extent " << rows << ", " << streams << " streams: " << sync_loop->toString();
  }
}

TEST_F(SyncLoopBoundTest, ARunCreatesOnlyTheStreamsItsIterationsUse) {
  // 2 rows on 4 streams: the caller's stream and 2 workers.
  HostExecutor executor(fusion_, HostIrEvaluatorParams{.number_of_streams = 4});
  at::Tensor t0 = at::randn({2, 5});
  EXPECT_TRUE(at::equal(executor.run({t0})[0], t0));
  EXPECT_EQ(executor.evaluator().streamPool().createdStreamCount(), 3u);
  // 9 rows: every one of the 4 workers.
  at::Tensor t1 = at::randn({9, 5});
  EXPECT_TRUE(at::equal(executor.run({t1})[0], t1));
  EXPECT_EQ(executor.evaluator().streamPool().createdStreamCount(), 5u);
}

}  // namespace
}  // namespace hostir::test
