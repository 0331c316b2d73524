// The stream parallelization and buffer shrinking passes run directly on a
// container: hand-built programs and lowerSegmentsToHostIr output, before and
// after each pass. Each case checks the printed program with irCheck
// (core_ir/ir_check.h) and runs it against ATen.

#include <gtest/gtest.h>

#include "core_ir/ir_check.h"
#include "hostir/host_ir/passes/buffer_shrinking.h"
#include "hostir/host_ir/passes/stream_axis.h"
#include "hostir/host_ir/passes/stream_parallelization.h"
#include "hostir/runtime/tensor_memory.h"
#include "lowering/lowering_test_utils.h"

namespace hostir::test {
namespace {

// A program built by hand in hic_: its top-level exprs are pushed one by one.
class StreamPassTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }

  void push(TensorView* tv) {
    hic_->pushBackTopLevelExpr(tv->definition());
  }

  std::unique_ptr<HostIrContainer> hic_ = std::make_unique<HostIrContainer>();
  FusionGuard guard_{hic_.get()};
};

// The pass alone on a hand-built set: the caller's stream, the output
// allocated whole, the sync loop, and a main loop over the output's Stream
// axis copying one row per iteration on a worker stream; shrinking then has
// nothing to do (the only buffer is an output).
TEST_F(StreamPassTest, HandBuiltSingleSet) {
  TensorView* in = makeContigTensor(2);
  hic_->addInput(in);
  TensorView* out = set(in);
  out->axis(0)->parallelize(ParallelType::Stream);
  hic_->addOutput(out);
  push(out);

  parallelizeStreams(*hic_);
  EXPECT_TRUE(irCheck(hic_->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: T1_g_float[iStreamIdx2{i0}, iS3{i1}] = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx2{i0}:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T0_g_float[iS0{i0}, iS1{i1}], axis = iS0{i0}, index = StreamIdx )
    CHECK:        = HirAliasSelect( T1_g_float[iStreamIdx2{i0}, iS3{i1}], axis = iStreamIdx2{i0}, index = StreamIdx )
    CHECK:        = Set( T2_l_float[iS4{i1}] )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  // The main loop iterates the output's Stream axis itself.
  std::vector<const ForLoop*> loops = topLevelLoops(*hic_);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[1]->iterDomain(), out->axis(0));

  // Nothing to shrink: the only buffer is an output.
  std::string before = hic_->toString();
  shrinkStreamBuffers(*hic_);
  EXPECT_EQ(hic_->toString(), before);

  at::Tensor t0 = at::randn({7, 3});
  expectProgramMatchesAten(*hic_, {t0}, {t0});
}

// Two hand-built sets: the pass fuses them into one loop with the middle
// tensor allocated whole and sliced once per iteration for both sets; buffer
// shrinking then replaces that allocation with a ring of
// minimum(numberOfStreams, i0) rows selected at StreamIdx modulo that, the
// program otherwise unchanged.
TEST_F(StreamPassTest, HandBuiltTwoSetsThenShrink) {
  TensorView* in = makeContigTensor(2);
  hic_->addInput(in);
  TensorView* mid = set(in);
  TensorView* out = set(mid);
  mid->axis(0)->parallelize(ParallelType::Stream);
  out->axis(0)->parallelize(ParallelType::Stream);
  hic_->addOutput(out);
  push(mid);
  push(out);

  parallelizeStreams(*hic_);
  EXPECT_TRUE(irCheck(hic_->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: T1_l_float[iStreamIdx2{i0}, iS3{i1}] = ALLOCATE(mem_type=local, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: T2_g_float[iStreamIdx4{i0}, iS5{i1}] = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx2{i0}:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T0_g_float
    CHECK:        = HirAliasSelect( T1_l_float[iStreamIdx2{i0}, iS3{i1}], axis = iStreamIdx2{i0}, index = StreamIdx )
    CHECK:        = Set( T3_l_float
    CHECK-NOT:    = HirAliasSelect( T1_l_float
    CHECK:        = HirAliasSelect( T2_g_float
    CHECK:        = Set( T4_l_float
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  std::vector<const Allocate*> allocations = exprsOfKind<Allocate>(*hic_);
  ASSERT_EQ(allocations.size(), 2u);
  EXPECT_EQ(allocations[0]->buffer(), mid);  // in full before shrinking

  at::Tensor t0 = at::randn({6, 4});
  expectProgramMatchesAten(*hic_, {t0}, {t0});

  shrinkStreamBuffers(*hic_);
  EXPECT_TRUE(irCheck(hic_->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: T6_l_float[iS9{minimum(numberOfStreams, i0)}, iS10{i1}] = ALLOCATE(mem_type=local, size=( minimum(numberOfStreams, i0) * i1 ), zero_init=false)
    CHECK-NEXT: T2_g_float[iStreamIdx4{i0}, iS5{i1}] = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx2{i0}:
    CHECK-NEXT:   i16 = ( StreamIdx % minimum(numberOfStreams, i0) )
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NOT:    T1_l_float
    CHECK:        = HirAliasSelect( T6_l_float[iS9{minimum(numberOfStreams, i0)}, iS10{i1}], axis = iS9{minimum(numberOfStreams, i0)}, index = i16 )
    CHECK:        = Set( T3_l_float
    CHECK:        = Set( T4_l_float
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  expectProgramMatchesAten(*hic_, {t0}, {t0});
}

// A hand-built matmul with M split into 3 Stream chunks: findStreamAxis sees
// the chunked logical axis 0; the pass slices A's and the output's rows
// between named chunk bounds, three iterations whatever M is.
TEST_F(StreamPassTest, HandBuiltSplitMatmul) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  hic_->addInput(a);
  hic_->addInput(b);
  TensorView* out = matmul(a, b);
  out->split(0, 3, /*inner_split=*/false);
  out->axis(0)->parallelize(ParallelType::Stream);
  hic_->addOutput(out);
  push(out);

  std::optional<StreamAxis> axis = findStreamAxis(out);
  ASSERT_TRUE(axis.has_value());
  EXPECT_EQ(axis->logical_pos, 0);
  EXPECT_NE(axis->chunk_size, nullptr);

  parallelizeStreams(*hic_);
  EXPECT_TRUE(irCheck(hic_->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i3 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(3, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx6{3}:
    CHECK-NEXT:   i11 = ( StreamIdx * ceilDiv(i0, 3) )
    CHECK-NEXT:   i12 = minimum(i11, i0)
    CHECK-NEXT:   i13 = ( i12 + ceilDiv(i0, 3) )
    CHECK-NEXT:   i14 = minimum(i13, i0)
    CHECK-NEXT:   i15 = ( i14 - i12 )
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   T3_l_float
    CHECK-NEXT:     = slice( T0_g_float[iS0{i0}, iS1{i1}], i12, i14, dim = 0 )
    CHECK-NEXT:   T4_l_float
    CHECK-NEXT:     = slice( T2_g_float[iStreamIdx6{3}, iS7{ceilDiv(i0, 3)}, iS5{i3}], i12, i14, dim = 0 )
    CHECK-NEXT:   T4_l_float
    CHECK-NEXT:     = matmul( T3_l_float[iS8{i15}, iS9{i1}], T1_g_float[iS2{i2}, iS3{i3}] )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  std::vector<const ForLoop*> loops = topLevelLoops(*hic_);
  EXPECT_EQ(loops[1]->iterDomain(), out->axis(0));

  for (int64_t m : {9, 10, 4}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    at::Tensor t0 = at::randn({m, 5});
    at::Tensor t1 = at::randn({5, 6});
    for (int streams : streamCounts()) {
      HostIrEvaluator evaluator(hic_->clone(), {.number_of_streams = streams});
      std::vector<at::Tensor> outputs = evaluator.run({t0, t1});
      ASSERT_EQ(outputs.size(), 1u);
      EXPECT_TRUE(allClose(outputs[0], at::matmul(t0, t1), 1e-4, 1e-5));
    }
  }
}

// A program input with a Stream axis is an error of the pass.
TEST_F(StreamPassTest, HandBuiltStreamParallelInputIsRejected) {
  TensorView* in = makeContigTensor(2);
  in->axis(0)->parallelize(ParallelType::Stream);
  hic_->addInput(in);
  TensorView* out = set(in);
  hic_->addOutput(out);
  push(out);
  expectErrorContaining([&] { parallelizeStreams(*hic_); },
                        {"program input T", "has a Stream axis"});
}

// Without a Stream axis both passes leave the program as it was: the add alone,
// no stream ops, no allocation.
TEST_F(StreamPassTest, NonStreamExprsAreLeftAlone) {
  TensorView* in = makeContigTensor(2);
  hic_->addInput(in);
  TensorView* out = add(in, in);
  hic_->addOutput(out);
  push(out);
  parallelizeStreams(*hic_);
  shrinkStreamBuffers(*hic_);
  EXPECT_TRUE(irCheck(hic_->toString(), R"(
    CHECK:      -> (T1_g_float[iS2{i0}, iS3{i1}]) :
    CHECK-NEXT: T1_g_float[iS2{i0}, iS3{i1}]
    CHECK-NEXT:   = add( T0_g_float[iS0{i0}, iS1{i1}], T0_g_float[iS0{i0}, iS1{i1}] )
    CHECK-NEXT: } // %HostIrContainer
  )"));
}

// Two stream loops with a plain add between them: one GetCurrentStream for the
// whole program, and both main loops go back to that caller stream (Stream 0)
// and wait for their workers.
TEST_F(StreamPassTest, OneCallerStreamForSeveralLoops) {
  TensorView* in = makeContigTensor(2);
  hic_->addInput(in);
  TensorView* a = set(in);
  TensorView* b = add(a, a);
  TensorView* c = set(b);
  a->axis(0)->parallelize(ParallelType::Stream);
  c->axis(0)->parallelize(ParallelType::Stream);
  hic_->addOutput(c);
  push(a);
  push(b);
  push(c);
  parallelizeStreams(*hic_);
  EXPECT_TRUE(irCheck(hic_->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NOT:  GetCurrentStream
    CHECK:      FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = Set(
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NOT:  GetCurrentStream
    CHECK:        = add(
    CHECK-NOT:  GetCurrentStream
    CHECK:      FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = Set(
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({5, 3});
  expectProgramMatchesAten(*hic_, {t0}, {t0 + t0});
}

// ---- The same cases from lowerSegmentsToHostIr, pass by pass ----------------

class SegmentsThenPassTest : public ::testing::Test {
 protected:
  Fusion fusion_;
  FusionGuard guard_{&fusion_};
};

// lowerSegmentsToHostIr gives the bare set; the pass turns it into the sync
// loop and the main loop of per-row copies on worker streams.
TEST_F(SegmentsThenPassTest, SingleSet) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* out = set(in);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerSegmentsToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      -> (T1_g_float[iStreamIdx2{i0}, iS3{i1}]) :
    CHECK-NEXT: T1_g_float[iStreamIdx2{i0}, iS3{i1}]
    CHECK-NEXT:   = Set( T0_g_float[iS0{i0}, iS1{i1}] )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  parallelizeStreams(*hic);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx2{i0}:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T0_g_float
    CHECK:        = HirAliasSelect( T1_g_float
    CHECK:        = Set( T2_l_float[iS4{i1}] )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({3, 8});
  expectProgramMatchesAten(*hic, {t0}, {t0});
}

// Two bare sets from lowerSegmentsToHostIr: the pass fuses them into one
// loop, then shrinking makes the intermediate a ring.
TEST_F(SegmentsThenPassTest, TwoSets) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* mid = set(in);
  TensorView* out = set(mid);
  mid->axis(0)->parallelize(ParallelType::Stream);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerSegmentsToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      -> (T2_g_float[iStreamIdx4{i0}, iS5{i1}]) :
    CHECK-NEXT: T1_l_float[iStreamIdx2{i0}, iS3{i1}]
    CHECK-NEXT:   = Set( T0_g_float[iS0{i0}, iS1{i1}] )
    CHECK-NEXT: T2_g_float[iStreamIdx4{i0}, iS5{i1}]
    CHECK-NEXT:   = Set( T1_l_float[iStreamIdx2{i0}, iS3{i1}] )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  parallelizeStreams(*hic);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK:      FOR StreamIdx in iStreamIdx2{i0}:
    CHECK:        = Set( T3_l_float
    CHECK:        = Set( T4_l_float
    CHECK-NOT:  FOR
    CHECK:      } // %HostIrContainer
  )"));
  shrinkStreamBuffers(*hic);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=local, size=( minimum(numberOfStreams, i0) * i1 ), zero_init=false)
  )"));
  at::Tensor t0 = at::randn({9, 2});
  expectProgramMatchesAten(*hic, {t0}, {t0});
}

// Two sets on 2 Stream chunks, run with up to 8 streams: the loop has 2
// iterations, so the ring holds minimum(numberOfStreams, 2) chunk slots, not
// one per stream (a ring of numberOfStreams slots kept 8 where 2 are used;
// the sequence-parallel layer's 2-chunk training step peaked 1.27x torch's
// for it, docs/training.md). The run's peak tensor memory is the output and
// those slots, nothing more; the result is the input's.
TEST_F(SegmentsThenPassTest, ARingHoldsNoMoreSlotsThanItsLoopHasIterations) {
  addTwoSetsOnStreamChunks(fusion_, 2);

  std::unique_ptr<HostIrContainer> hic = lowerSegmentsToHostIr(fusion_);
  parallelizeStreams(*hic);
  shrinkStreamBuffers(*hic);
  const std::vector<const Allocate*> allocations = exprsOfKind<Allocate>(*hic);
  ASSERT_EQ(allocations.size(), 2u);
  ASSERT_FALSE(hic->isOutput(allocations[0]->buffer()));
  EXPECT_EQ(allocations[0]->buffer()->axis(0)->extent()->toInlineString(),
            "minimum(numberOfStreams, 2)");

  // Below the buffer pool's smallest block (BufferPool::kMinBytes): every
  // buffer is new memory of each run, counted in its peak.
  constexpr int64_t kRows = 6, kCols = 300, kChunkBytes = kRows / 2 * kCols * 4;
  runtime::countTensorMemory();
  at::Tensor t0 = at::randn({kRows, kCols});
  for (int streams : {1, 2, 4, 8}) {
    SCOPED_TRACE("numberOfStreams = " + std::to_string(streams));
    HostIrEvaluator evaluator(hic->clone(), HostIrEvaluatorParams{.number_of_streams = streams});
    std::vector<at::Tensor> outputs;
    const int64_t peak = runtime::peakTensorBytesOf([&] { outputs = evaluator.run({t0}); });
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_TRUE(at::equal(outputs[0], t0));
    EXPECT_EQ(peak, t0.nbytes() + std::min(streams, 2) * kChunkBytes);
  }
}

// A bare matmul from lowerSegmentsToHostIr with M in 4 Stream chunks: the pass
// slices A's and the output's rows per chunk.
TEST_F(SegmentsThenPassTest, SplitMatmul) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* out = matmul(a, b);
  out->split(0, 4, /*inner_split=*/false);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerSegmentsToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      -> (T2_g_float[iStreamIdx6{4}, iS7{ceilDiv(i0, 4)}, iS5{i3}]) :
    CHECK-NEXT: T2_g_float
    CHECK-NEXT:   = matmul( T0_g_float[iS0{i0}, iS1{i1}], T1_g_float[iS2{i2}, iS3{i3}] )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  parallelizeStreams(*hic);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i3 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(4, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx6{4}:
    CHECK-NOT:  HirAliasSelect
    CHECK:        SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   T3_l_float
    CHECK-NEXT:     = slice( T0_g_float[iS0{i0}, iS1{i1}], i12, i14, dim = 0 )
    CHECK-NEXT:   T4_l_float
    CHECK-NEXT:     = slice( T2_g_float
    CHECK-NEXT:   T4_l_float
    CHECK-NEXT:     = matmul( T3_l_float[iS8{i15}, iS9{i1}], T1_g_float[iS2{i2}, iS3{i3}] )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({10, 6});
  at::Tensor t1 = at::randn({6, 3});
  expectProgramMatchesAten(*hic, {t0, t1}, {at::matmul(t0, t1)});
}

}  // namespace
}  // namespace hostir::test
