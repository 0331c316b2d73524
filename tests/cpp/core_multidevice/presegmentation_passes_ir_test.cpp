// IR-in/IR-out tests of the presegmentation passes of the pass registry
// (validate_shardings, propagate_shardings, insert_reshardings,
// reorder_sharded_axis, make_resharding_contiguous) and of the check pass
// stream_axes_check: a small fusion or program, the pass, and the printed
// result.

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>

#include "core_ir/ir_check.h"
#include "hostir/host_ir/lowering.h"
#include "hostir/host_ir/passes/stream_parallelization.h"
#include "hostir/ir/arith.h"
#include "hostir/multidevice/presegmentation_passes.h"
#include "multidevice_test_utils.h"

namespace hostir::test {

using PresegmentationPassesIrTest = MultiDeviceTest;

// validate_shardings checks and changes nothing.
TEST_F(PresegmentationPassesIrTest, ValidateShardingsLeavesTheFusionAsItIs) {
  TensorView* x = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(x);
  fusion_.addOutput(sharded(relu(x), mesh2_, 0));
  const std::string before = fusion_.toString();
  validateShardings(&fusion_);
  EXPECT_EQ(fusion_.toString(), before);
}

// propagate_shardings: the unannotated intermediate takes its input's mesh
// and DIDx axis.
TEST_F(PresegmentationPassesIrTest, PropagateShardingsAnnotatesTheIntermediate) {
  TensorView* x = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(x);
  fusion_.addOutput(exp(neg(x)));
  EXPECT_TRUE(irCheck(fusion_.toString(), R"(
    CHECK:      T1_l_float[iS2{8}, iS3{4}]
    CHECK-NEXT:    = neg( T0_g_float[ideviceIdx.x0{8}, iS1{4}] )
  )")) << fusion_.toString();
  propagateShardings(&fusion_);
  EXPECT_TRUE(irCheck(fusion_.toString(), R"(
    CHECK:      T1_l_float[ideviceIdx.x2{8}, iS3{4}]
    CHECK-NEXT:    = neg( T0_g_float[ideviceIdx.x0{8}, iS1{4}] )
    CHECK:      T2_g_float[ideviceIdx.x4{8}, iS5{4}]
    CHECK-NEXT:    = exp( T1_l_float[ideviceIdx.x2{8}, iS3{4}] )
  )")) << fusion_.toString();
}

// insert_reshardings: an add whose output is replicated computes into a
// tensor sharded like its inputs, then a Set reshards it.
TEST_F(PresegmentationPassesIrTest, InsertReshardingsSplitsComputeFromTheResharding) {
  TensorView* a = shardedTensor({8, 4}, mesh2_, 0);
  TensorView* b = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(a);
  fusion_.addInput(b);
  fusion_.addOutput(sharded(add(a, b), mesh2_, -1));
  insertReshardings(&fusion_);
  EXPECT_TRUE(irCheck(fusion_.toString(), R"(
    CHECK:      = add( T0_g_float[ideviceIdx.x0{8}, iS1{4}], T1_g_float[ideviceIdx.x2{8}, iS3{4}] )
    CHECK:      T2_g_float[iS4{8}, iS5{4}]
    CHECK-NEXT:    = Set(
  )")) << fusion_.toString();
}

// reorder_sharded_axis: a gather of an inner sharded axis becomes permute,
// set on the outermost axis, permute back.
TEST_F(PresegmentationPassesIrTest, ReorderShardedAxisWrapsTheSetInPermutes) {
  TensorView* a = shardedTensor({4, 6}, mesh2_, 1);
  fusion_.addInput(a);
  fusion_.addOutput(sharded(set(a), mesh2_, -1));
  reorderShardedAxis(&fusion_);
  EXPECT_TRUE(irCheck(fusion_.toString(), R"(
    CHECK:      = permute( T0_g_float[iS0{4}, ideviceIdx.x1{6}]
    CHECK:      = Set(
    CHECK:      = permute(
    CHECK-NOT:  = Set(
  )")) << fusion_.toString();
}

// The fusion printout does not show allocation domains, which is all that
// make_resharding_contiguous changes: one line per tensor of the exprs,
// "T1 allocation=(ideviceIdx.x2{8} iS3{4}) contiguity=(1 1)", or
// "T1 logical order".
std::string allocationsOf(const Fusion& fusion) {
  std::ostringstream text;
  auto describe = [&text](const TensorView* tv) {
    text << "T" << tv->name();
    if (!tv->domain()->hasAllocation()) {
      text << " logical order\n";
      return;
    }
    const char* separator = "";
    text << " allocation=(";
    for (const IterDomain* id : tv->domain()->allocation()) {
      text << separator << id->toInlineString();
      separator = " ";
    }
    separator = "";
    text << ") contiguity=(";
    for (bool contiguous : tv->domain()->contiguity()) {
      text << separator << (contiguous ? 1 : 0);
      separator = " ";
    }
    text << ")\n";
  };
  for (const Expr* expr : fusion.exprs()) {
    for (const Val* input : expr->inputs()) {
      if (const auto* tv = dynamic_cast<const TensorView*>(input)) {
        describe(tv);
      }
    }
    for (const Val* output : expr->outputs()) {
      if (const auto* tv = dynamic_cast<const TensorView*>(output)) {
        describe(tv);
      }
    }
  }
  return text.str();
}

// make_resharding_contiguous: both sides of the resharding set get a
// contiguous allocation domain; the relu's input does not take part.
TEST_F(PresegmentationPassesIrTest, MakeReshardingContiguousGivesBothSidesAnAllocationDomain) {
  TensorView* x = shardedTensor({8, 4}, mesh2_, 0);
  fusion_.addInput(x);
  TensorView* y = sharded(relu(x), mesh2_, 0);
  fusion_.addOutput(sharded(set(y), mesh2_, -1));
  EXPECT_EQ(allocationsOf(fusion_),
            "T0 logical order\nT1 logical order\nT1 logical order\n"
            "T2 logical order\n");
  const std::string before = fusion_.toString();
  makeReshardingContiguous(&fusion_);
  EXPECT_EQ(fusion_.toString(), before);
  EXPECT_EQ(allocationsOf(fusion_),
            "T0 logical order\n"
            "T1 allocation=(ideviceIdx.x2{8} iS3{4}) contiguity=(1 1)\n"
            "T1 allocation=(ideviceIdx.x2{8} iS3{4}) contiguity=(1 1)\n"
            "T2 allocation=(iS4{8} iS5{4}) contiguity=(1 1)\n");
}

// stream_axes_check: a check; the program it accepts comes out unchanged.
TEST_F(PresegmentationPassesIrTest, StreamAxesCheckLeavesTheProgramAsItIs) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  TensorView* y = relu(x);
  fusion_.addOutput(y);
  y->split(0, 2, /*inner_split=*/false);
  y->axis(0)->parallelize(ParallelType::Stream);
  std::unique_ptr<HostIrContainer> program = lowerSegmentsToHostIr(fusion_);
  const std::string before = program->toString();
  checkStreamAxes(*program);
  EXPECT_EQ(program->toString(), before);
  EXPECT_TRUE(irCheck(before, R"(
    CHECK: iStreamIdx
  )")) << before;
}

}  // namespace hostir::test
