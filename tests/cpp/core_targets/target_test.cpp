// Targets and encodings as plain data (no ATen).
#include <gtest/gtest.h>

#include "core_host_ir/host_ir_test_utils.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/target.h"

namespace hostir {
namespace {

TEST(TargetTest, ParsesEveryTierWithItsProperties) {
  EXPECT_EQ(parseTarget("cpu:avx512"), targetForIsa(Isa::Avx512));
  EXPECT_EQ(parseTarget("avx2").matmul_rhs_n_block, 0) << "oneDNN keeps avx2 weights plain";
  EXPECT_EQ(parseTarget("cpu:avx512").matmul_rhs_n_block, 64);
  EXPECT_EQ(parseTarget("cpu:avx512").vector_bits, 512);
  EXPECT_EQ(parseTarget("cpu:neon").vector_bits, 128);
  EXPECT_EQ(parseTarget("cpu:generic").matmul_rhs_n_block, 0);
  EXPECT_EQ(parseTarget("cpu:avx2").toString(), "cpu:avx2");
  EXPECT_EQ(parseTarget("cpu:avx2").describe(), "cpu:avx2 (256-bit vectors, matmul_rhs plain)");
  EXPECT_EQ(parseTarget("cpu:avx512").describe(),
            "cpu:avx512 (512-bit vectors, matmul_rhs BA16a64b)");
}

TEST(TargetTest, BadTargetsListTheValidOnes) {
  EXPECT_HOSTIR_ERROR(parseTarget("cpu:sse9"), "unknown target 'cpu:sse9'",
                      "valid targets are cpu:generic, cpu:avx2, cpu:avx512, cpu:neon");
  EXPECT_HOSTIR_ERROR(parseTarget("gpu:avx2"), "unknown target backend 'gpu'", "cpu:avx2");
}

TEST(TargetTest, DetectsTheTierFromCpuinfoFlags) {
  EXPECT_EQ(targetFromCpuFlags("fpu sse2 avx avx2 fma avx512f avx512bw").isa, Isa::Avx512);
  EXPECT_EQ(targetFromCpuFlags("fpu sse2 avx avx2 fma bmi2").isa, Isa::Avx2);
  EXPECT_EQ(targetFromCpuFlags("fpu sse2 avx avx2").isa, Isa::Generic) << "avx2 without fma";
  EXPECT_EQ(targetFromCpuFlags("fp asimd evtstrm aes").isa, Isa::Neon);
  EXPECT_EQ(targetFromCpuFlags("fpu sse2 avx512fx").isa, Isa::Generic) << "whole words only";
}

TEST(TargetTest, TargetOfAnUnknownDeviceIsAnError) {
  DeviceTargets targets{{0, parseTarget("cpu:avx2")}};
  EXPECT_EQ(toString(targets), "0=cpu:avx2");
  EXPECT_HOSTIR_ERROR(targetOf(targets, 3), "no target known for device 3", "0=cpu:avx2");
}

TEST(EncodingTest, PrintedClonedAndCompared) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* w = makeContigTensor(2);
  w->setEncoding(Encoding{EncodingKind::MatmulRhs, std::nullopt});
  EXPECT_EQ(w->toInlineString(), "T0_l_float[iS0{i0}, iS1{i1}]#matmul_rhs");
  Fusion copy;
  IrCloner cloner = copyFusion(fusion, copy);
  auto* w_copy = cloner.clone(w);
  EXPECT_EQ(w_copy->toInlineString(), w->toInlineString());
  EXPECT_TRUE(w_copy->sameAs(w));
  w_copy->setEncoding(Encoding{EncodingKind::MatmulRhs, Layout::identity()});
  EXPECT_EQ(w_copy->toInlineString(), "T0_l_float[iS0{i0}, iS1{i1}]#matmul_rhs:identity");
  EXPECT_FALSE(w_copy->sameAs(w));
  EXPECT_EQ(parseEncodingKind("matmul_lhs"), EncodingKind::MatmulLhs);
  EXPECT_HOSTIR_ERROR(parseEncodingKind("nchw"), "unknown encoding 'nchw'",
                      "matmul_lhs, matmul_rhs");
  // BA16a64b: [ceilDiv(N, 64), K rounded up to 16, 64].
  EXPECT_EQ(Layout::dnnlBlocked(64, 0).blockedShape(70, 7), (std::vector<int64_t>{2, 16, 64}));
  EXPECT_EQ(Layout::dnnlBlocked(64, 0).toString(), "BA16a64b(n=0)");
}

TEST(EncodingTest, ResolversPerTarget) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  w->setEncoding(Encoding{EncodingKind::MatmulRhs, std::nullopt});
  b->setEncoding(Encoding{EncodingKind::MatmulRhs, std::nullopt});
  linear(x, w);
  matmul(x, b);
  EXPECT_EQ(resolveLayout(w, parseTarget("cpu:avx512")), Layout::dnnlBlocked(64, 0)) << "W[N, K]";
  EXPECT_EQ(resolveLayout(b, parseTarget("cpu:avx2")), Layout::identity()) << "B[K, N]";
  EXPECT_EQ(resolveLayout(w, parseTarget("cpu:generic")), Layout::identity());
  EXPECT_EQ(resolveLayout(x, parseTarget("cpu:avx512")), Layout::identity()) << "no encoding";
}

TEST(SetEncodingTest, NodesValidateAndPrint) {
  HostIrContainer container;
  FusionGuard fg(&container);
  TensorView* plain = makeContigTensor(2);
  TensorView* packed = makeContigTensor(2);
  packed->setEncoding(Encoding{EncodingKind::MatmulRhs, std::nullopt});
  auto* set_encoding = IrBuilder::create<SetEncoding>(
      plain, packed, DeviceLayouts{{0, 1}, {Layout::dnnlBlocked(64, 0), Layout::identity()}});
  EXPECT_EQ(set_encoding->layoutFor(1), Layout::identity());
  EXPECT_FALSE(set_encoding->layoutFor(2).has_value());
  EXPECT_EQ(set_encoding->toString(),
            "T1_l_float[iS2{i2}, iS3{i3}]#matmul_rhs\n"
            "   = SetEncoding( T0_l_float[iS0{i0}, iS1{i1}], layouts = (0: BA16a64b(n=0), 1: "
            "identity) )\n");
  TensorView* back = makeContigTensor(2);
  auto* unset = IrBuilder::create<UnsetEncoding>(packed, back);
  EXPECT_EQ(unset->in(), packed);
  TensorView* other = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(IrBuilder::create<SetEncoding>(plain, other), "SetEncoding of T0_l_float",
                      "has no encoding");
  TensorView* wrong_rank = makeContigTensor(3);
  wrong_rank->setEncoding(Encoding{EncodingKind::MatmulRhs, std::nullopt});
  EXPECT_HOSTIR_ERROR(IrBuilder::create<SetEncoding>(plain, wrong_rank),
                      "both sides must have the same dtype and rank");
}

}  // namespace
}  // namespace hostir
