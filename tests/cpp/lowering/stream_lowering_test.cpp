// End-to-end lowering of fusions with Stream axes (issue 4): each test
// builds a fusion, lowers it with lowerToHostIr / HostExecutor, checks the
// printed host program with irCheck (core_ir/ir_check.h) and compares the
// results against ATen with 1, 2 and 4 streams.

#include <gtest/gtest.h>

#include "common/scoped_env.h"
#include "core_ir/ir_check.h"
#include "lowering/lowering_test_utils.h"

namespace hostir::test {
namespace {

// These check what the stream pass and buffer shrinking print; grouping
// loop ops into HostUnits (loop_host_units) has its own tests
// (loop_host_units_test.cpp), so it is off here.
class StreamLoweringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }

  ScopedEnv only_stream_passes_{"HOSTIR_DISABLE_PASS", "loop_host_units"};
  Fusion fusion_;
  FusionGuard guard_{&fusion_};
};

// One set, stream-parallel on axis 0: the output is allocated whole, a sync
// loop of min(extent, numberOfStreams) iterations makes the workers wait for
// the caller, then each row is copied on a worker stream (both slices taken at
// StreamIdx along axis 0) and the caller waits for it.
TEST_F(StreamLoweringTest, SingleSetOuterAxis) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* out = set(in);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      -> (T1_g_float[iStreamIdx2{i0}, iS3{i1}]) :
    CHECK-NEXT: GetCurrentStream into Stream 0
    CHECK-NEXT: T1_g_float[iStreamIdx2{i0}, iS3{i1}] = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx2{i0}:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T0_g_float[iS0{i0}, iS1{i1}], axis = iS0{i0}, index = StreamIdx )
    CHECK:        = HirAliasSelect( T1_g_float[iStreamIdx2{i0}, iS3{i1}], axis = iStreamIdx2{i0}, index = StreamIdx )
    CHECK:        = Set(
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  EXPECT_EQ(exprsOfKind<Allocate>(*hic).size(), 1u);

  at::Tensor t0 = at::randn({6, 5});
  expectMatchesAten(fusion_, {t0}, {t0});
}

// Stream on the middle axis: the loops iterate it and both slices are taken
// along it (axis 1 of the input and of the output).
TEST_F(StreamLoweringTest, SingleSetInnerAxis) {
  TensorView* in = makeContigTensor(3);
  fusion_.addInput(in);
  TensorView* out = set(in);
  out->axis(1)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( ( i0 * i1 ) * i2 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i1, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx4{i1}:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T0_g_float[iS0{i0}, iS1{i1}, iS2{i2}], axis = iS1{i1}, index = StreamIdx )
    CHECK:        = HirAliasSelect( T1_g_float[iS3{i0}, iStreamIdx4{i1}, iS5{i2}], axis = iStreamIdx4{i1}, index = StreamIdx )
    CHECK:        = Set( T2_l_float[iS6{i0}, iS7{i2}] )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({3, 5, 4});
  expectMatchesAten(fusion_, {t0}, {t0});
}

// A row broadcast over the stream axis and a column broadcast along it: the
// broadcasts run whole before the loops, the row operand is sliced at index 0
// of its broadcast axis, the column one at StreamIdx; both binary ops share one
// loop and the intermediate `y` is a ring of minimum(numberOfStreams, i0)
// rows.
TEST_F(StreamLoweringTest, BinaryOpWithBroadcastOperand) {
  TensorView* x = makeContigTensor(2);
  TensorView* row = makeContigTensor(1);
  TensorView* col = makeContigTensor(1);
  fusion_.addInput(x);
  fusion_.addInput(row);
  fusion_.addInput(col);
  // row broadcast over the stream axis; col along it.
  TensorView* y = add(x, broadcast(row, {true, false}));
  TensorView* out = mul(y, broadcast(col, {false, true}));
  y->axis(0)->parallelize(ParallelType::Stream);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: T3_l_float[bS4{1}, iS5{i2}]
    CHECK-NEXT:   = broadcast( T1_g_float[iS2{i2}], is_broadcast = {1, 0} )
    CHECK-NEXT: T4_l_float[iS6{i3}, bS7{1}]
    CHECK-NEXT:   = broadcast( T2_g_float[iS3{i3}], is_broadcast = {0, 1} )
    CHECK-NEXT: = ALLOCATE(mem_type=local, size=( minimum(numberOfStreams, i0) * i1 ), zero_init=false)
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in
    CHECK-NEXT:   i21 = ( StreamIdx % minimum(numberOfStreams, i0) )
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T0_g_float[iS0{i0}, iS1{i1}], axis = iS0{i0}, index = StreamIdx )
    CHECK:        = HirAliasSelect( T3_l_float[bS4{1}, iS5{i2}], axis = bS4{1}, index = 0 )
    CHECK:        axis = iS17{minimum(numberOfStreams, i0)}, index = i21 )
    CHECK:        = add(
    CHECK:        = HirAliasSelect( T4_l_float[iS6{i3}, bS7{1}], axis = iS6{i3}, index = StreamIdx )
    CHECK:        = HirAliasSelect( T6_g_float
    CHECK:        = mul(
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));

  at::Tensor t0 = at::randn({6, 5});
  at::Tensor t1 = at::randn({5});
  at::Tensor t2 = at::randn({6});
  expectMatchesAten(fusion_, {t0, t1, t2}, {(t0 + t1.unsqueeze(0)) * t2.unsqueeze(1)});
}

// Binary ops with a scalar input and a constant: the scalars are used as they
// are inside the loop; the intermediate is a ring.
TEST_F(StreamLoweringTest, BinaryOpWithScalars) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  Scalar* s = scalarInput(DataType::Double);
  TensorView* out = mul(add(x, s), 2.0);
  out->definition()->input(0)->as<TensorView>()->axis(0)->parallelize(ParallelType::Stream);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=local, size=( minimum(numberOfStreams, i0) * i1 ), zero_init=false)
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK:      SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in
    CHECK-NEXT:   i18 = ( StreamIdx % minimum(numberOfStreams, i0) )
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T0_g_float
    CHECK:        = HirAliasSelect(
    CHECK:        = add( T3_l_float[iS6{i1}], d2 )
    CHECK:        = HirAliasSelect( T2_g_float
    CHECK:        = mul( T4_l_float[iS7{i1}], 2.0 )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({4, 7});
  expectMatchesAtenValues(fusion_, {t0, 0.5}, {(t0 + 0.5) * 2.0});
}

// Two stream-parallel sets fuse into one loop; the intermediate, used one row
// at a time, shrinks to a ring of minimum(numberOfStreams, i0) rows selected
// at StreamIdx % minimum(numberOfStreams, i0), while the output is allocated
// whole.
TEST_F(StreamLoweringTest, TwoSetsShareOneLoopAndShrink) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* mid = set(in);
  TensorView* out = set(mid);
  mid->axis(0)->parallelize(ParallelType::Stream);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: T6_l_float[iS9{minimum(numberOfStreams, i0)}, iS10{i1}] = ALLOCATE(mem_type=local, size=( minimum(numberOfStreams, i0) * i1 ), zero_init=false)
    CHECK-NEXT: T2_g_float[iStreamIdx4{i0}, iS5{i1}] = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in
    CHECK-NEXT:   i16 = ( StreamIdx % minimum(numberOfStreams, i0) )
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T0_g_float
    CHECK:        = HirAliasSelect( T6_l_float[iS9{minimum(numberOfStreams, i0)}, iS10{i1}], axis = iS9{minimum(numberOfStreams, i0)}, index = i16 )
    CHECK:        = Set( T3_l_float
    CHECK-NOT:    = HirAliasSelect( T6_l_float
    CHECK:        = HirAliasSelect( T2_g_float[iStreamIdx4{i0}, iS5{i1}], axis = iStreamIdx4{i0}, index = StreamIdx )
    CHECK:        = Set( T4_l_float
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  // The ring is not an output, the output is; one slice of the ring per
  // iteration serves both sets.
  std::vector<const Allocate*> allocations = exprsOfKind<Allocate>(*hic);
  ASSERT_EQ(allocations.size(), 2u);
  EXPECT_NE(allocations[0]->toString().find("size=( minimum(numberOfStreams, i0) * "),
            std::string::npos)
      << allocations[0]->toString();
  EXPECT_FALSE(hic->isOutput(allocations[0]->buffer()));
  EXPECT_TRUE(hic->isOutput(allocations[1]->buffer()));
  EXPECT_EQ(allocations[1]->toString().find("numberOfStreams"), std::string::npos);
  int ring_selects = 0;
  for (const HirAliasSelect* select : exprsOfKind<HirAliasSelect>(*hic)) {
    if (select->in() == allocations[0]->buffer()) {
      ++ring_selects;
      EXPECT_EQ(select->index()->toInlineString(), "( StreamIdx % minimum(numberOfStreams, i0) )");
    }
  }
  EXPECT_EQ(ring_selects, 1);

  // More iterations (9) than streams: ring slots are reused.
  at::Tensor t0 = at::randn({9, 33});
  expectMatchesAten(fusion_, {t0}, {t0});
}

// A set that is not stream-parallel between two that are: two loops with the
// plain set between them, each loop with its own sync loop; `a` is read whole
// by the middle set, so nothing shrinks.
TEST_F(StreamLoweringTest, ThreeSetsMiddleNotStreamParallel) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* a = set(in);
  TensorView* b = set(a);
  TensorView* c = set(b);
  a->axis(0)->parallelize(ParallelType::Stream);
  c->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(c);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: T1_l_float[iStreamIdx2{i0}, iS3{i1}] = ALLOCATE(mem_type=local, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx2{i0}:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T0_g_float
    CHECK:        = HirAliasSelect( T1_l_float
    CHECK:        = Set(
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: T2_l_float[iS4{i0}, iS5{i1}]
    CHECK-NEXT:   = Set( T1_l_float[iStreamIdx2{i0}, iS3{i1}] )
    CHECK-NEXT: T3_g_float[iStreamIdx6{i0}, iS7{i1}] = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx6{i0}:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T2_l_float
    CHECK:        = HirAliasSelect( T3_g_float
    CHECK:        = Set(
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  EXPECT_EQ(hic->toString().find("ALLOCATE(mem_type=local, size=( minimum(numberOfStreams"),
            std::string::npos);
  at::Tensor t0 = at::randn({5, 8});
  expectMatchesAten(fusion_, {t0}, {t0});
}

// A sum over the last axis, Stream on the first: each row slice is reduced on
// its worker stream (the slice's axis 1 is the original axis 2).
TEST_F(StreamLoweringTest, ReductionOverNonStreamAxis) {
  TensorView* in = makeContigTensor(3);
  fusion_.addInput(in);
  TensorView* out = sum(in, {2});
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK:      SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx3{i0}:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T0_g_float[iS0{i0}, iS1{i1}, iS2{i2}], axis = iS0{i0}, index = StreamIdx )
    CHECK:        = HirAliasSelect( T1_g_float
    CHECK:        = sum( T2_l_float[iS6{i1}, iS7{i2}], axes = {1} )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({4, 3, 10});
  expectMatchesAten(fusion_, {t0}, {t0.sum({2})});
}

// A sum over the middle axis, Stream on the last: slices along axis 2, the
// reduced axis stays axis 1 of the slice.
TEST_F(StreamLoweringTest, ReductionOverMiddleAxisStreamOnLast) {
  TensorView* in = makeContigTensor(3);
  fusion_.addInput(in);
  TensorView* out = sum(in, {1});
  out->axis(-1)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i2 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i2, numberOfStreams) step 1:
    CHECK:      SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx5{i2}:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T0_g_float[iS0{i0}, iS1{i1}, iS2{i2}], axis = iS2{i2}, index = StreamIdx )
    CHECK:        = HirAliasSelect( T1_g_float
    CHECK:        = sum( T2_l_float[iS6{i0}, iS7{i1}], axes = {1} )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({4, 3, 5});
  expectMatchesAten(fusion_, {t0}, {t0.sum({1})});
}

// Matmul with Stream on M: A is sliced by rows, B is used whole.
TEST_F(StreamLoweringTest, MatmulStreamOnM) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* out = matmul(a, b);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i3 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK:      SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx4{i0}:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NOT:    = HirAliasSelect( T1_g_float
    CHECK:        = HirAliasSelect( T0_g_float[iS0{i0}, iS1{i1}], axis = iS0{i0}, index = StreamIdx )
    CHECK:        = HirAliasSelect( T2_g_float
    CHECK:        = matmul( T3_l_float[iS6{i1}], T1_g_float[iS2{i2}, iS3{i3}] )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({6, 8});
  at::Tensor t1 = at::randn({8, 5});
  expectMatchesAten(fusion_, {t0, t1}, {at::matmul(t0, t1)}, 1e-4, 1e-5);
}

// Matmul with Stream on N: B is sliced by columns (axis 1), A is used whole.
TEST_F(StreamLoweringTest, MatmulStreamOnN) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* out = matmul(a, b);
  out->axis(1)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i3 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i3, numberOfStreams) step 1:
    CHECK:      SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx5{i3}:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NOT:    = HirAliasSelect( T0_g_float
    CHECK:        = HirAliasSelect( T1_g_float[iS2{i2}, iS3{i3}], axis = iS3{i3}, index = StreamIdx )
    CHECK:        = HirAliasSelect( T2_g_float[iS4{i0}, iStreamIdx5{i3}], axis = iStreamIdx5{i3}, index = StreamIdx )
    CHECK:        = matmul( T0_g_float[iS0{i0}, iS1{i1}], T3_l_float[iS6{i2}] )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({6, 8});
  at::Tensor t1 = at::randn({8, 5});
  expectMatchesAten(fusion_, {t0, t1}, {at::matmul(t0, t1)}, 1e-4, 1e-5);
}

// Batched matmul with Stream on the batch axis: A, B and the output are all
// sliced at StreamIdx along axis 0.
TEST_F(StreamLoweringTest, BatchedMatmulStreamOnBatch) {
  TensorView* a = makeContigTensor(3);
  TensorView* b = makeContigTensor(3);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* out = matmul(a, b);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( ( i0 * i1 ) * i5 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK:      SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx6{i0}:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T0_g_float[iS0{i0}, iS1{i1}, iS2{i2}], axis = iS0{i0}, index = StreamIdx )
    CHECK:        = HirAliasSelect( T1_g_float[iS3{i3}, iS4{i4}, iS5{i5}], axis = iS3{i3}, index = StreamIdx )
    CHECK:        = HirAliasSelect( T2_g_float
    CHECK:        = matmul( T3_l_float[iS9{i1}, iS10{i2}], T4_l_float[iS11{i4}, iS12{i5}] )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({5, 4, 8});
  at::Tensor t1 = at::randn({5, 8, 3});
  expectMatchesAten(fusion_, {t0, t1}, {at::matmul(t0, t1)}, 1e-4, 1e-5);
}

// M split into 4 Stream chunks: the loop runs 4 iterations whatever M is and
// takes each chunk of A's and the output's rows with a slice (narrow) between
// the chunk bounds; B is used whole.
TEST_F(StreamLoweringTest, SplitMatmulChunks) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* out = matmul(a, b);
  out->split(0, 4, /*inner_split=*/false);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i3 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(4, numberOfStreams) step 1:
    CHECK:      SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx6{4}:
    CHECK-NOT:  HirAliasSelect
    CHECK:        SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   T3_l_float
    CHECK-NEXT:     = slice( T0_g_float[iS0{i0}, iS1{i1}], i12, i14, dim = 0 )
    CHECK-NEXT:   T4_l_float
    CHECK-NEXT:     = slice( T2_g_float[iStreamIdx6{4}, iS7{ceilDiv(i0, 4)}, iS5{i3}], i12, i14, dim = 0 )
    CHECK-NEXT:   T4_l_float
    CHECK-NEXT:     = matmul( T3_l_float[iS8{i15}, iS9{i1}], T1_g_float[iS2{i2}, iS3{i3}] )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  for (int64_t m : {16, 14, 5, 3}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    at::Tensor t0 = at::randn({m, 8});
    at::Tensor t1 = at::randn({8, 6});
    expectMatchesAten(fusion_, {t0, t1}, {at::matmul(t0, t1)}, 1e-4, 1e-5);
  }
}

// Split stream axis on a set: 4 chunks of ceilDiv(extent, 4) rows, each a
// slice of the input and of the output, the last ones clamped to the extent.
TEST_F(StreamLoweringTest, SplitStreamAxisDivisibleAndNot) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* out = set(in);
  out->split(0, 4, /*inner_split=*/false);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(4, numberOfStreams) step 1:
    CHECK:      SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx4{4}:
    CHECK-NEXT:   i9 = ( StreamIdx * ceilDiv(i0, 4) )
    CHECK-NEXT:   i10 = minimum(i9, i0)
    CHECK-NEXT:   i11 = ( i10 + ceilDiv(i0, 4) )
    CHECK-NEXT:   i12 = minimum(i11, i0)
    CHECK-NEXT:   i13 = ( i12 - i10 )
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   T2_l_float
    CHECK-NEXT:     = slice( T0_g_float[iS0{i0}, iS1{i1}], i10, i12, dim = 0 )
    CHECK-NEXT:   T3_l_float
    CHECK-NEXT:     = slice( T1_g_float[iStreamIdx4{4}, iS5{ceilDiv(i0, 4)}, iS3{i1}], i10, i12, dim = 0 )
    CHECK-NEXT:   T3_l_float
    CHECK-NEXT:     = Set( T2_l_float[iS6{i13}, iS7{i1}] )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  // 8: 2+2+2+2. 10: 3+3+3+1. 5: 2+2+1+0 (the last chunk is empty). 3: 1+1+1+0.
  for (int64_t rows : {8, 10, 5, 3, 1}) {
    SCOPED_TRACE("rows = " + std::to_string(rows));
    at::Tensor t0 = at::randn({rows, 7});
    expectMatchesAten(fusion_, {t0}, {t0});
  }
}

// set -> abs -> add on 3 Stream chunks: both intermediates shrink to rings of
// minimum(numberOfStreams, 3) chunks (a chunk slot, narrowed to the chunk's rows), the
// output is allocated whole; one main loop.
TEST_F(StreamLoweringTest, SplitStreamAxisBufferShrinking) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* mid = abs(set(in));
  TensorView* out = add(mid, 1.0);
  for (TensorView* tv : {mid->definition()->input(0)->as<TensorView>(), mid, out}) {
    tv->split(0, 3, /*inner_split=*/false);
    tv->axis(0)->parallelize(ParallelType::Stream);
  }
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: T8_l_float[iS22{minimum(numberOfStreams, 3)}, iS23{ceilDiv(i0, 3)}, iS24{i1}] = ALLOCATE(mem_type=local, size=( ( minimum(numberOfStreams, 3) * ceilDiv(i0, 3) ) * i1 ), zero_init=false)
    CHECK-NEXT: T10_l_float[iS27{minimum(numberOfStreams, 3)}, iS28{ceilDiv(i0, 3)}, iS29{i1}] = ALLOCATE(mem_type=local, size=( ( minimum(numberOfStreams, 3) * ceilDiv(i0, 3) ) * i1 ), zero_init=false)
    CHECK-NEXT: T3_g_float[iStreamIdx12{3}, iS13{ceilDiv(i0, 3)}, iS11{i1}] = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(3, numberOfStreams) step 1:
    CHECK:      FOR StreamIdx in iStreamIdx4{3}:
    CHECK:        i43 = ( StreamIdx % minimum(numberOfStreams, 3) )
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = slice( T0_g_float[iS0{i0}, iS1{i1}], i15, i17, dim = 0 )
    CHECK:        = HirAliasSelect( T8_l_float[iS22{minimum(numberOfStreams, 3)}, iS23{ceilDiv(i0, 3)}, iS24{i1}], axis = iS22{minimum(numberOfStreams, 3)}, index = i43 )
    CHECK:        = slice( T9_l_float[iS25{ceilDiv(i0, 3)}, iS26{i1}], 0, i18, dim = 0 )
    CHECK:        = Set( T4_l_float
    CHECK:        = HirAliasSelect( T10_l_float
    CHECK:        = slice( T11_l_float[iS30{ceilDiv(i0, 3)}, iS31{i1}], 0, i18, dim = 0 )
    CHECK:        = abs( T5_l_float
    CHECK:        = slice( T3_g_float[iStreamIdx12{3}, iS13{ceilDiv(i0, 3)}, iS11{i1}], i15, i17, dim = 0 )
    CHECK:        = add( T6_l_float[iS18{i18}, iS19{i1}], 1.0 )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  for (int64_t rows : {12, 10, 7, 2, 1}) {
    SCOPED_TRACE("rows = " + std::to_string(rows));
    at::Tensor t0 = at::randn({rows, 5});
    expectMatchesAten(fusion_, {t0}, {at::abs(t0) + 1.0});
  }
}

// Two sets on 4 Stream chunks: the intermediate is a ring of chunk slots;
// 4 chunks of 5 rows are 2+2+1+0, the last chunk starting past the end.
TEST_F(StreamLoweringTest, SplitStreamAxisBufferShrinkingChunkPastTheEnd) {
  addTwoSetsOnStreamChunks(fusion_, 4);
  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: T6_l_float[iS16{minimum(numberOfStreams, 4)}, iS17{ceilDiv(i0, 4)}, iS18{i1}] = ALLOCATE(mem_type=local, size=( ( minimum(numberOfStreams, 4) * ceilDiv(i0, 4) ) * i1 ), zero_init=false)
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK:      FOR StreamIdx in iStreamIdx4{4}:
    CHECK:        i35 = ( StreamIdx % minimum(numberOfStreams, 4) )
    CHECK:        = HirAliasSelect( T6_l_float[iS16{minimum(numberOfStreams, 4)}, iS17{ceilDiv(i0, 4)}, iS18{i1}], axis = iS16{minimum(numberOfStreams, 4)}, index = i35 )
    CHECK:        = slice( T7_l_float[iS19{ceilDiv(i0, 4)}, iS20{i1}], 0, i15, dim = 0 )
    CHECK:        = Set( T3_l_float
    CHECK:        = Set( T4_l_float
    CHECK:      } // %HostIrContainer
  )"));
  for (int64_t rows : {5, 6, 9, 13}) {
    SCOPED_TRACE("rows = " + std::to_string(rows));
    at::Tensor t0 = at::randn({rows, 3});
    expectMatchesAten(fusion_, {t0}, {t0});
  }
}

// set, mul, add on one Stream axis: both intermediates are rings of
// minimum(numberOfStreams, i0) rows, the output is whole, all three ops share one loop.
TEST_F(StreamLoweringTest, BufferShrinkingWithManyIterations) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* a = set(in);
  TensorView* b = mul(a, 3.0);
  TensorView* c = add(b, a);
  for (TensorView* tv : {a, b, c}) {
    tv->axis(0)->parallelize(ParallelType::Stream);
  }
  fusion_.addOutput(c);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: = ALLOCATE(mem_type=local, size=( minimum(numberOfStreams, i0) * i1 ), zero_init=false)
    CHECK-NEXT: = ALLOCATE(mem_type=local, size=( minimum(numberOfStreams, i0) * i1 ), zero_init=false)
    CHECK-NEXT: = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK:      FOR StreamIdx in iStreamIdx2{i0}:
    CHECK:        = Set(
    CHECK:        = mul( T5_l_float[iS9{i1}], 3.0 )
    CHECK:        = add( T6_l_float[iS10{i1}], T5_l_float[iS9{i1}] )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  // 37 iterations on at most 4 ring slots.
  at::Tensor t0 = at::randn({37, 65});
  expectMatchesAten(fusion_, {t0}, {t0 * 3.0 + t0});
}

// A segment that is not host-lowerable (abs then exp) between two
// stream-parallel sets: one PostOnStream between the two loops, each loop with
// its own allocation and sync loop.
TEST_F(StreamLoweringTest, PostOnStreamSegmentBetweenStreamLoops) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* a = set(in);
  TensorView* b = exp(abs(a));  // not host-lowerable: one PostOnStream segment
  TensorView* c = set(b);
  a->axis(0)->parallelize(ParallelType::Stream);
  c->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(c);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK-NEXT: T1_l_float[iStreamIdx2{i0}, iS3{i1}] = ALLOCATE(mem_type=local, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx2{i0}:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T0_g_float
    CHECK:        = HirAliasSelect( T1_l_float
    CHECK:        = Set(
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: PostOnStream (HostUnit 1, inputs=(T1_l_float[iStreamIdx2{i0}, iS3{i1}]), outputs=(T2_l_float[iS4{i0}, iS5{i1}]))
    CHECK-NEXT: T3_g_float[iStreamIdx6{i0}, iS7{i1}] = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx6{i0}:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T2_l_float
    CHECK:        = HirAliasSelect( T3_g_float
    CHECK:        = Set(
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  std::vector<const PostOnStream*> posts = exprsOfKind<PostOnStream>(*hic);
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0]->hostUnit()->fusion()->exprs().size(), 2u);
  at::Tensor t0 = at::randn({6, 9});
  expectMatchesAten(fusion_, {t0}, {at::exp(at::abs(t0))});
}

// An op without a Stream axis between two stream-parallel ops, reading
// nothing the loop computes (a GEMM of two inputs), runs before the loop,
// and both stream-parallel ops share one loop (one sync loop, one main
// loop) instead of two.
TEST_F(StreamLoweringTest, IndependentOpBetweenStreamOpsRunsBeforeTheLoop) {
  TensorView* in = makeContigTensor(2);
  TensorView* left = makeContigTensor(2);
  TensorView* right = makeContigTensor(2);
  fusion_.addInput(in);
  fusion_.addInput(left);
  fusion_.addInput(right);
  TensorView* a = set(in);
  TensorView* product = matmul(left, right);
  TensorView* c = add(a, product);
  a->axis(0)->parallelize(ParallelType::Stream);
  c->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(c);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(topLevelLoops(*hic).size(), 2u) << hic->toString();
  const std::vector<const MatmulOp*> matmuls = exprsOfKind<MatmulOp>(*hic);
  ASSERT_EQ(matmuls.size(), 1u);
  EXPECT_TRUE(hic->topLevel().contains(matmuls[0])) << hic->toString();
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      = matmul(
    CHECK:      FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK:      FOR StreamIdx in
    CHECK:        = Set(
    CHECK:        = add(
    CHECK:      } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({6, 5});
  at::Tensor t1 = at::randn({6, 3});
  at::Tensor t2 = at::randn({3, 5});
  expectMatchesAten(fusion_, {t0, t1, t2}, {t0 + at::matmul(t1, t2)});
}

// A stream-parallel unary chain: its ops run in the loop, one by one, not as
// a PostOnStream segment.
TEST_F(StreamLoweringTest, StreamParallelUnaryChain) {
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
    CHECK-NOT:  PostOnStream
    CHECK:      FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK:      FOR StreamIdx in iStreamIdx2{i0}:
    CHECK:        = Set( T4_l_float
    CHECK:        = abs( T5_l_float[iS9{i1}] )
    CHECK:        = exp( T6_l_float[iS10{i1}] )
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({5, 9});
  expectMatchesAten(fusion_, {t0}, {at::exp(at::abs(t0))});
}

// Stream loops over tensors of different extents do not fuse.
TEST_F(StreamLoweringTest, LoopsOverDifferentExtentsStaySeparate) {
  TensorView* x = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  fusion_.addInput(x);
  fusion_.addInput(y);
  TensorView* a = set(x);
  TensorView* b = set(y);
  a->axis(0)->parallelize(ParallelType::Stream);
  b->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(a);
  fusion_.addOutput(b);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  // A sync loop and a main loop each, over i0 and over i2.
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK:      FOR StreamIdx in iStreamIdx4{i0}:
    CHECK:        = HirAliasSelect( T0_g_float
    CHECK-NOT:    T1_g_float
    CHECK:        Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: T3_g_float[iStreamIdx6{i2}, iS7{i3}] = ALLOCATE(mem_type=global, size=( i2 * i3 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i2, numberOfStreams) step 1:
    CHECK:      FOR StreamIdx in iStreamIdx6{i2}:
    CHECK:        = HirAliasSelect( T1_g_float
    CHECK:      } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({3, 4});
  at::Tensor t1 = at::randn({5, 4});
  expectMatchesAten(fusion_, {t0, t1}, {t0, t1});
}

// Different chunk counts on the same axis do not fuse either.
TEST_F(StreamLoweringTest, DifferentChunkCountsStaySeparate) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* a = set(in);
  TensorView* b = set(a);
  a->split(0, 2, /*inner_split=*/false);
  a->axis(0)->parallelize(ParallelType::Stream);
  b->split(0, 4, /*inner_split=*/false);
  b->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(b);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  // The 2-chunk loop writes `a` whole; the 4-chunk loop reads it back.
  EXPECT_TRUE(irCheck(hic->toString(), R"(
    CHECK:      T1_l_float[iStreamIdx4{2}, iS5{ceilDiv(i0, 2)}, iS3{i1}] = ALLOCATE(mem_type=local, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(2, numberOfStreams) step 1:
    CHECK:      FOR StreamIdx in iStreamIdx4{2}:
    CHECK-NEXT:   = ( StreamIdx * ceilDiv(i0, 2) )
    CHECK:        Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: T2_g_float
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(4, numberOfStreams) step 1:
    CHECK:      FOR StreamIdx in iStreamIdx8{4}:
    CHECK-NEXT:   = ( StreamIdx * ceilDiv(i0, 4) )
    CHECK:        = slice( T1_l_float
    CHECK:      } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({9, 4});
  expectMatchesAten(fusion_, {t0}, {t0});
}

}  // namespace
}  // namespace hostir::test
