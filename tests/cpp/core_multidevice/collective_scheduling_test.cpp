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
  EXPECT_TRUE(irCheck(program->toString(), R"(
    CHECK:      = matmul(
    CHECK:      (type=Allgather
    CHECK-NEXT: Wait Communication
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
// of dx is waited for at the very end, after the wgrad GEMMs it overlaps,
// and the collectives keep their lowered order.
TEST_F(CollectiveSchedulingTest, TheMlpBackwardWaitsForTheInputGradAfterTheWgradGemms) {
  TensorView* x = shardedTensor({8, 4}, mesh2_, 0);
  TensorView* w1 = shardedTensor({6, 4}, mesh2_, 0);
  TensorView* w2 = shardedTensor({4, 6}, mesh2_, 1);
  fusion_.addInput(x);
  fusion_.addInput(w1);
  fusion_.addInput(w2);
  TensorView* h = sharded(linear(x, w1), mesh2_, 1);
  fusion_.addOutput(sharded(linear(gelu(h), w2), mesh2_, 0));
  Differentiated d = differentiate(fusion_);
  std::unique_ptr<HostIrContainer> program = loweredWithCollectives(*d.backward);
  const std::string before = program->toString();
  scheduleCollectives(*program);
  const std::string after = program->toString();
  EXPECT_TRUE(irCheck(before, R"(
    CHECK:      output=T10_g_float
    CHECK-NEXT: Wait Communication 16
  )")) << before;
  // The reduce-scatter of dx (16) is posted after the dgrad GEMMs, the
  // re-gather of x (19) after it (collectives keep their order), and its
  // Wait ends the program, after both wgrad GEMMs (the second reads the
  // gathered dy of the first allgather, transposed: three collectives in
  // all, as Megatron-LM's backward of the block).
  EXPECT_TRUE(irCheck(after, R"(
    CHECK:      Communication 12 (type=Allgather
    CHECK:      Communication 16 (type=ReduceScatter
    CHECK-NOT:  Wait Communication 16
    CHECK:      Communication 19 (type=Allgather
    CHECK-NOT:  Wait Communication 16
    CHECK:      = matmul( T9_l_float
    CHECK-NOT:  Communication
    CHECK:      = matmul( T13_l_float
    CHECK-NEXT: Wait Communication 16
    CHECK-NEXT: } // %HostIrContainer
  )")) << after;
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
