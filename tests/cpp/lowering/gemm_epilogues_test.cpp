// The gemm_epilogues pass: a linear and the GELU/add HostUnit after it become
// one HostUnit, run as one GEMM with post-ops (oneDNN, where it packs the
// weight), at the top level and per chunk of a stream loop; what it cannot
// fold stays as it was. Results match ATen op by op.

#include <gtest/gtest.h>

#include "hostir/ir/ops.h"
#include "hostir/runtime/compiled_segment.h"
#include "hostir/runtime/fusion_executor.h"
#include "hostir/runtime/packed_gemm.h"
#include "lowering/lowering_test_utils.h"

namespace hostir::test {
namespace {

// oneDNN's GELU and tiling round differently from at::linear + at::gelu.
constexpr double kRtol = 1e-4;
constexpr double kAtol = 1e-5;

class GemmEpiloguesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }

  TensorView* input(int64_t rank, DataType dtype = DataType::Float) {
    TensorView* tv = makeContigTensor(rank, dtype);
    fusion_.addInput(tv);
    return tv;
  }

  // The program's one PostOnStream, which must hold the linear.
  static const PostOnStream* onlyGemmUnit(const HostIrContainer& hic) {
    EXPECT_TRUE(exprsOfKind<LinearOp>(hic).empty()) << hic.toString();
    std::vector<const PostOnStream*> posts = exprsOfKind<PostOnStream>(hic);
    EXPECT_EQ(posts.size(), 1u) << hic.toString();
    return posts.empty() ? nullptr : posts[0];
  }

  static std::string execution(const PostOnStream* post) {
    return post == nullptr ? "" : describeSegmentExecution(*post->hostUnit()->fusion());
  }

  Fusion fusion_;
  FusionGuard guard_{&fusion_};
};

TEST_F(GemmEpiloguesTest, LinearThenGeluIsOneUnit) {
  TensorView* x = input(2);
  TensorView* w = input(2);
  fusion_.addOutput(gelu(linear(x, w)));

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(execution(onlyGemmUnit(*hic)).rfind("GEMM with post-ops: linear + gelu", 0), 0u)
      << execution(onlyGemmUnit(*hic));
  // The GELU's own HostUnit, absorbed, is still created but not posted:
  // what runs (and what reports list) is the one unit.
  EXPECT_GT(hic->hostUnits().size(), 1u);
  ASSERT_EQ(hic->postedHostUnits().size(), 1u);
  EXPECT_EQ(hic->postedHostUnits()[0], onlyGemmUnit(*hic)->hostUnit());

  at::Tensor tx = at::randn({64, 96});
  at::Tensor tw = at::randn({80, 96});
  expectMatchesAten(fusion_, {tx, tw}, {at::gelu(at::linear(tx, tw))}, kRtol, kAtol);
}

// A bias added as an op of its own, then the GELU: the GEMM's bias.
TEST_F(GemmEpiloguesTest, ABiasAddedAfterTheLinearIsItsBias) {
  TensorView* x = input(2);
  TensorView* w = input(2);
  TensorView* b = input(1);
  fusion_.addOutput(gelu(add(linear(x, w), b)));

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(execution(onlyGemmUnit(*hic)).rfind("GEMM with post-ops: linear + bias T", 0), 0u)
      << execution(onlyGemmUnit(*hic));

  at::Tensor tx = at::randn({24, 40});
  at::Tensor tw = at::randn({70, 40});
  at::Tensor tb = at::randn({70});
  expectMatchesAten(fusion_, {tx, tw, tb}, {at::gelu(at::linear(tx, tw) + tb)}, kRtol, kAtol);
}

// `hostir list`'s mlp: a ReLU after the linear, a row vector added after it.
TEST_F(GemmEpiloguesTest, ReluAndARowVectorAreOneUnit) {
  TensorView* x = input(2);
  TensorView* w = input(2);
  TensorView* row = input(1);
  fusion_.addOutput(add(relu(linear(x, w)), row));

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(execution(onlyGemmUnit(*hic)).rfind("GEMM with post-ops: linear + relu + add", 0), 0u)
      << execution(onlyGemmUnit(*hic));

  at::Tensor tx = at::randn({24, 40});
  at::Tensor tw = at::randn({70, 40});
  at::Tensor trow = at::randn({70});
  expectMatchesAten(fusion_, {tx, tw, trow}, {at::relu(at::linear(tx, tw)) + trow}, kRtol, kAtol);
}

// The main job's shape: the linear and the GELU per chunk of a stream loop.
// The chunk's linear result is no longer stored: its ring buffer is gone.
TEST_F(GemmEpiloguesTest, ChunkedLinearThenGeluIsOneUnitPerIteration) {
  TensorView* x = input(2);
  TensorView* w = input(2);
  TensorView* h = linear(x, w);
  TensorView* g = gelu(h);
  for (TensorView* tv : {h, g}) {
    tv->split(0, 4, /*inner_split=*/false);  // 4 chunks of rows
    tv->axis(0)->parallelize(ParallelType::Stream);
  }
  fusion_.addOutput(g);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  const PostOnStream* post = onlyGemmUnit(*hic);
  EXPECT_EQ(execution(post).rfind("GEMM with post-ops: linear + gelu", 0), 0u) << execution(post);
  ASSERT_FALSE(topLevelLoops(*hic).empty()) << hic->toString();
  EXPECT_TRUE(topLevelLoops(*hic).back()->body().contains(post)) << hic->toString();
  EXPECT_EQ(exprsOfKind<Allocate>(*hic).size(), 1u) << "only the output's buffer\n"
                                                    << hic->toString();

  at::Tensor tx = at::randn({32, 64});
  at::Tensor tw = at::randn({48, 64});
  expectMatchesAten(fusion_, {tx, tw}, {at::gelu(at::linear(tx, tw))}, kRtol, kAtol);
}

TEST_F(GemmEpiloguesTest, BiasGeluAndResidualAreOneUnit) {
  TensorView* x = input(2);
  TensorView* w = input(2);
  TensorView* b = input(1);
  TensorView* r = input(2);
  fusion_.addOutput(add(gelu(linear(x, w, b)), r));

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(
      execution(onlyGemmUnit(*hic)).rfind("GEMM with post-ops: linear + bias + gelu + add", 0), 0u)
      << execution(onlyGemmUnit(*hic));

  at::Tensor tx = at::randn({33, 40});
  at::Tensor tw = at::randn({70, 40});
  at::Tensor tb = at::randn({70});
  at::Tensor tr = at::randn({33, 70});
  expectMatchesAten(fusion_, {tx, tw, tb, tr}, {at::gelu(at::linear(tx, tw, tb)) + tr}, kRtol,
                    kAtol);
}

// The fused segment runs as one GEMM with post-ops where oneDNN packs the
// weight (avx512), and op by op through ATen where it does not (avx2), with
// HOSTIR_GEMM=aten and with HOSTIR_KERNELS=aten; all four agree with ATen.
TEST_F(GemmEpiloguesTest, RunsFusedWhereOneDnnPacksElseOpByOp) {
  TensorView* x = input(2);
  TensorView* w = input(2);
  TensorView* r = input(2);
  fusion_.addOutput(add(gelu(linear(x, w)), r));
  at::Tensor tx = at::randn({40, 64});
  at::Tensor tw = at::randn({96, 64});
  at::Tensor tr = at::randn({40, 96});
  at::Tensor expected = at::gelu(at::linear(tx, tw)) + tr;

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  const PostOnStream* post = onlyGemmUnit(*hic);
  ASSERT_NE(post, nullptr);
  FusionExecutor executor(*post->hostUnit()->fusion());
  const bool one_dnn_packs = dnnlPreferredNBlock(64, 96) != 0;
  const int64_t before = gemmsWithPostOpsRun();
  EXPECT_TRUE(allClose(executor.run({tx, tw, tr}).at(0), expected, kRtol, kAtol));
  EXPECT_EQ(gemmsWithPostOpsRun() - before, one_dnn_packs ? 1 : 0);
  // The run's engine is in the executor's report: the GEMM, or ATen with why.
  EXPECT_EQ(executor.runs().on_planned_engine, one_dnn_packs ? 1 : 0) << executor.execution();
  if (!one_dnn_packs) {
    EXPECT_NE(executor.execution().find("fell back to ATen 1 time: oneDNN keeps plain weights on"),
              std::string::npos)
        << executor.execution();
  }
  for (const char* variable : {"HOSTIR_GEMM", "HOSTIR_KERNELS"}) {
    SCOPED_TRACE(std::string(variable) + "=aten");
    ScopedEnv env(variable, "aten");
    const int64_t unfused = gemmsWithPostOpsRun();
    EXPECT_TRUE(allClose(executor.run({tx, tw, tr}).at(0), expected, kRtol, kAtol));
    EXPECT_EQ(gemmsWithPostOpsRun(), unfused);
  }
  EXPECT_EQ(executor.runs().fallbacks.count("HOSTIR_GEMM=aten"), 1u) << executor.execution();
}

// A GEMM with post-ops that oneDNN does not take at run time (an input of
// no rows) runs op by op through ATen, and the executor's report says so and
// why; a run it takes reports the GEMM.
TEST_F(GemmEpiloguesTest, AnEmptyInputFallsBackToAtenAndTheReportSaysWhy) {
  TensorView* x = input(2);
  TensorView* w = input(2);
  fusion_.addOutput(gelu(linear(x, w)));
  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  const PostOnStream* post = onlyGemmUnit(*hic);
  ASSERT_NE(post, nullptr);
  FusionExecutor executor(*post->hostUnit()->fusion());
  at::Tensor tw = at::randn({96, 64});
  at::Tensor empty = at::randn({0, 64});
  EXPECT_TRUE(allClose(executor.run({empty, tw}).at(0), at::gelu(at::linear(empty, tw))));
  SegmentRuns runs = executor.runs();
  EXPECT_EQ(runs.on_planned_engine, 0);
  ASSERT_EQ(runs.fallbacks.size(), 1u) << executor.execution();
  EXPECT_EQ(runs.fallbacks.begin()->second, 1);
  const std::string report = executor.execution();
  EXPECT_EQ(report.rfind("GEMM with post-ops: linear + gelu", 0), 0u) << report;
  EXPECT_NE(report.find("; ran it 0 times, fell back to ATen 1 time: an empty operand (input "
                        "sizes [0, 64], weight sizes [96, 64])"),
            std::string::npos)
      << report;
  if (dnnlPreferredNBlock(64, 96) != 0) {
    at::Tensor tx = at::randn({8, 64});
    EXPECT_TRUE(allClose(executor.run({tx, tw}).at(0), at::gelu(at::linear(tx, tw)), kRtol, kAtol));
    EXPECT_EQ(executor.runs().on_planned_engine, 1) << executor.execution();
  }
}

// What the pass leaves alone: a linear result read twice, an epilogue that
// is no post-op, a dtype oneDNN's GEMMs do not take here, and everything
// when the pass is disabled. Each still matches ATen.
TEST_F(GemmEpiloguesTest, ALinearReadTwiceStaysApart) {
  TensorView* x = input(2);
  TensorView* w = input(2);
  TensorView* h = linear(x, w);
  fusion_.addOutput(h);
  fusion_.addOutput(gelu(h));
  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(exprsOfKind<LinearOp>(*hic).size(), 1u) << hic->toString();
  at::Tensor tx = at::randn({16, 24});
  at::Tensor tw = at::randn({32, 24});
  at::Tensor th = at::linear(tx, tw);
  expectMatchesAten(fusion_, {tx, tw}, {th, at::gelu(th)}, kRtol, kAtol);
}

// Per chunk, the linear writes its slice of h, a program output: folding
// would leave h unwritten.
TEST_F(GemmEpiloguesTest, AChunkOfAProgramOutputStaysApart) {
  TensorView* x = input(2);
  TensorView* w = input(2);
  TensorView* h = linear(x, w);
  TensorView* g = gelu(h);
  for (TensorView* tv : {h, g}) {
    tv->split(0, 4, /*inner_split=*/false);
    tv->axis(0)->parallelize(ParallelType::Stream);
  }
  fusion_.addOutput(h);
  fusion_.addOutput(g);
  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(exprsOfKind<LinearOp>(*hic).size(), 1u) << hic->toString();
  at::Tensor tx = at::randn({32, 24});
  at::Tensor tw = at::randn({16, 24});
  at::Tensor th = at::linear(tx, tw);
  expectMatchesAten(fusion_, {tx, tw}, {th, at::gelu(th)}, kRtol, kAtol);
}

TEST_F(GemmEpiloguesTest, AnEpilogueThatIsNoPostOpStaysApart) {
  TensorView* x = input(2);
  TensorView* w = input(2);
  fusion_.addOutput(exp(linear(x, w)));
  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(exprsOfKind<LinearOp>(*hic).size(), 1u) << hic->toString();
  at::Tensor tx = at::randn({16, 24});
  at::Tensor tw = at::randn({32, 24}) * 0.1;
  expectMatchesAten(fusion_, {tx, tw}, {at::exp(at::linear(tx, tw))}, kRtol, kAtol);
}

TEST_F(GemmEpiloguesTest, DoubleStaysApart) {
  TensorView* x = input(2, DataType::Double);
  TensorView* w = input(2, DataType::Double);
  fusion_.addOutput(gelu(linear(x, w)));
  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(exprsOfKind<LinearOp>(*hic).size(), 1u) << hic->toString();
  at::Tensor tx = at::randn({16, 24}, at::kDouble);
  at::Tensor tw = at::randn({32, 24}, at::kDouble);
  expectMatchesAten(fusion_, {tx, tw}, {at::gelu(at::linear(tx, tw))});
}

TEST_F(GemmEpiloguesTest, DisablingThePassKeepsTheLinear) {
  ScopedEnv env("HOSTIR_DISABLE_PASS", "gemm_epilogues");
  TensorView* x = input(2);
  TensorView* w = input(2);
  fusion_.addOutput(gelu(linear(x, w)));
  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(exprsOfKind<LinearOp>(*hic).size(), 1u) << hic->toString();
}

}  // namespace
}  // namespace hostir::test
