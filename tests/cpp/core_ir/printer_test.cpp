// Printer golden strings: the notation of docs/design.md.

#include "common/scoped_env.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/options.h"
#include "test_utils.h"

namespace hostir::test {
namespace {

using PrinterTest = IrTest;

TEST_F(PrinterTest, TensorViewNotation) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_EQ(tv0->toString(), "T0_l_float[iS0{i0}, iS1{i1}]");
  fusion_.addInput(tv0);
  EXPECT_EQ(tv0->toString(), "T0_g_float[iS0{i0}, iS1{i1}]");
  EXPECT_EQ(tv0->toInlineString(), tv0->toString());
}

TEST_F(PrinterTest, DtypesInTensorNames) {
  EXPECT_EQ(makeConcreteTensor({2}, DataType::Double)->toString(), "T0_l_double[iS0{2}]");
  EXPECT_EQ(makeConcreteTensor({2}, DataType::Half)->toString(), "T1_l_half[iS1{2}]");
  EXPECT_EQ(makeConcreteTensor({2}, DataType::BFloat16)->toString(), "T2_l_bfloat16[iS2{2}]");
  EXPECT_EQ(makeConcreteTensor({2}, DataType::Int32)->toString(), "T3_l_int32[iS3{2}]");
  EXPECT_EQ(makeConcreteTensor({2}, DataType::Int64)->toString(), "T4_l_int64[iS4{2}]");
  EXPECT_EQ(makeConcreteTensor({2}, DataType::Bool)->toString(), "T5_l_bool[iS5{2}]");
}

TEST_F(PrinterTest, MemoryTypes) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = set(tv0);
  EXPECT_EQ(tv1->toString(), "T1_l_float[iS1{i0}]");
  tv1->setMemoryType(MemoryType::Global);
  EXPECT_EQ(tv1->toString(), "T1_g_float[iS1{i0}]");
  tv1->setMemoryType(MemoryType::Local);
  fusion_.addOutput(tv1);
  EXPECT_EQ(tv1->toString(), "T1_g_float[iS1{i0}]");
}

TEST_F(PrinterTest, ReductionAndBroadcastAxes) {
  TensorView* tv0 = makeContigTensor(2);  // T0[iS0{i0}, iS1{i1}]
  TensorView* tv1 = sum(tv0, {1});        // T1[iS2{i0}, rS3{i1}]
  EXPECT_EQ(tv1->toString(), "T1_l_float[iS2{i0}, rS3{i1}]");
  TensorView* tv2 = broadcast(sum(tv0, {0}), {true, false});
  // sum: T2[rS4{i0}, iS5{i1}]; broadcast: the constant 1 then T3[bS6{1}, iS7{i1}]
  EXPECT_EQ(tv2->toString(), "T3_l_float[bS6{1}, iS7{i1}]");
  EXPECT_EQ(makeConcreteTensor({1, 3})->toString(), "T4_l_float[bS8{1}, iS9{3}]");
}

TEST_F(PrinterTest, ZeroDimensionalTensor) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = sum(tv0, {0});
  EXPECT_EQ(tv1->toString(), "T1_l_float[rS1{i0}]");
  EXPECT_EQ(makeConcreteTensor({})->toString(), "T2_l_float[]");
}

TEST_F(PrinterTest, GoldenFusion) {
  TensorView* tv0 = makeContigTensor(2);
  fusion_.addInput(tv0);
  TensorView* tv1 = makeContigTensor(1);
  fusion_.addInput(tv1);
  TensorView* tv2 = add(tv0, tv1);
  TensorView* tv3 = sum(tv2, {1});
  fusion_.addOutput(tv3);
  EXPECT_EQ(fusion_.toString(),
            "%Fusion {\n"
            "  inputs:\n"
            "    T0_g_float[iS0{i0}, iS1{i1}]\n"
            "    T1_g_float[iS2{i2}]\n"
            "  outputs:\n"
            "    T3_g_float[iS5{i0}, rS6{i1}]\n"
            "  exprs:\n"
            "    T2_l_float[iS3{i0}, iS4{i1}]\n"
            "       = add( T0_g_float[iS0{i0}, iS1{i1}], T1_g_float[iS2{i2}] )\n"
            "    T3_g_float[iS5{i0}, rS6{i1}]\n"
            "       = sum( T2_l_float[iS3{i0}, iS4{i1}], axes = {1} )\n"
            "} // %Fusion\n");
}

TEST_F(PrinterTest, GoldenFusionWithCastScalarAndSet) {
  TensorView* tv0 = makeConcreteTensor({4, 1}, DataType::Half);
  fusion_.addInput(tv0);
  TensorView* tv1 = castOp(DataType::Float, tv0);
  TensorView* tv2 = mul(tv1, 2.0);
  TensorView* tv3 = set(tv2);
  fusion_.addOutput(tv3);
  EXPECT_EQ(fusion_.toString(),
            "%Fusion {\n"
            "  inputs:\n"
            "    T0_g_half[iS0{4}, bS1{1}]\n"
            "  outputs:\n"
            "    T3_g_float[iS6{4}, bS7{1}]\n"
            "  exprs:\n"
            "    T1_l_float[iS2{4}, bS3{1}]\n"
            "       = cast<float>( T0_g_half[iS0{4}, bS1{1}] )\n"
            "    T2_l_float[iS4{4}, bS5{1}]\n"
            "       = mul( T1_l_float[iS2{4}, bS3{1}], 2.0 )\n"
            "    T3_g_float[iS6{4}, bS7{1}]\n"
            "       = Set( T2_l_float[iS4{4}, bS5{1}] )\n"
            "} // %Fusion\n");
}

TEST_F(PrinterTest, GoldenFusionWithSplitStreamAxis) {
  TensorView* tv0 = makeContigTensor(2);
  fusion_.addInput(tv0);
  TensorView* tv1 = relu(tv0);
  fusion_.addOutput(tv1);
  tv1->split(0, 4, /*inner_split=*/false);
  tv1->axis(0)->parallelize(ParallelType::Stream);
  EXPECT_EQ(fusion_.toString(),
            "%Fusion {\n"
            "  inputs:\n"
            "    T0_g_float[iS0{i0}, iS1{i1}]\n"
            "  outputs:\n"
            "    T1_g_float[iStreamIdx4{4}, iS5{ceilDiv(i0, 4)}, iS3{i1}]\n"
            "  exprs:\n"
            "    T1_g_float[iStreamIdx4{4}, iS5{ceilDiv(i0, 4)}, iS3{i1}]\n"
            "       = relu( T0_g_float[iS0{i0}, iS1{i1}] )\n"
            "} // %Fusion\n");
}

TEST_F(PrinterTest, EmptyFusion) {
  EXPECT_EQ(fusion_.toString(),
            "%Fusion {\n"
            "  inputs:\n"
            "  outputs:\n"
            "  exprs:\n"
            "} // %Fusion\n");
}

// One expr per line: the printed form of each op.
TEST_F(PrinterTest, OpLines) {
  TensorView* a = makeConcreteTensor({2, 3});  // T0[iS0{2}, iS1{3}]
  TensorView* b = makeConcreteTensor({3, 4});  // T1[iS2{3}, iS3{4}]
  fusion_.addInput(a);
  fusion_.addInput(b);
  const std::string A = "T0_g_float[iS0{2}, iS1{3}]";
  const std::string B = "T1_g_float[iS2{3}, iS3{4}]";

  TensorView* mm = matmul(a, b);
  EXPECT_EQ(mm->definition()->toString(),
            mm->toString() + "\n   = matmul( " + A + ", " + B + " )\n");
  TensorView* mx = max(a, {0, 1});
  EXPECT_EQ(mx->definition()->toString(),
            mx->toString() + "\n   = max( " + A + ", axes = {0, 1} )\n");
  TensorView* bc = broadcast(a, {false, true, false});
  EXPECT_EQ(bc->definition()->toString(),
            bc->toString() + "\n   = broadcast( " + A + ", is_broadcast = {0, 1, 0} )\n");
  TensorView* sel = select(a, 1, 2);
  EXPECT_EQ(sel->definition()->toString(),
            sel->toString() + "\n   = select( " + A + ", 2, dim = 1 )\n");
  TensorView* sl = slice(a, 0, 1, 2);
  EXPECT_EQ(sl->definition()->toString(),
            sl->toString() + "\n   = slice( " + A + ", 1, 2, dim = 0 )\n");
  TensorView* pm = permute(a, {1, 0});
  EXPECT_EQ(pm->definition()->toString(),
            pm->toString() + "\n   = permute( " + A + ", dims = {1, 0} )\n");
  TensorView* rs = reshape(a, {6});
  EXPECT_EQ(rs->definition()->toString(), rs->toString() + "\n   = reshape( " + A + " )\n");
  TensorView* lin = linear(a, permute(b, {1, 0}));
  EXPECT_EQ(lin->definition()->toInlineString().substr(0, 7), "linear(");
  TensorView* fl =
      full({constant(2), constant(3)}, IrBuilder::create<Scalar>(1.5), DataType::Float);
  EXPECT_EQ(fl->definition()->toString(), fl->toString() + "\n   = full( 1.5, 2, 3 )\n");
  TensorView* mn = minimum(a, 0.0);
  EXPECT_EQ(mn->definition()->toString(), mn->toString() + "\n   = minimum( " + A + ", 0.0 )\n");
}

TEST_F(PrinterTest, ExprIndentation) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = exp(tv0);
  EXPECT_EQ(tv1->definition()->toString(2),
            "    T1_l_float[iS1{i0}]\n       = exp( T0_l_float[iS0{i0}] )\n");
  EXPECT_EQ(tv1->definition()->toInlineString(), "exp(T0_l_float[iS0{i0}])");
}

TEST_F(PrinterTest, PrintWritesToStringToStdout) {
  TensorView* tv0 = makeContigTensor(1);
  fusion_.addInput(tv0);
  fusion_.addOutput(neg(tv0));
  ::testing::internal::CaptureStdout();
  fusion_.print();
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), fusion_.toString());
}

TEST(DumpOptionTest, ParsesCommaSeparatedList) {
  {
    ScopedEnv env("HOSTIR_DUMP", nullptr);
    EXPECT_FALSE(isDumpEnabled("fusion"));
  }
  {
    ScopedEnv env("HOSTIR_DUMP", "fusion");
    EXPECT_TRUE(isDumpEnabled("fusion"));
    EXPECT_FALSE(isDumpEnabled("host_ir"));
  }
  {
    ScopedEnv env("HOSTIR_DUMP", "segments,fusion,passes");
    EXPECT_TRUE(isDumpEnabled("fusion"));
    EXPECT_TRUE(isDumpEnabled("segments"));
    EXPECT_TRUE(isDumpEnabled("passes"));
    EXPECT_FALSE(isDumpEnabled("host_ir"));
  }
  {
    ScopedEnv env("HOSTIR_DUMP", "fusions,fusio");
    EXPECT_FALSE(isDumpEnabled("fusion"));  // whole items only
  }
  {
    ScopedEnv env("HOSTIR_DUMP", "all");
    EXPECT_TRUE(isDumpEnabled("fusion"));
    EXPECT_TRUE(isDumpEnabled("host_ir"));
  }
  {
    ScopedEnv env("HOSTIR_DUMP", "");
    EXPECT_FALSE(isDumpEnabled("fusion"));
  }
}

TEST(DumpOptionTest, DisabledPasses) {
  ScopedEnv env("HOSTIR_DISABLE_PASS", "stream_parallelize,loop_fusion");
  EXPECT_TRUE(isPassDisabled("loop_fusion"));
  EXPECT_TRUE(isPassDisabled("stream_parallelize"));
  EXPECT_FALSE(isPassDisabled("deallocate"));
}

TEST_F(PrinterTest, PrintIfDumpEnabled) {
  TensorView* tv0 = makeContigTensor(1);
  fusion_.addInput(tv0);
  fusion_.addOutput(neg(tv0));
  {
    ScopedEnv env("HOSTIR_DUMP", "host_ir,fusion");
    ::testing::internal::CaptureStdout();
    fusion_.printIfDumpEnabled("fusion");
    EXPECT_EQ(::testing::internal::GetCapturedStdout(), fusion_.toString());
  }
  {
    ScopedEnv env("HOSTIR_DUMP", "host_ir");
    ::testing::internal::CaptureStdout();
    fusion_.printIfDumpEnabled("fusion");
    EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
  }
}

}  // namespace
}  // namespace hostir::test
