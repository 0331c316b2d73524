// bfloat16 and half GEMMs where ATen has no fast kernel for them run in
// float32 and are rounded once (runtime/reduced_precision_gemm.h): half on
// every CPU (ATen 1.13 has no CPU half matmul and throws), bfloat16 below
// AVX-512 (ATen's scalar reference loop, ~45x slower than float32 there).
// Run on an AVX-512 machine these check both sides of the rule; the
// runtime.*.avx2 leg (cpu:avx2) and an AVX2 machine take the float path for
// bfloat16 too.

#include "hostir/multidevice/target.h"
#include "hostir/runtime/reduced_precision_gemm.h"
#include "hostir/runtime/target_detection.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

TEST(ReducedPrecisionGemmRule, HalfEverywhereBfloat16BelowAvx512NothingElse) {
  for (Isa isa : {Isa::Generic, Isa::Avx2, Isa::Avx512, Isa::Neon}) {
    const Target target = targetForIsa(isa);
    SCOPED_TRACE(target.toString());
    EXPECT_TRUE(reducedPrecisionGemmRunsInFloat(at::kHalf, target));
    EXPECT_EQ(reducedPrecisionGemmRunsInFloat(at::kBFloat16, target), isa != Isa::Avx512);
    EXPECT_FALSE(reducedPrecisionGemmRunsInFloat(at::kFloat, target));
    EXPECT_FALSE(reducedPrecisionGemmRunsInFloat(at::kDouble, target));
  }
}

// Counts the GEMMs the float path ran while `body` runs.
template <typename Body>
int64_t gemmsRunInFloatDuring(Body body) {
  const int64_t before = reducedPrecisionGemmsRunInFloat();
  body();
  return reducedPrecisionGemmsRunInFloat() - before;
}

class ReducedPrecisionGemmTest : public RuntimeTest,
                                 public ::testing::WithParamInterface<at::ScalarType> {};

TEST_P(ReducedPrecisionGemmTest, LinearWithBiasIsTheFloatProductRoundedOnce) {
  const at::ScalarType type = GetParam();
  TensorView* x = makeContigTensor(3, fromAtenType(type));
  TensorView* w = makeContigTensor(2, fromAtenType(type));
  TensorView* b = makeContigTensor(1, fromAtenType(type));
  for (TensorView* input : {x, w, b}) {
    fusion().addInput(input);
  }
  fusion().addOutput(linear(x, w, b));
  const at::Tensor tx = randomTensor({2, 33, 64}, type);
  const at::Tensor tw = randomTensor({48, 64}, type);
  const at::Tensor tb = randomTensor({48}, type);
  const at::Tensor expected =
      at::linear(tx.to(at::kFloat), tw.to(at::kFloat), tb.to(at::kFloat)).to(type);
  std::vector<at::Tensor> outputs;
  const int64_t in_float = gemmsRunInFloatDuring([&] { outputs = run({tx, tw, tb}); });
  EXPECT_EQ(in_float, reducedPrecisionGemmRunsInFloat(type, localTarget()) ? 1 : 0)
      << "on " << localTarget().toString();
  EXPECT_TRUE(allClose(outputs.at(0), expected, rtolFor(type), rtolFor(type)));
}

TEST_P(ReducedPrecisionGemmTest, BatchedMatmulIsTheFloatProductRoundedOnce) {
  const at::ScalarType type = GetParam();
  TensorView* a = makeContigTensor(3, fromAtenType(type));
  TensorView* b = makeContigTensor(3, fromAtenType(type));
  fusion().addInput(a);
  fusion().addInput(b);
  fusion().addOutput(matmul(a, b));
  const at::Tensor ta = randomTensor({3, 17, 40}, type);
  const at::Tensor tb = randomTensor({3, 40, 24}, type);
  const at::Tensor expected = at::matmul(ta.to(at::kFloat), tb.to(at::kFloat)).to(type);
  std::vector<at::Tensor> outputs;
  const int64_t in_float = gemmsRunInFloatDuring([&] { outputs = run({ta, tb}); });
  EXPECT_EQ(in_float, reducedPrecisionGemmRunsInFloat(type, localTarget()) ? 1 : 0)
      << "on " << localTarget().toString();
  EXPECT_TRUE(allClose(outputs.at(0), expected, rtolFor(type), rtolFor(type)));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ReducedPrecisionGemmTest,
                         ::testing::Values(at::kBFloat16, at::kHalf),
                         [](const ::testing::TestParamInfo<at::ScalarType>& info) {
                           return std::string(info.param == at::kHalf ? "half" : "bfloat16");
                         });

}  // namespace
}  // namespace hostir::test
