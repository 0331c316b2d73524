// Lowering errors, the segmenter's host-lowering policy as seen through the
// lowered program, forwarding, and the pass manager (HOSTIR_DISABLE_PASS,
// HOSTIR_DUMP=passes, timings).

#include <gtest/gtest.h>

#include <algorithm>

#include "core_ir/ir_check.h"
#include "hostir/host_ir/passes/stream_parallelization.h"
#include "hostir/runtime/tensor_memory.h"
#include "hostir/segment/host_lowering_policy.h"
#include "hostir/segment/segment_candidate_finder.h"
#include "hostir/segment/segmented_fusion.h"
#include "lowering/lowering_test_utils.h"

namespace hostir::test {
namespace {

using Strings = std::vector<std::string>;

class LoweringPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }

  void expectLoweringError(const Strings& parts) {
    expectErrorContaining([&] { lowerToHostIr(fusion_); }, parts);
  }

  Fusion fusion_;
  FusionGuard guard_{&fusion_};
};

// ---- Errors -----------------------------------------------------------------

// A matmul in a stream loop (its output chunked on M) cannot read an
// operand chunked along K: an error that names the tensor and says which
// axes may be parallelized.
TEST_F(LoweringPolicyTest, MatmulInALoopWithStreamOnContractionAxisIsRejected) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* a2 = set(a);
  a2->axis(1)->parallelize(ParallelType::Stream);  // K
  TensorView* c = matmul(a2, b);
  c->axis(0)->parallelize(ParallelType::Stream);  // M: the matmul is in a loop
  fusion_.addOutput(c);
  expectLoweringError({"the Stream axis of T", "iStreamIdx", "contraction (K) axis",
                       "parallelize M, N or a batch axis"});
}

// The same for linear: K of the [N, K] weight may not be Stream-parallel
// under a linear that is in a loop.
TEST_F(LoweringPolicyTest, LinearInALoopWithStreamOnContractionAxisIsRejected) {
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  fusion_.addInput(x);
  fusion_.addInput(w);
  TensorView* w2 = set(w);
  w2->axis(1)->parallelize(ParallelType::Stream);  // K of the [N, K] weight
  TensorView* y = linear(x, w2);
  y->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(y);
  expectLoweringError({"contraction (K) axis"});
}

// A GEMM outside any loop reads an operand a loop computed in chunks along
// K whole, after that loop (the backward's dV = Pᵀ·dO sums over the query
// chunks): the program runs and matches ATen.
TEST_F(LoweringPolicyTest, GemmAfterTheLoopReadsAnOperandChunkedAlongK) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* a2 = relu(a);
  a2->split(1, 4, /*inner_split=*/false);
  a2->axis(1)->parallelize(ParallelType::Stream);  // K, in 4 chunks
  fusion_.addOutput(matmul(a2, b));
  at::Tensor ta = at::randn({6, 16});
  at::Tensor tb = at::randn({16, 5});
  expectMatchesAten(fusion_, {ta, tb}, {at::matmul(at::relu(ta), tb)}, 1e-5, 1e-5);
}

// Fusion inputs arrive whole: a Stream axis on one is an error.
TEST_F(LoweringPolicyTest, StreamParallelInputIsRejected) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  in->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(set(in));
  expectLoweringError({"fusion input T0_", "has a Stream axis", "inputs arrive whole"});
}

// At most one Stream axis per tensor.
TEST_F(LoweringPolicyTest, TwoStreamAxesAreRejected) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* out = set(in);
  out->axis(0)->parallelize(ParallelType::Stream);
  out->axis(1)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);
  expectLoweringError({"T1_", "has 2 Stream axes", "at most one axis"});
}

// A Stream axis produced by a merge is not supported.
TEST_F(LoweringPolicyTest, MergedStreamAxisIsRejected) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* out = set(in);
  out->merge(0);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);
  expectLoweringError({"T1_", "produced by a merge"});
}

// Only the outer part of a split may be the Stream axis.
TEST_F(LoweringPolicyTest, InnerSplitStreamAxisIsRejected) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* out = set(in);
  out->split(0, 4, /*inner_split=*/false);
  out->axis(1)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);
  expectLoweringError({"T1_", "inner part of a split"});
}

// A reduced axis cannot be the Stream axis.
TEST_F(LoweringPolicyTest, ReducedStreamAxisIsRejected) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* out = sum(in, {0}, /*keep_dim=*/false);
  // The reduction axis stays in the output's domain (rS).
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);
  expectLoweringError({"T1_", "is reduced", "parallelize an iteration axis"});
}

// An op the stream pass cannot slice (permute) with a Stream axis is an error.
TEST_F(LoweringPolicyTest, UnsupportedStreamParallelOpIsRejected) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* out = permute(set(in), {1, 0});
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);
  expectLoweringError({"has a Stream axis but is computed by", "does not support"});
}

// ---- The segmenter's policy, seen through the lowering ----------------------

// Without a Stream axis: each host-lowerable op (here a set) is a segment
// of its own (a plain top-level expr); the others, pointwise ops and
// reductions alike, merge into one PostOnStream, which runs as one compiled
// kernel; no stream ops.
TEST_F(LoweringPolicyTest, HostLowerableOpsStandAloneOthersMerge) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* a = add(set(in), 1.0);
  TensorView* c = neg(relu(a));
  TensorView* d = sum(c, {1});
  TensorView* e = mul(d, 2.0);
  fusion_.addOutput(e);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      -> (T2_g_float[iS4{i0}]) :
    CHECK-NEXT: T1_l_float[iS2{i0}, iS3{i1}]
    CHECK-NEXT:   = Set( T0_g_float[iS0{i0}, iS1{i1}] )
    CHECK-NEXT: PostOnStream (HostUnit
    CHECK-NEXT: } // %HostIrContainer
    CHECK:      exprs:
    CHECK:        = add(
    CHECK:        = relu(
    CHECK:        = neg(
    CHECK:        = sum(
    CHECK:        = mul(
    CHECK-NEXT:   } // %Fusion
  )"));

  // The segmenter itself: every group with a host-lowerable op holds exactly
  // one non-forwarded expr.
  SegmentOptions options;
  options.should_merge = hostLoweringMergePolicy();
  std::unique_ptr<SegmentedFusion> segmented = SegmentCandidateFinder::segment(&fusion_, options);
  ASSERT_EQ(segmented->runOrder().size(), 2u);
  for (const SegmentedGroup* group : segmented->runOrder()) {
    int host_lowerable = 0;
    for (const Expr* expr : group->exprs()) {
      host_lowerable += isHostLowerable(expr) ? 1 : 0;
    }
    if (host_lowerable > 0) {
      EXPECT_EQ(group->exprs().size() - group->forwardedExprs().size(), 1u) << group->toString();
    }
  }

  at::Tensor t0 = at::randn({4, 6});
  expectMatchesAten(fusion_, {t0}, {(-at::relu(t0 + 1.0)).sum({1}) * 2.0});
}

// A Stream-parallel op is kept alone by the segmenter, so the lowering never
// has to split a merged group: the ops around it that are not Stream-parallel
// still merge into a HostUnit.
TEST_F(LoweringPolicyTest, StreamParallelOpStandsAloneItsNeighboursMerge) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* a = add(in, 1.0);
  TensorView* b = neg(relu(a));  // not Stream-parallel: merge into a HostUnit
  TensorView* c = tanh(b);       // Stream-parallel
  c->axis(0)->parallelize(ParallelType::Stream);
  TensorView* d = add(c, 2.0);
  fusion_.addOutput(d);

  SegmentOptions options;
  options.should_merge = hostLoweringMergePolicy();
  std::unique_ptr<SegmentedFusion> segmented = SegmentCandidateFinder::segment(&fusion_, options);
  for (const SegmentedGroup* group : segmented->runOrder()) {
    bool stream_parallel =
        std::any_of(group->exprs().begin(), group->exprs().end(), computesStreamParallelTensor);
    if (stream_parallel) {
      EXPECT_EQ(group->exprs().size() - group->forwardedExprs().size(), 1u) << group->toString();
    }
  }

  HostIrPassManager no_passes;
  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_, no_passes);
  // Before the stream pass: the HostUnit of add, relu and neg, the
  // Stream-parallel tanh on its own, the HostUnit of the last add.
  EXPECT_TRUE(irCheck(hic->toString(), R"(
CHECK: PostOnStream (HostUnit 0, inputs=(T0_g_float[iS0{i0}, iS1{i1}]), outputs=(T1_l_float[iS2{i0}, iS3{i1}]))
CHECK-NEXT: T2_l_float[iStreamIdx4{i0}, iS5{i1}]
CHECK-NEXT: = tanh( T1_l_float[iS2{i0}, iS3{i1}] )
CHECK-NEXT: PostOnStream (HostUnit 3, inputs=(T2_l_float[iStreamIdx4{i0}, iS5{i1}]), outputs=(T3_g_float[iS6{i0}, iS7{i1}]))
CHECK-NEXT: } // %HostIrContainer
CHECK: = add( T0_g_float[iS0{i0}, iS1{i1}], 1.0 )
CHECK: = relu(
CHECK: = neg(
CHECK-NOT: tanh
CHECK: = add(
)"));

  at::Tensor t0 = at::randn({4, 6});
  expectMatchesAten(fusion_, {t0}, {at::tanh(-at::relu(t0 + 1.0)) + 2.0});
}

// A unary chain that starts at a fusion input is forwarded: it runs as plain
// exprs before its readers, and no segment boundary writes it out.
TEST_F(LoweringPolicyTest, ForwardedUnaryChainOfAnInputIsRecomputedPerSegment) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* e = exp(abs(in));  // forwarded: starts at a fusion input
  TensorView* a = set(e);        // two host-lowerable readers
  TensorView* b = slice(e, 0, 0, 2);
  fusion_.addOutput(a);
  fusion_.addOutput(b);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  // The chain runs as plain exprs before the first reader; no segment
  // boundary writes it out.
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK-NOT:  PostOnStream
    CHECK:      = abs( T0_g_float[iS0{i0}, iS1{i1}] )
    CHECK:      = exp( T1_l_float[iS2{i0}, iS3{i1}] )
    CHECK:      = Set( T2_l_float[iS4{i0}, iS5{i1}] )
    CHECK:      = slice( T2_l_float[iS4{i0}, iS5{i1}]
    CHECK-NEXT: } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({3, 5});
  at::Tensor ex = at::exp(at::abs(t0));
  expectMatchesAten(fusion_, {t0}, {ex, ex.slice(0, 0, 2)});
}

// A full read by two segments is forwarded into both: the host-lowerable
// segment computes it before its add, the PostOnStream segment recomputes it.
TEST_F(LoweringPolicyTest, FullIsForwardedIntoTwoSegments) {
  TensorView* in = makeContigTensor(1);
  fusion_.addInput(in);
  TensorView* z = full({in->axis(0)->extent()}, IrBuilder::create<Scalar>(3.0), DataType::Float);
  TensorView* a = set(z);   // host-lowerable segment
  TensorView* t = tanh(z);  // a PostOnStream segment (tanh is an output)
  fusion_.addOutput(a);
  fusion_.addOutput(t);

  SegmentOptions options;
  options.should_merge = hostLoweringMergePolicy();
  std::unique_ptr<SegmentedFusion> segmented = SegmentCandidateFinder::segment(&fusion_, options);
  int groups_with_full = 0;
  for (const SegmentedGroup* group : segmented->runOrder()) {
    for (const Expr* expr : group->forwardedExprs()) {
      groups_with_full += expr->isA<FullOp>() ? 1 : 0;
    }
    // A forwarded value never crosses a segment boundary.
    for (const Val* input : group->inputs()) {
      EXPECT_NE(input, z);
    }
  }
  EXPECT_EQ(groups_with_full, 2);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  // The host-lowerable segment's copy of the full runs before its set; the
  // PostOnStream segment gets only the extent and recomputes its own.
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      -> (T2_g_float[iS2{i0}], T3_g_float[iS3{i0}]) :
    CHECK-NEXT: T1_l_float[iS1{i0}]
    CHECK-NEXT:   = full( 3.0, i0 )
    CHECK-NEXT: T2_g_float[iS2{i0}]
    CHECK-NEXT:   = Set( T1_l_float[iS1{i0}] )
    CHECK-NEXT: PostOnStream (HostUnit 2, inputs=(i0), outputs=(T3_g_float[iS3{i0}]))
    CHECK-NEXT: } // %HostIrContainer
    CHECK:      HostUnit 2:
    CHECK:        exprs:
    CHECK-NEXT:     T0_l_float[iS0{i0}]
    CHECK-NEXT:       = full( 3.0, i0 )
    CHECK-NEXT:     T1_g_float[iS1{i0}]
    CHECK-NEXT:       = tanh( T0_l_float[iS0{i0}] )
    CHECK-NEXT:   } // %Fusion
  )"));

  at::Tensor t0 = at::randn({7});
  expectMatchesAten(fusion_, {t0}, {at::full({7}, 3.0), at::tanh(at::full({7}, 3.0))});
}

// The wgrad GEMM of a backward, dw = gᵀ @ x with g = dy * h computed by a
// segment: the permute stays out of the HostUnit and the host passes the
// GEMM a strided view of g, as torch passes `g.t()`. Merged into the
// segment, gᵀ was a second output, materialized: g's size again alive until
// the GEMM ends. The peak of the first run (nothing pooled yet) holds g, the
// result and x's packed copies (oneDNN's blocked B and the pack cache's
// snapshot), not a transposed g.
TEST_F(LoweringPolicyTest, PermutedGemmOperandIsAViewNotASegmentOutput) {
  constexpr int64_t kRows = 1024;  // K of the wgrad GEMM: the tokens
  constexpr int64_t kCols = 1024;  // its M
  constexpr int64_t kN = 64;
  TensorView* dy = makeContigTensor(2);
  TensorView* h = makeContigTensor(2);
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(dy);
  fusion_.addInput(h);
  fusion_.addInput(x);
  TensorView* g = mul(dy, h);
  fusion_.addOutput(matmul(permute(g, {1, 0}), x));

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  std::vector<const PostOnStream*> posts = exprsOfKind<PostOnStream>(*hic);
  ASSERT_EQ(posts.size(), 1u) << hic->toString();
  EXPECT_EQ(posts[0]->outputs().size(), 1u) << hic->toString();
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      PostOnStream (HostUnit
    CHECK-NEXT: T4_l_float
    CHECK-NEXT:   = permute( T3_l_float
    CHECK-NEXT: T5_g_float
    CHECK-NEXT:   = matmul( T4_l_float
  )"));

  at::Tensor tdy = at::randn({kRows, kCols});
  at::Tensor th = at::randn({kRows, kCols});
  at::Tensor tx = at::randn({kRows, kN});
  runtime::countTensorMemory();
  HostExecutor executor(fusion_, HostIrEvaluatorParams{.number_of_streams = 1});
  std::vector<at::Tensor> outputs;
  const int64_t peak = runtime::peakTensorBytesOf([&] { outputs = executor.run({tdy, th, tx}); });
  const int64_t g_bytes = tdy.nbytes();
  // oneDNN's scratchpad (its size depends on the threads), small tensors;
  // half of what a copy of g would add.
  const int64_t slack = g_bytes / 2;
  EXPECT_LE(peak, g_bytes + outputs.at(0).nbytes() + 2 * tx.nbytes() + slack)
      << "a transposed copy of g (" << g_bytes << " bytes) is alive";
  EXPECT_TRUE(allClose(outputs.at(0), at::matmul((tdy * th).t(), tx), 1e-4, 1e-4));
}

// ---- Pass manager -----------------------------------------------------------

// A Stream-parallel op read straight from an input is not forwarded into its
// readers' groups (it would be computed whole there, and the reader's group
// would hold a Stream-parallel expr): found by the differential fuzzer (seed
// 48 with run-time slices), which hit the merge-policy assertion.
TEST_F(LoweringPolicyTest, StreamParallelOpOfAnInputIsNotForwarded) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* s = sigmoid(in);
  s->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(sum(s, {1}));
  fusion_.addOutput(abs(s));

  std::unique_ptr<HostIrContainer> hic = lowerSegmentsToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      T1_l_float[iStreamIdx2{i0}, iS3{i1}]
    CHECK-NEXT:    = sigmoid( T0_g_float[iS0{i0}, iS1{i1}] )
    CHECK-NEXT: PostOnStream (HostUnit
    CHECK-NOT:  sigmoid
    CHECK:      } // %HostIrContainer
  )")) << hic->toString();
  EXPECT_NO_THROW(lowerToHostIr(fusion_));
}

void buildTwoSets(Fusion& fusion) {
  TensorView* in = makeContigTensor(2);
  fusion.addInput(in);
  TensorView* mid = set(in);
  TensorView* out = set(mid);
  mid->axis(0)->parallelize(ParallelType::Stream);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion.addOutput(out);
}

// The default pipeline is stream parallelization, buffer shrinking, then
// loop host units; all run and are timed, and turn the two bare sets into one
// stream loop (sets are copies into slices: they stay ops of the loop).
TEST_F(LoweringPolicyTest, DefaultPassesAndTimings) {
  buildTwoSets(fusion_);
  HostIrPassManager passes = hostIrPipeline(std::nullopt);
  Strings names;
  for (const HostIrPass& pass : passes.passes()) {
    names.push_back(pass.name);
  }
  EXPECT_EQ(names, (Strings{"stream_parallelization", "causal_key_ranges", "buffer_shrinking",
                            "batched_rhs_gemms", "batched_matmul_sums", "loop_host_units",
                            "gemm_epilogues", "recompute_scheduling"}));

  std::unique_ptr<HostIrContainer> hic = lowerSegmentsToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      -> (T2_g_float[iStreamIdx4{i0}, iS5{i1}]) :
    CHECK-NEXT: T1_l_float[iStreamIdx2{i0}, iS3{i1}]
    CHECK-NEXT:   = Set( T0_g_float[iS0{i0}, iS1{i1}] )
    CHECK-NEXT: T2_g_float[iStreamIdx4{i0}, iS5{i1}]
    CHECK-NEXT:   = Set( T1_l_float[iStreamIdx2{i0}, iS3{i1}] )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  passes.run(*hic);
  ASSERT_EQ(passes.timings().size(), 8u);
  for (const HostIrPassManager::Timing& timing : passes.timings()) {
    EXPECT_FALSE(timing.skipped) << timing.name;
    EXPECT_GE(timing.duration.count(), 0);
  }
  EXPECT_EQ(passes.timings()[0].name, "stream_parallelization");
  EXPECT_EQ(passes.timings()[1].name, "causal_key_ranges");
  EXPECT_EQ(passes.timings()[2].name, "buffer_shrinking");
  EXPECT_EQ(passes.timings()[3].name, "batched_rhs_gemms");
  EXPECT_EQ(passes.timings()[4].name, "batched_matmul_sums");
  EXPECT_EQ(passes.timings()[5].name, "loop_host_units");
  EXPECT_EQ(passes.timings()[6].name, "gemm_epilogues");
  EXPECT_EQ(passes.timings()[7].name, "recompute_scheduling");
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=local, size=( minimum(numberOfStreams, i0) * i1 ), zero_init=false)
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK:      FOR StreamIdx in
    CHECK:        = Set(
    CHECK:        = Set(
    CHECK-NOT:  FOR
    CHECK:      } // %HostIrContainer
  )"));
}

// HOSTIR_DISABLE_PASS=stream_parallelization leaves the two sets as they
// are (no loop) and the pass is reported skipped; the values still match.
TEST_F(LoweringPolicyTest, DisablingStreamParallelizationGivesLoopFreeProgram) {
  buildTwoSets(fusion_);
  ScopedEnv env("HOSTIR_DISABLE_PASS", "stream_parallelization");
  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      -> (T2_g_float[iStreamIdx4{i0}, iS5{i1}]) :
    CHECK-NEXT: T1_l_float[iStreamIdx2{i0}, iS3{i1}]
    CHECK-NEXT:   = Set( T0_g_float[iS0{i0}, iS1{i1}] )
    CHECK-NEXT: T2_g_float[iStreamIdx4{i0}, iS5{i1}]
    CHECK-NEXT:   = Set( T1_l_float[iStreamIdx2{i0}, iS3{i1}] )
    CHECK-NEXT: } // %HostIrContainer
  )"));

  HostIrPassManager passes = hostIrPipeline(std::nullopt);
  passes.run(*lowerSegmentsToHostIr(fusion_));
  ASSERT_EQ(passes.timings().size(), 8u);
  EXPECT_TRUE(passes.timings()[0].skipped);
  EXPECT_FALSE(passes.timings()[1].skipped);
  EXPECT_FALSE(passes.timings()[2].skipped);

  at::Tensor t0 = at::randn({5, 6});
  expectMatchesAten(fusion_, {t0}, {t0});
}

// HOSTIR_DISABLE_PASS=buffer_shrinking keeps the intermediate allocated in
// full while the loop is still built.
TEST_F(LoweringPolicyTest, DisablingBufferShrinkingKeepsFullIntermediate) {
  buildTwoSets(fusion_);
  ScopedEnv env("HOSTIR_DISABLE_PASS", "buffer_shrinking");
  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: T1_l_float[iStreamIdx2{i0}, iS3{i1}] = ALLOCATE(mem_type=local, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK:      FOR StreamIdx in
    CHECK-NOT:  size=( minimum(numberOfStreams
    CHECK:        = HirAliasSelect( T1_l_float[iStreamIdx2{i0}, iS3{i1}], axis = iStreamIdx2{i0}, index = StreamIdx )
    CHECK:      } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({5, 6});
  expectMatchesAten(fusion_, {t0}, {t0});
}

// HOSTIR_DUMP=passes prints the program after each pass, in order.
TEST_F(LoweringPolicyTest, DumpPassesPrintsAfterEachPass) {
  buildTwoSets(fusion_);
  ScopedEnv env("HOSTIR_DUMP", "passes");
  ::testing::internal::CaptureStdout();
  lowerToHostIr(fusion_);
  std::string out = ::testing::internal::GetCapturedStdout();
  size_t first = out.find("=== after pass stream_parallelization");
  size_t second = out.find("=== after pass buffer_shrinking");
  ASSERT_NE(first, std::string::npos) << out;
  ASSERT_NE(second, std::string::npos) << out;
  EXPECT_LT(first, second);
  EXPECT_NE(out.find("FOR StreamIdx"), std::string::npos);
}

// HOSTIR_DUMP=host_ir prints the program once, when it is lowered, not again
// on every run of the executor.
TEST_F(LoweringPolicyTest, DumpHostIrPrintsOncePerLowering) {
  buildTwoSets(fusion_);
  ScopedEnv env("HOSTIR_DUMP", "host_ir");
  ::testing::internal::CaptureStdout();
  HostExecutor executor(fusion_);
  at::Tensor t0 = at::randn({5, 6});
  for (int run = 0; run < 3; ++run) {
    executor.run({t0});
  }
  std::string out = ::testing::internal::GetCapturedStdout();
  size_t count = 0;
  for (size_t at = out.find("%HostIrContainer {"); at != std::string::npos;
       at = out.find("%HostIrContainer {", at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 1u) << out;
}

}  // namespace
}  // namespace hostir::test
