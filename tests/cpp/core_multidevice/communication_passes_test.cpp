// IR-in/IR-out tests of the multi-device host IR passes
// (resharding_to_communication, other_devices_work_removal), single-process:
// the rank is the passes' parameter, so every rank's program is checked
// without launching any. Input: a fusion through the presegmentation passes
// and lowerSegmentsToHostIr; output: the printed program after the pass.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core_ir/ir_check.h"
#include "hostir/host_ir/lowering.h"
#include "hostir/host_ir/passes/communication_lowering.h"
#include "hostir/host_ir/passes/pass_registry.h"
#include "hostir/ir/arith.h"
#include "multidevice_test_utils.h"

namespace hostir::test {

class CommunicationPassesTest : public MultiDeviceTest {
 protected:
  // The segments as the passes receive them.
  std::unique_ptr<HostIrContainer> lowered() {
    runPresegmentationPasses(&fusion_);
    return lowerSegmentsToHostIr(fusion_);
  }
};

// resharding_to_communication: a set from sharded to replicated becomes an
// allocation of the whole output, an Allgather over the mesh and its Wait; the
// compute before it stays as it was.
TEST_F(CommunicationPassesTest, ShardedToReplicatedSetBecomesAllgather) {
  TensorView* x = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(x);
  TensorView* y = sharded(relu(x), mesh2_, 0);
  fusion_.addOutput(sharded(set(y), mesh2_, -1));
  std::unique_ptr<HostIrContainer> program = lowered();
  EXPECT_TRUE(irCheck(program->toString(), R"(
    CHECK:      T1_l_float[ideviceIdx.x2{8}, iS3{4}]
    CHECK-NEXT:    = relu( T0_g_float[ideviceIdx.x0{8}, iS1{4}] )
    CHECK-NEXT: T2_g_float[iS4{8}, iS5{4}]
    CHECK-NEXT:    = Set( T1_l_float[ideviceIdx.x2{8}, iS3{4}] )
  )")) << program->toString();

  lowerReshardingToCommunication(*program, /*my_device=*/0);
  EXPECT_TRUE(irCheck(program->toString(), R"(
    CHECK:      = relu( T0_g_float[ideviceIdx.x0{8}, iS1{4}] )
    CHECK-NEXT: T2_g_float[iS4{8}, iS5{4}] = ALLOCATE(mem_type=global, size=( 8 * 4 ), zero_init=false)
    CHECK-NEXT: Communication 3 (type=Allgather, team=(0 1), input=T1_l_float[ideviceIdx.x2{8}, iS3{4}], output=T2_g_float[iS4{8}, iS5{4}])
    CHECK-NEXT: Wait Communication 3
    CHECK-NOT:  = Set(
    CHECK:      } // %HostIrContainer
  )")) << program->toString();
}

// resharding_to_communication: a Stream split on a plain allgather's output
// was dropped without a word (the collective moves the tensor whole); now
// every rank rejects it, naming the tensor and the collective, and says
// what pipelines instead.
TEST_F(CommunicationPassesTest, StreamAxisOnACollectivesOutputIsAnError) {
  TensorView* x = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(x);
  TensorView* gathered = sharded(set(x), mesh2_, -1);
  gathered->split(0, 2, /*inner_split=*/false);
  gathered->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(gathered);
  for (int64_t rank : {0, 1}) {
    std::unique_ptr<HostIrContainer> program = lowered();
    EXPECT_HOSTIR_ERROR(lowerReshardingToCommunication(*program, rank),
                        {"a Stream axis on a collective's output is not pipelined",
                         "type=Allgather", "stream-parallelize the tensors computed from it"});
  }
}

// Found by the sharded fuzzer with Stream axes (seed 371, 2 ranks, the
// sanitizer job's long run): a replicated tensor moved onto device 1 alone
// (a Broadcast whose team is {1}) with a Stream split on the result. The
// check (then in stream_axes_check) looked at the Communications of this
// rank's program, and device 0, outside the team, has none: device 1
// rejected the program, device 0 ran it and met device 1's next program in
// the cross-rank check. Now each rank's whole pipeline rejects it,
// whichever collectives the rank joins.
TEST_F(CommunicationPassesTest, StreamAxisOnACollectiveThisRankDoesNotJoinIsAnErrorToo) {
  TensorView* x = shardedTensor({8, 4}, mesh2_, -1);
  fusion_.addInput(x);
  TensorView* y = sharded(relu(x), mesh2_, -1);
  TensorView* on_device_1 = sharded(set(y), DeviceMesh({1}), -1);
  on_device_1->split(0, 4, /*inner_split=*/false);
  on_device_1->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(sharded(set(on_device_1), mesh2_, -1));
  runPresegmentationPasses(&fusion_);
  for (int64_t rank : {0, 1}) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    EXPECT_HOSTIR_ERROR(
        lowerToHostIr(fusion_, hostIrPipeline(MultiDeviceLowering{rank, {}})),
        {"a Stream axis on a collective's output is not pipelined", "type=Broadcast, team=(1)"});
  }
}

// resharding_to_communication: a sum over the sharded axis becomes the local
// sum into a partial, then an Allreduce of the partials into the output.
TEST_F(CommunicationPassesTest, SumOverShardedAxisBecomesPartialAndAllreduce) {
  TensorView* x = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(x);
  fusion_.addOutput(sharded(sum(x, {0}), mesh2_, -1));
  std::unique_ptr<HostIrContainer> program = lowered();
  lowerReshardingToCommunication(*program, /*my_device=*/1);
  EXPECT_TRUE(irCheck(program->toString(), R"(
    CHECK:      T2_l_float[rS4{8}, iS5{4}]
    CHECK-NEXT:    = sum( T0_g_float[ideviceIdx.x0{8}, iS1{4}], axes = {0} )
    CHECK-NEXT: T1_g_float[rS2{8}, iS3{4}] = ALLOCATE(mem_type=global, size=4, zero_init=false)
    CHECK-NEXT: Communication 3 (type=Allreduce, team=(0 1), reduce_op=sum, input=T2_l_float[rS4{8}, iS5{4}], output=T1_g_float[rS2{8}, iS3{4}])
    CHECK-NEXT: Wait Communication 3
    CHECK-NEXT: } // %HostIrContainer
  )")) << program->toString();
}

// other_devices_work_removal: compute on a mesh without this rank is dropped,
// the collective this rank joins stays. Rank 1 (the sender) keeps its relu.
TEST_F(CommunicationPassesTest, RemovalDropsWorkOnlyOtherDevicesDo) {
  DeviceMesh rank1({1});
  TensorView* a = shardedTensor({8, 4}, rank1, -1);
  fusion_.addInput(a);
  TensorView* b = sharded(relu(a), rank1, -1);
  fusion_.addOutput(sharded(set(b), mesh2_, -1));
  for (int64_t rank : {0, 1}) {
    std::unique_ptr<HostIrContainer> program = lowered();
    lowerReshardingToCommunication(*program, rank);
    EXPECT_TRUE(irCheck(program->toString(), R"(
      CHECK:      = relu( T0_g_float[iS0{8}, iS1{4}] )
      CHECK:      Communication 3 (type=Broadcast, team=(0 1), root=1
      CHECK-NEXT: Wait Communication 3
    )")) << program->toString();
    removeOtherDevicesWork(*program, rank);
    const std::string text = program->toString();
    EXPECT_EQ(text.find("= relu(") != std::string::npos, rank == 1) << "rank " << rank << "\n"
                                                                    << text;
    EXPECT_TRUE(irCheck(text, R"(
      CHECK:      T2_g_float[iS4{8}, iS5{4}] = ALLOCATE(
      CHECK-NEXT: Communication 3 (type=Broadcast, team=(0 1), root=1
      CHECK-NEXT: Wait Communication 3
    )")) << text;
  }
}

}  // namespace hostir::test
