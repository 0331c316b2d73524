// Lowering tests that read like the dumps: each case states its intent and
// checks the printed host program with irCheck (core_ir/ir_check.h), then
// runs it against ATen.

#include <gtest/gtest.h>

#include "core_ir/ir_check.h"
#include "lowering/lowering_test_utils.h"

namespace hostir::test {
namespace {

// One set, stream-parallel on axis 0: every worker stream first waits for
// the caller's stream, but only as many as there are iterations (the sync
// loop's bound is the smaller of the extent and numberOfStreams); then one
// iteration per row on rotating streams, each viewing its row of the input
// and the output, and the caller waits for each.
TEST(PrintedLowering, OneStreamParallelSet) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  TensorView* y = set(x);
  y->axis(0)->parallelize(ParallelType::Stream);
  fusion.addOutput(y);

  std::unique_ptr<HostIrContainer> program = lowerToHostIr(fusion);
  EXPECT_TRUE(irCheck(program->toString(), R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK:      = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK-NEXT: FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK-NEXT: SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = HirAliasSelect( T0_g_float[iS0{i0}, iS1{i1}], axis = iS0{i0}, index = StreamIdx )
    CHECK:        = HirAliasSelect(
    CHECK:        = Set(
    CHECK-NEXT:   SetCurrentStream to Stream 0
    CHECK-NEXT:   Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT: } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({5, 3});
  expectMatchesAten(fusion, {t0}, {t0});
}

// A matmul whose rows are split into 4 Stream chunks: the chunk bounds are
// derived scalars, printed once at the top of the loop and referred to by
// name in both slices (one definition, no repeated expression).
TEST(PrintedLowering, ChunkBoundsAreNamedOnceAtTheTopOfTheLoop) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion.addInput(a);
  fusion.addInput(b);
  TensorView* c = matmul(a, b);
  c->split(0, 4, /*inner_split=*/false);
  c->axis(0)->parallelize(ParallelType::Stream);
  fusion.addOutput(c);

  std::unique_ptr<HostIrContainer> program = lowerToHostIr(fusion);
  EXPECT_TRUE(irCheck(program->toString(), R"(
    CHECK:      FOR StreamIdx from 0 to minimum(4, numberOfStreams) step 1:
    CHECK:      FOR StreamIdx in iStreamIdx
    CHECK-NEXT:   = ( StreamIdx * ceilDiv(i0, 4) )
    CHECK-NEXT:   = minimum(
    CHECK-NEXT:   = (
    CHECK-NEXT:   = minimum(
    CHECK-NEXT:   = (
    CHECK-NOT:    ceilDiv(i0, 4) ) ), i0)
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK:        = slice( T0_g_float[iS0{i0}, iS1{i1}], i
    CHECK:        = slice(
    CHECK:        = matmul(
    CHECK:      } // %HostIrContainer
  )"));
  at::Tensor ta = at::randn({10, 3});
  at::Tensor tb = at::randn({3, 2});
  expectMatchesAten(fusion, {ta, tb}, {at::matmul(ta, tb)});
}

// Two stream-parallel sets in a row fuse into one loop; the intermediate is
// only ever used one row at a time, so buffer shrinking allocates a ring of
// numberOfStreams rows instead of the whole tensor.
TEST(PrintedLowering, AnIntermediateUsedRowByRowShrinksToARing) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  TensorView* mid = set(x);
  TensorView* y = set(mid);
  mid->axis(0)->parallelize(ParallelType::Stream);
  y->axis(0)->parallelize(ParallelType::Stream);
  fusion.addOutput(y);

  std::unique_ptr<HostIrContainer> program = lowerToHostIr(fusion);
  EXPECT_TRUE(irCheck(program->toString(), R"(
    CHECK:      = ALLOCATE(mem_type=local, size=( minimum(numberOfStreams, i0) * i1 ), zero_init=false)
    CHECK:      = ALLOCATE(mem_type=global, size=( i0 * i1 ), zero_init=false)
    CHECK:      FOR StreamIdx in iStreamIdx
    CHECK-NEXT:   i16 = ( StreamIdx % minimum(numberOfStreams, i0) )
    CHECK:        = HirAliasSelect(
    CHECK:        index = i16
    CHECK:        = Set(
    CHECK:        = Set(
    CHECK-NOT:  FOR StreamIdx in
    CHECK:      } // %HostIrContainer
  )"));
  at::Tensor t0 = at::randn({6, 4});
  expectMatchesAten(fusion, {t0}, {t0});
}

// With stream parallelization disabled the program has no loop: the Stream
// annotation is ignored and the set runs on the whole tensor.
TEST(PrintedLowering, DisablingStreamParallelizationLeavesNoLoop) {
  ScopedEnv disable("HOSTIR_DISABLE_PASS", "stream_parallelization");
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  TensorView* y = set(x);
  y->axis(0)->parallelize(ParallelType::Stream);
  fusion.addOutput(y);

  std::unique_ptr<HostIrContainer> program = lowerToHostIr(fusion);
  EXPECT_TRUE(irCheck(program->toString(), R"(
    CHECK-NOT:  FOR
    CHECK-NOT:  SetCurrentStream
    CHECK:        = Set( T0_g_float[iS0{i0}, iS1{i1}] )
    CHECK:      } // %HostIrContainer
  )"));
}

}  // namespace
}  // namespace hostir::test
