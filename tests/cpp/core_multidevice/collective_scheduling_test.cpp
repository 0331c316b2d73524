// IR-in/IR-out tests of collective_scheduling: collectives posted as soon as
// their input is ready and waited for when their output is needed, in the
// order they were lowered in (every rank's order), on single-process
// lowerings of sharded fusions.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core_ir/ir_check.h"
#include "hostir/autodiff/differentiate.h"
#include "hostir/host_ir/lowering.h"
#include "hostir/host_ir/passes/collective_scheduling.h"
#include "hostir/host_ir/passes/communication_lowering.h"
#include "hostir/host_ir/passes/pass_registry.h"
#include "hostir/host_ir/passes/recompute_scheduling.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/cloner.h"
#include "multidevice_test_utils.h"

namespace hostir::test {

class CollectiveSchedulingTest : public MultiDeviceTest {
 protected:
  // `fusion` through presegmentation and the collectives of device 0.
  static std::unique_ptr<HostIrContainer> loweredWithCollectives(Fusion& fusion) {
    runPresegmentationPasses(&fusion);
    std::unique_ptr<HostIrContainer> program = lowerSegmentsToHostIr(fusion);
    lowerReshardingToCommunication(*program, /*my_device=*/0);
    return program;
  }

  // The sequence-parallel MLP block's backward (autodiff), lowered with the
  // collectives of device 0, before collective_scheduling.
  std::unique_ptr<HostIrContainer> loweredMlpBackward() {
    TensorView* x = shardedTensor({8, 4}, mesh2_, 0);
    TensorView* w1 = shardedTensor({6, 4}, mesh2_, 0);
    TensorView* w2 = shardedTensor({4, 6}, mesh2_, 1);
    fusion_.addInput(x);
    fusion_.addInput(w1);
    fusion_.addInput(w2);
    TensorView* h = sharded(linear(x, w1), mesh2_, 1);
    fusion_.addOutput(sharded(linear(gelu(h), w2), mesh2_, 0));
    Differentiated d = differentiate(fusion_);
    return loweredWithCollectives(*d.backward);
  }

  // The same block's backward with h's rows in 2 Stream chunks and symbolic
  // extents, as sp-mlp's (the pipeline views buffers by their local extents).
  Differentiated chunkedMlpBackward() {
    TensorView* x = sharded(makeContigTensor(2), mesh2_, 0);
    TensorView* w1 = sharded(makeContigTensor(2), mesh2_, 0);
    TensorView* w2 = sharded(makeContigTensor(2), mesh2_, 1);
    fusion_.addInput(x);
    fusion_.addInput(w1);
    fusion_.addInput(w2);
    TensorView* h = sharded(linear(x, w1), mesh2_, 1);
    h->split(0, 2, /*inner_split=*/false);
    h->axis(0)->parallelize(ParallelType::Stream);
    fusion_.addOutput(sharded(linear(gelu(h), w2), mesh2_, 0));
    return differentiate(fusion_);
  }

  // chunkedMlpBackward through the whole host-IR pipeline of device 0, printed.
  std::string chunkedMlpBackwardThroughThePipeline() {
    Differentiated d = chunkedMlpBackward();
    runPresegmentationPasses(d.backward.get());
    return lowerToHostIr(*d.backward, hostIrPipeline(MultiDeviceLowering{0, {}}))->toString();
  }
};

// An allgather of a program input is posted before a GEMM that comes first
// in program order but does not feed it, and its Wait moves past that GEMM
// to just before its reader (the add's kernel).
TEST_F(CollectiveSchedulingTest, InputCollectivesArePostedFirstAndWaitedForByTheirReader) {
  TensorView* x = shardedTensor({8, 4}, mesh2_, 0);
  TensorView* y = shardedTensor({8, 4}, mesh2_, -1);
  TensorView* w = shardedTensor({4, 4}, mesh2_, -1);
  fusion_.addInput(x);
  fusion_.addInput(y);
  fusion_.addInput(w);
  // A GEMM (an op of its own) the allgather does not need.
  TensorView* busy = sharded(matmul(y, w), mesh2_, -1);
  TensorView* gathered = sharded(set(x), mesh2_, -1);
  fusion_.addOutput(busy);
  fusion_.addOutput(gathered);
  fusion_.addOutput(sharded(add(gathered, busy), mesh2_, -1));
  std::unique_ptr<HostIrContainer> program = loweredWithCollectives(fusion_);
  // The lowering already put the gather of the input x first
  // (moveInputGathersAheadOfReduceScatters), its Wait right after it.
  EXPECT_TRUE(irCheck(program->toString(), R"(
    CHECK:      (type=Allgather
    CHECK-NEXT: Wait Communication
    CHECK-NEXT: T3_g_float
    CHECK-NEXT:    = matmul(
  )")) << program->toString();
  scheduleCollectives(*program);
  EXPECT_TRUE(irCheck(program->toString(), R"(
    CHECK:      = ALLOCATE(
    CHECK-NEXT: (type=Allgather
    CHECK:      = matmul(
    CHECK-NEXT: Wait Communication
    CHECK-NEXT: PostOnStream
  )")) << program->toString();
}

// The sequence-parallel MLP block's backward (autodiff): the reduce-scatter
// of dx is waited for at the very end, after the wgrad GEMMs it overlaps;
// the re-gather of x, an input, is lowered ahead of it.
TEST_F(CollectiveSchedulingTest, TheMlpBackwardWaitsForTheInputGradAfterTheWgradGemms) {
  std::unique_ptr<HostIrContainer> program = loweredMlpBackward();
  const std::string before = program->toString();
  scheduleCollectives(*program);
  const std::string after = program->toString();
  // The re-gather of x (15), an input, is lowered right after the gather
  // of dy (12), ahead of dx's reduce-scatter (19): it was lowered after it,
  // where the fusion reads it, and crossed the link only once the dgrad
  // GEMMs were done (moveInputGathersAheadOfReduceScatters).
  EXPECT_TRUE(irCheck(before, R"(
    CHECK:      Communication 12 (type=Allgather
    CHECK-NEXT: Wait Communication 12
    CHECK-NEXT: T11_l_float
    CHECK-NEXT: Communication 15 (type=Allgather, team=(0 1), input=T0_g_float
    CHECK:      output=T9_g_float
    CHECK-NEXT: Wait Communication 19
  )")) << before;
  // Both gathers are posted first, under the dgrad GEMMs, the reduce-scatter
  // of dx after the dgrad GEMMs, and its Wait ends the program, after both
  // wgrad GEMMs (the second reads the gathered dy of the first allgather,
  // transposed: three collectives in all, as Megatron-LM's backward of the
  // block).
  EXPECT_TRUE(irCheck(after, R"(
    CHECK:      Communication 12 (type=Allgather
    CHECK-NEXT: T11_l_float
    CHECK-NEXT: Communication 15 (type=Allgather
    CHECK:      = matmul( T6_l_float
    CHECK:      Communication 19 (type=ReduceScatter
    CHECK-NOT:  Wait Communication 19
    CHECK:      = matmul( T10_l_float
    CHECK-NOT:  Communication
    CHECK:      = matmul( T13_l_float
    CHECK-NEXT: Wait Communication 19
    CHECK-NEXT: } // %HostIrContainer
  )")) << after;
}

// recompute_scheduling on the same backward (after collective_scheduling,
// as the pipeline runs them): the recomputed gelu(h) (T5), read only by the
// wgrad GEMM of w2, was computed first and alive through the dgrad GEMMs and
// dh up to that GEMM, which ran last; now gelu(h), the view dy^T and the wgrad
// run together right after dy's gather is waited for, ahead of the dgrad GEMM
// of w2, so neither gelu(h) nor its packing is alive beside dy @ w2, dh and
// dx (the unchunked step's peak on 2 ranks, 4096 x 1024 x 4096: 184.5 ->
// 144.5 MiB, docs/training.md). The collectives keep their order and places.
TEST_F(CollectiveSchedulingTest, TheRecomputedGeluLivesOnlyForTheWgradGemmThatReadsIt) {
  std::unique_ptr<HostIrContainer> program = loweredMlpBackward();
  scheduleCollectives(*program);
  const std::string before = program->toString();
  EXPECT_TRUE(irCheck(before, R"(
    CHECK:      = gelu( T4_g_float
    CHECK:      Wait Communication 12
    CHECK-NEXT: T7_l_float
    CHECK-NEXT: = matmul( T6_l_float
    CHECK:      = matmul( T13_l_float
    CHECK-NEXT: Wait Communication 19
  )")) << before;
  scheduleRecomputes(*program);
  const std::string after = program->toString();
  EXPECT_TRUE(irCheck(after, R"(
    CHECK:      Communication 12 (type=Allgather
    CHECK:      Communication 15 (type=Allgather
    CHECK-NOT:  gelu
    CHECK:      Wait Communication 12
    CHECK-NEXT: T5_l_float
    CHECK-NEXT: = gelu( T4_g_float
    CHECK-NEXT: T13_l_float
    CHECK-NEXT: = permute( T6_l_float
    CHECK-NEXT: T14_g_float
    CHECK-NEXT: = matmul( T13_l_float
    CHECK-NEXT: T7_l_float
    CHECK-NEXT: = matmul( T6_l_float
    CHECK:      Communication 19 (type=ReduceScatter
    CHECK:      = matmul( T10_l_float
    CHECK-NEXT: Wait Communication 19
    CHECK-NEXT: } // %HostIrContainer
  )")) << after;
}

// The same backward with h in 2 Stream chunks (the forward's split carried
// over by differentiate): dy's allgather is pipelined with the dgrad GEMM of
// w2, and the wgrad of w2 reads dy gathered whole. Three things failed here
// before issue 35's pipelined backward:
// - that was a second allgather of dy; now each chunk's allgather writes
//   its rows straight into the whole gathered dy, so dy crosses the link
//   once: two allgathers in the program (dy's, in the prefetch loop, and
//   x's);
// - the GELU backward (dy * gelu'(h), a binary op) ended the pipeline, so
//   the dgrad GEMM of w1 and dx's reduce-scatter ran whole after the loop;
//   now they run per chunk in it (PipelineTail: n-ary pointwise ops whose
//   other operands are computed before the loop, tensors others read kept
//   whole);
// - x's gather went ahead of dy's chunks (hoisted past the prefetch loop),
//   delaying the first dgrad chunk by a whole gather of x; now it is posted
//   right behind them.
TEST_F(CollectiveSchedulingTest, TheChunkedMlpBackwardGathersDyOnce) {
  Differentiated d = chunkedMlpBackward();
  std::unique_ptr<HostIrContainer> program = loweredWithCollectives(*d.backward);
  scheduleCollectives(*program);
  const std::string text = program->toString();
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("(type=Allgather"), 2U) << text;
  EXPECT_EQ(count("(type=ReduceScatter"), 1U) << text;
  // The prefetch loop (dy's chunks) and x's gather (posted behind them,
  // ahead of the loop's reduce-scatters) come first. gelu'(h) (T6) is
  // computed next, by its segment, straight into the first rows of a padded
  // [devices * largest shard] block (T17, seen as T18 [2 devices, rows,
  // ...], since shards may be uneven): no copy. dy's chunks are gathered
  // into their rows of the whole dy (T12: the first rows of the padded T20,
  // seen as T21; T23 is a chunk's rows): no slots of their own, no copy.
  // Then one loop: wait for the chunk (T24, the same rows of T21), the
  // dgrad GEMM of w2, dy * gelu'(h) on the chunk's rows, written
  // over the rows of gelu'(h) it has just read (T26 and T27 are the same
  // slice of T18: gelu'(h) has no other reader), so the whole GELU grad
  // (T7) is a view of gelu'(h)'s blocks (T17 reshaped as T19), not a
  // buffer of its own; then the dgrad GEMM of w1 and the chunk's
  // reduce-scatter of dx. The wgrads read T12 and T7 after it, transposed
  // as views. Before, T7 had blocks of its own, allocated beside
  // gelu'(h)'s: one [S, F/devices] buffer more (32 MiB on rank 0 of
  // sp-mlp --train --chunks 4; 192 -> 160 MiB).
  EXPECT_TRUE(irCheck(text, R"(
    CHECK:      T20_l_float[iS50{i20}, iS51{i4}] = ALLOCATE(
    CHECK-NEXT: T12_l_float[iS30{i0}, iS31{i4}]
    CHECK-NEXT:    = slice( T20_l_float
    CHECK-NEXT: T21_l_float[iS52{2}, iS53{ceilDiv(i0, 2)}, iS54{i4}]
    CHECK-NEXT:    = reshape( T20_l_float
    CHECK-NEXT: FOR StreamIdx in iStreamIdx14{2}:
    CHECK:        T23_l_float[iS57{2}, iS58{i42}, iS59{i4}]
    CHECK-NEXT:      = slice( T21_l_float[iS52{2}, iS53{ceilDiv(i0, 2)}, iS54{i4}], i39, i41, dim = 1 )
    CHECK-NEXT:   Communication 57 (type=Allgather, team=(0 1), input=T22_l_float[iS55{i42}, iS56{i4}], output=T23_l_float
    CHECK:      Communication 59 (type=Allgather, team=(0 1), input=T0_g_float
    CHECK-NEXT: T17_l_float[iS43{i20}, iS44{ceilDiv(i2, 2)}] = ALLOCATE(
    CHECK-NEXT: T6_l_float[iS16{i0}, ideviceIdx.x17{i2}]
    CHECK-NEXT:    = slice( T17_l_float
    CHECK-NEXT: PostOnStream (HostUnit 5, inputs=(T4_g_float
    CHECK:      T18_l_float[iS45{2}, iS46{ceilDiv(i0, 2)}, iS47{ceilDiv(i2, 2)}]
    CHECK-NEXT:    = reshape( T17_l_float
    CHECK-NEXT: T19_l_float
    CHECK-NEXT:    = reshape( T18_l_float
    CHECK-NEXT: T7_l_float
    CHECK-NEXT:    = slice( T19_l_float
    CHECK:      SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx14{2}:
    CHECK:        T24_l_float[iS60{2}, iS61{i56}, iS62{i4}]
    CHECK-NEXT:      = slice( T21_l_float[iS52{2}, iS53{ceilDiv(i0, 2)}, iS54{i4}], i53, i55, dim = 1 )
    CHECK-NEXT:   Wait Communication 57
    CHECK-NOT:       = Set(
    CHECK:           = matmul( T24_l_float
    CHECK:        T26_l_float
    CHECK-NEXT:      = slice( T18_l_float[iS45{2}, iS46{ceilDiv(i0, 2)}, iS47{ceilDiv(i2, 2)}], i53, i55, dim = 1 )
    CHECK-NEXT:   T27_l_float
    CHECK-NEXT:      = slice( T18_l_float[iS45{2}, iS46{ceilDiv(i0, 2)}, iS47{ceilDiv(i2, 2)}], i53, i55, dim = 1 )
    CHECK-NEXT:   T26_l_float
    CHECK-NEXT:      = mul( T25_l_float[iS63{2}, iS64{i56}, iS65{ceilDiv(i5, 2)}], T27_l_float
    CHECK:           = matmul( T26_l_float
    CHECK:        Communication 82 (type=ReduceScatter
    CHECK:      = permute( T7_l_float
    CHECK:      Wait Communication 59
    CHECK:      = permute( T12_l_float
  )")) << text;
  // Four local buffers (five before, when dy's chunks had prefetch slots
  // of their own and were copied into the whole dy; six before that):
  // gelu'(h)'s blocks (dh's too), dy gathered whole, x gathered, and a
  // chunk's dy·w2.
  EXPECT_EQ(count("= ALLOCATE(mem_type=local"), 4U) << text;
  EXPECT_EQ(text.find("= Set( T6_l_float"), std::string::npos) << "gelu'(h) copied:\n" << text;
}

// The chunked backward through the whole host-IR pipeline (stream
// lowering included): the loop of Waits for the chunks' reduce-scatters of
// dx moves past both wgrad GEMMs to the program's end, so the last chunks'
// reduce-scatters cross the link under them, as Megatron-LM's async linear
// hides the input-grad's reduce-scatter behind the wgrad GEMM. Nothing
// after the Waits touches dx or the chunks' partial sums, so they pass the
// loop that recomputes gelu(h) for the wgrad of w2 and its stream fork
// too. Before, they stopped at that fork, and the reduce-scatters still in
// flight after the wgrad of w1 held up the wgrad of w2 (a traced 8-chunk
// step at 500 Mbit/s: 120 ms of Waits before its 104 ms GEMM); before that,
// they ran right after the pipeline's loop (issue 35).
TEST_F(CollectiveSchedulingTest, TheChunkedMlpBackwardWaitsForDxAtItsEnd) {
  const std::string text = chunkedMlpBackwardThroughThePipeline();
  EXPECT_TRUE(irCheck(text, R"(
    CHECK:      Communication 82 (type=ReduceScatter
    CHECK-NOT:  Wait Communication 82
    CHECK:      = permute( T7_l_float
    CHECK-NEXT: Wait Communication 59
    CHECK-NEXT: T11_g_float
    CHECK-NEXT:    = matmul( T9_l_float
    CHECK-NOT:  Wait Communication 82
    CHECK:      FOR StreamIdx from
    CHECK:      PostOnStream
    CHECK:         = matmul( T13_l_float
    CHECK-NEXT: FOR StreamIdx in iStreamIdx14{2}:
    CHECK-NEXT:   Wait Communication 82
    CHECK-NEXT: } // %HostIrContainer
  )")) << text;
}

// The chunked backward through the whole host-IR pipeline: dy's prefetch
// loop and x's re-gather read program inputs alone, so they are posted at
// the program's start, on the caller's stream, ahead of gelu'(h)'s segment
// and of the stream fork before the pipeline's loop; the collectives keep
// their order (dy's chunks, x, then the loop's reduce-scatters). Before,
// they were posted after the fork, so the channel waited for gelu'(h) on
// the caller's stream before sending dy's first chunk (issue 35: 170 ms of
// a traced 8-chunk step on a loaded machine). The prefetch loop writes
// into views of the whole dy (T21 of T20): the views' definitions move up
// with the buffer's allocation, else the loop stopped below them, after
// gelu'(h)'s segment.
TEST_F(CollectiveSchedulingTest, TheChunkedMlpBackwardPostsItsInputGathersBeforeGeluGrad) {
  const std::string text = chunkedMlpBackwardThroughThePipeline();
  EXPECT_TRUE(irCheck(text, R"(
    CHECK-NOT:  CurrentStream
    CHECK-NOT:  PostOnStream
    CHECK:      T20_l_float[iS50{i20}, iS51{i4}] = ALLOCATE(
    CHECK-NEXT: T12_l_float
    CHECK-NEXT:    = slice( T20_l_float
    CHECK-NEXT: T21_l_float
    CHECK-NEXT:    = reshape( T20_l_float
    CHECK-NEXT: FOR StreamIdx in iStreamIdx14{2}:
    CHECK-NOT:    CurrentStream
    CHECK:        Communication 57 (type=Allgather, team=(0 1), input=T22_l_float
    CHECK-NEXT: T10_l_float
    CHECK-NEXT: Communication 59 (type=Allgather, team=(0 1), input=T0_g_float
    CHECK-NEXT: GetCurrentStream into Stream
    CHECK:      PostOnStream (HostUnit
    CHECK:      FOR StreamIdx from
    CHECK:      SetCurrentStream to Stream 0
    CHECK-NEXT: FOR StreamIdx in iStreamIdx14{2}:
    CHECK:        Wait Communication 57
    CHECK:        Communication 82 (type=ReduceScatter
    CHECK:      Wait Communication 59
  )")) << text;
}

// Found by the gradient fuzzer (seed 37 on 2 ranks, issue 38): a collective
// whose input a Stream loop computes slice by slice (the loop writes views
// of the buffer, never the buffer itself) was posted before that loop and
// sent the buffer's uninitialized memory (grads of 1e37, one run in three).
// A view's write is a write of the buffer it views: the Scatter stays after
// the loop.
TEST_F(CollectiveSchedulingTest, ACollectiveWaitsForTheLoopThatWritesItsInputThroughViews) {
  TensorView* x = shardedTensor({6, 4}, mesh2_, -1);
  fusion_.addInput(x);
  TensorView* y = sharded(relu(x), mesh2_, -1);
  y->split(0, 3, /*inner_split=*/false);
  y->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(sharded(set(y), DeviceMesh({0}), -1));
  TensorView* z = sharded(set(y), mesh2_, 0);
  fusion_.addOutput(z);
  runPresegmentationPasses(&fusion_);
  std::unique_ptr<HostIrContainer> program =
      lowerToHostIr(fusion_, hostIrPipeline(MultiDeviceLowering{0, {}}));
  EXPECT_TRUE(irCheck(program->toString(), R"(
    CHECK:      FOR StreamIdx in
    CHECK-NOT:  Communication
    CHECK:      Synchronize Stream ( StreamIdx % numberOfStreams )
    CHECK:      (type=Broadcast
    CHECK:      (type=Scatter
  )")) << program->toString();
}

}  // namespace hostir::test
